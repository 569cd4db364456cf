import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from './cliHarness.ts';

let sandbox: Sandbox;
beforeEach(() => {
  sandbox = createSandbox();
});
afterEach(() => sandbox.cleanup());

it('the embedding example in docs/embedding.md runs against the built package', () => {
  const example = join(import.meta.dirname, '..', 'examples', 'embed.mjs');
  const result = spawnSync(process.execPath, [example], { cwd: sandbox.workspace, env: sandbox.env, encoding: 'utf8', timeout: 60_000 });
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  const lines = result.stdout.trim().split('\n');
  expect(lines[0]).toMatch(/^\d+ tools offered; first: [a-zA-Z0-9_-]+$/);
  expect(lines.slice(1)).toEqual([
    'hook: builtin-tools.echo → ok',
    JSON.stringify({ ok: true, value: { hello: 'from a host' } }),
    expect.stringMatching(/^hook: builtin-tools\.ecko → TOOL_NOT_FOUND$/),
    expect.stringMatching(/^\{"ok":false,"error":\{"code":"TOOL_NOT_FOUND","message":".*builtin-tools\.echo.*","retryable":false\}\}$/),
  ]);
});
