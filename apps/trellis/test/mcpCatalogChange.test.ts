import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import type { ResourceCatalog } from '@trellis/catalog';
import { assemble } from '../src/assemble.ts';
import { pidsMentioning } from '@trellis/test-support';

const ADD_SERVER = fileURLToPath(new URL('./fixtures/mcpAddServer.mjs', import.meta.url));

it("a server's tools/list_changed replaces the assembly's catalog, and the runtime calls the new tool", { timeout: 90_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-listchanged-'));
  try {
    const home = join(dir, 'home');
    mkdirSync(home);
    const config = join(dir, 'runtime.toml');
    writeFileSync(
      config,
      `[plugins.entries.mcp]\nenabled = true\n\n[[plugins.entries.mcp.config.servers]]\nname = "add"\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(ADD_SERVER)}, ${JSON.stringify(dir)}]\n`,
    );
    const assembly = await assemble({
      configPath: config,
      workspace: dir,
      home,
      env: { PATH: process.env.PATH, HOME: home, XDG_STATE_HOME: join(dir, 'state') },
    });
    try {
      expect(assembly.catalog.get('mcp.add.extra')).toBeUndefined();
      const changed = new Promise<ResourceCatalog>((resolve) => {
        assembly.onCatalogChanged((catalog) => {
          if (catalog.get('mcp.add.extra') !== undefined) resolve(catalog);
        });
      });
      expect(await assembly.runtime.invoke({ name: 'mcp.add.grow', input: {} })).toEqual({ ok: true, value: 'grown' });
      const next = await changed;
      expect(next.offered().map((d) => d.name)).toContain('mcp.add.extra');
      expect(assembly.catalog).toBe(next);
      expect(await assembly.runtime.invoke({ name: 'mcp.add.extra', input: {} })).toEqual({ ok: true, value: 'extra here' });
    } finally {
      await assembly.dispose();
    }
    expect(pidsMentioning(dir)).toEqual([]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
