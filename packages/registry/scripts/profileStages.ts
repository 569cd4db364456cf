// Stage timings of the registry pipeline (a development aid, not the benchmark): discover, admit,
// decide, snapshot over N generated manifests. Run from packages/registry: node --conditions=@trellis/source --import tsx scripts/profileStages.ts
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'smol-toml';
import { RuntimeConfigSchema } from '@trellis/config';
import { admitCandidate, buildSnapshot, decide, discoverCandidates, prepareRegistry } from '../src/index.ts';
import { parseManifest } from '../src/parse.ts';
import type { FileRootSpec } from '../src/index.ts';

await prepareRegistry();

const n = Number(process.env.N ?? 10_000);
const base = mkdtempSync(join(tmpdir(), 'trellis-prof-'));
const root: FileRootSpec = { root: 'explicit', priority: 0, path: base, origin: 'prof', warnIfMissing: true };
for (let i = 0; i < n; i += 1) {
  mkdirSync(join(base, `p${i}`));
  writeFileSync(
    join(base, `p${i}`, 'plugin.toml'),
    stringify({
      schema_version: 1,
      id: `p${i}`,
      name: 'x',
      version: '1.0.0',
      kind: 'toolset',
      runtime: { type: 'process', command: 'python3', args: ['main.py'] },
      tools: [{ name: 'a', description: 'b', input_schema: { type: 'object', properties: { x: { type: 'string' } } } }],
    }),
  );
}
const config = RuntimeConfigSchema.parse({});
const t = (label: string, fn: () => unknown) => {
  const s = performance.now();
  const c = process.cpuUsage();
  const out = fn();
  const cpu = process.cpuUsage(c);
  process.stderr.write(`${label}: wall ${(performance.now() - s).toFixed(1)} ms, cpu ${((cpu.user + cpu.system) / 1000).toFixed(1)} ms\n`);
  return out;
};
const floor = () => {
  const walk = (dir: string, depth: number): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (depth < 4) walk(path, depth + 1);
      } else if (entry.name === 'plugin.toml') {
        realpathSync.native(path);
        lstatSync(path);
        parse(readFileSync(path, 'utf8'));
      }
    }
  };
  walk(base, 0);
};
for (let round = 0; round < 3; round += 1) {
  t('FLOOR', floor);
  const d = t('discover', () => discoverCandidates({ roots: [root], bundled: [] })) as ReturnType<typeof discoverCandidates>;
  t('parseManifest only', () => d.candidates.forEach((c) => (c.bundled ? null : parseManifest(c.bytes!))));
  const a = t('admit', () => d.candidates.map((c) => admitCandidate(c, { uid: 0, allow: [], bundledIds: new Map() }))) as ReturnType<
    typeof admitCandidate
  >[];
  const dd = t('decide', () => decide(a, { config, profiles: {}, env: {}, commandsOnPath: {} })) as ReturnType<typeof decide>;
  t('snapshot', () => buildSnapshot({ decided: dd, profile: 'minimal', warnings: [] }));
}
rmSync(base, { recursive: true, force: true });
