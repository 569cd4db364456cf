import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '@trellis/sdk';
import { createMcpToolSource } from '../src/createMcpToolSource.ts';
import { McpSettingsSchema } from '../src/settings.ts';
import { encodeHeaderValue, standardRequestHeaders } from '../src/standardHeaders.ts';
import { EVERYTHING_BIN, freePort, makeTempDir, toolContext, waitFor } from './helpers.ts';
import { isAlive, startRecordingProxy } from '@trellis/test-support';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('standardRequestHeaders (SEP-2243)', () => {
  it('derives Mcp-Method from every request and notification, Mcp-Name where the method has one', () => {
    const body = (message: unknown) => JSON.stringify(message);
    expect(standardRequestHeaders(body({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }))).toEqual({
      'mcp-method': 'tools/list',
    });
    expect(standardRequestHeaders(body({ jsonrpc: '2.0', method: 'notifications/initialized' }))).toEqual({
      'mcp-method': 'notifications/initialized',
    });
    expect(
      standardRequestHeaders(body({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'my-hyphenated-tool', arguments: {} } })),
    ).toEqual({ 'mcp-method': 'tools/call', 'mcp-name': 'my-hyphenated-tool' });
    expect(standardRequestHeaders(body({ jsonrpc: '2.0', id: 3, method: 'prompts/get', params: { name: 'p' } }))).toEqual({
      'mcp-method': 'prompts/get',
      'mcp-name': 'p',
    });
    expect(
      standardRequestHeaders(body({ jsonrpc: '2.0', id: 4, method: 'resources/read', params: { uri: 'file:///path/to/file%20name.txt' } })),
    ).toEqual({ 'mcp-method': 'resources/read', 'mcp-name': 'file:///path/to/file%20name.txt' });
    // A response (to a server's request), a batch, and what is not JSON carry none.
    expect(standardRequestHeaders(body({ jsonrpc: '2.0', id: 5, result: {} }))).toBeUndefined();
    expect(standardRequestHeaders(body([{ jsonrpc: '2.0', id: 6, method: 'ping' }]))).toBeUndefined();
    expect(standardRequestHeaders('not json')).toBeUndefined();
  });

  it('encodes values a header cannot carry as they are in base64', () => {
    expect(encodeHeaderValue('us-west1')).toBe('us-west1');
    expect(encodeHeaderValue('us west 1')).toBe('us west 1');
    expect(encodeHeaderValue('Hello, 世界')).toBe(`=?base64?${Buffer.from('Hello, 世界').toString('base64')}?=`);
    expect(encodeHeaderValue(' padded ')).toBe(`=?base64?${Buffer.from(' padded ').toString('base64')}?=`);
    expect(encodeHeaderValue('line1\nline2')).toBe(`=?base64?${Buffer.from('line1\nline2').toString('base64')}?=`);
    expect(encodeHeaderValue('')).toBe('=?base64??=');
    expect(encodeHeaderValue('=?base64?abc?=')).toBe(`=?base64?${Buffer.from('=?base64?abc?=').toString('base64')}?=`);
  });
});

/** A recording HTTP proxy on 127.0.0.1 (port 0) in front of `target`: every request's headers and body. */
describe('the bridge over Streamable HTTP', { timeout: 60_000 }, () => {
  it('sends Mcp-Method on every POST and Mcp-Name on tools/call, matching the body', async () => {
    const port = await freePort();
    const everything: ChildProcess = spawn(process.execPath, [EVERYTHING_BIN, 'streamableHttp'], {
      env: { PATH: process.env.PATH, PORT: String(port) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    cleanups.push(async () => {
      everything.kill('SIGKILL');
      expect(await waitFor(() => !isAlive(everything.pid!))).toBe(true);
    });
    let log = '';
    everything.stderr!.setEncoding('utf8').on('data', (text: string) => (log += text));
    expect(await waitFor(() => log.includes('listening'), 20_000)).toBe(true);
    const proxy = await startRecordingProxy(new URL(`http://127.0.0.1:${port}/`));
    cleanups.push(() => proxy.close());

    const dir = makeTempDir();
    cleanups.push(dir.remove);
    const source = createMcpToolSource({
      settings: McpSettingsSchema.parse({ servers: [{ name: 'web', url: proxy.url, include_tools: ['echo'] }] }),
      env: { PATH: process.env.PATH },
      workspaceRoot: dir.path,
      logger: silentLogger,
      stateDir: join(dir.path, 'state'),
    });
    cleanups.push(() => source.close());
    await source.start();
    expect(await source.call('web.echo', { message: 'headers' }, toolContext(AbortSignal.timeout(20_000), 'mcp.web.echo'))).toBe(
      'Echo: headers',
    );

    const posts = proxy.seen.filter((entry) => entry.method === 'POST');
    const methods = posts.map((entry) => (JSON.parse(entry.body) as { method?: string }).method).filter((m) => m !== undefined);
    expect(methods).toEqual(expect.arrayContaining(['initialize', 'notifications/initialized', 'tools/list', 'tools/call']));
    for (const post of posts) {
      const message = JSON.parse(post.body) as { method?: string; params?: { name?: string } };
      if (message.method === undefined) continue;
      expect(post.headers['mcp-method'], `Mcp-Method of ${post.body}`).toBe(message.method);
      if (message.method === 'tools/call') expect(post.headers['mcp-name']).toBe('echo');
      else expect(post.headers['mcp-name']).toBeUndefined();
    }
  });
});
