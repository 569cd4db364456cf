/**
 * Compiles a tool-name glob (`[runtime.policy]` allow/deny/ask, shared by the catalog's availability
 * view and the runtime's policy stage) into a matcher. Only `*` is special: it matches any run of characters,
 * dots included, so `core-fs.*` matches `core-fs.read` and `mcp.*` matches `mcp.github.create_issue`;
 * `*` alone matches every name. Everything else matches itself, case-sensitively.
 *
 * Matching never backtracks: the literal pieces between stars are found left to right, each at its
 * leftmost place, which is enough for star-only globs. Cost is linear in name plus pattern length
 * (up to the cost of `indexOf`).
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

/** True when `name` matches the glob `pattern` (see `compileToolGlob`). */
export function matchesToolGlob(pattern: string, name: string): boolean {
  return compileToolGlob(pattern)(name);
}
