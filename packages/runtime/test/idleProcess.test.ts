import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const runtimeEntry = fileURLToPath(new URL('../src/index.ts', import.meta.url));
// tsx resolves from the working directory: run the child from this package.
const packageDir = fileURLToPath(new URL('..', import.meta.url));

/** Runs one invoke in a fresh process with no dispose, and reports how that process ended. */
function runChild(tool: 'answers' | 'hangs', deadlineMs: number) {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-idle-'));
  try {
    const script = join(dir, 'idle.mts');
    writeFileSync(
      script,
      `import { createToolRuntime } from ${JSON.stringify(runtimeEntry)};
const descriptor = { name: 'p.t', plugin: 'p', tool: 't', inputSchema: { type: 'object' },
  contract: { sideEffects: false, capabilities: [], sandbox: 'no-isolation', deadlineMs: ${deadlineMs}, maxRetries: 0, idempotent: true, isolation: 'inline', approval: 'auto' } };
const impl = { pluginId: 'p', start: async () => {}, state: () => 'active', dispose: async () => {},
  call: ${tool === 'answers' ? 'async () => ({ ok: true, value: 1 })' : '() => new Promise(() => {})'} };
const runtime = createToolRuntime({
  catalog: { lookup: () => ({ status: 'offered', descriptor }) },
  implementations: new Map([['p', impl]]),
  config: { runtime: { tool_timeout_seconds: 600, max_retries: 0, retry_backoff_ms: 1, max_output_bytes: 1000, max_concurrency: 1, capabilities: ['*'], audit_log: '', debug_log: '', policy: { allow: ['*'], deny: [], ask: [] }, tools: {} } },
});
const outcome = await runtime.invoke({ name: 'p.t' });
process.stdout.write(JSON.stringify(outcome));
`,
    );
    const run = spawnSync(process.execPath, ['--conditions=@trellis/source', '--import', 'tsx', script], {
      encoding: 'utf8',
      timeout: 20_000,
      cwd: packageDir,
    });
    return { status: run.status, signal: run.signal, stdout: run.stdout, stderr: run.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the shared deadline timer', () => {
  it('does not keep an idle process alive after its calls are done', () => {
    expect(runChild('answers', 600_000)).toEqual({ status: 0, signal: null, stdout: '{"ok":true,"value":1}', stderr: '' });
  });

  it('keeps the process alive while a call is pending, so a tool that never answers still gets its TIMEOUT', () => {
    expect(runChild('hangs', 200)).toEqual({
      status: 0,
      signal: null,
      stdout:
        '{"ok":false,"error":{"code":"TIMEOUT","message":"p.t did not finish within its 200 ms deadline and was abandoned","retryable":false}}',
      stderr: '',
    });
  });
});
