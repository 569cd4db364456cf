import { execFileSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { PluginImplementation } from '../../src/PluginImplementation.ts';
import { createProcessImplementation } from '../../src/adapters/createProcessImplementation.ts';
import type { ProcessRuntime } from '../../src/adapters/createProcessImplementation.ts';
import { FIXTURES, callOf, countMarked, manifestOf, newMarker, recordingLogger, waitFor } from './helpers.ts';

const pluginDir = realpathSync(FIXTURES);
const live: Array<{ impl: PluginImplementation; marker: string }> = [];

afterEach(async () => {
  for (const { impl, marker } of live.splice(0)) {
    await impl.dispose();
    expect(countMarked(marker)).toBe(0);
  }
});

function setup(mode: string, runtime: Partial<ProcessRuntime> = {}, extra: { env?: Record<string, string | undefined> } = {}) {
  const marker = newMarker();
  const logger = recordingLogger();
  const rt: ProcessRuntime = {
    type: 'process',
    command: 'node',
    args: [join(FIXTURES, 'fault-plugin.mjs'), mode, `--marker=${marker}`],
    timeout_seconds: 5,
    env: {},
    restart_on_crash: true,
    max_restarts: 3,
    restart_delay_seconds: 0,
    health_check_interval_seconds: 0,
    ...runtime,
  };
  const impl = createProcessImplementation({
    pluginId: 'fault',
    manifest: manifestOf({ runtime: rt }),
    pluginDir,
    runtime: rt,
    config: { greeting: 'hi' },
    env: extra.env ?? process.env,
    logger,
    shutdownGraceMs: 300,
  });
  live.push({ impl, marker });
  const spawns = () => logger.entries.filter((e) => e.message === 'plugin spawned').length;
  return { impl, marker, logger, spawns };
}

describe('process adapter: the happy path', () => {
  it('initializes, discovers tools, serves calls and shuts down leaving nothing behind', async () => {
    const { impl, marker } = setup('normal');
    expect(impl.state()).toBe('unloaded');
    await impl.start();
    expect(impl.state()).toBe('active');
    expect(impl.discoveredTools?.()?.map((t) => [t.name, t.description, t.contract.isolation])).toEqual([
      ['echo', 'Echo the arguments', 'process'],
    ]);
    expect(await impl.call(callOf('echo', { a: 1 }))).toEqual({ ok: true, value: { a: 1 } });
    const calls = await Promise.all([1, 2, 3, 4].map((n) => impl.call(callOf('echo', { n }))));
    expect(calls).toEqual([1, 2, 3, 4].map((n) => ({ ok: true, value: { n } })));
    expect(countMarked(marker)).toBe(1);
    await impl.dispose();
    expect(impl.state()).toBe('unloaded');
    expect(countMarked(marker)).toBe(0);
    expect(await impl.call(callOf('echo'))).toEqual({
      ok: false,
      notDispatched: true,
      error: { code: 'PLUGIN_UNAVAILABLE', message: 'plugin fault has been shut down', retryable: false },
    });
  });

  it('gives the child only the allow list plus [runtime.env], expands ${VAR}, runs it in the plugin folder, never logs the secret', async () => {
    const secret = 's3cr3t-value-123';
    const { impl, logger } = setup(
      'normal',
      { env: { API_TOKEN: 'Bearer ${TEST_SECRET}', MODE: 'plain' } },
      { env: { PATH: process.env.PATH, HOME: '/root', TEST_SECRET: secret, UNRELATED: 'nope' } },
    );
    const outcome = await impl.call(callOf('env'));
    expect(outcome.ok).toBe(true);
    const value = (outcome as { value: { env: Record<string, string>; cwd: string } }).value;
    expect(Object.keys(value.env).sort()).toEqual(['API_TOKEN', 'HOME', 'MODE', 'PATH']);
    expect(value.env.API_TOKEN).toBe(`Bearer ${secret}`);
    expect(value.cwd).toBe(pluginDir);
    expect(JSON.stringify(logger.entries)).not.toContain(secret);
  });

  it('reports a missing ${VAR} by name, without starting anything', async () => {
    const { impl, spawns } = setup(
      'normal',
      { env: { TOKEN: '${NOT_SET_ANYWHERE}' }, max_restarts: 0 },
      { env: { PATH: process.env.PATH } },
    );
    expect(await impl.call(callOf('echo'))).toEqual({
      ok: false,
      notDispatched: true,
      error: {
        code: 'PLUGIN_LOAD_FAILED',
        message:
          'plugin fault: [runtime.env].TOKEN uses ${NOT_SET_ANYWHERE}, but the variable is not set in the host environment; set it or remove the reference',
        retryable: false,
      },
    });
    expect(spawns()).toBe(0);
    expect(impl.state()).toBe('disabled');
  });

  it('refuses arguments Node cannot pass (a NUL byte) as PLUGIN_LOAD_FAILED instead of an unhandled rejection', async () => {
    const { impl, spawns } = setup('normal', { command: process.execPath, args: ['fault-plugin.mjs\u0000'], max_restarts: 0 });
    expect(await impl.call(callOf('echo'))).toEqual({
      ok: false,
      notDispatched: true,
      error: {
        code: 'PLUGIN_LOAD_FAILED',
        message: expect.stringMatching(
          /^plugin fault: .+ could not be started \(The argument 'args\[0\]' must be a string without null bytes\. .+\); fix \[runtime\] command, args and env in plugin\.toml$/,
        ),
        retryable: false,
      },
    });
    expect(spawns()).toBe(0);
    expect(impl.state()).toBe('disabled');
  });

  it('refuses a command that is not on PATH', async () => {
    const { impl } = setup('normal', { command: 'no-such-program-xyz', max_restarts: 0 });
    const outcome = await impl.call(callOf('echo'));
    expect(outcome).toEqual({
      ok: false,
      notDispatched: true,
      error: {
        code: 'PLUGIN_LOAD_FAILED',
        message:
          'plugin fault: [runtime] command no-such-program-xyz was not found on PATH; install it or give a path inside the plugin folder',
        retryable: false,
      },
    });
  });

  it('maps plugin failures: a plain error is TOOL_FAILED, a coded one keeps its code', async () => {
    const { impl } = setup('normal');
    expect(await impl.call(callOf('fail'))).toEqual({
      ok: false,
      error: { code: 'TOOL_FAILED', message: 'fault.fail failed: it went wrong', retryable: false },
    });
    expect(await impl.call(callOf('coded'))).toEqual({
      ok: false,
      error: { code: 'NOT_FOUND', message: 'fault.coded failed: no such note', retryable: false },
    });
    expect(await impl.call(callOf('nope'))).toEqual({
      ok: false,
      error: { code: 'TOOL_FAILED', message: 'fault.nope failed: unknown tool nope', retryable: false },
    });
  });

  it('never lets a plugin speak for the host: a reserved code becomes PLUGIN_ERROR naming it', async () => {
    const { impl } = setup('normal');
    expect(await impl.call(callOf('impersonate'))).toEqual({
      ok: false,
      error: {
        code: 'PLUGIN_ERROR',
        message:
          'fault.impersonate failed with code POLICY_DENIED, which only the host may report, so it is shown as PLUGIN_ERROR: refused by policy',
        retryable: false,
      },
    });
    for (const code of ['TIMEOUT', 'INPUT_INVALID', 'PLUGIN_UNAVAILABLE', 'APPROVAL_DENIED', 'CAPABILITY_DENIED', 'PROTOCOL_ERROR']) {
      const outcome = await impl.call(callOf('impersonate', { code }));
      expect(outcome.ok === false && [outcome.error.code, outcome.error.message.includes(`code ${code},`)]).toEqual(['PLUGIN_ERROR', true]);
    }
    // Tool-level codes stay the plugin's to use.
    expect(await impl.call(callOf('impersonate', { code: 'NOT_ALLOWED' }))).toEqual({
      ok: false,
      error: { code: 'NOT_ALLOWED', message: 'fault.impersonate failed: refused by policy', retryable: false },
    });
  });

  it('caps the address space with max_memory_mb where prlimit exists', async () => {
    const { impl, logger } = setup('normal', { max_memory_mb: 4096 });
    const outcome = await impl.call(callOf('limits'));
    const limited = logger.entries.find((e) => e.message === 'plugin spawned')?.fields.memoryLimited;
    expect(limited).toBe(existsSync('/usr/bin/prlimit') || existsSync('/bin/prlimit'));
    const expected = limited
      ? 'Max address space         4294967296           4294967296           bytes     '
      : 'Max address space         unlimited            unlimited            bytes     ';
    expect(outcome).toEqual({ ok: true, value: { line: expected } });
  });

  it('serves a plugin that does not echo ids one call at a time', async () => {
    const { impl } = setup('serial');
    const calls = await Promise.all([1, 2, 3].map((n) => impl.call(callOf('echo', { n }))));
    expect(calls).toEqual([1, 2, 3].map((n) => ({ ok: true, value: { n } })));
  });
});

/** What the fault plugin's `deep_error` tool gets: its error value (100 000 levels deep) is refused, not rendered. */
const deepErrorOutcome = {
  ok: false,
  error: {
    code: 'PROTOCOL_ERROR',
    message:
      'plugin fault broke the protocol during the call to deep_error: its error value nests deeper than 64 levels; answer with a string or a {"code","message"} object',
    retryable: false,
  },
};

/** The first 120 characters of a reply that starts with `head` and goes on 100 000 levels deep, as a message shows it. */
const deepPreview = (head: string) => `${(head + '['.repeat(120)).slice(0, 120)}…`;

describe('process adapter: hostile replies nested 100 000 levels deep', () => {
  it('an error value on the slow path (the first call starts the plugin): PROTOCOL_ERROR, the same child keeps serving', async () => {
    const { impl, spawns } = setup('normal');
    expect(impl.state()).toBe('unloaded');
    expect(await impl.call(callOf('deep_error'))).toEqual(deepErrorOutcome);
    expect(await impl.call(callOf('echo', { after: 'deep' }))).toEqual({ ok: true, value: { after: 'deep' } });
    expect(spawns()).toBe(1);
  });

  it('an error value on the slow path of a plugin that does not echo ids: PROTOCOL_ERROR, the same child keeps serving', async () => {
    const { impl, spawns } = setup('serial');
    await impl.start();
    expect(await impl.call(callOf('deep_error'))).toEqual(deepErrorOutcome);
    expect(await impl.call(callOf('echo', { after: 'deep' }))).toEqual({ ok: true, value: { after: 'deep' } });
    expect(spawns()).toBe(1);
  });

  it('an error value on the fast path (active, echoing ids): PROTOCOL_ERROR inside the stdout listener, the same child keeps serving', async () => {
    const { impl, spawns } = setup('normal');
    await impl.start();
    const [deep, alongside] = await Promise.all([impl.call(callOf('deep_error')), impl.call(callOf('echo', { alongside: true }))]);
    expect(deep).toEqual(deepErrorOutcome);
    expect(alongside).toEqual({ ok: true, value: { alongside: true } });
    expect(await impl.call(callOf('echo', { after: 'deep' }))).toEqual({ ok: true, value: { after: 'deep' } });
    expect(spawns()).toBe(1);
    expect(impl.state()).toBe('active');
  });

  it('an id: PROTOCOL_ERROR quoting the start of it, the same child keeps serving', async () => {
    const { impl, spawns } = setup('normal');
    await impl.start();
    expect(await impl.call(callOf('deep_id'))).toEqual({
      ok: false,
      error: {
        code: 'PROTOCOL_ERROR',
        message: `plugin fault broke the protocol during the call to deep_id: the plugin answered with id ${deepPreview('')}, which matches no outstanding request`,
        retryable: false,
      },
    });
    expect(await impl.call(callOf('echo', { n: 1 }))).toEqual({ ok: true, value: { n: 1 } });
    expect(spawns()).toBe(1);
  });

  it('a failed initialize: PLUGIN_LOAD_FAILED quoting the start of the answer', async () => {
    const { impl } = setup('deep-init', { max_restarts: 0 });
    expect(await impl.call(callOf('echo'))).toEqual({
      ok: false,
      notDispatched: true,
      error: {
        code: 'PLUGIN_LOAD_FAILED',
        message: `plugin fault answered initialize with ${deepPreview('{"id":1,"type":"initialize_response","success":false,"error":')}`,
        retryable: false,
      },
    });
    expect(impl.state()).toBe('disabled');
  });

  it('an unhealthy health_check answer: the check fails with the start of the answer, the plugin is restarted and serves', async () => {
    const { impl, spawns } = setup('normal', { health_check_interval_seconds: 1 });
    expect(await impl.call(callOf('deep_unhealthy'))).toEqual({ ok: true, value: { deepHealth: true } });
    await waitFor(() => spawns() === 2 && impl.state() === 'active');
    expect(impl.lastError?.()).toBe(
      `plugin fault reported itself unhealthy (${deepPreview('{"id":4,"type":"health_check_response","healthy":false,"detail":')})`,
    );
    expect(await impl.call(callOf('echo', { back: true }))).toEqual({ ok: true, value: { back: true } });
  });
});

describe('process adapter: fault injection', () => {
  it('hangs forever before the handshake: PLUGIN_LOAD_FAILED, then disabled', async () => {
    const { impl, marker } = setup('hang-init', { timeout_seconds: 0.3, max_restarts: 0 });
    expect(await impl.call(callOf('echo'))).toEqual({
      ok: false,
      notDispatched: true,
      error: {
        code: 'PLUGIN_LOAD_FAILED',
        message: 'plugin fault did not answer initialize within 0.3 s (timeout_seconds)',
        retryable: false,
      },
    });
    expect(impl.state()).toBe('disabled');
    expect(impl.lastError?.()).toBe(
      'plugin fault did not answer initialize within 0.3 s (timeout_seconds); gave up after 0 restart(s) (max_restarts = 0); fix the plugin or raise [plugins.entries.fault] max_restarts, then restart the host',
    );
    await waitFor(() => countMarked(marker) === 0);
    expect((await impl.call(callOf('echo'))).ok).toBe(false);
  });

  it('exits before the handshake: restarted max_restarts times, then disabled with the last error', async () => {
    const { impl, spawns } = setup('exit-early', { max_restarts: 2 });
    const first = await impl.call(callOf('echo'));
    expect(first).toEqual({
      ok: false,
      notDispatched: true,
      error: {
        code: 'PLUGIN_LOAD_FAILED',
        message: 'plugin fault exited with code 7; stderr: fault-plugin: giving up before the handshake before answering initialize',
        retryable: true,
      },
    });
    await waitFor(() => impl.state() === 'disabled');
    expect(spawns()).toBe(3);
    expect(impl.lastError?.()).toBe(
      'plugin fault exited with code 7; stderr: fault-plugin: giving up before the handshake before answering initialize; gave up after 2 restart(s) (max_restarts = 2); fix the plugin or raise [plugins.entries.fault] max_restarts, then restart the host',
    );
    const later = await impl.call(callOf('echo'));
    expect(later.ok === false && later.error.code).toBe('PLUGIN_UNAVAILABLE');
  });

  it('answers initialize with a failure: PLUGIN_LOAD_FAILED naming the answer', async () => {
    const { impl } = setup('bad-init', { max_restarts: 0 });
    const outcome = await impl.call(callOf('echo'));
    expect(outcome).toEqual({
      ok: false,
      notDispatched: true,
      error: {
        code: 'PLUGIN_LOAD_FAILED',
        message: 'plugin fault answered initialize with {"id":1,"type":"initialize_response","success":false,"error":"config rejected"}',
        retryable: false,
      },
    });
  });

  it('crashes mid-call: PLUGIN_CRASHED, restarted, and disabled past max_restarts', async () => {
    const { impl, spawns } = setup('normal', { max_restarts: 1 });
    expect(await impl.call(callOf('crash'))).toEqual({
      ok: false,
      error: {
        code: 'PLUGIN_CRASHED',
        message: 'plugin fault exited with code 3; stderr: fault-plugin: crashing now during the call to crash',
        retryable: true,
      },
    });
    expect(await impl.call(callOf('echo', { after: 'restart' }))).toEqual({ ok: true, value: { after: 'restart' } });
    expect(spawns()).toBe(2);
    expect(impl.state()).toBe('active');
    expect((await impl.call(callOf('crash'))).ok).toBe(false);
    await waitFor(() => impl.state() === 'disabled');
    expect(impl.lastError?.()).toBe(
      'plugin fault exited with code 3; stderr: fault-plugin: crashing now; gave up after 1 restart(s) (max_restarts = 1); fix the plugin or raise [plugins.entries.fault] max_restarts, then restart the host',
    );
    expect(await impl.call(callOf('echo'))).toEqual({
      ok: false,
      notDispatched: true,
      error: {
        code: 'PLUGIN_UNAVAILABLE',
        message:
          'plugin fault is disabled: plugin fault exited with code 3; stderr: fault-plugin: crashing now; gave up after 1 restart(s) (max_restarts = 1); fix the plugin or raise [plugins.entries.fault] max_restarts, then restart the host',
        retryable: false,
      },
    });
  });

  it('does not restart when restart_on_crash is false', async () => {
    const { impl } = setup('normal', { restart_on_crash: false });
    expect((await impl.call(callOf('crash'))).ok).toBe(false);
    await waitFor(() => impl.state() === 'disabled');
    expect(impl.lastError?.()).toBe(
      'plugin fault exited with code 3; stderr: fault-plugin: crashing now; not restarted (restart_on_crash = false)',
    );
  });

  it('SIGKILLs itself: PLUGIN_CRASHED naming the signal, then served again', async () => {
    const { impl } = setup('normal');
    expect(await impl.call(callOf('sigkill'))).toEqual({
      ok: false,
      error: { code: 'PLUGIN_CRASHED', message: 'plugin fault was killed by SIGKILL during the call to sigkill', retryable: true },
    });
    expect(await impl.call(callOf('echo', { ok: 1 }))).toEqual({ ok: true, value: { ok: 1 } });
  });

  it('exits 0 without answering: PLUGIN_CRASHED', async () => {
    const { impl } = setup('normal');
    expect(await impl.call(callOf('exit0'))).toEqual({
      ok: false,
      error: { code: 'PLUGIN_CRASHED', message: 'plugin fault exited with code 0 during the call to exit0', retryable: true },
    });
    expect((await impl.call(callOf('echo'))).ok).toBe(true);
  });

  it('writes non-JSON: PROTOCOL_ERROR for that call, the same child keeps serving', async () => {
    const { impl, spawns } = setup('normal');
    expect(await impl.call(callOf('garbage'))).toEqual({
      ok: false,
      error: {
        code: 'PROTOCOL_ERROR',
        message: 'plugin fault broke the protocol during the call to garbage: the plugin wrote a line that is not JSON: "this is not json"',
        retryable: false,
      },
    });
    expect(await impl.call(callOf('echo', { still: 'here' }))).toEqual({ ok: true, value: { still: 'here' } });
    expect(spawns()).toBe(1);
  });

  it('writes its reply in partial lines: reassembled', async () => {
    const { impl } = setup('normal');
    expect(await impl.call(callOf('partial', { text: 'a fairly long argument to split in pieces' }))).toEqual({
      ok: true,
      value: { text: 'a fairly long argument to split in pieces' },
    });
  });

  it('writes a 20 MiB line: PROTOCOL_ERROR without buffering it, then keeps serving', async () => {
    const { impl, spawns } = setup('normal');
    const outcome = await impl.call(callOf('huge', {}, 20_000));
    expect(outcome.ok === false && outcome.error.code).toBe('PROTOCOL_ERROR');
    expect(outcome.ok === false && outcome.error.message).toBe(
      'plugin fault broke the protocol during the call to huge: a reply line exceeds the 10485760-byte limit (it began "{\\"id\\":3,\\"type\\":\\"call_tool_response\\",\\"success\\":true,\\"data\\":\\"xxxxx")',
    );
    expect(await impl.call(callOf('echo', { n: 2 }))).toEqual({ ok: true, value: { n: 2 } });
    // The stream could not be read until that line ended, so new calls went to a fresh child.
    expect(spawns()).toBe(2);
  });

  it('writes 100 MiB with no newline: only that call fails, at once; the next, unrelated call gets its reply', async () => {
    const { impl, spawns } = setup('normal');
    // Deadlines far away: the oversize call must end on the cap, not on its deadline.
    const outcome = await impl.call(callOf('no_newline', { mib: 100 }, 120_000));
    expect(outcome.ok === false && outcome.error.code).toBe('PROTOCOL_ERROR');
    expect(outcome.ok === false && outcome.error.message).toMatch(
      /^plugin fault broke the protocol during the call to no_newline: a reply line exceeds the 10485760-byte limit/,
    );
    expect(await impl.call(callOf('echo', { next: 1 }, 120_000))).toEqual({ ok: true, value: { next: 1 } });
    expect(await impl.call(callOf('echo', { next: 2 }, 120_000))).toEqual({ ok: true, value: { next: 2 } });
    expect(spawns()).toBe(2);
  }, 180_000);

  it('an oversize line with other calls in flight fails only its own call', async () => {
    const { impl } = setup('normal', {}, {});
    await impl.start();
    const late = impl.call(callOf('late', { delay_ms: 50 }, 120_000));
    const huge = impl.call(callOf('huge', {}, 120_000));
    const [lateOutcome, hugeOutcome] = await Promise.all([late, huge]);
    expect(hugeOutcome.ok === false && hugeOutcome.error.code).toBe('PROTOCOL_ERROR');
    expect(lateOutcome).toEqual({ ok: true, value: { late: true } });
  }, 180_000);

  it('floods stderr: the call succeeds and the debug log is rate-capped', async () => {
    const { impl, logger } = setup('normal');
    expect(await impl.call(callOf('flood'))).toEqual({ ok: true, value: { flooded: true } });
    await impl.dispose();
    const lines = logger.entries.filter((e) => e.message === 'plugin stderr').length;
    const suppressed = logger.entries
      .filter((e) => e.message === 'plugin stderr lines suppressed by the rate cap')
      .reduce((sum, e) => sum + (e.fields.suppressed as number), 0);
    expect(lines + suppressed).toBe(20000);
    expect(lines).toBeLessThan(1000);
  });

  it('answers with the wrong id: PROTOCOL_ERROR for that call', async () => {
    const { impl } = setup('normal');
    expect(await impl.call(callOf('wrong_id'))).toEqual({
      ok: false,
      error: {
        code: 'PROTOCOL_ERROR',
        message:
          'plugin fault broke the protocol during the call to wrong_id: the plugin answered with id 99999, which matches no outstanding request',
        retryable: false,
      },
    });
    expect((await impl.call(callOf('echo'))).ok).toBe(true);
  });

  it('answers twice: the first answer counts, the duplicate is logged and dropped', async () => {
    const { impl, logger } = setup('normal');
    expect(await impl.call(callOf('twice'))).toEqual({ ok: true, value: { first: true } });
    await waitFor(() => logger.entries.some((e) => e.message === 'plugin protocol error'));
    expect(logger.entries.filter((e) => e.level === 'warn').map((e) => e.fields.message)).toEqual([
      'a late or duplicate reply for request 3 was dropped',
    ]);
    expect(await impl.call(callOf('echo', { next: true }))).toEqual({ ok: true, value: { next: true } });
  });

  it('answers after the timeout: TIMEOUT, the late reply is dropped, the child keeps serving', async () => {
    const { impl, logger, spawns } = setup('normal');
    await impl.start();
    expect(await impl.call(callOf('late', { delay_ms: 300 }, 100))).toEqual({
      ok: false,
      error: {
        code: 'TIMEOUT',
        message: "fault.late did not answer before its deadline (no reply); raise the tool's timeout_seconds or make it faster",
        retryable: true,
      },
    });
    await waitFor(() => logger.entries.some((e) => e.message === 'plugin protocol error'));
    expect(await impl.call(callOf('echo', { n: 1 }))).toEqual({ ok: true, value: { n: 1 } });
    expect(spawns()).toBe(1);
  });

  it('hangs mid-call: TIMEOUT for it while other calls are served', async () => {
    const { impl } = setup('normal');
    await impl.start();
    const hanging = impl.call(callOf('hang', {}, 300));
    expect(await impl.call(callOf('echo', { alongside: true }))).toEqual({ ok: true, value: { alongside: true } });
    const outcome = await hanging;
    expect(outcome.ok === false && outcome.error.code).toBe('TIMEOUT');
  });

  it('a caller abort is ABORTED', async () => {
    const { impl } = setup('normal');
    await impl.start();
    const controller = new AbortController();
    const pending = impl.call(callOf('hang', {}, 5000, controller));
    controller.abort();
    expect(await pending).toEqual({
      ok: false,
      error: { code: 'ABORTED', message: 'fault.hang was aborted by the caller (no reply)', retryable: false },
    });
  });

  it('hangs mid-call without echoing ids: TIMEOUT, then a fresh child (not counted as a crash)', async () => {
    const { impl, spawns } = setup('serial', { max_restarts: 0 });
    await impl.start();
    const outcome = await impl.call(callOf('hang', {}, 200));
    expect(outcome.ok === false && outcome.error.code).toBe('TIMEOUT');
    expect(await impl.call(callOf('echo', { n: 5 }))).toEqual({ ok: true, value: { n: 5 } });
    expect(spawns()).toBe(2);
    expect(impl.state()).toBe('active');
  });

  it('leaves grandchildren running: they die with the group on dispose and on a crash', async () => {
    const { impl, marker } = setup('normal');
    expect((await impl.call(callOf('grandchild'))).ok).toBe(true);
    await waitFor(() => countMarked(marker) === 2);
    expect((await impl.call(callOf('crash'))).ok).toBe(false);
    expect((await impl.call(callOf('echo'))).ok).toBe(true);
    // The restarted child is the only one left: the crashed one's grandchild went with its group.
    await waitFor(() => countMarked(marker) === 1);
    expect((await impl.call(callOf('grandchild'))).ok).toBe(true);
    await waitFor(() => countMarked(marker) === 2);
    await impl.dispose();
    // The group is SIGKILLed when dispose returns; on a loaded machine the kernel may list a
    // grandchild for a moment longer while it dies.
    await waitFor(() => countMarked(marker) === 0);
  });

  it('ignores shutdown and SIGTERM: dispose escalates to SIGKILL for the whole group', async () => {
    const { impl, marker } = setup('stubborn');
    expect(await impl.call(callOf('echo', { n: 1 }))).toEqual({ ok: true, value: { n: 1 } });
    await waitFor(() => countMarked(marker) === 2);
    await impl.dispose();
    await waitFor(() => countMarked(marker) === 0);
  });

  it('a host that exits without dispose takes the plugin group, grandchildren included, with it', async () => {
    const marker = newMarker();
    const out = execFileSync(
      process.execPath,
      ['--conditions=@trellis/source', '--import', 'tsx', join(FIXTURES, 'host-exits.ts'), marker],
      {
        encoding: 'utf8',
        timeout: 120_000,
      },
    );
    expect(JSON.parse(out).ok).toBe(true);
    await waitFor(() => countMarked(marker) === 0);
  });

  it('stops answering health checks: restarted after health_check_timeout_seconds, the handshake keeps its own deadline', async () => {
    // The health deadline is short and separate; the restarted child's handshake has timeout_seconds (30 s), so load cannot fail it.
    const { impl, spawns } = setup('normal', { health_check_interval_seconds: 1, health_check_timeout_seconds: 1, timeout_seconds: 30 });
    expect(await impl.call(callOf('mute_health'))).toEqual({ ok: true, value: { muted: true } });
    await waitFor(() => spawns() === 2 && impl.state() === 'active', 60_000);
    expect(impl.lastError?.()).toBe('plugin fault did not answer health_check within 1 s (health_check_timeout_seconds)');
    expect(await impl.call(callOf('echo', { alive: true }))).toEqual({ ok: true, value: { alive: true } });
  });

  it('fails its health check: restarted, with the reason kept', async () => {
    const { impl, spawns } = setup('normal', { health_check_interval_seconds: 1 });
    expect(await impl.call(callOf('unhealthy'))).toEqual({ ok: true, value: { healthy: false } });
    await waitFor(() => spawns() === 2 && impl.state() === 'active');
    expect(impl.lastError?.()).toBe('plugin fault reported itself unhealthy ({"id":4,"type":"health_check_response","healthy":false})');
    expect(await impl.call(callOf('echo', { back: true }))).toEqual({ ok: true, value: { back: true } });
  });
});
