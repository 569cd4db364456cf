import { cpSync, mkdirSync, mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLiveHost } from 'trellis';
const dir = mkdtempSync(join(tmpdir(), 'prof-build-'));
const root = join(dir, 'plugins'); const home = join(dir, 'home'); mkdirSync(home);
const count = 1000;
for (let i = 0; i < count; i++) {
  const folder = join(root, `ext-${i}`); mkdirSync(folder, { recursive: true });
  cpSync('apps/trellis/test/fixtures/reload-plugin.mjs', join(folder, 'reload-plugin.mjs'));
  writeFileSync(join(folder, 'plugin.toml'), `schema_version = 1\nid = "ext-${i}"\nname = "ext ${i}"\nversion = "1.0.0"\nkind = "toolset"\ndescription = "Bench plugin."\nside_effects = false\n\n[runtime]\ntype = "process"\ncommand = "node"\nargs = ["reload-plugin.mjs", "bench-${i}", "manifest"]\n\n[[tools]]\nname = "where"\ndescription = "Says which child answered."\ninput_schema = { type = "object" }\n`);
}
const config = join(dir, 'runtime.toml');
const allow = JSON.stringify(Array.from({ length: count }, (_, i) => `ext-${i}`));
const write = (v: number) => { writeFileSync(`${config}.tmp`, `[plugins]\nallow = ${allow}\npaths = [${JSON.stringify(root)}]\n\n[runtime]\nretry_backoff_ms = ${200 + v}\n`); renameSync(`${config}.tmp`, config); };
write(0);
const host = await startLiveHost({ configPath: config, workspace: dir, home, env: { PATH: process.env.PATH, HOME: home }, debounceMs: 10_000 });
const times: number[] = [];
for (let v = 1; v <= 30; v++) {
  write(v);
  const t = performance.now();
  const r = await host.reload();
  times.push(performance.now() - t);
  if (r.status !== 'applied') throw new Error(JSON.stringify(r));
}
times.sort((a, b) => a - b);
console.log('reload (runtime only) median', times[15].toFixed(1), 'min', times[0].toFixed(1));
await host.close();
