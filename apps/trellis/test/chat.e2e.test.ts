import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '@trellis/testing';
import { createSandbox, runCliAsync, type Sandbox } from './cliHarness.ts';

let sandbox: Sandbox;
let server: FakeOpenAiServer;
let config: string;
const KEY = { OPENROUTER_API_KEY: 'sk-e2e' };

beforeEach(async () => {
  sandbox = createSandbox();
  server = await startFakeOpenAiServer();
  config = join(sandbox.dir, 'runtime.toml');
  writeFileSync(config, `[plugins.entries.openrouter.config]\nbase_url = "${server.baseUrl}"\nmodel = "test/model"\nmax_retries = 1\n`);
});
afterEach(async () => {
  await server.close();
  sandbox.cleanup();
});

describe('trellis chat "prompt"', () => {
  it('streams the answer to stdout and one trace line per tool call to stderr, through parallel calls', async () => {
    server.script(
      {
        kind: 'stream',
        toolCalls: [
          { name: 'builtin-tools__echo', arguments: '{"message":"one"}' },
          { name: 'builtin-tools__nope', arguments: '{}' },
        ],
      },
      { kind: 'stream', text: ['The echo ', 'said one.'], comments: true },
    );
    const result = await runCliAsync(sandbox, ['chat', 'echo one please', '--config', config], KEY);
    expect(result.stdout).toBe('The echo said one.\n');
    // Trace lines come as calls end; the two ran in parallel, so either may be first.
    const trace = result.stderr.trimEnd().split('\n').sort();
    expect(trace).toEqual([
      expect.stringMatching(/^ {2}⚙ builtin-tools\.echo \{"message":"one"\} → ok \(\d+(\.\d)? m?s\)$/),
      expect.stringMatching(/^ {2}⚙ builtin-tools\.nope \{\} → TOOL_NOT_FOUND \(\d+(\.\d)? m?s\)$/),
    ]);
    expect(result.code).toBe(0);
    // The model saw the catalog's OpenAI rendering and got both results back, in order.
    const first = server.requests[0]!.body;
    expect(first.tools!.map((t) => t.function.name)).toContain('builtin-tools__echo');
    const fed = server.requests[1]!.body.messages.slice(-2);
    expect(fed.map((m) => m.role)).toEqual(['tool', 'tool']);
    expect(JSON.parse(fed[0]!.content as string)).toEqual({ message: 'one' });
    expect(JSON.parse(fed[1]!.content as string).error.code).toBe('TOOL_NOT_FOUND');
  });

  it('--json prints exactly reply, steps and usage (then model and finishReason)', async () => {
    server.script(
      {
        kind: 'stream',
        toolCalls: [{ name: 'builtin-tools__echo', arguments: '{"message":"x"}' }],
        usage: { prompt: 100, completion: 10, cost: 0.002 },
      },
      { kind: 'stream', text: ['done'], usage: { prompt: 120, completion: 4, cost: 0.001 } },
    );
    const result = await runCliAsync(sandbox, ['chat', 'go', '--json', '--config', config], KEY);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const out = JSON.parse(result.stdout);
    expect(Object.keys(out).slice(0, 3)).toEqual(['reply', 'steps', 'usage']);
    expect(out).toEqual({
      reply: 'done',
      steps: [{ tool: 'builtin-tools.echo', ok: true, durationMs: expect.any(Number), step: 1 }],
      usage: { inputTokens: 220, outputTokens: 14, totalTokens: 234, cost: 0.003, requests: 2 },
      model: 'test/model',
      finishReason: 'stop',
    });
  });

  it('exits 1 naming the problem when the provider fails (402 is not retried)', async () => {
    server.script({ kind: 'status', status: 402, message: 'Insufficient credits' });
    const plain = await runCliAsync(sandbox, ['chat', 'hi', '--config', config], KEY);
    expect(plain.code).toBe(1);
    expect(plain.stderr).toContain('PROVIDER_PAYMENT_REQUIRED');
    expect(plain.stderr).toContain('Insufficient credits');
    expect(server.requests).toHaveLength(1);

    server.script({ kind: 'midstream-error', text: ['par'], message: 'upstream went away' });
    const json = await runCliAsync(sandbox, ['chat', 'hi', '--json', '--config', config], KEY);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({
      reply: '',
      finishReason: 'error',
      error: { code: 'PROVIDER_FAILED', message: expect.stringContaining('upstream went away') },
    });
  });

  it('exits 2 without OPENROUTER_API_KEY, saying how to use a local server', async () => {
    const result = await runCliAsync(sandbox, ['chat', 'hi', '--config', config]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('OPENROUTER_API_KEY');
    expect(result.stderr).toContain('[plugins.entries.openrouter.config]');
    expect(result.stderr).toContain('base_url = "http://127.0.0.1:8080/v1"');
    expect(server.requests).toHaveLength(0);
  });

  it('exits 2 naming the key when the provider config is wrong', async () => {
    writeFileSync(config, `[plugins.entries.openrouter.config]\nbase_url = "${server.baseUrl}"\nmodle = "typo"\n`);
    const result = await runCliAsync(sandbox, ['chat', 'hi', '--config', config], KEY);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('plugins.entries.openrouter.config.modle');
  });

  it('reads the prompt from stdin when there is no argument and no terminal', async () => {
    server.script({ kind: 'stream', text: ['from stdin'] });
    const { spawn } = await import('node:child_process');
    const { CLI } = await import('./cliHarness.ts');
    const child = spawn(process.execPath, [CLI, 'chat', '--config', config], {
      cwd: sandbox.workspace,
      env: { ...sandbox.env, ...KEY },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stdin.end('what is piped\n');
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect([code, stdout]).toEqual([0, 'from stdin\n']);
    expect(server.requests[0]!.body.messages.at(-1)).toEqual({ role: 'user', content: 'what is piped' });
  });
});
