import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ToolError, type Logger, type ToolContract } from '@trellis/sdk';
import {
  createToolRuntime,
  type ApprovalRequest,
  type CreateToolRuntimeOptions,
  type ExecutionEvent,
  type ToolRuntime,
} from '../src/index.ts';
import { descriptor, fakeImplementation, runtimeConfig, staticCatalog } from './helpers.ts';

const runtimes: ToolRuntime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.dispose()));
});

function make(options: Partial<CreateToolRuntimeOptions> & Pick<CreateToolRuntimeOptions, 'catalog' | 'implementations'>): ToolRuntime {
  const runtime = createToolRuntime({ config: runtimeConfig(), ...options });
  runtimes.push(runtime);
  return runtime;
}

function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const log = (level: string) => (message: string) => void lines.push(`${level}: ${message}`);
  return { lines, debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}

const echo = descriptor('demo.echo', {
  inputSchema: {
    type: 'object',
    properties: { text: { type: 'string' }, limit: { type: 'integer', maximum: 100 } },
    required: ['text'],
    additionalProperties: false,
  },
});

describe('success and events', () => {
  it('returns the value and emits one event per stage, in order', async () => {
    const events: ExecutionEvent[] = [];
    const impl = fakeImplementation('demo', { echo: (input) => ({ echoed: (input as { text: string }).text }) });
    const runtime = make({
      catalog: staticCatalog([echo]),
      implementations: new Map([['demo', impl]]),
      hooks: [(e) => void events.push(e)],
    });
    const outcome = await runtime.invoke({ name: 'demo.echo', input: { text: 'hi' }, callId: 'c1' });
    expect(outcome).toEqual({ ok: true, value: { echoed: 'hi' } });
    const outcomeEvent = events.at(-1);
    expect(outcomeEvent?.type === 'outcome' && outcomeEvent.durationMs >= 0).toBe(true);
    expect(events.map((e) => (e.type === 'outcome' ? { ...e, durationMs: 0 } : e))).toEqual([
      { type: 'lookup', callId: 'c1', tool: 'demo.echo', status: 'offered', plugin: 'demo' },
      { type: 'validate', callId: 'c1', tool: 'demo.echo', ok: true, errors: [] },
      { type: 'capability', callId: 'c1', tool: 'demo.echo', required: [], missing: [] },
      { type: 'canonicalize', callId: 'c1', tool: 'demo.echo', ran: false, ok: true },
      { type: 'policy', callId: 'c1', tool: 'demo.echo', decision: 'allowed', approval: 'none' },
      { type: 'attempt', callId: 'c1', tool: 'demo.echo', attempt: 1, phase: 'start' },
      { type: 'attempt', callId: 'c1', tool: 'demo.echo', attempt: 1, phase: 'end', ok: true, retrying: false },
      {
        type: 'outcome',
        callId: 'c1',
        tool: 'demo.echo',
        outcome: { ok: true, value: { echoed: 'hi' } },
        durationMs: 0,
        attempts: 1,
        argKeys: ['text'],
      },
    ]);
  });

  it('generates call ids when none is given, and maps an undefined result to null', async () => {
    const ids: string[] = [];
    const runtime = make({
      catalog: staticCatalog([descriptor('demo.noop')]),
      implementations: () => fakeImplementation('demo', { noop: () => undefined }),
      hooks: [(e) => void ids.push(e.callId)],
    });
    expect(await runtime.invoke({ name: 'demo.noop' })).toEqual({ ok: true, value: null });
    await runtime.invoke({ name: 'demo.noop' });
    expect(ids[0]).toMatch(/^call-[0-9a-f]{8}-1$/);
    expect(ids.at(-1)).toMatch(/^call-[0-9a-f]{8}-2$/);
  });

  it('never throws, even for a malformed request', async () => {
    const runtime = make({ catalog: staticCatalog([]), implementations: new Map() });
    // @ts-expect-error deliberately wrong
    expect(await runtime.invoke(null)).toEqual({
      ok: false,
      error: {
        code: 'TOOL_NOT_FOUND',
        message: 'no tool is named undefined; list the offered tools with `trellis tools list`',
        retryable: false,
      },
    });
  });
});

describe('1. lookup', () => {
  const runtime = () =>
    make({
      catalog: staticCatalog([echo, descriptor('web.fetch')], {
        'web.fetch': { code: 'MISSING_ENV', message: 'plugin web needs WEB_TOKEN; set it in the environment' },
      }),
      implementations: new Map([['demo', fakeImplementation('demo', {})]]),
    });

  it('names the nearest match for an unknown tool', async () => {
    expect(await runtime().invoke({ name: 'other.echo', input: {} })).toEqual({
      ok: false,
      error: { code: 'TOOL_NOT_FOUND', message: 'no tool is named other.echo; did you mean demo.echo?', retryable: false },
    });
  });

  it('gives the availability reason for a known tool that is not offered', async () => {
    expect(await runtime().invoke({ name: 'web.fetch', input: {} })).toEqual({
      ok: false,
      error: {
        code: 'TOOL_UNAVAILABLE',
        message: 'web.fetch is not available now: plugin web needs WEB_TOKEN; set it in the environment (MISSING_ENV)',
        retryable: false,
      },
    });
  });

  it('reports a plugin with no implementation as unavailable', async () => {
    const rt = make({ catalog: staticCatalog([descriptor('ghost.run')]), implementations: () => undefined });
    expect(await rt.invoke({ name: 'ghost.run' })).toEqual({
      ok: false,
      error: {
        code: 'TOOL_UNAVAILABLE',
        message: 'ghost.run is not available: this host has no implementation for plugin ghost',
        retryable: false,
      },
    });
  });
});

describe('2. validation', () => {
  const impl = () => fakeImplementation('demo', { echo: (input) => input, strict: (input) => input, tuple: (input) => input });
  const build = (d = echo) => make({ catalog: staticCatalog([d]), implementations: new Map([['demo', impl()]]) });

  it('lists every problem as `path: message`', async () => {
    expect(await build().invoke({ name: 'demo.echo', input: { limit: 500, extra: true } })).toEqual({
      ok: false,
      error: {
        code: 'INPUT_INVALID',
        message:
          "invalid arguments for demo.echo:\n(root): must have required property 'text'\n(root): must NOT have additional property 'extra'\n/limit: must be <= 100",
        retryable: false,
      },
    });
  });

  it('names allowed values for enum and const', async () => {
    const d = descriptor('demo.strict', { inputSchema: { type: 'object', properties: { mode: { enum: ['a', 'b'] }, v: { const: 1 } } } });
    expect(await build(d).invoke({ name: 'demo.strict', input: { mode: 'c', v: 2 } })).toEqual({
      ok: false,
      error: {
        code: 'INPUT_INVALID',
        message: 'invalid arguments for demo.strict:\n/mode: must be one of "a", "b"\n/v: must be 1',
        retryable: false,
      },
    });
  });

  it('fills in defaults on a copy, leaving the caller’s object alone', async () => {
    const d = descriptor('demo.strict', { inputSchema: { type: 'object', properties: { n: { type: 'integer', default: 7 } } } });
    const input = {};
    expect(await build(d).invoke({ name: 'demo.strict', input })).toEqual({ ok: true, value: { n: 7 } });
    expect(input).toEqual({});
  });

  it('accepts draft-07 and draft 2020-12 schemas', async () => {
    const draft7 = descriptor('demo.tuple', {
      inputSchema: {
        $schema: 'http://json-schema.org/draft-07/schema#',
        type: 'object',
        properties: { pair: { type: 'array', items: [{ type: 'string' }, { type: 'number' }] } },
      },
    });
    const rt = build(draft7);
    expect(await rt.invoke({ name: 'demo.tuple', input: { pair: ['a', 1] } })).toEqual({ ok: true, value: { pair: ['a', 1] } });
    expect((await rt.invoke({ name: 'demo.tuple', input: { pair: [1, 1] } })).ok).toBe(false);
    const draft2020 = descriptor('demo.tuple', {
      inputSchema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }], items: false } },
      },
    });
    expect(await build(draft2020).invoke({ name: 'demo.tuple', input: { pair: ['a', 'b'] } })).toEqual({
      ok: false,
      error: {
        code: 'INPUT_INVALID',
        message: 'invalid arguments for demo.tuple:\n/pair: must NOT have more than 1 items',
        retryable: false,
      },
    });
  });

  it('runs a catastrophic pattern in linear time, with the right answers', async () => {
    const d = descriptor('demo.strict', { inputSchema: { type: 'object', properties: { s: { type: 'string', pattern: '(a+)+$' } } } });
    const rt = build(d);
    // Backtracking engines take exponential time on this input; re2js answers at once.
    expect(await rt.invoke({ name: 'demo.strict', input: { s: `${'a'.repeat(50_000)}!` } })).toEqual({
      ok: false,
      error: { code: 'INPUT_INVALID', message: 'invalid arguments for demo.strict:\n/s: must match pattern "(a+)+$"', retryable: false },
    });
    expect(await rt.invoke({ name: 'demo.strict', input: { s: `!${'a'.repeat(50_000)}` } })).toEqual({
      ok: true,
      value: { s: `!${'a'.repeat(50_000)}` },
    });
  });

  it('refuses arguments nested 100,000 levels deep with INPUT_INVALID, before any validator recurses', async () => {
    const nested = (bottom: unknown): unknown => {
      let value = bottom;
      for (let i = 0; i < 100_000; i++) value = [value];
      return value;
    };
    // uniqueItems compares the two items recursively, a default makes the runtime copy the input:
    // both threw RangeError on this input ("a bug in Trellis", "must be plain JSON").
    const schemas = [
      { type: 'object', properties: { a: { type: 'array', uniqueItems: true } } },
      { type: 'object', properties: { a: { type: 'array' }, n: { type: 'integer', default: 1 } } },
      { type: 'object' },
    ];
    for (const inputSchema of schemas) {
      const impl = fakeImplementation('demo', { strict: () => 'ran' });
      const rt = make({ catalog: staticCatalog([descriptor('demo.strict', { inputSchema })]), implementations: new Map([['demo', impl]]) });
      expect(await rt.invoke({ name: 'demo.strict', input: { a: [nested(1), nested(2)] } })).toEqual({
        ok: false,
        error: {
          code: 'INPUT_INVALID',
          message:
            'invalid arguments for demo.strict:\n/a/0/0/0/0/0/0/0/…: nests objects and arrays more than 256 levels deep; send flatter arguments',
          retryable: false,
        },
      });
      expect(impl.dispatches).toEqual({});
    }
    let ok: unknown = 'leaf';
    for (let i = 0; i < 256; i++) ok = { 'a/b': ok };
    expect(await build(descriptor('demo.strict', { inputSchema: { type: 'object' } })).invoke({ name: 'demo.strict', input: ok })).toEqual({
      ok: true,
      value: ok,
    });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(
      await build(descriptor('demo.strict', { inputSchema: { type: 'object' } })).invoke({ name: 'demo.strict', input: cyclic }),
    ).toMatchObject({
      ok: false,
      error: {
        code: 'INPUT_INVALID',
        message:
          'invalid arguments for demo.strict:\n/self/self/self/self/self/self/self/self/…: nests objects and arrays more than 256 levels deep; send flatter arguments',
      },
    });
  });

  it('refuses unsafe schemas with SCHEMA_UNSAFE', async () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 40; i++) deep = { type: 'object', properties: { x: deep } };
    const cases: Array<[Record<string, unknown>, string]> = [
      [
        { type: 'object', properties: { a: { $ref: 'https://example.invalid/schema.json' } } },
        "/properties/a/$ref refers to 'https://example.invalid/schema.json', outside the schema; only local references (#/...) are allowed",
      ],
      [
        { type: 'object', properties: { a: { $ref: 'other.json#/x' } } },
        "/properties/a/$ref refers to 'other.json#/x', outside the schema; only local references (#/...) are allowed",
      ],
      [deep, `the schema nests deeper than 32 levels (at ${'/properties/x'.repeat(16)}/properties)`],
      [
        { type: 'object', properties: { s: { type: 'string', pattern: '(?=a)b' } } },
        'pattern "(?=a)b" cannot run on the linear-time engine: error parsing regexp: invalid or unsupported Perl syntax: `(?=`',
      ],
      [{ type: 'object', description: 'x'.repeat(300_000) }, 'the schema is 300034 bytes of JSON, more than the 262144 allowed'],
      [
        { $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' },
        '$schema "http://json-schema.org/draft-04/schema#" is not supported; use draft 2020-12 or draft-07',
      ],
    ];
    for (const [inputSchema, problem] of cases) {
      const impl = fakeImplementation('demo', { strict: () => 'ran' });
      const rt = make({ catalog: staticCatalog([descriptor('demo.strict', { inputSchema })]), implementations: new Map([['demo', impl]]) });
      expect(await rt.invoke({ name: 'demo.strict', input: {} })).toEqual({
        ok: false,
        error: {
          code: 'SCHEMA_UNSAFE',
          message: `the input schema of demo.strict cannot be used safely: ${problem}; the plugin demo must fix its schema`,
          retryable: false,
        },
      });
      expect(impl.dispatches).toEqual({});
    }
  });

  it('allows local references and $ids the schema declares', async () => {
    const d = descriptor('demo.strict', {
      inputSchema: {
        $id: 'urn:demo:strict',
        type: 'object',
        properties: { a: { $ref: '#/$defs/small' }, b: { $ref: 'urn:demo:strict#/$defs/small' } },
        $defs: { small: { type: 'integer', maximum: 3 } },
      },
    });
    const rt = build(d);
    expect(await rt.invoke({ name: 'demo.strict', input: { a: 1, b: 2 } })).toEqual({ ok: true, value: { a: 1, b: 2 } });
    expect((await rt.invoke({ name: 'demo.strict', input: { a: 9 } })).ok).toBe(false);
  });
});

describe('3. capability', () => {
  it('refuses tools that need what [runtime] capabilities does not grant; * grants the standard ones', async () => {
    const tools = [
      descriptor('net.get', { contract: { capabilities: ['net.outbound'] } }),
      descriptor('net.odd', { contract: { capabilities: ['vendor.thing', 'fs.read'] } }),
    ];
    const impl = fakeImplementation('net', { get: () => 'ok', odd: () => 'ok' });
    const all = make({ catalog: staticCatalog(tools), implementations: new Map([['net', impl]]) });
    expect(await all.invoke({ name: 'net.get' })).toEqual({ ok: true, value: 'ok' });
    expect(await all.invoke({ name: 'net.odd' })).toEqual({
      ok: false,
      error: {
        code: 'CAPABILITY_DENIED',
        message:
          'net.odd needs vendor.thing, which [runtime] capabilities does not grant; add it to [runtime] capabilities in runtime.toml to allow this tool',
        retryable: false,
      },
    });
    const none = make({
      catalog: staticCatalog(tools),
      implementations: new Map([['net', impl]]),
      config: runtimeConfig({ capabilities: ['fs.read'] }),
    });
    expect((await none.invoke({ name: 'net.get' })).ok).toBe(false);
    expect(impl.dispatches).toEqual({ get: 1 });
  });

  it('runs its own check even when the catalog says the capability is missing', async () => {
    const d = descriptor('net.get', { contract: { capabilities: ['net.outbound'] } });
    const rt = make({
      catalog: staticCatalog([d], { 'net.get': { code: 'CAPABILITY_DENIED', message: 'not granted' } }),
      implementations: new Map([['net', fakeImplementation('net', {})]]),
      config: runtimeConfig({ capabilities: [] }),
    });
    expect((await rt.invoke({ name: 'net.get' })) as unknown).toMatchObject({ ok: false, error: { code: 'CAPABILITY_DENIED' } });
  });
});

describe('4. canonicalize and 5. policy', () => {
  const files = [
    descriptor('fs.read', { inputSchema: { type: 'object', properties: { path: { type: 'string' } } } }),
    descriptor('fs.write', { contract: { sideEffects: true } }),
  ];
  const impl = () =>
    fakeImplementation(
      'fs',
      { read: (input) => input, write: () => 'written' },
      {
        canonicalize: {
          read: (input) => {
            const path = (input as { path: string }).path;
            if (path.includes('..')) throw new ToolError('PATH_NOT_ALLOWED', `${path} leaves the workspace`);
            if (path === 'bug') throw new TypeError('cannot read properties of undefined');
            return { input: { path: `/ws/${path}` }, summary: { resolved: `/ws/${path}` } };
          },
        },
      },
    );

  it('hands the tool the canonical input', async () => {
    const events: ExecutionEvent[] = [];
    const rt = make({ catalog: staticCatalog(files), implementations: new Map([['fs', impl()]]), hooks: [(e) => void events.push(e)] });
    expect(await rt.invoke({ name: 'fs.read', input: { path: 'a.txt' }, callId: 'x' })).toEqual({ ok: true, value: { path: '/ws/a.txt' } });
    expect(events.find((e) => e.type === 'canonicalize')).toEqual({
      type: 'canonicalize',
      callId: 'x',
      tool: 'fs.read',
      ran: true,
      ok: true,
      summary: { resolved: '/ws/a.txt' },
    });
  });

  it('keeps the tool’s own code when canonicalization refuses the arguments', async () => {
    const rt = make({ catalog: staticCatalog(files), implementations: new Map([['fs', impl()]]) });
    expect(await rt.invoke({ name: 'fs.read', input: { path: '../etc/passwd' } })).toEqual({
      ok: false,
      error: { code: 'PATH_NOT_ALLOWED', message: '../etc/passwd leaves the workspace', retryable: false },
    });
  });

  it('reports a hook that throws something other than a ToolError as CANONICALIZE_FAILED', async () => {
    const rt = make({ catalog: staticCatalog(files), implementations: new Map([['fs', impl()]]) });
    expect(await rt.invoke({ name: 'fs.read', input: { path: 'bug' } })).toEqual({
      ok: false,
      error: {
        code: 'CANONICALIZE_FAILED',
        message:
          'fs.read could not canonicalize its arguments: fs.read threw TypeError: cannot read properties of undefined (a bug in the tool; a tool reports failures with ToolError)',
        retryable: false,
      },
    });
  });

  it('denies by glob, and refuses what allow does not match', async () => {
    const denied = make({
      catalog: staticCatalog(files),
      implementations: new Map([['fs', impl()]]),
      config: runtimeConfig({ policy: { deny: ['fs.w*'] } }),
    });
    expect(await denied.invoke({ name: 'fs.write' })).toEqual({
      ok: false,
      error: {
        code: 'POLICY_DENIED',
        message: 'fs.write is denied by [runtime.policy] deny = "fs.w*" in runtime.toml; remove that pattern to allow it',
        retryable: false,
      },
    });
    const narrow = make({
      catalog: staticCatalog(files),
      implementations: new Map([['fs', impl()]]),
      config: runtimeConfig({ policy: { allow: ['fs.read'] } }),
    });
    expect(await narrow.invoke({ name: 'fs.write' })).toEqual({
      ok: false,
      error: {
        code: 'POLICY_DENIED',
        message: 'fs.write is not in [runtime.policy] allow ("fs.read"); add a pattern that matches it to allow it',
        retryable: false,
      },
    });
    expect((await narrow.invoke({ name: 'fs.read', input: { path: 'a' } })).ok).toBe(true);
  });

  it('asks the approver with the canonical input, and honours its answer', async () => {
    const requests: Array<Omit<ApprovalRequest, 'signal' | 'contract'>> = [];
    let answer: boolean | Error = true;
    const rt = make({
      catalog: staticCatalog(files),
      implementations: new Map([['fs', impl()]]),
      config: runtimeConfig({ policy: { ask: ['fs.*'] } }),
      approve: ({ signal: _signal, contract: _contract, ...request }) => {
        requests.push(request);
        if (answer instanceof Error) throw answer;
        return answer;
      },
    });
    expect(await rt.invoke({ name: 'fs.read', input: { path: 'a' }, callId: 'k' })).toEqual({ ok: true, value: { path: '/ws/a' } });
    expect(requests).toEqual([
      {
        callId: 'k',
        tool: 'fs.read',
        plugin: 'fs',
        input: { path: '/ws/a' },
        summary: { resolved: '/ws/a' },
        reason: 'policy',
        rule: 'fs.*',
      },
    ]);
    answer = false;
    expect(await rt.invoke({ name: 'fs.read', input: { path: 'a' } })).toEqual({
      ok: false,
      error: {
        code: 'APPROVAL_DENIED',
        message: 'fs.read needs approval ([runtime.policy] ask = "fs.*") and was not approved: the approver said no',
        retryable: false,
      },
    });
    answer = new Error('tty closed');
    expect(await rt.invoke({ name: 'fs.read', input: { path: 'a' } })).toEqual({
      ok: false,
      error: {
        code: 'APPROVAL_DENIED',
        message: 'fs.read needs approval ([runtime.policy] ask = "fs.*") and was not approved: the approval hook failed',
        retryable: false,
      },
    });
  });

  it('ends with TIMEOUT when no answer comes before the deadline, and tells the approver to stop asking', async () => {
    let aborted = false;
    const fsImpl = impl();
    const rt = make({
      catalog: staticCatalog(files),
      implementations: new Map([['fs', fsImpl]]),
      config: runtimeConfig({ policy: { ask: ['fs.write'] } }),
      approve: ({ signal }) =>
        new Promise<boolean>((resolve) => {
          signal.addEventListener('abort', () => {
            aborted = true;
            resolve(true); // too late: the call is already over
          });
        }),
    });
    expect(await rt.invoke({ name: 'fs.write' }, { deadlineMs: 30 })).toEqual({
      ok: false,
      error: { code: 'TIMEOUT', message: 'fs.write was not approved within its 30 ms deadline; nothing was run', retryable: false },
    });
    expect(aborted).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(fsImpl.dispatches).toEqual({});
  });

  it('refuses a contract approval = "ask" tool when there is no approver', async () => {
    const d = descriptor('fs.rm', { contract: { approval: 'ask' } });
    const i = fakeImplementation('fs', { rm: () => 'gone' });
    const rt = make({ catalog: staticCatalog([d]), implementations: new Map([['fs', i]]) });
    expect(await rt.invoke({ name: 'fs.rm' })).toEqual({
      ok: false,
      error: {
        code: 'APPROVAL_DENIED',
        message:
          'fs.rm needs approval (its contract says approval = "ask") and was not approved: this host has no way to ask (no TTY or approval hook); run it from a terminal, or remove it from [runtime.policy] ask',
        retryable: false,
      },
    });
    expect(i.dispatches).toEqual({});
  });
});

describe('6. attempts', () => {
  const flaky = (retryable: boolean) => () => {
    throw new ToolError('HTTP_ERROR', 'upstream 503', { retryable });
  };
  // A contract without maxRetries, so [runtime] max_retries applies unless the test sets one.
  const build = (contract: Partial<ToolContract>, retryable = true, config = { max_retries: 2, retry_backoff_ms: 1 }) => {
    const impl = fakeImplementation('api', { get: flaky(retryable) });
    const d = descriptor('api.get', { contract });
    const { maxRetries: _maxRetries, ...rest } = d.contract;
    const effective = contract.maxRetries === undefined ? (rest as ToolContract) : d.contract;
    const rt = make({
      catalog: staticCatalog([{ ...d, contract: effective }]),
      implementations: new Map([['api', impl]]),
      config: runtimeConfig(config),
    });
    return { rt, impl };
  };

  it('retries a retryable failure of an idempotent tool max_retries + 1 times in all', async () => {
    const events: ExecutionEvent[] = [];
    const { rt, impl } = build({});
    rt.addHook((e) => void events.push(e));
    expect(await rt.invoke({ name: 'api.get' })).toEqual({
      ok: false,
      error: { code: 'HTTP_ERROR', message: 'upstream 503', retryable: true },
    });
    expect(impl.dispatches).toEqual({ get: 3 });
    const ends = events.flatMap((e) =>
      e.type === 'attempt' && e.phase === 'end' ? [[e.attempt, e.retrying, e.delayMs === undefined ? 'none' : 'delay']] : [],
    );
    expect(ends).toEqual([
      [1, true, 'delay'],
      [2, true, 'delay'],
      [3, false, 'none'],
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'outcome', attempts: 3 });
  });

  it('prefers the contract’s maxRetries over [runtime] max_retries', async () => {
    const { rt, impl } = build({ maxRetries: 1 });
    await rt.invoke({ name: 'api.get' });
    expect(impl.dispatches).toEqual({ get: 2 });
  });

  it('does not retry a failure that is not retryable', async () => {
    const { rt, impl } = build({}, false);
    expect(await rt.invoke({ name: 'api.get' })).toEqual({
      ok: false,
      error: { code: 'HTTP_ERROR', message: 'upstream 503', retryable: false },
    });
    expect(impl.dispatches).toEqual({ get: 1 });
  });

  it('never re-dispatches a non-idempotent tool, but retries one that was never dispatched', async () => {
    const { rt, impl } = build({ sideEffects: true, idempotent: false });
    await rt.invoke({ name: 'api.get' });
    expect(impl.dispatches).toEqual({ get: 1 });

    let calls = 0;
    const spawnFails = fakeImplementation(
      'api',
      {},
      {
        outcomes: {
          get: () =>
            ++calls < 3
              ? { ok: false, error: { code: 'PLUGIN_CRASHED', message: 'spawn failed', retryable: true }, notDispatched: true }
              : { ok: true, value: 'sent once' },
        },
      },
    );
    const d = descriptor('api.get', { contract: { sideEffects: true, idempotent: false, maxRetries: 2 } });
    const rt2 = make({
      catalog: staticCatalog([d]),
      implementations: new Map([['api', spawnFails]]),
      config: runtimeConfig({ retry_backoff_ms: 1 }),
    });
    expect(await rt2.invoke({ name: 'api.get' })).toEqual({ ok: true, value: 'sent once' });
    expect(spawnFails.dispatches).toEqual({ get: 3 });
  });

  it('stops retrying when the backoff would pass the deadline', async () => {
    const { rt, impl } = build({}, true, { max_retries: 5, retry_backoff_ms: 10_000 });
    expect(await rt.invoke({ name: 'api.get' }, { deadlineMs: 2_000 })).toEqual({
      ok: false,
      error: { code: 'HTTP_ERROR', message: 'upstream 503', retryable: true },
    });
    expect(impl.dispatches).toEqual({ get: 1 });
  });
});

describe('7. outcomes and failure classes', () => {
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  const tools: Record<string, (input: unknown) => unknown> = {
    toolError: () => {
      throw new ToolError('NOT_FOUND', 'notes.txt does not exist');
    },
    typeError: () => {
      throw new TypeError('x is not a function');
    },
    string: () => {
      throw 'boom';
    },
    number: () => {
      throw 42;
    },
    null: () => {
      throw null;
    },
    object: () => {
      throw { reason: 'bad' };
    },
    rejects: () => Promise.reject(new Error('async failure')),
    cycle: () => cyclic,
    bigint: () => ({ n: 10n }),
    fn: () => ({ nested: [1, { callback: () => 1 }] }),
    big: () => 'x'.repeat(2_000),
  };
  const build = () =>
    make({
      catalog: staticCatalog(Object.keys(tools).map((t) => descriptor(`t.${t}`))),
      implementations: new Map([['t', fakeImplementation('t', tools)]]),
      config: runtimeConfig({ max_output_bytes: 1_000 }),
    });

  it.each([
    ['toolError', 'NOT_FOUND', 'notes.txt does not exist'],
    [
      'typeError',
      'TOOL_THREW',
      't.typeError threw TypeError: x is not a function (a bug in the tool; a tool reports failures with ToolError)',
    ],
    ['string', 'TOOL_THREW', 't.string threw a non-Error value: "boom" (a bug in the tool; a tool reports failures with ToolError)'],
    ['number', 'TOOL_THREW', 't.number threw a non-Error value: 42 (a bug in the tool; a tool reports failures with ToolError)'],
    ['null', 'TOOL_THREW', 't.null threw a non-Error value: null (a bug in the tool; a tool reports failures with ToolError)'],
    [
      'object',
      'TOOL_THREW',
      't.object threw a non-Error value: {"reason":"bad"} (a bug in the tool; a tool reports failures with ToolError)',
    ],
    ['rejects', 'TOOL_THREW', 't.rejects threw Error: async failure (a bug in the tool; a tool reports failures with ToolError)'],
    [
      'cycle',
      'OUTPUT_NOT_SERIALIZABLE',
      't.cycle returned a result that cannot be serialized to JSON: Converting circular structure to JSON (a bug in the tool)',
    ],
    [
      'bigint',
      'OUTPUT_NOT_SERIALIZABLE',
      't.bigint returned a result that cannot be serialized to JSON: Do not know how to serialize a BigInt (a bug in the tool)',
    ],
    [
      'fn',
      'OUTPUT_NOT_SERIALIZABLE',
      't.fn returned a result that cannot be serialized to JSON: /nested/1/callback is a function (a bug in the tool)',
    ],
    [
      'big',
      'OUTPUT_TOO_LARGE',
      't.big returned 2002 bytes of JSON, more than [runtime] max_output_bytes = 1000; ask for less (a smaller limit or range) or raise the cap',
    ],
  ])('%s → %s', async (tool, code, message) => {
    expect(await build().invoke({ name: `t.${tool}` })).toEqual({ ok: false, error: { code, message, retryable: false } });
  });

  it('guards an implementation whose call rejects or throws synchronously', async () => {
    const impl = fakeImplementation('t', {});
    impl.call = () => {
      throw new Error('sync bug');
    };
    const rt = make({ catalog: staticCatalog([descriptor('t.x')]), implementations: new Map([['t', impl]]) });
    expect(await rt.invoke({ name: 't.x' })).toEqual({
      ok: false,
      error: {
        code: 'TOOL_THREW',
        message: 't.x threw Error: sync bug (a bug in the tool; a tool reports failures with ToolError)',
        retryable: false,
      },
    });
  });

  it('keeps going when a hook throws or rejects, and logs it', async () => {
    const logger = recordingLogger();
    const rt = make({
      catalog: staticCatalog([descriptor('t.ok')]),
      implementations: new Map([['t', fakeImplementation('t', { ok: () => 'fine' })]]),
      logger,
      hooks: [
        (e) => {
          if (e.type === 'validate') throw new Error('hook bug');
        },
        async (e) => {
          if (e.type === 'outcome') throw new Error('async hook bug');
        },
      ],
    });
    expect(await rt.invoke({ name: 't.ok' })).toEqual({ ok: true, value: 'fine' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(logger.lines).toEqual([
      'warn: an execution hook failed on the validate event of t.ok; the call goes on',
      'warn: an execution hook failed on the outcome event of t.ok; the call goes on',
    ]);
  });
});

describe('deadlines, abort and queueing', () => {
  const never = () => new Promise(() => {});

  it('ends a tool that never resolves with TIMEOUT at the smallest deadline', async () => {
    const d = descriptor('slow.hang', { contract: { deadlineMs: 60 } });
    const rt = make({ catalog: staticCatalog([d]), implementations: new Map([['slow', fakeImplementation('slow', { hang: never })]]) });
    expect(await rt.invoke({ name: 'slow.hang' })).toEqual({
      ok: false,
      error: { code: 'TIMEOUT', message: 'slow.hang did not finish within its 60 ms deadline and was abandoned', retryable: false },
    });
    expect(await rt.invoke({ name: 'slow.hang' }, { deadlineMs: 20 })).toEqual({
      ok: false,
      error: { code: 'TIMEOUT', message: 'slow.hang did not finish within its 20 ms deadline and was abandoned', retryable: false },
    });
    const capped = make({
      catalog: staticCatalog([descriptor('slow.hang', { contract: { deadlineMs: 600_000 } })]),
      implementations: new Map([['slow', fakeImplementation('slow', { hang: never })]]),
      config: runtimeConfig({ tool_timeout_seconds: 0.03 }),
    });
    expect(await capped.invoke({ name: 'slow.hang' })).toMatchObject({
      ok: false,
      error: { code: 'TIMEOUT', message: 'slow.hang did not finish within its 30 ms deadline and was abandoned' },
    });
  });

  it('aborts the tool’s signal at the deadline', async () => {
    let aborted: unknown;
    const rt = make({
      catalog: staticCatalog([descriptor('slow.watch', { contract: { deadlineMs: 30 } })]),
      implementations: new Map([
        [
          'slow',
          fakeImplementation('slow', {
            watch: (_input, call) =>
              new Promise((_resolve, reject) => call.signal.addEventListener('abort', () => reject((aborted = call.signal.reason)))),
          }),
        ],
      ]),
    });
    expect(await rt.invoke({ name: 'slow.watch' })).toMatchObject({ ok: false, error: { code: 'TIMEOUT' } });
    expect(aborted).toEqual(new Error('slow.watch did not finish within its 30 ms deadline and was abandoned'));
  });

  it('ends with ABORTED when the caller aborts, before or during the call', async () => {
    const rt = make({
      catalog: staticCatalog([descriptor('slow.hang')]),
      implementations: new Map([['slow', fakeImplementation('slow', { hang: never })]]),
    });
    const controller = new AbortController();
    const pending = rt.invoke({ name: 'slow.hang' }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 10);
    expect(await pending).toEqual({
      ok: false,
      error: { code: 'ABORTED', message: 'the caller aborted the call to slow.hang', retryable: false },
    });
    expect(await rt.invoke({ name: 'slow.hang' }, { signal: AbortSignal.abort() })).toEqual({
      ok: false,
      error: { code: 'ABORTED', message: 'the caller aborted the call to slow.hang before it started', retryable: false },
    });
  });

  it('queues calls over max_concurrency; a queued call that times out never runs', async () => {
    const releases: Array<() => void> = [];
    let running = 0;
    let peak = 0;
    const impl = fakeImplementation('q', {
      work: () =>
        new Promise<string>((resolve) => {
          running += 1;
          peak = Math.max(peak, running);
          releases.push(() => {
            running -= 1;
            resolve('done');
          });
        }),
    });
    const rt = make({
      catalog: staticCatalog([descriptor('q.work')]),
      implementations: new Map([['q', impl]]),
      config: runtimeConfig({ max_concurrency: 2 }),
    });
    const first = rt.invoke({ name: 'q.work' });
    const second = rt.invoke({ name: 'q.work' });
    const third = rt.invoke({ name: 'q.work' });
    const doomed = rt.invoke({ name: 'q.work' }, { deadlineMs: 30 });
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(impl.dispatches).toEqual({ work: 2 });
    expect(await doomed).toEqual({
      ok: false,
      error: {
        code: 'TIMEOUT',
        message:
          'q.work did not start within its 30 ms deadline: plugin q was already running 2 calls ([runtime] max_concurrency) and this one waited in the queue',
        retryable: false,
      },
    });
    releases.shift()?.();
    expect(await first).toEqual({ ok: true, value: 'done' });
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(impl.dispatches).toEqual({ work: 3 });
    while (releases.length > 0) releases.shift()?.();
    expect(await second).toEqual({ ok: true, value: 'done' });
    await new Promise((resolve) => setTimeout(resolve, 5));
    releases.shift()?.();
    expect(await third).toEqual({ ok: true, value: 'done' });
    expect(peak).toBe(2);
    expect(impl.dispatches).toEqual({ work: 3 });
  });

  it('dispose ends calls in flight and disposes implementations', async () => {
    const impl = fakeImplementation('slow', { hang: never });
    const rt = createToolRuntime({
      catalog: staticCatalog([descriptor('slow.hang')]),
      implementations: new Map([['slow', impl]]),
      config: runtimeConfig(),
    });
    const pending = rt.invoke({ name: 'slow.hang' });
    await new Promise((resolve) => setTimeout(resolve, 5));
    await rt.dispose();
    expect(await pending).toEqual({
      ok: false,
      error: { code: 'ABORTED', message: 'the runtime was shut down while slow.hang was running', retryable: false },
    });
    expect(impl.disposed).toBe(1);
    expect(await rt.invoke({ name: 'slow.hang' })).toEqual({
      ok: false,
      error: { code: 'ABORTED', message: 'the runtime was shut down; slow.hang was not run', retryable: false },
    });
  });
});

describe('audit log', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('appends one JSON line per call with argument keys only', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trellis-audit-'));
    dirs.push(dir);
    const path = join(dir, 'audit.jsonl');
    const d = descriptor('vault.put', {
      inputSchema: { type: 'object', properties: { key: { type: 'string' }, secret: { type: 'string' } } },
    });
    const rt = createToolRuntime({
      catalog: staticCatalog([d]),
      implementations: new Map([['vault', fakeImplementation('vault', { put: () => ({ stored: 'hunter2-token' }) })]]),
      config: runtimeConfig({ audit_log: path }),
    });
    await rt.invoke({ name: 'vault.put', input: { secret: 'hunter2-token', key: 'api' }, callId: 'a1' });
    await rt.invoke({ name: 'vault.put', input: { secret: 42 }, callId: 'a2' });
    await rt.invoke({ name: 'vault.nope', input: { secret: 'hunter2-token' }, callId: 'a3' });
    await rt.dispose();
    const text = readFileSync(path, 'utf8');
    expect(text).not.toContain('hunter2');
    const records = text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    for (const record of records) {
      expect(typeof record.ts === 'string' && !Number.isNaN(Date.parse(record.ts))).toBe(true);
      expect(typeof record.durationMs).toBe('number');
    }
    expect(records.map(({ ts: _ts, durationMs: _d, ...rest }) => rest)).toEqual([
      { callId: 'a1', tool: 'vault.put', argKeys: ['key', 'secret'], ok: true, outcome: 'OK', attempts: 1 },
      { callId: 'a2', tool: 'vault.put', argKeys: ['secret'], ok: false, outcome: 'INPUT_INVALID', attempts: 0 },
      { callId: 'a3', tool: 'vault.nope', argKeys: ['secret'], ok: false, outcome: 'TOOL_NOT_FOUND', attempts: 0 },
    ]);
  });
});

describe('audit log failures', () => {
  it('logs once and goes on when the audit file cannot be written', async () => {
    const logger = recordingLogger();
    const rt = createToolRuntime({
      catalog: staticCatalog([descriptor('t.ok')]),
      implementations: new Map([['t', fakeImplementation('t', { ok: () => 'fine' })]]),
      config: runtimeConfig({ audit_log: '/nonexistent-dir-for-trellis-tests/audit.jsonl' }),
      logger,
    });
    expect(await rt.invoke({ name: 't.ok' })).toEqual({ ok: true, value: 'fine' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await rt.invoke({ name: 't.ok' })).toEqual({ ok: true, value: 'fine' });
    await rt.dispose();
    expect(logger.lines).toEqual([
      "error: audit log /nonexistent-dir-for-trellis-tests/audit.jsonl cannot be written; audit is off: ENOENT: no such file or directory, open '/nonexistent-dir-for-trellis-tests/audit.jsonl'",
    ]);
  });
});

describe('a validator cache shared between runtimes', () => {
  it('compiles an input schema once for every runtime given the same cache (a live host’s generations)', async () => {
    const { createSchemaValidatorCache } = await import('../src/validation.ts');
    const shared = createSchemaValidatorCache();
    let loads = 0;
    const loadValidators = () => {
      loads += 1;
      return Promise.resolve(shared);
    };
    const impl = fakeImplementation('demo', { echo: (input) => input });
    // Two generations: each has its own catalog objects, as a reload builds them again.
    const first = make({ catalog: staticCatalog([echo]), implementations: new Map([['demo', impl]]), loadValidators });
    const second = make({ catalog: staticCatalog([{ ...echo }]), implementations: new Map([['demo', impl]]), loadValidators });
    expect(await first.invoke({ name: 'demo.echo', input: { text: 'a' } })).toMatchObject({ ok: true });
    expect(shared.size).toBe(1);
    expect(await second.invoke({ name: 'demo.echo', input: { text: 'b' } })).toMatchObject({ ok: true });
    expect(await second.invoke({ name: 'demo.echo', input: { limit: 1000 } })).toMatchObject({
      ok: false,
      error: { code: 'INPUT_INVALID' },
    });
    expect(shared.size).toBe(1);
    expect(loads).toBe(2);
  });
});
