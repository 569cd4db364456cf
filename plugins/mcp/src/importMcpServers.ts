import { ERROR_CODES } from '@trellis/sdk';

/** One server read from an `mcpServers` file, in Trellis's config shape. */
export interface ImportedServer {
  readonly name: string;
  readonly command?: string;
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  readonly url?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** The servers of an `mcpServers` file, and what could not be taken over (per server). */
export interface ImportedServers {
  readonly servers: readonly ImportedServer[];
  readonly warnings: ReadonlyArray<{ readonly code: string; readonly message: string }>;
  readonly error?: { readonly code: string; readonly message: string };
}

const NAME = /^[A-Za-z0-9_-]{1,48}$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Rewrites the variable forms of other hosts to Trellis's `${VAR}`: Cursor's and VS Code's
 * `${env:VAR}` becomes `${VAR}`; Claude Code's `${VAR:-default}` becomes `${VAR}` (the default is
 * dropped, with a warning, since Trellis has no defaults).
 */
function rewriteVariables(value: string, where: string, warn: (message: string) => void): string {
  return value.replace(/\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}/g, (_match, name: string, fallback: string | undefined) => {
    if (fallback !== undefined) warn(`${where}: the default in \${${name}${fallback}} was dropped; Trellis requires ${name} to be set`);
    return `\${${name}}`;
  });
}

function stringRecord(value: unknown, where: string, warn: (message: string) => void): Record<string, string> | undefined {
  if (!isRecord(value)) return undefined;
  const out: Record<string, string> = {};
  for (const [key, item] of Object.entries(value)) {
    if (typeof item === 'string') out[key] = rewriteVariables(item, `${where}.${key}`, warn);
    else if (typeof item === 'number' || typeof item === 'boolean') out[key] = String(item);
    else warn(`${where}.${key} is not a string and was skipped`);
  }
  return out;
}

/**
 * Reads the `mcpServers` JSON that Claude Desktop (`claude_desktop_config.json`), Claude Code
 * (`.mcp.json`) and Cursor (`.cursor/mcp.json`) use, and VS Code's `servers` form
 * (`.vscode/mcp.json`). Each server becomes a Trellis server entry; one that cannot (a legacy SSE
 * server, a bad name) is skipped with a warning naming it.
 */
export function parseMcpServersJson(text: string, file: string): ImportedServers {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return {
      servers: [],
      warnings: [],
      error: {
        code: ERROR_CODES.CONFIG_INVALID,
        message: `${file} is not JSON (${(error as Error).message}); fix the file and import it again`,
      },
    };
  }
  const table = isRecord(parsed)
    ? isRecord(parsed.mcpServers)
      ? parsed.mcpServers
      : isRecord(parsed.servers)
        ? parsed.servers
        : undefined
    : undefined;
  if (table === undefined) {
    return {
      servers: [],
      warnings: [],
      error: {
        code: ERROR_CODES.CONFIG_INVALID,
        message: `${file} has no "mcpServers" (or "servers") object; it is not an MCP client config`,
      },
    };
  }
  const warnings: Array<{ code: string; message: string }> = [];
  const servers: ImportedServer[] = [];
  for (const [name, raw] of Object.entries(table)) {
    const where = `${file}: mcpServers.${name}`;
    const warn = (message: string): void => void warnings.push({ code: ERROR_CODES.CONFIG_INVALID, message });
    if (!NAME.test(name)) {
      warn(
        `${where}: the name must be letters, digits, - and _ (1–48 characters) to become mcp.<server>.<tool>; rename it in the file, or add it by hand`,
      );
      continue;
    }
    if (!isRecord(raw)) {
      warn(`${where} is not an object; skipped`);
      continue;
    }
    if (raw.disabled === true) {
      warn(`${where} is disabled in the file; skipped`);
      continue;
    }
    const type = typeof raw.type === 'string' ? raw.type : undefined;
    if (type === 'sse') {
      warn(`${where} uses the legacy SSE transport, which Trellis does not speak; use the server's Streamable HTTP endpoint instead`);
      continue;
    }
    if (typeof raw.command === 'string' && raw.command.length > 0) {
      const args = Array.isArray(raw.args)
        ? raw.args.filter((a): a is string => typeof a === 'string').map((a, i) => rewriteVariables(a, `${where}.args[${i}]`, warn))
        : [];
      const env = stringRecord(raw.env, `${where}.env`, warn);
      servers.push({
        name,
        command: rewriteVariables(raw.command, `${where}.command`, warn),
        ...(args.length > 0 ? { args } : {}),
        ...(env !== undefined && Object.keys(env).length > 0 ? { env } : {}),
        ...(typeof raw.cwd === 'string' ? { cwd: rewriteVariables(raw.cwd, `${where}.cwd`, warn) } : {}),
      });
      continue;
    }
    if (typeof raw.url === 'string' && raw.url.length > 0) {
      const headers = stringRecord(raw.headers, `${where}.headers`, warn);
      servers.push({
        name,
        url: rewriteVariables(raw.url, `${where}.url`, warn),
        ...(headers !== undefined && Object.keys(headers).length > 0 ? { headers } : {}),
      });
      continue;
    }
    warn(`${where} has neither "command" nor "url"; skipped`);
  }
  return { servers, warnings };
}

function tomlString(value: string): string {
  // JSON string escapes are valid TOML basic-string escapes.
  return JSON.stringify(value);
}

function tomlKey(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key);
}

function tomlInlineTable(record: Readonly<Record<string, string>>): string {
  return `{ ${Object.entries(record)
    .map(([k, v]) => `${tomlKey(k)} = ${tomlString(v)}`)
    .join(', ')} }`;
}

/** The servers as `[[plugins.entries.mcp.config.servers]]` tables, ready to append to a runtime.toml. */
export function renderServersToml(servers: readonly ImportedServer[], source: string): string {
  const lines: string[] = [];
  for (const server of servers) {
    lines.push(
      '',
      `# imported from ${source.replace(/[\r\n]/g, ' ')}`,
      '[[plugins.entries.mcp.config.servers]]',
      `name = ${tomlString(server.name)}`,
    );
    if (server.command !== undefined) lines.push(`command = ${tomlString(server.command)}`);
    if (server.args !== undefined) lines.push(`args = [${server.args.map(tomlString).join(', ')}]`);
    if (server.env !== undefined) lines.push(`env = ${tomlInlineTable(server.env)}`);
    if (server.cwd !== undefined) lines.push(`cwd = ${tomlString(server.cwd)}`);
    if (server.url !== undefined) lines.push(`url = ${tomlString(server.url)}`);
    if (server.headers !== undefined) lines.push(`headers = ${tomlInlineTable(server.headers)}`);
  }
  return `${lines.join('\n')}\n`;
}
