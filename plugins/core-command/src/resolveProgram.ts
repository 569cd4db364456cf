import { constants } from 'node:fs';
import { access, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { ERROR_CODES, ToolError } from '@trellis/sdk';
import { matchesGlob } from './matchesGlob.ts';

/** A program the allow list admits, found on disk. */
export interface ResolvedProgram {
  /** The absolute path that is executed (as found on PATH, or the given path made absolute). */
  readonly path: string;
  /** Its realpath, for audit. */
  readonly realPath: string;
}

async function isExecutableFile(path: string): Promise<boolean> {
  try {
    if (!(await stat(path)).isFile()) return false;
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function notAllowed(program: string, allow: readonly string[], how: string): ToolError {
  if (allow.length === 0) {
    return new ToolError(
      ERROR_CODES.NOT_ALLOWED,
      `program: "${program}" cannot run because no program is allowed yet ([runtime.tools.command] allow = [], the default). Tell the user; they can allow it by adding "${program}" to allow under [runtime.tools.command] in runtime.toml.`,
    );
  }
  return new ToolError(
    ERROR_CODES.NOT_ALLOWED,
    `program: "${program}" is not on the allow list (${how}; allow = ${JSON.stringify(allow)}). Use one of the allowed programs, or ask the user to add it to allow under [runtime.tools.command] in runtime.toml.`,
  );
}

/**
 * Checks `program` against the allow list and finds it, once. A bare name must match a name
 * pattern, or its PATH match must match a path pattern; it is looked up only in the absolute
 * folders of `pathVariable`. A program given as a path (it contains `/`) must match a path
 * pattern by its absolute or real path.
 */
export async function resolveProgram(options: {
  program: string;
  allow: readonly string[];
  pathVariable: string | undefined;
  cwd: string;
}): Promise<ResolvedProgram> {
  const { program, allow, cwd } = options;
  if (program.includes('\0')) {
    throw new ToolError(ERROR_CODES.INVALID_ARGUMENT, 'program: contains a NUL byte. Pass a plain program name such as "git".');
  }
  const namePatterns = allow.filter((p) => !p.includes('/'));
  const pathPatterns = allow.filter((p) => p.startsWith('/'));
  const pathAllowed = (...paths: string[]) => pathPatterns.some((p) => paths.some((path) => matchesGlob(p, path)));

  if (program.includes('/')) {
    // Nothing could allow it: refuse before probing the file system for the caller.
    if (pathPatterns.length === 0)
      throw notAllowed(program, allow, 'a program given as a path must match an absolute path pattern, and there is none');
    const absolute = resolve(cwd, program);
    if (!(await isExecutableFile(absolute))) {
      throw new ToolError(
        ERROR_CODES.NOT_FOUND,
        `program: "${program}" (${absolute}) is not an executable file. Check the path, or pass a bare program name.`,
      );
    }
    const realPath = await realpath(absolute);
    if (!pathAllowed(absolute, realPath)) {
      throw notAllowed(program, allow, `a program given as a path must match an absolute path pattern by its resolved path ${realPath}`);
    }
    return { path: absolute, realPath };
  }

  const nameAllowed = namePatterns.some((p) => matchesGlob(p, program));
  if (!nameAllowed && pathPatterns.length === 0) throw notAllowed(program, allow, 'no name pattern matches it');
  if (options.pathVariable === undefined) {
    throw new ToolError(
      ERROR_CODES.NOT_FOUND,
      `program: "${program}" cannot be looked up because PATH is not passed to commands (it is missing from [runtime.tools.command] env_allow or unset). Pass the program's absolute path, or ask the user to add PATH to env_allow.`,
    );
  }
  const folders = options.pathVariable.split(':').filter((dir) => isAbsolute(dir));
  for (const dir of folders) {
    const candidate = join(dir, program);
    if (!(await isExecutableFile(candidate))) continue;
    const realPath = await realpath(candidate);
    if (!nameAllowed && !pathAllowed(candidate, realPath)) {
      throw notAllowed(program, allow, `no name pattern matches it and its path ${candidate} matches no path pattern`);
    }
    return { path: candidate, realPath };
  }
  if (!nameAllowed) throw notAllowed(program, allow, 'no name pattern matches it');
  throw new ToolError(
    ERROR_CODES.NOT_FOUND,
    `program: "${program}" was not found in any folder on PATH (${folders.join(':') || 'empty'}). Check the spelling, or pass the program's absolute path.`,
  );
}
