import { z } from 'zod';
import { ProgramRulesMapSchema } from './ProgramRulesSchema.ts';

/** The environment variables a command sees when `env_allow` is not set. */
export const DEFAULT_ENV_ALLOW = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ'] as const;

/**
 * `[runtime.tools.command]`: which programs may run and under what limits. `{}` allows nothing:
 * the operator lists programs in `allow` before any command runs.
 */
export const CommandSettingsSchema = z
  .object({
    allow: z
      .array(
        z
          .string()
          .min(1)
          .max(4096)
          .regex(/^(\/.*|[^/]+)$/, 'must be a program name glob like "git" or "py*", or an absolute path glob like "/usr/bin/*"'),
      )
      .max(1000)
      .default([])
      .describe(
        'Programs that may run: names or name globs ("git", "python3*") matched against a bare program name, or absolute path globs ("/usr/bin/*") matched against the resolved path. * matches within one name, ? one character. Default []: nothing runs.',
      ),
    cwd: z
      .string()
      .min(1)
      .max(4096)
      .default('.')
      .describe('Working folder for commands, relative to the workspace (must stay inside it). Default: the workspace root.'),
    env_allow: z
      .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*\*?$/, 'must be a variable name, optionally ending in * (e.g. "LC_*")'))
      .max(1000)
      .default([...DEFAULT_ENV_ALLOW])
      .describe('Environment variables passed to commands (names, or prefixes ending in *). Everything else is dropped.'),
    timeout_seconds: z
      .number()
      .positive()
      .max(86_400)
      .default(30)
      .describe('Deadline per command, in seconds; then the whole process group is killed. Default 30.'),
    max_output_bytes: z
      .number()
      .int()
      .min(1)
      .max(64 * 1024 * 1024)
      .default(64 * 1024)
      .describe('Bytes kept of stdout and of stderr each; the rest is dropped with a truncation marker. Default 65536.'),
    programs: ProgramRulesMapSchema,
  })
  .strict();

/** Resolved core-command settings. */
export type CommandSettings = z.infer<typeof CommandSettingsSchema>;
