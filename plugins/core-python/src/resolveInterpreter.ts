import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { delimiter, isAbsolute, join } from 'node:path';
import { ERROR_CODES, ToolError } from '@trellis/sdk';

async function isExecutableFile(path: string): Promise<boolean> {
  try {
    const info = await stat(path);
    if (!info.isFile()) return false;
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Finds the configured interpreter: an absolute path is used as is, a bare name is looked up on
 * `PATH` once. Throws `NOT_FOUND` with the fix when there is none.
 */
export async function resolveInterpreter(options: { interpreter: string; path: string | undefined }): Promise<string> {
  const { interpreter } = options;
  if (interpreter.includes('\0')) {
    throw new ToolError(
      ERROR_CODES.INVALID_ARGUMENT,
      'The configured interpreter contains a NUL byte; fix [runtime.tools.python] interpreter.',
    );
  }
  if (isAbsolute(interpreter)) {
    if (await isExecutableFile(interpreter)) return interpreter;
  } else if (!interpreter.includes('/')) {
    for (const dir of (options.path ?? '').split(delimiter)) {
      if (dir === '' || !isAbsolute(dir)) continue;
      const candidate = join(dir, interpreter);
      if (await isExecutableFile(candidate)) return candidate;
    }
  }
  throw new ToolError(
    ERROR_CODES.NOT_FOUND,
    `The Python interpreter "${interpreter}" was not found${isAbsolute(interpreter) ? '' : ' on PATH'}. ` +
      'Install Python 3 or set [runtime.tools.python] interpreter to the absolute path of an executable interpreter. ' +
      'Python code cannot run until then; do the work another way.',
  );
}
