import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { pidsMentioning } from '@trellis/test-support';
import { startLiveHost, type LiveHost } from '../../src/reload/startLiveHost.ts';
import { createReloadSandbox, waitFor, type ReloadSandbox } from './reloadFixture.ts';

let sandbox: ReloadSandbox | undefined;
let host: LiveHost | undefined;
afterEach(() => {
  for (const pid of pidsMentioning(`${sandbox?.dir}/mute-tag`)) process.kill(pid, 'SIGKILL');
  sandbox?.cleanup();
});

it('close() does not wait out a reload stuck on a plugin that never answers its handshake', { timeout: 60_000 }, async () => {
  sandbox = createReloadSandbox('close-hang');
  sandbox.writePlugin('alpha');
  sandbox.writeConfig(`[plugins]\nallow = ["alpha", "mute"]\npaths = [${JSON.stringify(sandbox.root)}]\n`);
  host = await startLiveHost({ configPath: sandbox.config, workspace: sandbox.dir, home: sandbox.home, env: sandbox.env, debounceMs: 100 });
  // mute reports its tools (no [[tools]]), so the reload that adds it waits for its handshake: up to 600 s.
  const staging = join(sandbox.dir, 'staging', 'mute');
  mkdirSync(staging, { recursive: true });
  writeFileSync(join(staging, 'mute.mjs'), "process.on('SIGTERM', () => {}); process.stdin.resume(); setInterval(() => {}, 1000);\n");
  writeFileSync(
    join(staging, 'plugin.toml'),
    `schema_version = 1\nid = "mute"\nname = "mute"\nversion = "1.0.0"\nkind = "toolset"\ndescription = "Never answers."\n\n` +
      `[runtime]\ntype = "process"\ncommand = "node"\nargs = ["mute.mjs", ${JSON.stringify(`${sandbox.dir}/mute-tag`)}]\nhandshake_timeout_seconds = 600\n`,
  );
  cpSync(staging, join(sandbox.root, 'mute'), { recursive: true });
  expect(await waitFor(() => pidsMentioning(`${sandbox!.dir}/mute-tag`).length > 0)).toBe(true);
  expect(host.status().lastReload).toBeUndefined(); // the reload is still waiting

  const closed = host.close().then(() => true);
  const result = await Promise.race([closed, new Promise<false>((resolve) => setTimeout(() => resolve(false), 20_000))]);
  expect(result, 'close() waited for the stuck reload').toBe(true);
  expect(await waitFor(() => pidsMentioning(`${sandbox!.dir}/mute-tag`).length === 0)).toBe(true);
});

it('close() finishes while a client keeps calling, and refuses the calls that start after it', { timeout: 60_000 }, async () => {
  sandbox = createReloadSandbox('close-flood');
  sandbox.writePlugin('alpha');
  sandbox.writeConfig(`[plugins]\nallow = ["alpha"]\npaths = [${JSON.stringify(sandbox.root)}]\n`);
  const live = (host = await startLiveHost({
    configPath: sandbox.config,
    workspace: sandbox.dir,
    home: sandbox.home,
    env: sandbox.env,
    watch: false,
  }));
  expect((await live.invoke({ name: 'alpha.where' })).ok).toBe(true);
  // Twenty callers, each calling again as soon as its last call ends, until close() has finished.
  // (Before close() refused new calls, it never finished: each call kept a generation busy.)
  let closed = false;
  const refused: string[] = [];
  let served = 0;
  const caller = async (): Promise<void> => {
    while (!closed) {
      const outcome = await live.invoke({ name: 'alpha.where' });
      if (outcome.ok) served += 1;
      else refused.push(outcome.error.code);
      // A refusal resolves at once: turn the event loop, as a client's next request would.
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  const callers = Array.from({ length: 20 }, () => caller());
  while (served < 200) await new Promise((resolve) => setTimeout(resolve, 10));
  const closing = live.close().then(() => (closed = true));
  const finished = await Promise.race([closing, new Promise<false>((resolve) => setTimeout(() => resolve(false), 20_000))]);
  expect(finished, 'close() waited for a client that keeps calling').toBe(true);
  await Promise.all(callers);
  expect(refused.length).toBeGreaterThan(0);
  expect(new Set(refused)).toEqual(new Set(['ABORTED']));
});
