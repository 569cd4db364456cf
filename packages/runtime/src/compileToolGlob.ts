/**
 * Compiles a tool-name glob (`[runtime.policy]`) into a matcher. Only `*` is special: it matches
 * any run of characters, dots included (`core-fs.*`, `mcp.*`, `*`). Linear time, no backtracking.
 */
export function compileToolGlob(pattern: string): (name: string) => boolean {
  if (!pattern.includes('*')) return (name) => name === pattern;
  const pieces = pattern.split('*');
  const head = pieces[0] ?? '';
  const tail = pieces[pieces.length - 1] ?? '';
  const middle = pieces.slice(1, -1).filter((piece) => piece.length > 0);
  const minLength = head.length + tail.length;
  return (name) => {
    if (name.length < minLength || !name.startsWith(head) || !name.endsWith(tail)) return false;
    let at = head.length;
    const end = name.length - tail.length;
    for (const piece of middle) {
      const found = name.indexOf(piece, at);
      if (found < 0 || found + piece.length > end) return false;
      at = found + piece.length;
    }
    return true;
  };
}

/** The first pattern in `patterns` that matches `name`, or undefined. */
export function firstMatchingGlob(patterns: readonly string[], name: string): string | undefined {
  for (const pattern of patterns) if (compileToolGlob(pattern)(name)) return pattern;
  return undefined;
}
