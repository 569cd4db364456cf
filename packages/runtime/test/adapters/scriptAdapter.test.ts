import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { PluginImplementation } from '../../src/PluginImplementation.ts';
import { createScriptImplementation, parseScriptOutput } from '../../src/adapters/createScriptImplementation.ts';
import type { ScriptRuntime } from '../../src/adapters/createScriptImplementation.ts';
import { FIXTURES, callOf, countMarked, manifestOf, newMarker, recordingLogger } from './helpers.ts';

const pluginDir = realpathSync(FIXTURES);
const live: Array<{ impl: PluginImplementation; marker: string }> = [];

afterEach(async () => {
  for (const { impl, marker } of live.splice(0)) {
    await impl.dispose();
    expect(countMarked(marker)).toBe(0);
  }
});

function setup(runtime: Partial<ScriptRuntime> = {}, env: Record<string, string> = process.env as Record<string, string>) {
  const marker = newMarker();
  const rt: ScriptRuntime = {
    type: 'script',
    command: 'node',
    args: [join(FIXTURES, 'script-plugin.mjs'), marker],
    timeout_seconds: 5,
    env: {},
    max_output_bytes: 100_000,
    ...runtime,
  };
  const impl = createScriptImplementation({
    pluginId: 'scripty',
    manifest: manifestOf({ id: 'scripty', runtime: rt }),
    pluginDir,
    runtime: rt,
    config: { level: 2 },
    env,
    logger: recordingLogger(),
  });
  live.push({ impl, marker });
  return { impl, marker };
}

describe('parseScriptOutput', () => {
  it('takes objects and arrays as values and everything else as a message', () => {
    expect(parseScriptOutput('{"message":"hi","n":1}\n')).toEqual({ message: 'hi', n: 1 });
    expect(parseScriptOutput('[1,2]')).toEqual([1, 2]);
    expect(parseScriptOutput('42\n')).toEqual({ message: '42' });
    expect(parseScriptOutput('{not json')).toEqual({ message: '{not json' });
    expect(parseScriptOutput('')).toEqual({ message: '' });
  });
});

describe('script adapter', () => {
  it('sends {tool, arguments, config, call_id} on stdin and returns JSON output as the value', async () => {
    const { impl } = setup();
    await impl.start();
    expect(impl.state()).toBe('active');
    const call = callOf('json', { text: 'a b c' });
    expect(await impl.call(call)).toEqual({
      ok: true,
      value: {
        message: 'done',
        env: 'json',
        request: { tool: 'json', arguments: { text: 'a b c' }, config: { level: 2 }, call_id: call.callId },
      },
    });
  });

  it('runs in the plugin folder with only the allow list, [runtime.env] and the TRELLIS_* variables', async () => {
    const { impl } = setup({ env: { GREETING: 'hi ${USER_NAME}' } }, { PATH: process.env.PATH ?? '', USER_NAME: 'ada', SECRET_THING: 'x' });
    expect(await impl.call(callOf('env'))).toEqual({
      ok: true,
      value: { keys: ['GREETING', 'PATH', 'TRELLIS_CALL_ID', 'TRELLIS_PLUGIN_ID', 'TRELLIS_TOOL'], cwd: pluginDir },
    });
  });

  it('returns plain text as { message }', async () => {
    const { impl } = setup();
    expect(await impl.call(callOf('text'))).toEqual({ ok: true, value: { message: 'just some text' } });
    expect(await impl.call(callOf('number'))).toEqual({ ok: true, value: { message: '42' } });
  });

  it('a non-zero exit is TOOL_FAILED with the stderr tail', async () => {
    const { impl } = setup();
    expect(await impl.call(callOf('fail'))).toEqual({
      ok: false,
      error: { code: 'TOOL_FAILED', message: 'scripty.fail exited with code 2: something broke\nbadly', retryable: false },
    });
  });

  it('a script past timeout_seconds is killed: TIMEOUT, nothing left running', async () => {
    const { impl, marker } = setup({ timeout_seconds: 0.3 });
    expect(await impl.call(callOf('hang'))).toEqual({
      ok: false,
      error: {
        code: 'TIMEOUT',
        message: 'scripty.hang did not finish within 300 ms and was killed; raise timeout_seconds in [runtime] or make the script faster',
        retryable: true,
      },
    });
    expect(countMarked(marker)).toBe(0);
  });

  it('a call deadline shorter than timeout_seconds wins; a caller abort is ABORTED', async () => {
    const { impl } = setup();
    const timedOut = await impl.call(callOf('hang', {}, 200));
    expect(timedOut.ok === false && timedOut.error.code).toBe('TIMEOUT');
    const controller = new AbortController();
    const pending = impl.call(callOf('hang', {}, 5000, controller));
    setTimeout(() => controller.abort(), 100);
    expect(await pending).toEqual({
      ok: false,
      error: { code: 'ABORTED', message: 'scripty.hang was aborted by the caller (script still running)', retryable: false },
    });
  });

  it('output over max_output_bytes is OUTPUT_TOO_LARGE', async () => {
    const { impl } = setup();
    expect(await impl.call(callOf('big'))).toEqual({
      ok: false,
      error: {
        code: 'OUTPUT_TOO_LARGE',
        message: 'scripty.big wrote more than 100000 bytes to stdout (max_output_bytes); write less or raise the cap',
        retryable: false,
      },
    });
  });

  it('grandchildren die with the call', async () => {
    const { impl, marker } = setup();
    expect(await impl.call(callOf('grandchild'))).toEqual({ ok: true, value: { spawned: true } });
    expect(countMarked(marker)).toBe(0);
  });

  it('a command that cannot be resolved is PLUGIN_LOAD_FAILED and state error', async () => {
    const { impl } = setup({ command: './missing.sh' });
    expect(await impl.call(callOf('json'))).toEqual({
      ok: false,
      notDispatched: true,
      error: {
        code: 'PLUGIN_LOAD_FAILED',
        message: `plugin scripty: [runtime] command ./missing.sh does not exist in ${pluginDir}`,
        retryable: false,
      },
    });
    expect(impl.state()).toBe('error');
  });
});
