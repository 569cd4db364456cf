import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI, createSandbox, type Sandbox } from './cliHarness.ts';
import { startHttpServe, type HttpServe } from './serveFixture.ts';

// The README's MCP client snippets, run as written: the MCP SDK's client stands in for each client
// and launches exactly the command and arguments the snippet configures.
const README = readFileSync(join(import.meta.dirname, '..', '..', '..', 'README.md'), 'utf8');
const REPO = join(import.meta.dirname, '..', '..', '..');

function snippet(name: string): string {
  const match = new RegExp(`<!-- mcp-snippet: ${name} -->\\n\`\`\`\\w+\\n([\\s\\S]*?)\\n\`\`\``).exec(README);
  if (!match) throw new Error(`README.md has no snippet "${name}"`);
  return match[1]!;
}

/** Splits a shell line into words (double quotes only, as the snippets use). */
function shellWords(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!);
}

let sandbox: Sandbox;
let client: Client | undefined;
let server: HttpServe | undefined;
beforeEach(() => {
  sandbox = createSandbox();
});
afterEach(async () => {
  await client?.close().catch(() => {});
  await server?.stop();
  client = undefined;
  server = undefined;
  sandbox.cleanup();
});

/** The snippet's paths made real: this repository, the sandbox's workspace. */
function localize(text: string): string {
  return text
    .replaceAll('/path/to/trellis', REPO)
    .replaceAll('/path/to/your/project', sandbox.workspace)
    .replaceAll('${workspaceFolder}', sandbox.workspace);
}

async function launch(command: string, args: string[], cwd: string): Promise<Client> {
  expect(args[0]).toBe(CLI);
  const c = new Client({ name: 'snippet', version: '1.0.0' });
  await c.connect(new StdioClientTransport({ command, args, cwd, env: sandbox.env, stderr: 'ignore' }));
  client = c;
  return c;
}

async function expectWorking(c: Client): Promise<void> {
  const { tools } = await c.listTools();
  expect(tools.some((t) => t.name === 'builtin-tools__echo')).toBe(true);
  expect((await c.callTool({ name: 'builtin-tools__echo', arguments: { from: 'snippet' } })).structuredContent).toEqual({
    from: 'snippet',
  });
}

describe('README MCP client snippets', () => {
  it('Claude Code: claude mcp add trellis -- <command…>', async () => {
    const words = shellWords(localize(snippet('claude-code')));
    expect(words.slice(0, 4)).toEqual(['claude', 'mcp', 'add', 'trellis']);
    const [command, ...args] = words.slice(words.indexOf('--') + 1);
    await expectWorking(await launch(command!, args, sandbox.workspace));
  });

  for (const [name, key] of [
    ['claude-desktop', 'mcpServers'],
    ['cursor', 'mcpServers'],
    ['vscode', 'servers'],
  ] as const) {
    it(`${name}: the ${key}.trellis entry`, async () => {
      const config = JSON.parse(localize(snippet(name))) as Record<
        string,
        Record<string, { type?: string; command: string; args: string[] }>
      >;
      const entry = config[key]!.trellis!;
      if (name === 'vscode') expect(entry.type).toBe('stdio');
      // These clients start servers from a folder of their own; --workspace names the project.
      const c = await launch(entry.command, entry.args, '/');
      await expectWorking(c);
      expect(entry.args.slice(-2)).toEqual(['--workspace', sandbox.workspace]);
    });
  }

  it('Claude Code over HTTP: --transport http <url> --header "Authorization: Bearer …"', async () => {
    const token = 'snippet-token-0123456789abcdef';
    server = await startHttpServe(sandbox, [], { TRELLIS_SERVE_TOKEN: token });
    const port = new URL(server.url).port;
    const words = shellWords(
      localize(snippet('claude-code-http')).replaceAll('${TRELLIS_SERVE_TOKEN}', token).replace(':8765/', `:${port}/`),
    );
    expect(words.slice(0, 6)).toEqual(['claude', 'mcp', 'add', '--transport', 'http', 'trellis']);
    const url = words[6]!;
    const header = words[words.indexOf('--header') + 1]!;
    const [headerName, headerValue] = header.split(/:\s*/, 2) as [string, string];
    const c = new Client({ name: 'snippet', version: '1.0.0' });
    await c.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { [headerName]: headerValue } } }));
    client = c;
    await expectWorking(c);
  });
});
