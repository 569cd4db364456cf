import { realpath, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ERROR_CODES, ToolError } from '@trellis/sdk';
import { isPathInside } from '@trellis/sdk/internal';

/**
 * Resolves a working folder (relative to the workspace, or absolute) to its realpath and
 * refuses one outside the workspace or that is not a folder. `label` names the argument or
 * setting in messages.
 */
export async function resolveWorkingFolder(options: { workspace: string; value: string; label: string }): Promise<string> {
  const { workspace, value, label } = options;
  if (value.includes('\0')) {
    throw new ToolError(ERROR_CODES.PATH_NOT_ALLOWED, `${label}: contains a NUL byte. Pass a plain folder path such as "src".`);
  }
  if (Buffer.byteLength(value) > 4096) {
    throw new ToolError(
      ERROR_CODES.PATH_NOT_ALLOWED,
      `${label}: is longer than 4096 bytes. Use a shorter folder path relative to the workspace.`,
    );
  }
  const root = await realpath(workspace);
  let real: string;
  try {
    real = await realpath(resolve(root, value));
  } catch {
    throw new ToolError(
      ERROR_CODES.NOT_FOUND,
      `${label}: the folder "${value}" does not exist. Use a folder inside the workspace, or omit it.`,
    );
  }
  if (!isPathInside(root, real)) {
    throw new ToolError(
      ERROR_CODES.PATH_NOT_ALLOWED,
      `${label}: "${value}" resolves to "${real}", outside the workspace "${root}". Commands run only inside the workspace; use a folder relative to it.`,
    );
  }
  if (!(await stat(real)).isDirectory()) {
    throw new ToolError(ERROR_CODES.INVALID_ARGUMENT, `${label}: "${value}" is a file, not a folder.`);
  }
  return real;
}
