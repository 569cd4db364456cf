import { z } from 'zod';

/**
 * `[runtime.tools.table]`: where core-table may read and how much. Every key has a safe default,
 * so `{}` is valid; unknown keys are refused.
 */
export const TableSettingsSchema = z
  .object({
    root: z
      .string()
      .min(1)
      .max(4096)
      .default('.')
      .describe('Folder the tools may read from; relative paths resolve against the workspace. Default: the workspace itself.'),
    max_rows: z.number().int().min(1).max(10_000_000).default(100_000).describe('Most data rows a table may have.'),
    max_columns: z
      .number()
      .int()
      .min(1)
      .max(100_000)
      .default(1000)
      .describe('Most columns a table may have: CSV/TSV header fields (the widest row without a header), distinct keys across JSON rows.'),
    max_bytes: z
      .number()
      .int()
      .min(1024)
      .max(1024 * 1024 * 1024)
      .default(20 * 1024 * 1024)
      .describe('Largest table file, in bytes.'),
  })
  .strict();

/** core-table's resolved settings. */
export type TableSettings = z.infer<typeof TableSettingsSchema>;
