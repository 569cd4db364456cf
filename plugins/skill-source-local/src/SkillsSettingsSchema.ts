import { z } from 'zod';

/** Largest `run_skill_timeout` accepted, in seconds; the `run` tool's contract deadline is set just above it. */
export const MAX_RUN_SKILL_TIMEOUT_SECONDS = 900;

/**
 * `[runtime.tools.skills]`: where extra skills live and how their scripts run. Every key has a safe
 * default, so `{}` is a complete configuration.
 */
export const SkillsSettingsSchema = z
  .object({
    /** Extra skill roots after the workspace and user roots; relative paths resolve against the workspace. */
    paths: z.array(z.string().min(1)).default([]),
    /** Names of trusted JavaScript skills whose `.js`/`.mjs`/`.cjs` scripts run in a worker thread instead of a subprocess. */
    in_process: z.array(z.string().min(1)).default([]),
    /** Deadline of one skill run, in seconds. */
    run_skill_timeout: z.number().positive().max(MAX_RUN_SKILL_TIMEOUT_SECONDS).default(60),
    /** Bytes kept of a script's stdout (and, separately, stderr); a result larger than this is `OUTPUT_TOO_LARGE`. */
    max_output_bytes: z
      .number()
      .int()
      .min(1024)
      .max(64 * 1024 * 1024)
      .default(256 * 1024),
    /** Interpreter per file extension, as a program name or argv prefix; merged over the built-in table. */
    interpreters: z
      .record(z.string().regex(/^\.[A-Za-z0-9_-]{1,16}$/), z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]), {
        error: (issue) => (issue.code === 'invalid_key' ? 'keys must be file extensions with the dot, such as ".py"' : undefined),
      })
      .default({}),
    /** Environment variables passed through to skill scripts in addition to the built-in allow list. */
    pass_env: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')).default([]),
    /** Address-space limit for subprocess skills in MiB (prlimit, where available); unset means no limit. */
    max_memory_mb: z.number().int().min(16).optional(),
    /** Heap limit for in-process (worker) skills in MiB. */
    worker_max_memory_mb: z
      .number()
      .int()
      .min(16)
      .max(16 * 1024)
      .default(256),
  })
  .strict();

/** Resolved `[runtime.tools.skills]` settings. */
export type SkillsSettings = z.infer<typeof SkillsSettingsSchema>;
