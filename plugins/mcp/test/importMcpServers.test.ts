import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { parseMcpServersJson, renderServersToml } from '../src/importMcpServers.ts';
import { McpSettingsSchema } from '../src/settings.ts';

describe('parseMcpServersJson', () => {
  it('reads Claude Desktop / Claude Code / Cursor mcpServers, rewriting their variable forms', () => {
    const text = JSON.stringify({
      mcpServers: {
        github: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-github'], env: { GITHUB_TOKEN: '${GITHUB_TOKEN}' } },
        cursorish: { command: 'uvx', args: ['thing', '--key=${env:API_KEY}'] },
        remote: { type: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer ${TOKEN:-none}' } },
        legacy: { type: 'sse', url: 'https://old.example.com/sse' },
        'bad name': { command: 'x' },
        off: { command: 'x', disabled: true },
        empty: {},
      },
    });
    const result = parseMcpServersJson(text, '/home/u/.mcp.json');
    expect(result.error).toBeUndefined();
    expect(result.servers).toEqual([
      { name: 'github', command: 'npx', args: ['-y', '@modelcontextprotocol/server-github'], env: { GITHUB_TOKEN: '${GITHUB_TOKEN}' } },
      { name: 'cursorish', command: 'uvx', args: ['thing', '--key=${API_KEY}'] },
      { name: 'remote', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer ${TOKEN}' } },
    ]);
    expect(result.warnings.map((w) => w.message)).toEqual([
      '/home/u/.mcp.json: mcpServers.remote.headers.Authorization: the default in ${TOKEN:-none} was dropped; Trellis requires TOKEN to be set',
      "/home/u/.mcp.json: mcpServers.legacy uses the legacy SSE transport, which Trellis does not speak; use the server's Streamable HTTP endpoint instead",
      '/home/u/.mcp.json: mcpServers.bad name: the name must be letters, digits, - and _ (1–48 characters) to become mcp.<server>.<tool>; rename it in the file, or add it by hand',
      '/home/u/.mcp.json: mcpServers.off is disabled in the file; skipped',
      '/home/u/.mcp.json: mcpServers.empty has neither "command" nor "url"; skipped',
    ]);
  });

  it('reads VS Code\'s "servers" form and refuses what is not an MCP client config', () => {
    expect(parseMcpServersJson('{"servers":{"fs":{"type":"stdio","command":"node","args":["fs.js"]}}}', 'mcp.json').servers).toEqual([
      { name: 'fs', command: 'node', args: ['fs.js'] },
    ]);
    expect(parseMcpServersJson('{"other":1}', 'x.json').error?.message).toBe(
      'x.json has no "mcpServers" (or "servers") object; it is not an MCP client config',
    );
    expect(parseMcpServersJson('{oops', 'y.json').error?.code).toBe('CONFIG_INVALID');
  });

  it('renders TOML that parses back into valid server settings', () => {
    const servers = parseMcpServersJson(
      JSON.stringify({
        mcpServers: {
          a: { command: 'node "quoted"', args: ['x\\y'], env: { 'WEIRD.KEY': 'v' } },
          b: { url: 'https://h/mcp', headers: { 'X-Key': '${K}' } },
        },
      }),
      'f.json',
    ).servers;
    const toml = renderServersToml(servers, 'f.json');
    const parsed = parse(toml) as { plugins: { entries: { mcp: { config: unknown } } } };
    expect(
      McpSettingsSchema.parse(parsed.plugins.entries.mcp.config).servers.map((s) => [s.name, s.command, s.args, s.env, s.url, s.headers]),
    ).toEqual([
      ['a', 'node "quoted"', ['x\\y'], { 'WEIRD.KEY': 'v' }, undefined, {}],
      ['b', undefined, [], {}, 'https://h/mcp', { 'X-Key': '${K}' }],
    ]);
  });
});
