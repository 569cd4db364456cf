import { afterEach, beforeEach, expect, it } from 'vitest';
import { assemble, assembleGeneration } from '../../src/assemble.ts';
import { createReloadSandbox, type ReloadSandbox } from './reloadFixture.ts';

let sandbox: ReloadSandbox;
beforeEach(() => {
  sandbox = createReloadSandbox('stepped-build');
});
afterEach(() => sandbox.cleanup());

it(
  'a live host’s generation is built in steps that let the event loop turn, into the same registry and catalog as assemble()',
  { timeout: 60_000 },
  async () => {
    const count = 250;
    const ids = Array.from({ length: count }, (_, i) => `p${i}`);
    for (const id of ids) sandbox.writePlugin(id);
    sandbox.writeConfig(`[plugins]\nallow = ${JSON.stringify(ids)}\npaths = [${JSON.stringify(sandbox.root)}]\n`);
    const options = { configPath: sandbox.config, workspace: sandbox.dir, home: sandbox.home, env: sandbox.env };

    let pauses = 0;
    let turns = 0;
    const ticking = setInterval(() => (turns += 1), 0);
    const stepped = await assembleGeneration(options, {
      pause: () => {
        pauses += 1;
        return new Promise((resolve) => setTimeout(resolve, 1));
      },
    });
    clearInterval(ticking);
    const whole = await assemble(options);
    try {
      expect(stepped.assembly.snapshot.hash).toBe(whole.snapshot.hash);
      const enabled = (plugins: typeof whole.snapshot.plugins) => plugins.filter((p) => p.state === 'enabled').map((p) => p.id);
      expect(enabled(stepped.assembly.snapshot.plugins)).toEqual(enabled(whole.snapshot.plugins));
      expect(enabled(stepped.assembly.snapshot.plugins)).toEqual(expect.arrayContaining(ids));
      expect(stepped.assembly.catalog.offered().map((t) => t.name)).toEqual(whole.catalog.offered().map((t) => t.name));
      expect(stepped.assembly.catalog.availability()).toEqual(whole.catalog.availability());
      expect(stepped.fingerprints.size).toBe(whole.snapshot.plugins.filter((p) => p.state === 'enabled').length);
      // A point after every manifest walked, located, collected, admitted and decided, every entry
      // frozen, every plugin's tools described and their availability decided, every fingerprint.
      expect(pauses).toBeGreaterThan(9 * count);
      expect(turns).toBeGreaterThan(0);
    } finally {
      await stepped.assembly.dispose();
      await whole.dispose();
    }
  },
);
