import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bundledManifestDigest } from '@trellis/registry';
import {
  findWorkspaceRoot,
  linkBundledPlugins,
  metaSchemaProblems,
  pluginEntries,
  renderBundledIndex,
  undeclaredPluginProblems,
} from '../scripts/bundledIndex.ts';

const appDir = join(import.meta.dirname, '..');
const tmpBase = join(appDir, '.tmp');
let workspace: string;

function addPlugin(folder: string, files: { toml: string; index?: string; code?: string; pkg?: object }) {
  const dir = join(workspace, 'plugins', folder);
  mkdirSync(join(dir, 'src'), { recursive: true });
  writeFileSync(join(dir, 'plugin.toml'), files.toml);
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify(files.pkg ?? { name: `@fixture/${folder}`, exports: { '.': { '@trellis/source': './src/index.ts' } } }),
  );
  writeFileSync(join(dir, 'src', 'index.ts'), files.index ?? `export const plugin = { manifest: { id: '${folder}' }, tools: [] };\n`);
  if (files.code !== undefined) writeFileSync(join(dir, 'src', 'code.ts'), files.code);
}

const manifest = (id: string, extra = '') =>
  `schema_version = 1\nid = "${id}"\nname = "${id}"\nversion = "1.0.0"\nkind = "toolset"\n${extra}`;

afterEach(() => rmSync(workspace, { recursive: true, force: true }));

function freshWorkspace() {
  mkdirSync(tmpBase, { recursive: true });
  workspace = mkdtempSync(join(tmpBase, 'ws-'));
  writeFileSync(join(workspace, 'pnpm-workspace.yaml'), 'packages:\n  - plugins/*\n');
}

describe('linkBundledPlugins', () => {
  it('links a new workspace plugin package, with JSON Schemas computed from zod, and unlinks it when removed', async () => {
    freshWorkspace();
    addPlugin('alpha', {
      toml: manifest('alpha', 'capabilities = ["fs.read"]\nprofile = "minimal"\n'),
      index: `import { z } from 'zod';
export const plugin = {
  manifest: { id: 'alpha' },
  settings: { key: 'alpha', schema: z.object({ depth: z.number().int().default(2) }).strict() },
  tools: [{
    name: 'count',
    description: 'Count things.',
    input: z.object({ text: z.string().describe('What to count') }),
    tags: ['demo'],
    run: (input) => input.text.length,
  }],
};
`,
    });
    addPlugin('beta', { toml: manifest('beta') });

    const first = await linkBundledPlugins(workspace);
    expect(first.errors).toEqual([]);
    expect(first.plugins.map((p) => p.manifest.id)).toEqual(['alpha', 'beta']);
    const alpha = first.plugins[0]!;
    expect(alpha.tools).toEqual([
      {
        name: 'count',
        description: 'Count things.',
        inputSchema: {
          type: 'object',
          properties: { text: { type: 'string', description: 'What to count' } },
          required: ['text'],
        },
        tags: ['demo'],
        examples: [],
        contract: {
          sideEffects: false,
          capabilities: ['fs.read'],
          sandbox: 'no-isolation',
          deadlineMs: 30000,
          maxRetries: 0,
          idempotent: true,
          isolation: 'inline',
          approval: 'auto',
        },
      },
    ]);
    expect(alpha.settings).toEqual({
      key: 'alpha',
      jsonSchema: {
        type: 'object',
        properties: { depth: { type: 'integer', default: 2, minimum: -9007199254740991, maximum: 9007199254740991 } },
        additionalProperties: false,
      },
      defaults: { depth: 2 },
    });

    const source = renderBundledIndex({ plugins: first.plugins, outDir: join(workspace, 'app'), embedded: {}, version: '9.9.9' });
    expect(source).toContain(`load: async () => ((await import("@fixture/alpha")) as { plugin: PluginCode }).plugin,`);
    expect(source).toContain(
      `moduleUrl: inSource ? new URL("../plugins/beta/src/index.ts", import.meta.url).href : new URL("./plugins/beta.js", import.meta.url).href,`,
    );

    rmSync(join(workspace, 'plugins', 'beta'), { recursive: true });
    const second = await linkBundledPlugins(workspace);
    expect(second.plugins.map((p) => p.manifest.id)).toEqual(['alpha']);
  });

  it('fails with the file and key of an invalid manifest', async () => {
    freshWorkspace();
    addPlugin('bad', { toml: manifest('bad').replace('kind = "toolset"', 'kind = "widget"') });
    addPlugin('ugly', { toml: 'schema_version = 1\nid = "ugly"\nname = = "x"\n' });
    const result = await linkBundledPlugins(workspace);
    expect(result.plugins).toEqual([]);
    expect(result.errors).toHaveLength(2);
    expect(result.errors[0]).toBe(
      'plugins/bad/plugin.toml: kind: must be one of "toolset", "provider", "connector", "skill-source", "bridge", "memory-slot", "context-engine", "workflow-adapter", "subagent-runtime"',
    );
    expect(result.errors[1]).toMatch(/^plugins\/ugly\/plugin\.toml:3:\d+: /);
  });

  it('fails on a duplicate id, naming both files', async () => {
    freshWorkspace();
    addPlugin('one', { toml: manifest('same') });
    addPlugin('two', { toml: manifest('same') });
    const result = await linkBundledPlugins(workspace);
    expect(result.errors).toEqual([
      'plugins/two/plugin.toml: id: "same" is already used by plugins/one/plugin.toml; plugin ids must be unique',
    ]);
  });

  it('one rule for the id: required in definePlugin, equal to plugin.toml; one message whichever way it is wrong', async () => {
    freshWorkspace();
    addPlugin('gamma', { toml: manifest('gamma'), index: `export const plugin = { manifest: { id: 'delta' }, tools: [] };\n` });
    addPlugin('kappa', { toml: manifest('kappa'), index: `export const plugin = { manifest: {}, tools: [] };\n` });
    addPlugin('sigma', {
      toml: manifest('sigma'),
      index: `export const plugin = { manifest: { id: 'sigma', name: 'Other' }, tools: [] };\n`,
    });
    addPlugin('omega', { toml: manifest('omega'), index: `export const nothing = 1;\n` });
    const result = await linkBundledPlugins(workspace);
    const rel = (p: string) => p.replace(`${workspace}/`, '');
    expect(result.errors.map(rel)).toEqual([
      'plugins/gamma/src/index.ts: manifest.id is "delta" but plugin.toml says "gamma"; definePlugin needs manifest: { id: "gamma" } (required, and equal to the id in plugin.toml)',
      'plugins/kappa/src/index.ts: manifest.id is missing; definePlugin needs manifest: { id: "kappa" } (required, and equal to the id in plugin.toml)',
      'plugins/omega/src/index.ts: must export `plugin = definePlugin({ manifest: { id: "omega" }, tools })` (the id is required, and equal to the id in plugin.toml)',
      'plugins/sigma/src/index.ts: manifest.name disagrees with plugin.toml, the source of truth for every field but the id; remove name from definePlugin (keep id)',
    ]);
    // No message tells the author to remove the id.
    expect(result.errors.join('\n')).not.toMatch(/remove id|remove it from definePlugin/);
  });

  it('links the real workspace: every folder under plugins/ with a plugin.toml', async () => {
    const root = findWorkspaceRoot(appDir);
    const result = await linkBundledPlugins(root);
    expect(result.errors).toEqual([]);
    expect(result.plugins.map((p) => p.manifest.id)).toEqual([
      'builtin-tools',
      'core-command',
      'core-fs',
      'core-python',
      'core-table',
      'core-web',
      'mcp',
      'openrouter',
      'skill-source-local',
      'telegram',
    ]);
  });

  it('asks for the exact package.json edit when the declared plugins and plugins/ differ', () => {
    const plugins = [
      { packageName: '@trellis/plugin-alpha', folder: 'plugins/alpha' },
      { packageName: '@trellis/plugin-beta', folder: 'plugins/beta' },
    ];
    const appPackage = {
      dependencies: { '@trellis/sdk': 'workspace:*', '@trellis/plugin-alpha': 'workspace:*', '@trellis/plugin-gone': 'workspace:*' },
    };
    expect(undeclaredPluginProblems(appPackage, plugins)).toEqual([
      'apps/trellis/package.json: devDependencies: add "@trellis/plugin-beta": "workspace:*" (the bundled plugin in plugins/beta), then run pnpm install',
      'apps/trellis/package.json: devDependencies: remove "@trellis/plugin-gone" (no folder under plugins/ provides it), then run pnpm install',
    ]);
  });

  it('declares every plugin under plugins/ as a dependency of the app', async () => {
    const result = await linkBundledPlugins(findWorkspaceRoot(appDir));
    const appPackage = JSON.parse(readFileSync(join(appDir, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
      devDependencies?: Record<string, string>;
    };
    expect(undeclaredPluginProblems(appPackage, result.plugins)).toEqual([]);
    // The code is bundled, plugins included: the only dependencies are the published packages the
    // type declarations name (test/install.e2e.test.ts checks the packed .d.ts against this list).
    expect(Object.keys(appPackage.dependencies ?? {}).sort()).toEqual(['@trellis/sdk', 'zod']);
  });

  it('embeds each bundled manifest digest exactly as the registry computes it at run time', async () => {
    const { BUNDLED_PLUGINS } = await import('../src/bundled.gen.ts');
    expect(BUNDLED_PLUGINS.length).toBeGreaterThan(0);
    for (const descriptor of BUNDLED_PLUGINS) {
      // A structured copy: the registry caches digests per manifest object.
      expect(descriptor.manifestSha256, descriptor.manifest.id).toBe(bundledManifestDigest(structuredClone(descriptor.manifest)));
      expect(descriptor.manifestSha256).toMatch(/^[0-9a-f]{64}$/);
    }
  });

  it('checks every bundled input schema against the 2020-12 meta-schema (the runtime trusts them)', () => {
    expect(metaSchemaProblems({ type: 'object', properties: { n: { type: 'integer', minimum: 0 } } })).toEqual([]);
    expect(metaSchemaProblems({ type: 'string', minLength: -1 })).toEqual(['/minLength must be >= 0']);
    expect(metaSchemaProblems({ type: 'strang' })).not.toEqual([]);
  });

  it('records a provider or connector contract, and fails when the code and the kind disagree', async () => {
    freshWorkspace();
    const provider = `export const plugin = { manifest: { id: 'model' }, tools: [], provider: { create: () => ({ model: 'm', stream: async function* () {} }) } };\n`;
    addPlugin('model', { toml: manifest('model').replace('kind = "toolset"', 'kind = "provider"'), index: provider });
    const ok = await linkBundledPlugins(workspace);
    expect(ok.errors).toEqual([]);
    expect(ok.plugins[0]!.contracts).toEqual(['provider']);

    freshWorkspace();
    addPlugin('lonely', { toml: manifest('lonely').replace('kind = "toolset"', 'kind = "connector"') });
    addPlugin('stray', { toml: manifest('stray'), index: provider.replace("'model'", "'stray'") });
    const bad = await linkBundledPlugins(workspace);
    expect(bad.errors).toEqual([
      'plugins/lonely/src/index.ts: plugin.toml says kind = "connector" but the code exports no connector; add `connector: { create(ctx) {…} }` to definePlugin',
      'plugins/stray/src/index.ts: the code exports a provider but plugin.toml says kind = "toolset"; set kind = "provider" or remove the provider',
    ]);
  });

  describe('a code entry (`./code`, definePluginCode)', () => {
    // Two tools whose run functions live in run.ts, imported by both the definition and the code entry.
    const run = `export const count = (input) => input.text.length;\nexport const upper = (input) => input.text.toUpperCase();\nexport const setup = () => {};\n`;
    const definition = `import { z } from 'zod';
import { count, upper, setup } from './run.ts';
export const plugin = {
  manifest: { id: 'gamma' },
  setup,
  tools: [
    { name: 'count', description: 'Count.', input: z.object({ text: z.string() }), run: count },
    { name: 'upper', description: 'Upper.', input: z.object({ text: z.string() }), run: upper },
  ],
};
`;
    const codePkg = {
      name: '@fixture/gamma',
      exports: { '.': { '@trellis/source': './src/index.ts' }, './code': { '@trellis/source': './src/code.ts' } },
    };
    function addGamma(code: string, pkg: object = codePkg) {
      addPlugin('gamma', { toml: manifest('gamma'), index: definition, code, pkg });
      writeFileSync(join(workspace, 'plugins', 'gamma', 'src', 'run.ts'), run);
    }

    it('is what the host loads and the bundle makes the plugin chunk of, once it matches the definition', async () => {
      freshWorkspace();
      addGamma(
        `import { count, upper, setup } from './run.ts';\nexport const plugin = { setup, tools: [{ name: 'upper', run: upper }, { name: 'count', run: count }] };\n`,
      );
      const linked = await linkBundledPlugins(workspace);
      expect(linked.errors).toEqual([]);
      const gamma = linked.plugins[0]!;
      expect(gamma.codeEntry).toBe(join(workspace, 'plugins', 'gamma', 'src', 'code.ts'));
      // The descriptors still come from the definition's zod schemas.
      expect(gamma.tools.map((t) => [t.name, t.inputSchema['required']])).toEqual([
        ['count', ['text']],
        ['upper', ['text']],
      ]);
      const source = renderBundledIndex({ plugins: linked.plugins, outDir: join(workspace, 'app'), embedded: {}, version: '9.9.9' });
      expect(source).toContain(`load: async () => ((await import("@fixture/gamma/code")) as { plugin: PluginCode }).plugin,`);
      expect(source).toContain(`new URL("../plugins/gamma/src/code.ts", import.meta.url).href`);
      expect(pluginEntries(linked.plugins)).toEqual({ 'plugins/gamma': gamma.codeEntry });
    });

    it('fails the build, naming the file, the tool and the fix, when it differs from the definition', async () => {
      freshWorkspace();
      addGamma(
        `import { count } from './run.ts';\nexport const plugin = { setup: () => {}, tools: [{ name: 'count', run: (input) => count(input) }, { name: 'lower', run: count }, { name: 'lower', run: count }, null] };\n`,
      );
      const linked = await linkBundledPlugins(workspace);
      expect(linked.plugins).toEqual([]);
      expect(linked.errors).toEqual([
        'plugins/gamma/src/code.ts: tool "lower" is listed twice',
        'plugins/gamma/src/code.ts: tools[3] is not a { name, run } object',
        'plugins/gamma/src/code.ts: tool "count": its run is not the one plugins/gamma/src/index.ts gives it; import that function and use it in both places',
        'plugins/gamma/src/code.ts: tool "upper" is missing; add { name: "upper", run } with the run function plugins/gamma/src/index.ts uses',
        'plugins/gamma/src/code.ts: tool "lower" is not defined in plugins/gamma/src/index.ts; remove it here or define it there',
        'plugins/gamma/src/code.ts: setup is not the one plugins/gamma/src/index.ts gives the plugin; use the same value in both places',
      ]);
    });

    it("refuses a canonicalize hook, setup, dispose, tool source or provider that is not the definition's", async () => {
      freshWorkspace();
      const hooks = `export const canon = (input) => ({ input });\nexport const other = (input) => ({ input });\nexport const dispose = () => {};\nexport const source = () => ({});\nexport const provider = { create: () => ({}) };\n`;
      addPlugin('delta', {
        toml: manifest('delta'),
        index: `import { z } from 'zod';
import { canon, other, dispose, source } from './hooks.ts';
const run = () => 1;
export const run1 = run;
export const plugin = {
  manifest: { id: 'delta' },
  dispose,
  toolSource: source,
  tools: [
    { name: 'a', description: 'A.', input: z.object({}), canonicalize: canon, run },
    { name: 'b', description: 'B.', input: z.object({}), canonicalize: canon, run },
    { name: 'c', description: 'C.', input: z.object({}), run },
  ],
};
`,
        code: `import { canon, other, provider } from './hooks.ts';
import { run1 as run } from './index.ts';
export const plugin = {
  provider,
  tools: [{ name: 'a', canonicalize: other, run }, { name: 'b', run }, { name: 'c', canonicalize: canon, run }],
};
`,
        pkg: {
          name: '@fixture/delta',
          exports: { '.': { '@trellis/source': './src/index.ts' }, './code': { '@trellis/source': './src/code.ts' } },
        },
      });
      writeFileSync(join(workspace, 'plugins', 'delta', 'src', 'hooks.ts'), hooks);
      const file = 'plugins/delta/src/code.ts';
      expect((await linkBundledPlugins(workspace)).errors).toEqual([
        `${file}: tool "a": its canonicalize is not the one plugins/delta/src/index.ts gives it; import that function and use it in both places`,
        `${file}: tool "b": its canonicalize is missing; add the one plugins/delta/src/index.ts gives it`,
        `${file}: tool "c": has a canonicalize that plugins/delta/src/index.ts does not give it; remove it here or add it there`,
        `${file}: dispose is missing; add the one plugins/delta/src/index.ts gives the plugin`,
        `${file}: toolSource is missing; add the one plugins/delta/src/index.ts gives the plugin`,
        `${file}: provider is given here but not in plugins/delta/src/index.ts; remove it here or add it there`,
      ]);
    });

    it('fails the build when the code entry exports no plugin, or package.json gives it no source', async () => {
      freshWorkspace();
      addGamma(`export const tools = [];\n`);
      expect((await linkBundledPlugins(workspace)).errors).toEqual([
        'plugins/gamma/src/code.ts: must export `plugin = definePluginCode({ tools })`, the code of the plugin defined in plugins/gamma/src/index.ts',
      ]);

      freshWorkspace();
      addGamma(`export const plugin = { tools: [] };\n`, {
        ...codePkg,
        exports: { ...codePkg.exports, './code': { default: './dist/code.js' } },
      });
      expect((await linkBundledPlugins(workspace)).errors).toEqual([
        'plugins/gamma/package.json: exports["./code"] needs a "@trellis/source" condition pointing at the code entry (src/code.ts)',
      ]);
    });
  });
});
