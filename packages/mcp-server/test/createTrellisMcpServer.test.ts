import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport, type McpServer } from '@modelcontextprotocol/server';
import { createModelNameTable, createToolDescriptor, type ResourceCatalog, type ToolDescriptor } from '@trellis/catalog';
import { DEFAULT_TOOL_CONTRACT, type ToolOutcome } from '@trellis/sdk';
import { connect as connectTcp } from 'node:net';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createTrellisMcpServer, serveMcpHttp, serveMcpStdio, type McpServeHost } from '../src/index.ts';

function descriptor(name: string, extra: Partial<Parameters<typeof createToolDescriptor>[0]> = {}): ToolDescriptor {
  const [plugin, ...rest] = name.split('.');
  return createToolDescriptor({
    name,
    plugin: plugin!,
    tool: rest.join('.'),
    description: `The ${name} tool.`,
    tags: [],
    examples: [],
    inputSchema: { type: 'object', properties: {} },
    contract: DEFAULT_TOOL_CONTRACT,
    source: 'bundled',
    ...extra,
  });
}

/** A catalog holding exactly `descriptors`, all offered: what the server reads. */
function catalogOf(descriptors: readonly ToolDescriptor[]): ResourceCatalog {
  const names = createModelNameTable(descriptors.map((d) => d.name));
  return {
    offered: () => descriptors,
    toModelToolName: (name: string) => names.toModel(name),
  } as unknown as ResourceCatalog;
}

class TestHost implements McpServeHost {
  current: ResourceCatalog;
  readonly calls: Array<{ name: string; input: unknown }> = [];
  private readonly listeners = new Set<() => void>();
  outcome: ToolOutcome = { ok: true, value: 'ok' };

  constructor(descriptors: readonly ToolDescriptor[]) {
    this.current = catalogOf(descriptors);
  }
  catalog(): ResourceCatalog {
    return this.current;
  }
  /** When set, a call waits for its signal and reports here when it is cancelled. */
  holdUntilAborted: ((name: string) => void) | undefined;
  readonly runtime = {
    invoke: async (
      request: { name: string; input?: unknown },
      options: { signal?: AbortSignal; onProgress?: (update: { progress: number }) => void } = {},
    ) => {
      this.calls.push({ name: request.name, input: request.input });
      const hold = this.holdUntilAborted;
      if (hold !== undefined && options.signal !== undefined) {
        const signal = options.signal;
        options.onProgress?.({ progress: 1 });
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
        hold(request.name);
        return { ok: false, error: { code: 'ABORTED', message: 'cancelled', retryable: false } } as ToolOutcome;
      }
      return this.outcome;
    },
  };
  onCatalogChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  replace(descriptors: readonly ToolDescriptor[]): void {
    this.current = catalogOf(descriptors);
    for (const listener of this.listeners) listener();
  }
}

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const c of open.splice(0)) await c.close();
});

async function connect(server: ReturnType<typeof createTrellisMcpServer>): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const instance = (await server.factory({ era: 'legacy' })) as McpServer;
  await instance.connect(serverSide);
  const client = new Client({ name: 'unit', version: '1' });
  await client.connect(clientSide);
  open.push(client);
  return client;
}

describe('createTrellisMcpServer', () => {
  it('pages tools/list in catalog order and refuses foreign or stale cursors', async () => {
    const host = new TestHost(['a.one', 'a.two', 'b.three', 'b.four', 'c.five'].map((n) => descriptor(n)));
    const client = await connect(createTrellisMcpServer({ host, version: '1.0.0', pageSize: 2 }));
    const first = await client.request({ method: 'tools/list', params: {} });
    expect(first.tools.map((t) => t.name)).toEqual(['a__one', 'a__two']);
    const second = await client.request({ method: 'tools/list', params: { cursor: first.nextCursor! } });
    expect(second.tools.map((t) => t.name)).toEqual(['b__three', 'b__four']);
    const third = await client.request({ method: 'tools/list', params: { cursor: second.nextCursor! } });
    expect(third.tools.map((t) => t.name)).toEqual(['c__five']);
    expect(third.nextCursor).toBeUndefined();
    await expect(client.request({ method: 'tools/list', params: { cursor: 'not-ours' } })).rejects.toThrow(/was not issued by this server/);
    host.replace(['a.one', 'a.two', 'b.three'].map((n) => descriptor(n)));
    await expect(client.request({ method: 'tools/list', params: { cursor: first.nextCursor! } })).rejects.toThrow(/the tool list changed/);
  });

  it('gives short names only where they are unique, and resolves every name back', async () => {
    const host = new TestHost(['a.read', 'b.read', 'b.write', 'c.odd name'].map((n) => descriptor(n)));
    const client = await connect(createTrellisMcpServer({ host, version: '1.0.0', naming: 'short' }));
    const { tools } = await client.listTools();
    expect(tools.map((t) => [t.name, t.title])).toEqual([
      ['a__read', 'a.read'],
      ['b__read', 'b.read'],
      ['write', 'b.write'],
      [expect.stringMatching(/^c_[0-9a-f]{12}_odd-name$/), 'c.odd name'],
    ]);
    await client.callTool({ name: 'write', arguments: { x: 1 } });
    await client.callTool({ name: tools[3]!.name, arguments: {} });
    expect(host.calls).toEqual([
      { name: 'b.write', input: { x: 1 } },
      { name: 'c.odd name', input: {} },
    ]);
  });

  it('sends tools/list_changed when the served list changes, and not for an equal catalog', async () => {
    const host = new TestHost([descriptor('a.one')]);
    const client = await connect(createTrellisMcpServer({ host, version: '1.0.0' }));
    let changed = 0;
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      changed += 1;
    });
    host.replace([descriptor('a.one')]);
    host.replace([descriptor('a.one'), descriptor('a.two')]);
    await client.listTools();
    expect(changed).toBe(1);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['a__one', 'a__two']);
  });

  it('sends tools/list_changed for a description reworded at the same length and for an output schema alone', async () => {
    const host = new TestHost([descriptor('a.one', { description: 'Reads a file.' })]);
    const client = await connect(createTrellisMcpServer({ host, version: '1.0.0' }));
    let changed = 0;
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      changed += 1;
    });
    host.replace([descriptor('a.one', { description: 'Wipes a disk.' })]);
    await client.listTools();
    expect(changed).toBe(1);
    host.replace([
      descriptor('a.one', { description: 'Wipes a disk.', outputSchema: { type: 'object', properties: { n: { type: 'number' } } } }),
    ]);
    const listed = await client.listTools();
    expect(changed).toBe(2);
    expect(listed.tools[0]?.description).toBe('Wipes a disk.');
    expect(listed.tools[0]?.outputSchema).toMatchObject({ properties: { n: { type: 'number' } } });
  });

  it('wraps a non-object output schema and its result for 2025-era clients', async () => {
    const host = new TestHost([descriptor('a.count', { outputSchema: { type: 'integer' } })]);
    host.outcome = { ok: true, value: 7 };
    const client = await connect(createTrellisMcpServer({ host, version: '1.0.0' }));
    const { tools } = await client.listTools();
    expect(tools[0]!.outputSchema).toEqual({ type: 'object', properties: { result: { type: 'integer' } }, required: ['result'] });
    const result = await client.callTool({ name: 'a__count', arguments: {} });
    expect(result.structuredContent).toEqual({ result: 7 });
  });

  it('answers an unknown tool with a protocol error and a failed call with isError', async () => {
    const host = new TestHost([descriptor('a.one')]);
    host.outcome = { ok: false, error: { code: 'TIMEOUT', message: 'a.one did not finish', retryable: true } };
    const client = await connect(createTrellisMcpServer({ host, version: '1.0.0' }));
    await expect(client.callTool({ name: 'a.one', arguments: {} })).rejects.toThrow(/Unknown tool: "a.one"/);
    expect(await client.callTool({ name: 'a__one', arguments: {} })).toEqual({
      isError: true,
      content: [{ type: 'text', text: 'TIMEOUT: a.one did not finish' }],
      _meta: { 'dev.trellis/error': { code: 'TIMEOUT', retryable: true } },
    });
  });
});

describe('serveMcpStdio', () => {
  /** A stdio server on in-memory pipes: what it wrote, line by line, and what it reported. */
  function stdioServer() {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const errors: string[] = [];
    const lines: Array<{ id?: unknown; result?: unknown; error?: unknown }> = [];
    let buffered = '';
    stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      let index: number;
      while ((index = buffered.indexOf('\n')) !== -1) {
        lines.push(JSON.parse(buffered.slice(0, index)) as never);
        buffered = buffered.slice(index + 1);
      }
    });
    const server = createTrellisMcpServer({ host: new TestHost([descriptor('a.one')]), version: '1.0.0' });
    const serving = serveMcpStdio(server, { stdin, stdout, onerror: (error) => errors.push(error.message) });
    open.push({ close: () => serving.close() });
    const send = (message: object): boolean => stdin.write(`${JSON.stringify(message)}\n`);
    const answered = async (id: number) => {
      for (let i = 0; i < 200 && !lines.some((l) => l.id === id); i++) await new Promise((resolve) => setTimeout(resolve, 10));
      return lines.find((l) => l.id === id);
    };
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return { stdin, serving, errors, send, answered };
  }

  it('ends with "broken" and says why when a line outgrows the transport, instead of going deaf', async () => {
    const { stdin, serving, errors, answered } = stdioServer();
    expect((await answered(1))?.result).toBeDefined();
    stdin.write(
      `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a__one","arguments":{"text":"${'x'.repeat(11 * 1024 * 1024)}`,
    );
    expect(await serving.closed).toBe('broken');
    expect(errors.join('\n')).toMatch(/longer than 10 MiB.*the connection is closed/);
  });

  it('reports a JSON line that is not JSON-RPC in one sentence, and keeps serving', async () => {
    const { serving, errors, send, answered } = stdioServer();
    send({ id: 5, hello: 'world' });
    send({ jsonrpc: '2.0', id: 6, method: 'tools/list', params: {} });
    expect(((await answered(6))?.result as { tools: unknown[] }).tools).toHaveLength(1);
    expect(errors).toEqual(['ignored a line from the client that is JSON but not a JSON-RPC 2.0 request, notification or response']);
    await serving.close();
    expect(await serving.closed).toBe('closed');
  });

  it('ends with "stdin-closed" once the client closes stdin', async () => {
    const { stdin, serving, answered } = stdioServer();
    await answered(1);
    stdin.end();
    expect(await serving.closed).toBe('stdin-closed');
  });
});

describe('serveMcpHttp', () => {
  it('cancels a call whose client left after an SSE keep-alive, and one whose token was rotated out', async () => {
    const host = new TestHost([descriptor('a.one')]);
    const cancelled: string[] = [];
    host.holdUntilAborted = (name) => cancelled.push(name);
    let token = 'first-token-0123456789';
    // The SDK's adapter notices a client that left only at its next write: the next keep-alive.
    const keepAliveMs = 3000;
    const serving = await serveMcpHttp(createTrellisMcpServer({ host, version: '1.0.0' }), { token: () => token, keepAliveMs });
    open.push(serving);
    const call = (signal?: AbortSignal) =>
      fetch(serving.url, {
        method: 'POST',
        ...(signal !== undefined ? { signal } : {}),
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'MCP-Protocol-Version': '2025-06-18',
          Authorization: `Bearer ${token}`,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'a__one', arguments: {}, _meta: { progressToken: 'p' } },
        }),
      });
    const within = async (ms: number, predicate: () => boolean) => {
      const deadline = Date.now() + ms;
      while (!predicate() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
      return predicate();
    };
    // The client leaves just after a keep-alive: the call is cancelled then, not at the next keep-alive
    // (the SDK's adapter then often notices the closed connection only at its next write).
    const leaving = new AbortController();
    const first = await call(leaving.signal);
    const reader = first.body!.getReader();
    let seen = '';
    while (!seen.includes(': keepalive')) seen += new TextDecoder().decode((await reader.read()).value);
    await new Promise((resolve) => setTimeout(resolve, 100));
    leaving.abort();
    expect(await within(500, () => cancelled.length === 1)).toBe(true);
    // A call under a token that is then rotated out is cancelled, not only cut off.
    const second = await call();
    const text = second.text();
    text.catch(() => {});
    expect(await within(5000, () => host.calls.length === 2)).toBe(true);
    token = 'second-token-0123456789';
    expect(serving.reauthorize()).toBe(1);
    expect(await within(keepAliveMs / 2, () => cancelled.length === 2)).toBe(true);
    await expect(text).rejects.toThrow();
  });
  it('cancels every call of a pipelining connection when it dies, the queued ones included', async () => {
    const host = new TestHost([descriptor('a.one')]);
    const cancelled: string[] = [];
    host.holdUntilAborted = (name) => cancelled.push(name);
    const serving = await serveMcpHttp(createTrellisMcpServer({ host, version: '1.0.0' }));
    open.push(serving);
    const { port } = new URL(serving.url);
    const body = (id: number) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'a__one', arguments: {}, _meta: { progressToken: `p${id}` } },
      });
    const request = (id: number) =>
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n` +
      `MCP-Protocol-Version: 2025-06-18\r\nContent-Length: ${Buffer.byteLength(body(id))}\r\n\r\n${body(id)}`;
    const socket = connectTcp(Number(port), '127.0.0.1');
    socket.on('error', () => {});
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    // Two requests back to back on one connection: the second's response waits behind the first's.
    socket.write(request(1) + request(2));
    const waitUntil = async (predicate: () => boolean) => {
      for (let i = 0; i < 500 && !predicate(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
      return predicate();
    };
    expect(await waitUntil(() => host.calls.length === 2)).toBe(true);
    socket.destroy();
    expect(await waitUntil(() => cancelled.length === 2)).toBe(true);
  });
});
