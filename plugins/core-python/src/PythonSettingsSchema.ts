import { z } from 'zod';

/**
 * `[runtime.tools.python]`: how core-python runs code. Every key has a safe default, so `{}` is
 * valid; unknown keys are refused so a typo does not silently keep a default.
 */
export const PythonSettingsSchema = z
  .object({
    interpreter: z
      .string()
      .min(1)
      .max(4096)
      .default('python3')
      .describe('Python interpreter: a program name looked up on PATH, or an absolute path.'),
    timeout_seconds: z
      .number()
      .positive()
      .max(600)
      .default(30)
      .describe('Wall-clock limit per call; the whole process group is killed when it passes.'),
    max_memory_mb: z
      .number()
      .int()
      .min(32)
      .max(1_048_576)
      .default(512)
      .describe('Address-space limit (RLIMIT_AS) per process, in MiB, where prlimit(1) is available.'),
    max_output_bytes: z
      .number()
      .int()
      .min(256)
      .max(16 * 1024 * 1024)
      .default(64 * 1024)
      .describe('Bytes kept of stdout and of stderr each; the rest is dropped and marked truncated.'),
  })
  .strict();

/** core-python's resolved settings. */
export type PythonSettings = z.infer<typeof PythonSettingsSchema>;
