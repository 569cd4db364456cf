import { z } from 'zod';
import { lstat } from 'node:fs/promises';
import { ERROR_CODES, ToolError, defineTool } from '@trellis/sdk';
import type { FsSettings } from './FsSettingsSchema.ts';
import { toDisplay } from './confinePath.ts';
import { GLOB_LIMITS } from './checkGlobComplexity.ts';
import { checkGlobPattern, matchFiles } from './matchFiles.ts';
import { confineArgument, pathSchema } from './pathArgument.ts';

/** Most paths one glob returns. */
export const MAX_GLOB_RESULTS = 1000;

/** Input of `core-fs.glob`. */
export const GlobInputSchema = z
  .object({
    pattern: z
      .string()
      .min(1)
      .max(1000)
      .describe(
        `A glob relative to path: "*" matches within a name, "**" across folders, "?" one character, "[abc]" one of a set, "{a,b}" alternatives, e.g. "src/**/*.ts" or "**/README.md". No ".." and no absolute patterns. ${GLOB_LIMITS}`,
      ),
    path: pathSchema('The folder to search from. Default "." (the root).').optional(),
  })
  .strict();

/** Output of `core-fs.glob`. */
export interface GlobOutput {
  /** Matching files, relative to the root, sorted. */
  readonly files: readonly string[];
  /** True when more than the cap matched; narrow the pattern or path. */
  readonly truncated: boolean;
}

/** `core-fs.glob`: files whose paths match a pattern. */
export const globTool = defineTool<z.infer<typeof GlobInputSchema>, GlobOutput, FsSettings>({
  name: 'glob',
  description: `Finds files inside the root whose paths match a glob pattern (e.g. "**/*.md") and returns their paths relative to the root, sorted. Hidden files are included; .git and node_modules folders and symlinked folders are skipped. At most ${MAX_GLOB_RESULTS} paths; narrow the pattern or set path if truncated is true. ${GLOB_LIMITS} To look inside files use core-fs.search.`,
  input: GlobInputSchema,
  // Walking and matching grow with the tree and the pattern: off the host thread, killed at the deadline.
  contract: { sideEffects: false, capabilities: ['fs.read'], isolation: 'worker' },
  tags: ['files', 'find', 'glob'],
  examples: [
    { description: 'Every TypeScript file under src', input: { pattern: '**/*.ts', path: 'src' } },
    { description: 'All Markdown files', input: { pattern: '**/*.md' } },
  ],
  async canonicalize(input, ctx) {
    checkGlobPattern('pattern', input.pattern);
    const { path } = await confineArgument(ctx, 'path', input.path ?? '.');
    return { input: { ...input, path: path.real }, summary: { path: path.display, real: path.real, pattern: input.pattern } };
  },
  async run(input, ctx) {
    checkGlobPattern('pattern', input.pattern);
    const { root, path } = await confineArgument(ctx, 'path', input.path ?? '.');
    if (!path.exists || !(await lstat(path.real)).isDirectory()) {
      throw new ToolError(ERROR_CODES.NOT_FOUND, `path: "${path.display}" is not an existing folder. Omit path to search from the root.`);
    }
    const files: string[] = [];
    let truncated = false;
    for await (const real of matchFiles({ root, base: path.real, pattern: input.pattern, signal: ctx.signal })) {
      if (files.length >= MAX_GLOB_RESULTS) {
        truncated = true;
        break;
      }
      files.push(toDisplay(root, real));
    }
    files.sort();
    return { files, truncated };
  },
});
