import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import type { LifecycleTransition } from '@trellis/sdk';
import { assemble } from '../src/assemble.ts';
import { pidsMentioning } from '@trellis/test-support';

const ADD_SERVER = fileURLToPath(new URL('./fixtures/mcpAddServer.mjs', import.meta.url));

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

it('Assembly.status() and onLifecycleChange: a bridged server killed goes error → recovering → active', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-status-'));
  try {
    const home = join(dir, 'home');
    mkdirSync(home);
    const config = join(dir, 'runtime.toml');
    writeFileSync(
      config,
      `[plugins.entries.mcp]\nenabled = true\n\n[[plugins.entries.mcp.config.servers]]\nname = "add"\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(ADD_SERVER)}, ${JSON.stringify(dir)}]\nhealth_check_interval_seconds = 0\n`,
    );
    const assembly = await assemble({
      configPath: config,
      workspace: dir,
      home,
      env: { PATH: process.env.PATH, HOME: home, XDG_STATE_HOME: join(dir, 'state') },
      refreshToolSources: true,
    });
    try {
      const transitions: LifecycleTransition[] = [];
      const off = assembly.onLifecycleChange((t) => transitions.push(t));
      const mcp = () => assembly.status().plugins.find((p) => p.id === 'mcp');
      expect(mcp()).toMatchObject({
        id: 'mcp',
        state: 'enabled',
        runs: 'bundled',
        lifecycle: { state: 'active', restarts: 0, parts: [{ name: 'add', state: 'active', restarts: 0 }] },
      });
      // The status is plain JSON.
      expect(JSON.parse(JSON.stringify(assembly.status()))).toEqual(assembly.status());
      // A plugin that is not enabled has no lifecycle.
      const off1 = assembly.status().plugins.find((p) => p.state !== 'enabled');
      if (off1 !== undefined) expect(off1.lifecycle).toBeUndefined();

      const before = pidsMentioning(dir);
      expect(before.length).toBeGreaterThan(0);
      for (const pid of before) process.kill(pid, 'SIGKILL');
      expect(await until(() => transitions.some((t) => t.to === 'active'), 60_000)).toBe(true);
      expect(transitions.map((t) => `${t.plugin}/${t.part}: ${t.from}→${t.to}`)).toEqual([
        'mcp/add: active→error',
        'mcp/add: error→recovering',
        'mcp/add: recovering→active',
      ]);
      expect(transitions[0]!.error).toBe('the connection closed (the server exited or hung up)');
      expect(mcp()?.lifecycle?.parts).toEqual([
        expect.objectContaining({
          name: 'add',
          state: 'active',
          restarts: 1,
          lastError: 'the connection closed (the server exited or hung up)',
        }),
      ]);
      expect(await assembly.runtime.invoke({ name: 'mcp.add.add', input: { a: 1, b: 2 } })).toMatchObject({ ok: true });
      off();
    } finally {
      await assembly.dispose();
    }
    expect(pidsMentioning(dir)).toEqual([]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
