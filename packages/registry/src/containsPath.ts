import { sep } from 'node:path';
import { isPathInside } from '@trellis/sdk/internal';

const DOT_SEGMENT = /(?:^|[\\/])\.{1,2}(?:[\\/]|$)/;

/**
 * `isPathInside` with a fast path for the common case: when `child` is normalized (a realpath or
 * `path.resolve` output: no `.`/`..` segment), "`child` equals `parent` or starts with
 * `parent` + separator" is exactly the component-wise rule, so `/r/ab` is not inside `/r/a` and
 * `..foo` is a plain name. Anything else goes through `isPathInside` from @trellis/sdk.
 */
export function containsPath(parent: string, child: string): boolean {
  if (child === parent) return true;
  const prefix = parent.endsWith(sep) ? parent : parent + sep;
  if (child.startsWith(prefix) && !(child.includes(`${sep}.`) && DOT_SEGMENT.test(child))) return true;
  return isPathInside(parent, child);
}
