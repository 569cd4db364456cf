import { compileGlob } from './compileGlob.ts';

/**
 * Compiles a tool-name glob (`[runtime.policy]` allow/deny/ask, shared by the catalog's availability
 * view and the runtime's policy stage) into a matcher. Only `*` is special: it matches any run of characters,
 * dots included, so `core-fs.*` matches `core-fs.read` and `mcp.*` matches `mcp.github.create_issue`;
 * `*` alone matches every name. Everything else matches itself, case-sensitively (`compileGlob` with
 * no options).
 */
export function compileToolGlob(pattern: string): (name: string) => boolean {
  return compileGlob(pattern);
}

/** True when `name` matches the glob `pattern` (see `compileToolGlob`). */
export function matchesToolGlob(pattern: string, name: string): boolean {
  return compileToolGlob(pattern)(name);
}
