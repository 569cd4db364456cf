import { z } from 'zod';
import { lstat } from 'node:fs/promises';
import { RE2JS } from 're2js';
import { ERROR_CODES, ToolError, defineTool } from '@trellis/sdk';
import type { FsSettings } from './FsSettingsSchema.ts';
import { toDisplay } from './confinePath.ts';
import { readRegularFile } from './fileAccess.ts';
import { GLOB_LIMITS } from './checkGlobComplexity.ts';
import { checkGlobPattern, matchFiles } from './matchFiles.ts';
import type { LineMatcher } from './matchLines.ts';
import { matchLines } from './matchLines.ts';
import { confineArgument, pathSchema } from './pathArgument.ts';
import { decodeText, splitLines } from './textCodec.ts';

/** Most matches one search may return. */
export const MAX_SEARCH_RESULTS = 1000;
/** Most files one search opens. */
export const MAX_SEARCH_FILES = 20_000;
const MAX_LINE_CHARS = 300;
/** Largest compiled RE2 program a search may run: matching one line costs its length times this. */
export const MAX_REGEX_PROGRAM_SIZE = 200;

/** Input of `core-fs.search`. */
export const SearchInputSchema = z
  .object({
    pattern: z
      .string()
      .min(1)
      .max(1000)
      .describe(
        `The text to look for. Literal by default; set regex: true for an RE2 regular expression (no backreferences or lookaround). A regex, or case-insensitive text, may compile to at most ${MAX_REGEX_PROGRAM_SIZE} RE2 instructions (about one per character; a repeat such as \\w{50} counts 50 times).`,
      ),
    regex: z.boolean().optional().describe('Treat pattern as an RE2 regular expression. Default false (literal text).'),
    case_sensitive: z.boolean().optional().describe('Match upper and lower case exactly. Default true.'),
    path: pathSchema('The folder to search in, or a single file. Default "." (the root).').optional(),
    glob: z
      .string()
      .min(1)
      .max(1000)
      .optional()
      .describe(`Only search files whose paths (relative to path) match this glob, e.g. "**/*.ts". Default: every file. ${GLOB_LIMITS}`),
    max_results: z
      .number()
      .int()
      .min(1)
      .max(MAX_SEARCH_RESULTS)
      .optional()
      .describe(`Stop after this many matching lines, 1–${MAX_SEARCH_RESULTS}. Default 100.`),
  })
  .strict();

/** One matching line. */
export interface SearchMatch {
  readonly path: string;
  /** 1-based line and column (column in UTF-16 code units, as JavaScript counts). */
  readonly line: number;
  readonly column: number;
  /** The line, cut to 300 characters. */
  readonly text: string;
}

/** Output of `core-fs.search`. */
export interface SearchOutput {
  readonly matches: readonly SearchMatch[];
  /** True when the search stopped at max_results (or the file cap) before looking everywhere. */
  readonly truncated: boolean;
  readonly filesSearched: number;
  /** Files skipped because they are binary or larger than max_read_bytes. */
  readonly filesSkipped: number;
}

function compilePattern(input: { pattern: string; regex?: boolean | undefined; case_sensitive?: boolean | undefined }): LineMatcher {
  const caseSensitive = input.case_sensitive !== false;
  if (input.regex !== true && caseSensitive) {
    const text = input.pattern;
    return { find: (line) => line.indexOf(text), costPerChar: 1 };
  }
  let re: RE2JS;
  try {
    re = RE2JS.compile(input.regex === true ? input.pattern : RE2JS.quote(input.pattern), caseSensitive ? 0 : RE2JS.CASE_INSENSITIVE);
  } catch (error) {
    throw new ToolError(
      ERROR_CODES.INVALID_ARGUMENT,
      `pattern: not a valid RE2 regular expression (${(error as Error).message}). RE2 has no backreferences or lookaround; escape special characters, or pass regex: false to search for the literal text.`,
    );
  }
  const size = re.programSize();
  if (size > MAX_REGEX_PROGRAM_SIZE) {
    const shown = input.pattern.length > 120 ? `${input.pattern.slice(0, 120)}…` : input.pattern;
    throw new ToolError(
      ERROR_CODES.INVALID_ARGUMENT,
      input.regex === true
        ? `pattern: "${shown}" compiles to an RE2 program of ${size} instructions, over the limit of ${MAX_REGEX_PROGRAM_SIZE}; matching time grows with program size times line length, so it could stall the host. Use smaller repeat counts (e.g. "\\w{20,}" rather than "\\w{999}") or fewer alternatives, or split it into several searches.`
        : `pattern: "${shown}" (${input.pattern.length} characters) compiles to an RE2 program of ${size} instructions for a case-insensitive search, over the limit of ${MAX_REGEX_PROGRAM_SIZE}. Search for a shorter piece of it, or pass case_sensitive: true (case-sensitive text has no such limit).`,
    );
  }
  return {
    find(line) {
      const matcher = re.matcher(line);
      return matcher.find() ? matcher.start() : -1;
    },
    costPerChar: size,
  };
}

/** `core-fs.search`: lines of text files that match a literal or an RE2 regex. */
export const searchTool = defineTool<z.infer<typeof SearchInputSchema>, SearchOutput, FsSettings>({
  name: 'search',
  description: `Searches the text files inside the root (or under path, optionally only files matching glob) for lines containing pattern, and returns each matching line with its path, line and column, sorted by path and line. Literal text by default; regex: true uses RE2 syntax (linear time; no backreferences or lookaround; at most ${MAX_REGEX_PROGRAM_SIZE} compiled instructions, so no huge repeats like \\w{999}). Binary files and files over max_read_bytes are skipped; .git and node_modules are not searched. Stops after max_results matches (default 100, at most ${MAX_SEARCH_RESULTS}).`,
  input: SearchInputSchema,
  // Walking and matching grow with the tree and the pattern: off the host thread, killed at the deadline.
  contract: { sideEffects: false, capabilities: ['fs.read'], isolation: 'worker' },
  tags: ['files', 'search', 'grep'],
  examples: [
    { description: 'Where is a function used?', input: { pattern: 'loadConfig(', glob: '**/*.ts' } },
    {
      description: 'To-do and fix-me comments, any letter case',
      input: { pattern: 'todo|fixme', regex: true, case_sensitive: false, max_results: 50 },
    },
  ],
  async canonicalize(input, ctx) {
    if (input.glob !== undefined) checkGlobPattern('glob', input.glob);
    compilePattern(input);
    const { path } = await confineArgument(ctx, 'path', input.path ?? '.');
    return { input: { ...input, path: path.real }, summary: { path: path.display, real: path.real, glob: input.glob ?? null } };
  },
  async run(input, ctx) {
    if (input.glob !== undefined) checkGlobPattern('glob', input.glob);
    const matcher = compilePattern(input);
    const maxResults = input.max_results ?? 100;
    const { root, path } = await confineArgument(ctx, 'path', input.path ?? '.');
    if (!path.exists)
      throw new ToolError(ERROR_CODES.NOT_FOUND, `path: "${path.display}" does not exist. Omit path to search the whole root.`);
    const isFolder = (await lstat(path.real)).isDirectory();
    const files = isFolder ? matchFiles({ root, base: path.real, pattern: input.glob ?? '**/*', signal: ctx.signal }) : single(path.real);
    const matches: SearchMatch[] = [];
    let truncated = false;
    let filesSearched = 0;
    let filesSkipped = 0;
    for await (const real of files) {
      const display = toDisplay(root, real);
      if (ctx.signal.aborted) {
        throw new ToolError(
          ERROR_CODES.ABORTED,
          `Searching stopped before "${display}": the call was aborted (deadline reached or caller gave up).`,
        );
      }
      if (filesSearched + filesSkipped >= MAX_SEARCH_FILES) {
        truncated = true;
        break;
      }
      let bytes: Buffer;
      try {
        bytes = (await readRegularFile({ real, display, argument: 'path', maxBytes: ctx.config.max_read_bytes })).bytes;
      } catch (error) {
        // A single file named by path reports why it cannot be searched; in a folder, skip it.
        if (!isFolder) throw error;
        filesSkipped += 1;
        continue;
      }
      const decoded = decodeText(bytes);
      if (decoded.kind === 'binary') {
        if (!isFolder)
          throw new ToolError(
            ERROR_CODES.INVALID_ARGUMENT,
            `path: "${display}" looks binary (${decoded.reason}); only text files can be searched.`,
          );
        filesSkipped += 1;
        continue;
      }
      filesSearched += 1;
      const lines = splitLines(decoded.text);
      const { found, more } = await matchLines({ lines, matcher, limit: maxResults - matches.length, signal: ctx.signal, display });
      for (const { line, column } of found) {
        const text = lines[line - 1]!;
        matches.push({ path: display, line, column, text: text.length > MAX_LINE_CHARS ? `${text.slice(0, MAX_LINE_CHARS)}…` : text });
      }
      if (more) {
        truncated = true;
        break;
      }
    }
    // Traversal order depends on the file system; sort so the same tree gives the same answer.
    matches.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.line - b.line));
    return { matches, truncated, filesSearched, filesSkipped };
  },
});

async function* single(real: string): AsyncGenerator<string> {
  yield real;
}
