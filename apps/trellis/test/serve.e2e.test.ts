import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type * as TrellisApi from '../src/index.ts';
import type * as TrellisMcpApi from '../src/mcpServer.ts';
import { CLI, createSandbox, runCli, type Sandbox } from './cliHarness.ts';
import { fixtureHostPids, fixturePids, startHttpServe, waitFor, writeServeFixture, type HttpServe } from './serveFixture.ts';
import { isAlive } from '@trellis/test-support';

let sandbox: Sandbox;
let clients: Client[] = [];
let servers: HttpServe[] = [];

beforeEach(() => {
  sandbox = createSandbox();
  clients = [];
  servers = [];
});

afterEach(async () => {
  for (const client of clients) await client.close().catch(() => {});
  for (const server of servers) await server.stop();
  sandbox.cleanup();
});

async function stdioClient(
  args: readonly string[],
  options: { modern?: boolean } = {},
): Promise<{ client: Client; transport: StdioClientTransport; stderr: () => string; errors: Error[] }> {
  const client = new Client({ name: 'serve-e2e', version: '1.0.0' }, options.modern ? { versionNegotiation: { mode: 'auto' } } : {});
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'serve', ...args],
    cwd: sandbox.workspace,
    env: sandbox.env,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const errors: Error[] = [];
  client.onerror = (error) => errors.push(error);
  await client.connect(transport);
  clients.push(client);
  return { client, transport, stderr: () => stderr, errors };
}

describe('trellis serve (stdio)', () => {
  it('lists the offered tools with names, titles, schemas and annotations, in the same order every time', async () => {
    const { config } = writeServeFixture(sandbox);
    const { client } = await stdioClient(['--config', config]);
    const first = await client.listTools();
    const second = await client.listTools();
    expect(second.tools.map((t) => t.name)).toEqual(first.tools.map((t) => t.name));
    for (const tool of first.tools) expect(tool.name).toMatch(/^[A-Za-z0-9_.-]{1,64}$/);
    const structured = first.tools.find((t) => t.title === 'serve-fixture.structured');
    expect(structured).toMatchObject({
      name: 'serve-fixture__structured',
      description: 'Returns the answer.',
      inputSchema: { type: 'object', properties: {} },
      outputSchema: { type: 'object', properties: { answer: { type: 'integer' } }, required: ['answer'] },
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    });
    const write = first.tools.find((t) => t.title === 'core-fs.write');
    expect(write?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true });
    const fetch = first.tools.find((t) => t.title === 'core-web.fetch');
    expect(fetch?.annotations?.openWorldHint).toBe(true);
  });

  it('calls tools: structured results, isError failures with the code, unknown names as protocol errors', async () => {
    const { config } = writeServeFixture(sandbox);
    const { client } = await stdioClient(['--config', config]);
    expect(await client.callTool({ name: 'serve-fixture__structured', arguments: {} })).toEqual({
      content: [{ type: 'text', text: '{"answer":42}' }],
      structuredContent: { answer: 42 },
    });
    const failed = await client.callTool({ name: 'serve-fixture__fail', arguments: {} });
    expect(failed.isError).toBe(true);
    expect(failed.content).toEqual([{ type: 'text', text: 'NOT_FOUND: serve-fixture.fail failed: nothing here' }]);
    expect(failed._meta).toEqual({ 'dev.trellis/error': { code: 'NOT_FOUND', retryable: false } });
    const invalid = await client.callTool({ name: 'builtin-tools__echo', arguments: 'nope' as never }).catch((error: unknown) => error);
    expect(invalid).toBeInstanceOf(Error);
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/Unknown tool: "no_such_tool"/);
  });

  it('serves a 2026-07-28 client the same tools (server/discover, no initialize)', async () => {
    const { config } = writeServeFixture(sandbox);
    const { client } = await stdioClient(['--config', config], { modern: true });
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const tools = await client.listTools();
    expect(tools.tools.some((t) => t.name === 'serve-fixture__structured')).toBe(true);
    expect((await client.callTool({ name: 'serve-fixture__structured', arguments: {} })).structuredContent).toEqual({ answer: 42 });
  });

  it('forwards a process plugin’s progress as notifications/progress', async () => {
    const { config } = writeServeFixture(sandbox);
    const { client } = await stdioClient(['--config', config]);
    const seen: Array<{ progress: number; total?: number; message?: string }> = [];
    const result = await client.callTool({ name: 'serve-fixture__slow', arguments: { quick: true } }, { onprogress: (p) => seen.push(p) });
    expect(result.content).toEqual([{ type: 'text', text: 'done' }]);
    expect(seen).toEqual([
      { progress: 1, total: 3, message: 'step 1' },
      { progress: 2, total: 3, message: 'step 2' },
      { progress: 3, total: 3, message: 'step 3' },
    ]);
  });

  it('aborts the call when the client cancels it (notifications/cancelled), and keeps serving', async () => {
    const { config, auditLog } = writeServeFixture(sandbox);
    const { client } = await stdioClient(['--config', config]);
    const controller = new AbortController();
    const call = client.callTool(
      { name: 'serve-fixture__slow', arguments: {} },
      { signal: controller.signal, onprogress: (p) => (p.progress === 3 ? controller.abort() : undefined) },
    );
    await expect(call).rejects.toThrow();
    // The runtime recorded the call as aborted by its caller, long before the tool's 20 s wait.
    expect(await waitFor(() => readFileSync(auditLog, 'utf8').includes('"ABORTED"'))).toBe(true);
    const outcome = readFileSync(auditLog, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((record) => record.tool === 'serve-fixture.slow');
    expect(outcome).toMatchObject({ ok: false, outcome: 'ABORTED' });
    expect(outcome?.durationMs).toBeLessThan(15_000);
    expect((await client.callTool({ name: 'serve-fixture__structured', arguments: {} })).structuredContent).toEqual({ answer: 42 });
  });

  it('sends tools/list_changed when a restarted plugin reports other tools', async () => {
    const { config, pluginDir } = writeServeFixture(sandbox);
    let changed = 0;
    const { client } = await stdioClient(['--config', config]);
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      changed += 1;
    });
    expect((await client.listTools()).tools.some((t) => t.name === 'serve-fixture__extra_tool')).toBe(false);
    await client.callTool({ name: 'serve-fixture__bump', arguments: {} });
    // The child exits and is restarted; its get_tools now reports extra_tool, which the host
    // notices after the plugin's next call.
    expect(await waitFor(() => fixturePids(pluginDir).length >= 2)).toBe(true);
    expect(changed).toBe(0);
    await client.callTool({ name: 'serve-fixture__structured', arguments: {} });
    expect(await waitFor(() => changed > 0)).toBe(true);
    expect((await client.listTools()).tools.some((t) => t.name === 'serve-fixture__extra_tool')).toBe(true);
    expect((await client.callTool({ name: 'serve-fixture__extra_tool', arguments: {} })).content).toEqual([
      { type: 'text', text: 'extra' },
    ]);
  });

  it('writes nothing but protocol to stdout, and exits with every plugin process gone when stdin closes', async () => {
    const { config, pluginDir } = writeServeFixture(sandbox);
    const { client, transport, stderr, errors } = await stdioClient(['--config', config]);
    await client.callTool({ name: 'serve-fixture__structured', arguments: {} });
    const pids = fixtureHostPids(pluginDir);
    expect(pids.length).toBeGreaterThan(0);
    expect(pids.every(isAlive)).toBe(true);
    const serverPid = transport.pid!;
    // Closing the client ends stdin; the server must leave on its own, taking its plugins along.
    await client.close();
    expect(await waitFor(() => !isAlive(serverPid))).toBe(true);
    expect(await waitFor(() => pids.every((pid) => !isAlive(pid)))).toBe(true);
    expect(stderr()).toMatch(/trellis serve: MCP over stdio, \d+ tools; close stdin to stop/);
    // A stray line on stdout would have reached the client as a parse error.
    expect(errors).toEqual([]);
  });
});

describe('trellis serve: closing stdin', () => {
  it('answers the calls already sent before it exits', async () => {
    const { config } = writeServeFixture(sandbox);
    const child = spawn(process.execPath, [CLI, 'serve', '--config', config], { cwd: sandbox.workspace, env: sandbox.env });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.resume();
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    // slow takes about 300 ms (three progress steps); stdin closes right after the calls are sent.
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'serve-fixture__slow', arguments: { quick: true } } });
    send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'serve-fixture__structured', arguments: {} } });
    child.stdin.end();
    expect(await exited).toBe(0);
    const answers = new Map<number, { result?: { content?: Array<{ text?: string }>; isError?: boolean } }>();
    for (const line of stdout.split('\n').filter((l) => l.trim() !== '')) {
      const message = JSON.parse(line) as { id?: number };
      if (typeof message.id === 'number') answers.set(message.id, message as never);
    }
    expect([...answers.keys()].sort()).toEqual([1, 2, 3]);
    expect(answers.get(2)?.result?.isError).not.toBe(true);
    expect(JSON.stringify(answers.get(2)?.result)).toContain('done');
    expect(JSON.stringify(answers.get(3)?.result)).toContain('42');
  });
});

describe('trellis serve: a line too long for stdio', () => {
  it('says so and exits 1 with its plugins stopped, instead of serving a connection that cannot hear', async () => {
    const { config, pluginDir } = writeServeFixture(sandbox);
    const child = spawn(process.execPath, [CLI, 'serve', '--config', config], { cwd: sandbox.workspace, env: sandbox.env });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.stdin.on('error', () => {});
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'serve-fixture__structured', arguments: {} } });
    expect(await waitFor(() => stdout.includes('"id":2'))).toBe(true);
    const pids = fixtureHostPids(pluginDir);
    expect(pids.length).toBeGreaterThan(0);
    // 11 MiB with no newline, stdin left open: the client is still there, the line is not.
    child.stdin.write(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":{"text":"${'x'.repeat(11 * 1024 * 1024)}`);
    expect(await exited).toBe(1);
    expect(stderr).toMatch(/longer than 10 MiB, the most one stdio line may hold; the connection is closed/);
    expect(stderr).toMatch(/the stdio connection can no longer be used; stopping/);
    expect(await waitFor(() => pids.every((pid) => !isAlive(pid)))).toBe(true);
  });
});

describe('trellis serve: skills over MCP (SEP-2640)', () => {
  it('serves the skills skill-source-local admits, and not the ones it rejects', async () => {
    const skills = join(sandbox.env.XDG_CONFIG_HOME!, 'trellis', 'skills');
    mkdirSync(join(skills, 'greeting', 'references'), { recursive: true });
    writeFileSync(
      join(skills, 'greeting', 'SKILL.md'),
      '---\nname: greeting\ndescription: Greets someone by name.\n---\n# Greeting\n\nSay hello by name.\n',
    );
    writeFileSync(join(skills, 'greeting', 'references', 'TONE.md'), 'Warm and short.\n');
    mkdirSync(join(skills, 'broken'));
    writeFileSync(join(skills, 'broken', 'SKILL.md'), 'no front matter at all\n');
    const { config } = writeServeFixture(sandbox);
    const { client } = await stdioClient(['--config', config]);
    const skillsClient = new SkillsClient(client);
    expect(skillsClient.supported).toBe(true);
    const listing = await skillsClient.list();
    expect(listing.skills.map((s) => s.frontmatter.name)).toEqual(['greeting']);
    const skill = listing.skills[0]!;
    expect(skill.frontmatter.description).toBe('Greets someone by name.');
    const manifest = await skillsClient.read(skill);
    expect(manifest.verified).toBe(true);
    expect(manifest.text).toContain('Say hello by name.');
    const tone = await skillsClient.read(skill, 'references/TONE.md');
    expect(tone.text).toBe('Warm and short.\n');
  });
});

describe('trellis serve --http', () => {
  const TOKEN = 'a-test-token-of-enough-length';

  /** A raw 2025-era `initialize` POST with `headers`, as a client or a browser would send it. */
  const postInitialize = (url: string, headers: Record<string, string>): Promise<Response> =>
    fetch(url, {
      method: 'POST',
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      }),
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    });

  async function httpClient(url: string, headers: Record<string, string>, modern = false): Promise<Client> {
    const client = new Client({ name: 'serve-e2e', version: '1.0.0' }, modern ? { versionNegotiation: { mode: 'auto' } } : {});
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
    clients.push(client);
    return client;
  }

  it('serves 2025 and 2026-07-28 clients behind the bearer token on 127.0.0.1', async () => {
    const { config } = writeServeFixture(sandbox);
    const server = await startHttpServe(sandbox, ['--config', config], { TRELLIS_SERVE_TOKEN: TOKEN });
    servers.push(server);
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    for (const modern of [false, true]) {
      const client = await httpClient(server.url, { Authorization: `Bearer ${TOKEN}` }, modern);
      expect((await client.listTools()).tools.some((t) => t.name === 'serve-fixture__structured')).toBe(true);
      expect((await client.callTool({ name: 'serve-fixture__structured', arguments: {} })).structuredContent).toEqual({ answer: 42 });
      const seen: number[] = [];
      await client.callTool({ name: 'serve-fixture__slow', arguments: { quick: true } }, { onprogress: (p) => seen.push(p.progress) });
      expect(seen).toEqual([1, 2, 3]);
    }
    expect(server.stderr()).not.toContain(TOKEN);
  });

  it('aborts a call when an HTTP client cancels it (2026-07-28) or drops the request (2025 stateless)', async () => {
    const { config, auditLog } = writeServeFixture(sandbox);
    const server = await startHttpServe(sandbox, ['--config', config], { TRELLIS_SERVE_TOKEN: TOKEN });
    servers.push(server);
    const aborted = () =>
      readFileSync(auditLog, 'utf8')
        .split('\n')
        .filter((line) => line.includes('"serve-fixture.slow"') && line.includes('"ABORTED"')).length;
    // 2026-07-28: the client's cancellation ends the call.
    const client = await httpClient(server.url, { Authorization: `Bearer ${TOKEN}` }, true);
    const controller = new AbortController();
    const call = client.callTool(
      { name: 'serve-fixture__slow', arguments: {} },
      { signal: controller.signal, onprogress: (p) => (p.progress === 3 ? controller.abort() : undefined) },
    );
    await expect(call).rejects.toThrow();
    expect(await waitFor(() => aborted() === 1)).toBe(true);
    // 2025-era stateless serving: dropping the request's connection ends the call.
    const drop = new AbortController();
    const response = await fetch(server.url, {
      method: 'POST',
      signal: drop.signal,
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': '2025-06-18',
        Authorization: `Bearer ${TOKEN}`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'serve-fixture__slow', arguments: {}, _meta: { progressToken: 'p' } },
      }),
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    let seen = '';
    while (!seen.includes('"progress":3')) seen += new TextDecoder().decode((await reader.read()).value);
    drop.abort();
    expect(await waitFor(() => aborted() === 2)).toBe(true);
  });

  it('refuses a missing or wrong token with 401, and a foreign Origin or Host with 403', async () => {
    const { config } = writeServeFixture(sandbox);
    const server = await startHttpServe(sandbox, ['--config', config], { TRELLIS_SERVE_TOKEN: TOKEN });
    servers.push(server);
    const post = (headers: Record<string, string>) => postInitialize(server.url, headers);
    expect((await post({})).status).toBe(401);
    const wrong = await post({ Authorization: 'Bearer not-the-token-at-all-xxxxx' });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await post({ Authorization: `Bearer ${TOKEN}`, Origin: 'http://evil.example.com' })).status).toBe(403);
    expect((await post({ Authorization: `Bearer ${TOKEN}`, Origin: 'http://localhost:3000' })).status).toBe(200);
    await expect(httpClient(server.url, { Authorization: 'Bearer wrong-token-xxxxxxxxxxxx' })).rejects.toThrow();
  });

  it('generates a token when none is configured and prints it to stderr', async () => {
    const { config } = writeServeFixture(sandbox);
    const server = await startHttpServe(sandbox, ['--config', config]);
    servers.push(server);
    const token = /token \(generated[^)]*\): (\S+)/.exec(server.stderr())?.[1];
    expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const client = await httpClient(server.url, { Authorization: `Bearer ${token}` });
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
  });

  it('takes the token from [serve] token', async () => {
    const { config } = writeServeFixture(sandbox, `\n[serve]\ntoken = "${TOKEN}-from-config"\n`);
    const server = await startHttpServe(sandbox, ['--config', config]);
    servers.push(server);
    expect(server.stderr()).not.toMatch(/generated/);
    const client = await httpClient(server.url, { Authorization: `Bearer ${TOKEN}-from-config` });
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
  });

  it('follows [serve] token, allowed_origins and tool_names when runtime.toml changes', async () => {
    const { config } = writeServeFixture(sandbox, `\n[serve]\ntoken = "${TOKEN}-one"\n`);
    const server = await startHttpServe(sandbox, ['--config', config]);
    servers.push(server);
    const post = async (token: string, headers: Record<string, string> = {}) =>
      (await postInitialize(server.url, { Authorization: `Bearer ${token}`, ...headers })).status;
    const origin = { Origin: 'https://app.example.com' };
    expect(await post(`${TOKEN}-one`)).toBe(200);
    expect(await post(`${TOKEN}-one`, origin)).toBe(403);
    const before = await httpClient(server.url, { Authorization: `Bearer ${TOKEN}-one` });
    expect((await before.listTools()).tools.map((t) => t.name)).toContain('serve-fixture__structured');
    // A call left open under the old token (slow waits 20 s after its progress) is ended by the rotation.
    const response = await fetch(server.url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': '2025-06-18',
        Authorization: `Bearer ${TOKEN}-one`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'serve-fixture__slow', arguments: {}, _meta: { progressToken: 'p' } },
      }),
    });
    expect(response.status).toBe(200);
    const open = response.text();
    open.catch(() => {});

    // Rotate the token, allow an origin and switch to short names, the way an editor saves.
    const text = readFileSync(config, 'utf8').replace(
      `token = "${TOKEN}-one"`,
      `token = "${TOKEN}-two"\nallowed_origins = ["app.example.com"]\ntool_names = "short"`,
    );
    writeFileSync(`${config}.tmp`, text);
    renameSync(`${config}.tmp`, config);
    expect(await waitFor(() => server.stderr().includes('the bearer token changed (now [serve] token)'), 30_000), server.stderr()).toBe(
      true,
    );
    expect(server.stderr()).not.toContain(`${TOKEN}-two`);
    expect(server.stderr()).toContain('and its 1 open request was ended');
    // Ended mid-stream, not answered: the 20 s wait would have ended in a "done" result.
    await expect(open).rejects.toThrow(/terminated/);
    expect(await post(`${TOKEN}-one`)).toBe(401);
    expect(await post(`${TOKEN}-two`)).toBe(200);
    expect(await post(`${TOKEN}-two`, origin)).toBe(200);
    const after = await httpClient(server.url, { Authorization: `Bearer ${TOKEN}-two` });
    const names = (await after.listTools()).tools.map((t) => t.name);
    expect(names).toContain('structured');
    expect(names).not.toContain('serve-fixture__structured');
    expect((await after.callTool({ name: 'structured', arguments: {} })).structuredContent).toEqual({ answer: 42 });
  });

  it('accepts --no-auth on loopback with a warning, and refuses it on other addresses', async () => {
    const { config } = writeServeFixture(sandbox);
    const refused = runCli(sandbox, ['serve', '--http', '--host', '0.0.0.0', '--no-auth', '--config', config]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--no-auth is refused on 0.0.0.0');
    expect(refused.stdout).toBe('');
    const server = await startHttpServe(sandbox, ['--no-auth', '--config', config]);
    servers.push(server);
    expect(server.stderr()).toContain('warning: --no-auth');
    const client = await httpClient(server.url, {});
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
  });

  it('stops on SIGTERM with every plugin process gone', async () => {
    const { config, pluginDir } = writeServeFixture(sandbox);
    const server = await startHttpServe(sandbox, ['--config', config], { TRELLIS_SERVE_TOKEN: TOKEN });
    const pids = fixtureHostPids(pluginDir);
    expect(pids.length).toBeGreaterThan(0);
    expect(await server.stop()).toBe(143);
    expect(await waitFor(() => pids.every((pid) => !isAlive(pid)))).toBe(true);
  });

  it('rejects bad flags with usage errors', () => {
    expect(runCli(sandbox, ['serve', '--port', '80']).stderr).toContain('--host, --port and --no-auth go with --http');
    const badPort = runCli(sandbox, ['serve', '--http', '--port', 'x']);
    expect(badPort.code).toBe(2);
    expect(badPort.stderr).toContain('--port must be a whole number from 0 to 65535');
    expect(runCli(sandbox, ['tools', 'list', '--http']).stderr).toContain('`trellis tools list` does not take --http');
    // A token pasted with its line break would start a server no client can ever authenticate to.
    const badToken = runCli(sandbox, ['serve', '--http', '--port', '0'], { TRELLIS_SERVE_TOKEN: 'abcdef0123456789abcdef\n' });
    expect(badToken.code).toBe(2);
    expect(badToken.stderr).toContain('TRELLIS_SERVE_TOKEN may hold only letters, digits and - . _ ~ + /');
  });

  it('lets an embedder serve its own assembly (trellis/mcp-server, the built files)', async () => {
    const dist = dirname(CLI);
    const { assemble } = (await import(pathToFileURL(join(dist, 'index.js')).href)) as typeof TrellisApi;
    const mcp = (await import(pathToFileURL(join(dist, 'mcp-server.js')).href)) as typeof TrellisMcpApi;
    const assembly = await assemble({ workspace: sandbox.workspace, home: sandbox.home, env: sandbox.env });
    const server = mcp.createTrellisMcpServer({
      host: {
        catalog: () => assembly.catalog,
        runtime: assembly.runtime,
        onCatalogChange: (listener) => assembly.onCatalogChanged(() => listener()),
      },
      version: '9.9.9',
      name: 'my-host',
    });
    const http = await mcp.serveMcpHttp(server, { token: TOKEN });
    try {
      const client = await httpClient(http.url, { Authorization: `Bearer ${TOKEN}` });
      expect(client.getServerVersion()).toMatchObject({ name: 'my-host', version: '9.9.9' });
      expect((await client.callTool({ name: 'builtin-tools__echo', arguments: { a: 1 } })).structuredContent).toEqual({ a: 1 });
      await client.close();
    } finally {
      await http.close();
      server.close();
      await assembly.dispose();
    }
  });
});
