import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

/**
 * Looks each program name up on `env.PATH` the way a shell would: the first folder holding an
 * executable regular file of that name wins. Returns name → absolute path, or null when not
 * found. Relative PATH entries are ignored (they depend on the current folder). I/O.
 */
export function findCommandsOnPath(
  names: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string | null> {
  const dirs = (env.PATH ?? '').split(delimiter).filter((d) => d !== '' && isAbsolute(d));
  const out: Record<string, string | null> = {};
  for (const name of [...new Set(names)].sort()) {
    out[name] = null;
    if (name === '' || name.includes('/')) continue;
    for (const dir of dirs) {
      const candidate = join(dir, name);
      try {
        if (!statSync(candidate).isFile()) continue;
        accessSync(candidate, constants.X_OK);
        out[name] = candidate;
        break;
      } catch {
        // not here; try the next folder
      }
    }
  }
  return out;
}
