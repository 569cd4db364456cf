import { z } from 'zod';

const MIB = 1024 * 1024;

/**
 * `[runtime.tools.fs]`: where core-fs may look and how much it may move. `{}` gives the safe
 * defaults: the workspace as root, 1 MiB per read and per write, writes turned off.
 */
export const FsSettingsSchema = z
  .object({
    root: z
      .string()
      .min(1)
      .max(4096)
      .default('.')
      .describe('The folder every path is confined to. Relative paths resolve against the workspace root. Default: the workspace root.'),
    max_read_bytes: z
      .number()
      .int()
      .min(1)
      .max(256 * MIB)
      .default(MIB)
      .describe('Largest file read, edit or search will open, in bytes. Default 1 MiB.'),
    max_write_bytes: z
      .number()
      .int()
      .min(1)
      .max(256 * MIB)
      .default(MIB)
      .describe('Largest content write or edit will store, in bytes. Default 1 MiB.'),
    allow_write: z
      .boolean()
      .default(false)
      .describe('Whether write and edit may change files. Default false: core-fs is read-only until the operator opts in.'),
  })
  .strict();

/** Resolved core-fs settings. */
export type FsSettings = z.infer<typeof FsSettingsSchema>;
