import { chmodSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { parse } from 'smol-toml';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  buildPluginRegistrySnapshot,
  createRegistryBuildCache,
  discoverCandidates,
  serializeSnapshot,
  type RegistryBuildCache,
} from '../src/index.ts';
import { sameExternalFacts } from '../src/RegistryBuildCache.ts';
import type { ExternalCandidateFacts } from '../src/types.ts';
import { PROCESS_RUNTIME, PROFILES, config, descriptor, fileRoot, makeTree, manifestText } from './helpers.ts';

/** One build of `<base>/plugins` with `runtime` (default: alpha and beta allowed). */
function build(base: string, buildCache?: RegistryBuildCache, runtime: string[] | Record<string, unknown> = ['alpha', 'beta']) {
  return buildPluginRegistrySnapshot({
    config: config(Array.isArray(runtime) ? { plugins: { allow: runtime } } : runtime),
    roots: [fileRoot(join(base, 'plugins'))],
    bundled: [],
    profiles: PROFILES,
    env: {},
    uid: 0,
    commandsOnPath: {},
    ...(buildCache !== undefined ? { buildCache } : {}),
  });
}
/** Tells the cache that `result` serves now, as a live host does after a swap. */
function serve(cache: RegistryBuildCache, result: ReturnType<typeof build>): void {
  cache.serving(result.trace.flatMap((d) => (d.state === 'enabled' && !d.admitted.facts.bundled ? [d.admitted.facts] : [])));
}
const manifestOf = (result: ReturnType<typeof build>, id: string) => result.snapshot.plugins.find((p) => p.id === id)?.manifest;

describe('RegistryBuildCache', () => {
  it('parses a manifest again only when its bytes changed, and forgets removed ones', () => {
    const base = makeTree({
      'plugins/alpha/plugin.toml': manifestText({ id: 'alpha', runtime: PROCESS_RUNTIME, description: 'first' }),
      'plugins/beta/plugin.toml': manifestText({ id: 'beta', runtime: PROCESS_RUNTIME }),
    });
    const cache = createRegistryBuildCache();
    const first = build(base, cache);
    const second = build(base, cache);
    // The same parse, not an equal one: nothing was parsed again.
    expect(manifestOf(second, 'alpha')).toBe(manifestOf(first, 'alpha'));
    expect(manifestOf(second, 'beta')).toBe(manifestOf(first, 'beta'));
    // Without the cache every build parses anew.
    expect(manifestOf(build(base), 'alpha')).not.toBe(manifestOf(first, 'alpha'));
    expect(manifestOf(build(base), 'alpha')).toEqual(manifestOf(first, 'alpha'));

    writeFileSync(join(base, 'plugins/alpha/plugin.toml'), manifestText({ id: 'alpha', runtime: PROCESS_RUNTIME, description: 'second' }));
    const third = build(base, cache);
    expect(manifestOf(third, 'alpha')?.description).toBe('second');
    expect(manifestOf(third, 'beta')).toBe(manifestOf(first, 'beta'));

    // Gone for one build, back with the same bytes: parsed again (the cache keeps what the last build read).
    rmSync(join(base, 'plugins/beta'), { recursive: true });
    expect(manifestOf(build(base, cache), 'beta')).toBeUndefined();
    mkdirSync(join(base, 'plugins/beta'));
    writeFileSync(join(base, 'plugins/beta/plugin.toml'), manifestText({ id: 'beta', runtime: PROCESS_RUNTIME }));
    const back = manifestOf(build(base, cache), 'beta');
    expect(back).not.toBe(manifestOf(first, 'beta'));
    expect(back).toEqual(manifestOf(first, 'beta'));
  });

  it('answers an invalid manifest the same from the cache: the same errors, still rejected', () => {
    const base = makeTree({ 'plugins/alpha/plugin.toml': 'id = "alpha"\nkind = ' });
    const cache = createRegistryBuildCache();
    const reasons = (result: ReturnType<typeof build>) => result.snapshot.plugins.find((p) => p.id === 'alpha')?.reasons;
    const first = build(base, cache);
    expect(first.snapshot.plugins.find((p) => p.id === 'alpha')?.state).toBe('rejected');
    expect(reasons(build(base, cache))).toEqual(reasons(first));
    expect(reasons(build(base))).toEqual(reasons(first));
  });

  it('admits a manifest that stopped validating with the bytes its serving plugin runs from, under the file checks of now', () => {
    const good = manifestText({ id: 'alpha', runtime: PROCESS_RUNTIME, description: 'good' });
    const base = makeTree({
      'plugins/alpha/plugin.toml': good,
      'plugins/beta/plugin.toml': manifestText({ id: 'beta', runtime: PROCESS_RUNTIME }),
    });
    const manifestPath = join(base, 'plugins/alpha/plugin.toml');
    const entry = (result: ReturnType<typeof build>, id = 'alpha') => result.snapshot.plugins.find((p) => p.id === id);
    const cache = createRegistryBuildCache();
    const first = build(base, cache);
    expect(first.keptManifests).toEqual([]);
    // Nothing serves yet: a broken manifest is judged as it is.
    writeFileSync(manifestPath, 'schema_version = 1\nid = "alpha"\nversion = [\n');
    expect(entry(build(base, cache))?.reasons[0]?.code).toBe('MANIFEST_INVALID');
    writeFileSync(manifestPath, good);
    serve(cache, build(base, cache));

    // Saved half-way while alpha serves: the bytes it runs from stand in, the same entry, and the build says so.
    writeFileSync(manifestPath, 'schema_version = 1\nid = "alpha"\nversion = [\n');
    const broken = build(base, cache);
    expect(entry(broken)).toEqual(entry(first));
    expect(entry(broken)?.manifest?.description).toBe('good');
    expect(broken.keptManifests).toEqual([
      { id: 'alpha', manifestPath, message: expect.stringMatching(/^\/.*plugin\.toml: .*TOML syntax error/) },
    ]);
    // Still broken at the next build: still kept, still said.
    expect(entry(build(base, cache))).toEqual(entry(first));
    expect(build(base, cache).keptManifests.map((k) => k.id)).toEqual(['alpha']);
    // Without a cache (a one-shot command) the file is judged as it is.
    expect(entry(build(base))?.reasons[0]?.code).toBe('MANIFEST_INVALID');

    // The file checks are of now: a folder made world-writable is rejected though its manifest is kept.
    chmodSync(join(base, 'plugins/alpha'), 0o777);
    const unsafe = build(base, cache);
    expect(entry(unsafe)?.state).toBe('rejected');
    expect(entry(unsafe)?.reasons.map((r) => r.code)).toEqual(['WORLD_WRITABLE']);
    chmodSync(join(base, 'plugins/alpha'), 0o755);

    // Fixed with new content: that content, nothing kept.
    writeFileSync(manifestPath, manifestText({ id: 'alpha', runtime: PROCESS_RUNTIME, description: 'fixed' }));
    const fixed = build(base, cache);
    expect(entry(fixed)?.manifest?.description).toBe('fixed');
    expect(fixed.keptManifests).toEqual([]);

    // Another folder behind the same path (the root now links elsewhere): not kept, judged as it is.
    renameSync(join(base, 'plugins'), join(base, 'before'));
    mkdirSync(join(base, 'after/alpha'), { recursive: true });
    writeFileSync(join(base, 'after/alpha/plugin.toml'), 'id = "alpha"\nkind = ');
    symlinkSync(join(base, 'after'), join(base, 'plugins'));
    const moved = build(base, cache);
    expect(moved.keptManifests).toEqual([]);
    expect(entry(moved)?.reasons[0]?.code).toBe('MANIFEST_INVALID');
  });

  it('keeps only bytes a serving generation ran: never ones seen while the plugin was rejected', () => {
    const manifest = (description: string) => manifestText({ id: 'alpha', runtime: PROCESS_RUNTIME, description });
    const base = makeTree({ 'plugins/alpha/plugin.toml': manifest('admin') });
    const manifestPath = join(base, 'plugins/alpha/plugin.toml');
    const entry = (result: ReturnType<typeof build>) => result.snapshot.plugins.find((p) => p.id === 'alpha');
    const cache = createRegistryBuildCache();
    serve(cache, build(base, cache));
    // Made world-writable: rejected, and what serves no longer runs alpha.
    chmodSync(manifestPath, 0o666);
    serve(cache, build(base, cache));
    // Someone else writes a valid manifest, a build sees it (rejected: still world-writable), then garbage.
    writeFileSync(manifestPath, manifest('someone else'));
    const seen = build(base, cache);
    expect(entry(seen)?.reasons[0]?.code).toBe('WORLD_WRITABLE');
    serve(cache, seen);
    writeFileSync(manifestPath, 'id = "alpha"\nversion = [\n');
    chmodSync(manifestPath, 0o644);
    // Safe again, and broken: judged as it is, never admitted with the bytes someone else wrote.
    const after = build(base, cache);
    expect(after.keptManifests).toEqual([]);
    expect(entry(after)?.state).toBe('rejected');
    expect(entry(after)?.reasons[0]?.code).toBe('MANIFEST_INVALID');
  });

  it('judges a folder put in place of a kept plugin’s folder as it is, and says a manifest found twice once', () => {
    const base = makeTree({
      'plugins/alpha/plugin.toml': manifestText({ id: 'alpha', runtime: PROCESS_RUNTIME }),
      'plugins/inner/beta/plugin.toml': manifestText({ id: 'beta', runtime: PROCESS_RUNTIME }),
    });
    const cache = createRegistryBuildCache();
    serve(cache, build(base, cache));
    // alpha moved aside; another folder, its manifest broken, made at the old path.
    renameSync(join(base, 'plugins/alpha'), join(base, 'plugins/alpha2'));
    mkdirSync(join(base, 'plugins/alpha'));
    writeFileSync(join(base, 'plugins/alpha/plugin.toml'), 'id = "newthing"\nversion = [\n');
    const moved = build(base, cache);
    expect(moved.keptManifests).toEqual([]);
    const alphas = moved.snapshot.plugins.filter((p) => p.id === 'alpha');
    // The new folder's manifest does not parse, so it goes by its folder's name, rejected; alpha serves from where it went.
    expect(alphas.map((p) => [p.state, p.pluginDir])).toEqual([
      ['rejected', join(base, 'plugins/alpha')],
      ['enabled', join(base, 'plugins/alpha2')],
    ]);
    expect(moved.snapshot.plugins.find((p) => p.pluginDir === join(base, 'plugins/alpha'))?.reasons[0]?.code).toBe('MANIFEST_INVALID');

    // beta found from two roots (one inside the other), its manifest broken: kept, and said once.
    const twice = (cacheOf: RegistryBuildCache) =>
      buildPluginRegistrySnapshot({
        config: config({ plugins: { allow: ['alpha', 'beta'] } }),
        roots: [fileRoot(join(base, 'plugins/inner'), 'workspace'), fileRoot(join(base, 'plugins'))],
        bundled: [],
        profiles: PROFILES,
        env: {},
        uid: 0,
        commandsOnPath: {},
        buildCache: cacheOf,
      });
    const again = createRegistryBuildCache();
    serve(again, twice(again));
    writeFileSync(join(base, 'plugins/inner/beta/plugin.toml'), 'id = "beta"\nversion = [\n');
    expect(twice(again).keptManifests.map((k) => k.id)).toEqual(['beta']);
  });

  it('keeps the manifest of a plugin in a root where another plugin is reached by two paths', () => {
    const base = makeTree({
      'plugins/alpha/plugin.toml': manifestText({ id: 'alpha', runtime: PROCESS_RUNTIME, description: 'good' }),
      'plugins/real/gamma/plugin.toml': manifestText({ id: 'gamma', runtime: PROCESS_RUNTIME }),
      'plugins/gamma': { symlink: 'real/gamma' },
    });
    const cache = createRegistryBuildCache();
    const first = build(base, cache, ['alpha', 'gamma']);
    serve(cache, first);
    writeFileSync(join(base, 'plugins/alpha/plugin.toml'), 'id = "alpha"\nversion = [\n');
    const broken = build(base, cache, ['alpha', 'gamma']);
    expect(broken.keptManifests.map((k) => k.id)).toEqual(['alpha']);
    expect(broken.snapshot.plugins.find((p) => p.id === 'alpha')).toEqual(first.snapshot.plugins.find((p) => p.id === 'alpha'));
  });

  it('keeps the facts and admission of an unchanged candidate, and redoes both on any change', () => {
    const base = makeTree({
      'plugins/alpha/plugin.toml': manifestText({ id: 'alpha', runtime: PROCESS_RUNTIME }),
      'plugins/beta/plugin.toml': manifestText({ id: 'beta', runtime: PROCESS_RUNTIME }),
    });
    const traceOf = (result: ReturnType<typeof build>, id: string) => result.trace.find((d) => d.admitted.id === id)!.admitted;
    const cache = createRegistryBuildCache();
    const first = build(base, cache);
    const second = build(base, cache);
    // Found, stat'ed and read again, compared equal: the same objects as the build before.
    expect(traceOf(second, 'alpha').facts).toBe(traceOf(first, 'alpha').facts);
    expect(traceOf(second, 'alpha')).toBe(traceOf(first, 'alpha'));

    // A folder made world-writable: the bytes are the same, the facts are not; admission runs again.
    chmodSync(join(base, 'plugins/alpha'), 0o777);
    const third = build(base, cache);
    expect(traceOf(third, 'alpha').facts).not.toBe(traceOf(second, 'alpha').facts);
    expect(third.snapshot.plugins.find((p) => p.id === 'alpha')?.state).toBe('rejected');
    expect(traceOf(third, 'beta')).toBe(traceOf(first, 'beta'));
    chmodSync(join(base, 'plugins/alpha'), 0o755);
    const fourth = build(base, cache);
    expect(fourth.snapshot.plugins.find((p) => p.id === 'alpha')?.state).toBe('enabled');

    // The same facts under another policy ([plugins] allow changed): admitted anew.
    const fifth = build(base, cache, ['beta']);
    expect(traceOf(fifth, 'alpha').facts).toBe(traceOf(fourth, 'alpha').facts);
    expect(traceOf(fifth, 'alpha')).not.toBe(traceOf(fourth, 'alpha'));
    expect(traceOf(fifth, 'beta')).not.toBe(traceOf(fourth, 'beta'));
    // Without a cache nothing is shared, and the answer is the same.
    expect(build(base, undefined, ['beta']).snapshot.plugins.map((p) => [p.id, p.state])).toEqual(
      fifth.snapshot.plugins.map((p) => [p.id, p.state]),
    );
  });

  it('compares every field of the facts: changing any one leaf makes them differ', () => {
    const base = makeTree({
      'plugins/alpha/plugin.toml': manifestText({ id: 'alpha', runtime: PROCESS_RUNTIME }),
      'plugins/link': { symlink: 'alpha' },
    });
    const discovered = (): ExternalCandidateFacts[] =>
      discoverCandidates({ roots: [fileRoot(join(base, 'plugins'))], bundled: [] }).candidates.filter(
        (c): c is ExternalCandidateFacts => !c.bundled,
      );
    const [facts] = discovered();
    expect(facts).toBeDefined();
    expect(sameExternalFacts(facts!, discovered()[0]!)).toBe(true);
    // Every leaf of real facts (and an element added to every list), changed one at a time.
    const variants: Array<[string, unknown]> = [];
    const walk = (value: unknown, path: string, rebuild: (next: unknown) => unknown): void => {
      if (value instanceof Uint8Array) {
        variants.push([path, rebuild(Buffer.concat([value, Buffer.from('x')]))]);
      } else if (Array.isArray(value)) {
        variants.push([`${path}[+]`, rebuild([...value, value[0] ?? 'x'])]);
        value.forEach((item, i) => walk(item, `${path}[${i}]`, (next) => rebuild(value.map((v, j) => (j === i ? next : v)))));
      } else if (value !== null && typeof value === 'object') {
        for (const [key, item] of Object.entries(value)) walk(item, `${path}.${key}`, (next) => rebuild({ ...value, [key]: next }));
      } else {
        const changed =
          typeof value === 'string' ? `${value}x` : typeof value === 'number' ? value + 1 : typeof value === 'boolean' ? !value : 'x';
        variants.push([path, rebuild(changed)]);
      }
    };
    walk(facts, 'facts', (next) => next);
    expect(variants.length).toBeGreaterThan(30);
    const missed = variants.filter(([, variant]) => sameExternalFacts(facts!, variant as ExternalCandidateFacts)).map(([path]) => path);
    expect(missed).toEqual([]);
  });

  it('decides every build as a build without the cache would, through random config changes', () => {
    const base = makeTree({
      'plugins/alpha/plugin.toml': manifestText({ id: 'alpha', runtime: PROCESS_RUNTIME, requires_env: ['ALPHA_TOKEN'] }),
      'plugins/beta/plugin.toml': manifestText({
        id: 'beta',
        runtime: PROCESS_RUNTIME,
        requires_commands: ['beta-tool'],
        profile: 'minimal',
      }),
      'plugins/gamma/plugin.toml': manifestText({
        id: 'gamma',
        runtime: PROCESS_RUNTIME,
        config_schema: { type: 'object', properties: { level: { type: 'integer', maximum: 3 } }, additionalProperties: false },
      }),
      'plugins/delta/plugin.toml': manifestText({ id: 'delta', runtime: PROCESS_RUNTIME, profile: 'full', side_effects: true }),
    });
    const bundled = [
      descriptor(
        { id: 'bun', profile: 'minimal' },
        {
          settings: {
            key: 'bun',
            defaults: { depth: 1 },
            jsonSchema: { type: 'object', properties: { depth: { type: 'integer', minimum: 1 } }, additionalProperties: false },
          },
        },
      ),
    ];
    // A small deterministic generator: the same sequence on every run.
    let seed = 7;
    const next = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return Math.floor(seed / 65536) % n; // the high bits: an LCG's low bits repeat quickly
    };
    const pick = <T>(options: readonly T[]): T => options[next(options.length)]!;
    const ids = ['alpha', 'beta', 'gamma', 'delta', 'bun'];
    const cache = createRegistryBuildCache();
    // A random walk: each build changes one thing of the last one, so most plugins' decisions are
    // taken over and the one changed input must tell the cache to decide again.
    const entries: Record<string, unknown> = {};
    let profile = 'minimal';
    let allow: string[] = ['alpha'];
    let deny: string[] = [];
    let tools: Record<string, unknown> = {};
    let env: Readonly<Record<string, string | undefined>> = {};
    let commandsOnPath: Readonly<Record<string, string | null>> = {};
    let commandLine: { allow?: string[]; enable?: string[]; disable?: string[] } | undefined;
    let reused = 0;
    const counting: RegistryBuildCache = {
      ...cache,
      decide: (admitted, inputs, decide) => {
        let fresh = false;
        const decided = cache.decide(admitted, inputs, () => ((fresh = true), decide()));
        if (!fresh) reused += 1;
        return decided;
      },
    };
    for (let step = 0; step < 300; step += 1) {
      const id = pick(ids);
      switch (next(9)) {
        case 0:
          entries[id] = pick([
            undefined,
            { enabled: true },
            { enabled: false },
            { config: { level: pick([1, 2, 9]) } },
            { config: { depth: pick([0, 2]) } },
          ]);
          if (entries[id] === undefined) delete entries[id];
          break;
        case 1:
          profile = pick(['minimal', 'messaging', 'full']);
          break;
        case 2:
          allow = allow.includes(id) ? allow.filter((x) => x !== id) : [...allow, id];
          break;
        case 3:
          deny = deny.includes(id) ? deny.filter((x) => x !== id) : [...deny, id];
          break;
        case 4:
          tools = pick([{}, { bun: { depth: 2 } }, { bun: { depth: 0 } }]);
          break;
        case 5:
          env = pick([{}, { ALPHA_TOKEN: 'x' }, { ALPHA_TOKEN: '' }, { ALPHA_TOKEN: 'y' }]);
          break;
        case 6:
          commandsOnPath = pick<Record<string, string>>([{}, { 'beta-tool': '/usr/bin/beta-tool' }, { 'beta-tool': '/opt/beta-tool' }]);
          break;
        default:
          commandLine = pick([undefined, { allow: [id] }, { enable: [id] }, { disable: [id] }]);
      }
      const options = {
        config: config({
          plugins: { profile, allow, deny, entries: structuredClone(entries) },
          runtime: { tools: structuredClone(tools) },
        }),
        roots: [fileRoot(join(base, 'plugins'))],
        bundled,
        profiles: PROFILES,
        env,
        uid: 0,
        commandsOnPath,
        ...(commandLine !== undefined ? { commandLine } : {}),
      };
      const cached = buildPluginRegistrySnapshot({ ...options, buildCache: counting });
      const fresh = buildPluginRegistrySnapshot(options);
      const decisions = (result: typeof fresh) =>
        result.trace.map((d) => ({
          id: d.admitted.id,
          state: d.state,
          reasons: d.reasons,
          warnings: d.warnings,
          settings: d.settings,
          trace: d.trace,
        }));
      expect(serializeSnapshot(cached.snapshot), `step ${step}`).toBe(serializeSnapshot(fresh.snapshot));
      expect(decisions(cached), `step ${step}`).toEqual(decisions(fresh));
      expect([...cached.settings], `step ${step}`).toEqual([...fresh.settings]);
    }
    // The walk took most decisions over: the comparison above is of reused decisions, mostly.
    expect(reused).toBeGreaterThan(600);
  });

  it('keeps the decision and the entry of a plugin whose inputs did not change', () => {
    const base = makeTree({
      'plugins/alpha/plugin.toml': manifestText({ id: 'alpha', runtime: PROCESS_RUNTIME }),
      'plugins/beta/plugin.toml': manifestText({ id: 'beta', runtime: PROCESS_RUNTIME }),
    });
    const cache = createRegistryBuildCache();
    const run = (entries: Record<string, unknown>) => build(base, cache, { plugins: { allow: ['alpha', 'beta'], entries } });
    const entryOf = (result: ReturnType<typeof run>, id: string) => result.snapshot.plugins.find((p) => p.id === id);
    const first = run({ alpha: { config: { n: 1 } } });
    const second = run({ alpha: { config: { n: 2 } } });
    expect(entryOf(second, 'beta')).toBe(entryOf(first, 'beta'));
    expect(entryOf(second, 'alpha')).not.toBe(entryOf(first, 'alpha'));
    expect(second.settings.get('alpha')).toEqual({ n: 2 });
    expect(Object.isFrozen(second.settings.get('alpha'))).toBe(true);
  });

  it('takes over no decision whose config holds a date, and keeps no shared block of bytes', () => {
    const base = makeTree(
      Object.fromEntries(
        Array.from({ length: 20 }, (_, i) => [`plugins/p${i}/plugin.toml`, manifestText({ id: `p${i}`, runtime: PROCESS_RUNTIME })]),
      ),
    );
    const cache = createRegistryBuildCache();
    const run = (toml: string, buildCache?: RegistryBuildCache) => build(base, buildCache, parse(toml) as Record<string, unknown>);
    const allow = `[plugins]\nallow = [${Array.from({ length: 20 }, (_, i) => `"p${i}"`).join(', ')}]\n`;
    // A TOML date is a Date: equal-looking to a compare of keys, so it must not be compared so.
    const dated = (year: number) => `${allow}[plugins.entries.p0.config]\nexpires = ${year}-01-01T00:00:00Z\n`;
    run(dated(2024), cache);
    const expires = (result: ReturnType<typeof run>) => String((result.settings.get('p0') as { expires: Date }).expires.toISOString());
    expect(expires(run(dated(2031), cache))).toBe(expires(run(dated(2031))));
    // Edit one manifest per build: every kept manifest has bytes of its own, not a view of a block.
    for (let i = 0; i < 20; i += 1) {
      writeFileSync(
        join(base, `plugins/p${i}/plugin.toml`),
        manifestText({ id: `p${i}`, runtime: PROCESS_RUNTIME, description: `edit ${i}` }),
      );
      run(allow, cache);
    }
    const kept = run(allow, cache).trace.map((d) => d.admitted.facts);
    for (const facts of kept) {
      expect(facts.bundled).toBe(false);
      if (facts.bundled || facts.bytes === null) continue;
      expect(facts.bytes.buffer.byteLength).toBe(facts.bytes.byteLength);
    }
  });
});
