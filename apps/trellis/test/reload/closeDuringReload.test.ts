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
