import { describe, expect, it } from 'vitest';
import { resolveContract } from '@trellis/sdk';
import type { ToolSpec } from '@trellis/sdk';
import { createResourceCatalog, createResourceCatalogInSteps } from './index.ts';
import type { ToolDescriptor } from './index.ts';
import { BUNDLED, SNAPSHOT, config, entry, manifest, spec } from '../test/fixtures.ts';

const withHash = (descriptor: ToolDescriptor | undefined) =>
  descriptor === undefined ? undefined : { ...descriptor, schemaHash: descriptor.schemaHash };

function build(runtime: Record<string, unknown> = {}) {
  return createResourceCatalog({ snapshot: SNAPSHOT, bundled: BUNDLED, config: config({ runtime }) });
}

describe('createResourceCatalog', () => {
  it('makes one descriptor per tool of each enabled plugin, in snapshot then declaration order', () => {
    const catalog = build();
    expect(catalog.descriptors.map((descriptor) => `${descriptor.name} ${descriptor.source}`)).toEqual([
      'builtin-tools.now bundled',
      'builtin-tools.echo bundled',
      'builtin-tools.search_tools bundled',
      'builtin-tools.list_plugins bundled',
      'core-fs.read bundled',
      'core-fs.write bundled',
      'core-fs.list bundled',
      'core-fs.glob bundled',
      'core-fs.stat bundled',
      'core-table.read_table bundled',
      'core-table.aggregate bundled',
      'git-helper.status manifest',
      'git-helper.diff manifest',
      'git-helper.commit manifest',
      'vendor-x.lookup manifest',
    ]);
    expect(catalog.warnings).toEqual([]);
  });

  it('keeps a bundled spec as built, with the deadline capped by [runtime] tool_timeout_seconds', () => {
    const catalog = build({ tool_timeout_seconds: 60 });
    expect(withHash(catalog.get('core-fs.read'))).toEqual({
      name: 'core-fs.read',
      plugin: 'core-fs',
      tool: 'read',
      description: 'Read a text file from the workspace and return its contents.',
      tags: ['files'],
      examples: [],
      inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false },
      contract: {
        sideEffects: false,
        capabilities: ['fs.read'],
        sandbox: 'no-isolation',
        deadlineMs: 60_000,
        maxRetries: 0,
        idempotent: true,
        isolation: 'inline',
        approval: 'auto',
      },
      source: 'bundled',
      schemaHash: '39b714704935190561ed407980480b9a4a0b346b97346e0bff71fb9ace820194',
    });
  });

  it('turns manifest [[tools]] into contracts: tool fields over plugin fields, process isolation, capped deadline', () => {
    const catalog = build({ tool_timeout_seconds: 60, max_retries: 2 });
    expect([catalog.get('git-helper.diff'), catalog.get('git-helper.commit')].map(withHash)).toEqual([
      {
        name: 'git-helper.diff',
        plugin: 'git-helper',
        tool: 'diff',
        description: 'Show changes between the working tree and the last commit as a unified diff.',
        tags: ['git'],
        examples: [],
        inputSchema: { type: 'object', properties: { staged: { type: 'boolean' } } },
        contract: {
          sideEffects: false,
          capabilities: ['process.spawn'],
          sandbox: 'read-only-fs',
          deadlineMs: 60_000, // tool says 90 s, the runtime caps at 60 s
          maxRetries: 2,
          idempotent: true,
          isolation: 'process',
          approval: 'auto',
        },
        source: 'manifest',
        schemaHash: 'dce72a812a9db6293d5a5e1cd59b85edfa94119737c3ab94d9a03fc7681ab4d2',
      },
      {
        name: 'git-helper.commit',
        plugin: 'git-helper',
        tool: 'commit',
        description: 'Record staged changes in a new commit with a message.',
        tags: ['git'],
        examples: [],
        inputSchema: { type: 'object' },
        contract: {
          sideEffects: true,
          capabilities: ['process.spawn'],
          sandbox: 'read-only-fs',
          deadlineMs: 20_000, // from [runtime] timeout_seconds
          maxRetries: 2,
          idempotent: false,
          isolation: 'process',
          approval: 'ask',
        },
        source: 'manifest',
        schemaHash: 'a2c799262a3ce3c19ef5cdd983bf3d12b43ab3c426227091b909dcb7054738c0',
      },
    ]);
  });

  it('marks tools matched by [runtime.policy] ask as needing approval', () => {
    const catalog = build({ policy: { ask: ['core-fs.*'] } });
    expect(catalog.descriptors.filter((descriptor) => descriptor.contract.approval === 'ask').map((descriptor) => descriptor.name)).toEqual(
      ['core-fs.read', 'core-fs.write', 'core-fs.list', 'core-fs.glob', 'core-fs.stat', 'git-helper.commit'],
    );
  });

  it('hashes the input schema lazily and canonically (key order does not matter)', () => {
    const a = createResourceCatalog({
      snapshot: { plugins: [entry('p', 'enabled', { bundled: true })] },
      bundled: [
        {
          manifest: { id: 'p' },
          tools: [spec('t', 'd', { inputSchema: { type: 'object', properties: { b: { type: 'string' }, a: { type: 'number' } } } })],
        },
      ],
      config: config(),
    });
    const b = createResourceCatalog({
      snapshot: { plugins: [entry('p', 'enabled', { bundled: true })] },
      bundled: [
        {
          manifest: { id: 'p' },
          tools: [spec('t', 'd', { inputSchema: { properties: { a: { type: 'number' }, b: { type: 'string' } }, type: 'object' } })],
        },
      ],
      config: config(),
    });
    expect(Object.keys(a.get('p.t')!)).not.toContain('schemaHash');
    expect(a.get('p.t')!.schemaHash).toBe(b.get('p.t')!.schemaHash);
    expect(a.get('p.t')!.schemaHash).toBe('551ecf9cb60254e004091bef85b18e929ed4abb6adee39e5b8425d678eaef893');
  });
});

describe('createResourceCatalogInSteps', () => {
  it('builds the same catalog, asking to pause after each plugin and each tool, with availability settled', async () => {
    const options = {
      snapshot: SNAPSHOT,
      bundled: BUNDLED,
      config: config({ runtime: { capabilities: ['fs.read'], policy: { deny: ['core-table.*'] } } }),
    };
    const whole = createResourceCatalog(options);
    let asked = 0;
    let awaited = 0;
    const stepped = await createResourceCatalogInSteps(options, () => {
      asked += 1;
      return asked % 2 === 0 ? Promise.resolve().then(() => void (awaited += 1)) : undefined;
    });
    expect(stepped.descriptors.map(withHash)).toEqual(whole.descriptors.map(withHash));
    expect(stepped.warnings).toEqual(whole.warnings);
    // Asked after every plugin but the first, and after every tool's availability but the first.
    const plugins = new Set(whole.availability().map((tool) => tool.plugin)).size;
    expect(asked).toBeGreaterThanOrEqual(plugins - 1 + whole.availability().length - 1);
    expect(awaited).toBe(Math.floor(asked / 2));
    // Decided while building, the same as decided on first use.
    expect(stepped.availability()).toEqual(whole.availability());
    expect(stepped.lookup('core-fs.write')).toEqual(whole.lookup('core-fs.write'));
    expect(stepped.lookup('core-fs.read').status).toBe('offered');
  });
});

describe('availability', () => {
  it('says for every known tool whether it is offered and why not', () => {
    const catalog = build({ capabilities: ['fs.read', 'process.spawn', 'net.outbound'], policy: { deny: ['core-table.*'] } });
    expect(catalog.availability()).toEqual([
      { name: 'builtin-tools.now', plugin: 'builtin-tools', offered: true },
      { name: 'builtin-tools.echo', plugin: 'builtin-tools', offered: true },
      { name: 'builtin-tools.search_tools', plugin: 'builtin-tools', offered: true },
      { name: 'builtin-tools.list_plugins', plugin: 'builtin-tools', offered: true },
      { name: 'core-fs.read', plugin: 'core-fs', offered: true },
      {
        name: 'core-fs.write',
        plugin: 'core-fs',
        offered: false,
        reason: {
          code: 'CAPABILITY_DENIED',
          message:
            'core-fs.write needs capability fs.write, which [runtime] capabilities does not grant; add it to [runtime] capabilities in runtime.toml to offer this tool',
        },
      },
      { name: 'core-fs.list', plugin: 'core-fs', offered: true },
      { name: 'core-fs.glob', plugin: 'core-fs', offered: true },
      { name: 'core-fs.stat', plugin: 'core-fs', offered: true },
      {
        name: 'core-web.fetch',
        plugin: 'core-web',
        offered: false,
        reason: {
          code: 'DENIED',
          message: 'core-web.fetch is not offered: plugin core-web is disabled ([plugins] deny names core-web; remove it to enable)',
        },
      },
      {
        name: 'core-table.read_table',
        plugin: 'core-table',
        offered: false,
        reason: {
          code: 'POLICY_DENIED',
          message:
            'core-table.read_table is denied by [runtime.policy] deny "core-table.*"; remove that entry from runtime.toml to offer this tool',
        },
      },
      {
        name: 'core-table.aggregate',
        plugin: 'core-table',
        offered: false,
        reason: {
          code: 'POLICY_DENIED',
          message:
            'core-table.aggregate is denied by [runtime.policy] deny "core-table.*"; remove that entry from runtime.toml to offer this tool',
        },
      },
      {
        name: 'openrouter.complete',
        plugin: 'openrouter',
        offered: false,
        reason: {
          code: 'MISSING_ENV',
          message:
            'openrouter.complete is not offered: plugin openrouter is unavailable (OPENROUTER_API_KEY is not set; export it to enable openrouter)',
        },
      },
      { name: 'git-helper.status', plugin: 'git-helper', offered: true },
      { name: 'git-helper.diff', plugin: 'git-helper', offered: true },
      { name: 'git-helper.commit', plugin: 'git-helper', offered: true },
      {
        name: 'vendor-x.lookup',
        plugin: 'vendor-x',
        offered: false,
        reason: {
          code: 'CAPABILITY_DENIED',
          message:
            'vendor-x.lookup needs capability vendor.secret, which [runtime] capabilities does not grant; add it to [runtime] capabilities in runtime.toml to offer this tool',
        },
      },
      {
        name: 'old-tool.run',
        plugin: 'old-tool',
        offered: false,
        reason: {
          code: 'WORLD_WRITABLE',
          message: 'old-tool.run is not offered: plugin old-tool is rejected (/plugins/old-tool is writable by every user; chmod o-w it)',
        },
      },
    ]);
  });

  it('grants only the standard capabilities with *, and names an allow list that matches nothing', () => {
    const catalog = build({ capabilities: ['*'], policy: { allow: ['core-fs.*', 'builtin-tools.*', 'git-helper.status'] } });
    expect(
      catalog.availability().filter((item) => item.reason?.code === 'POLICY_DENIED' || item.reason?.code === 'CAPABILITY_DENIED'),
    ).toEqual([
      {
        name: 'core-table.read_table',
        plugin: 'core-table',
        offered: false,
        reason: {
          code: 'POLICY_DENIED',
          message:
            'core-table.read_table matches no [runtime.policy] allow glob ("core-fs.*", "builtin-tools.*", "git-helper.status"); add "core-table.read_table" or "core-table.*" to it in runtime.toml to offer this tool',
        },
      },
      {
        name: 'core-table.aggregate',
        plugin: 'core-table',
        offered: false,
        reason: {
          code: 'POLICY_DENIED',
          message:
            'core-table.aggregate matches no [runtime.policy] allow glob ("core-fs.*", "builtin-tools.*", "git-helper.status"); add "core-table.aggregate" or "core-table.*" to it in runtime.toml to offer this tool',
        },
      },
      {
        name: 'git-helper.diff',
        plugin: 'git-helper',
        offered: false,
        reason: {
          code: 'POLICY_DENIED',
          message:
            'git-helper.diff matches no [runtime.policy] allow glob ("core-fs.*", "builtin-tools.*", "git-helper.status"); add "git-helper.diff" or "git-helper.*" to it in runtime.toml to offer this tool',
        },
      },
      {
        name: 'git-helper.commit',
        plugin: 'git-helper',
        offered: false,
        reason: {
          code: 'POLICY_DENIED',
          message:
            'git-helper.commit matches no [runtime.policy] allow glob ("core-fs.*", "builtin-tools.*", "git-helper.status"); add "git-helper.commit" or "git-helper.*" to it in runtime.toml to offer this tool',
        },
      },
      {
        name: 'vendor-x.lookup',
        plugin: 'vendor-x',
        offered: false,
        reason: {
          code: 'CAPABILITY_DENIED',
          message:
            'vendor-x.lookup needs capability vendor.secret, which [runtime] capabilities does not grant; add it to [runtime] capabilities in runtime.toml to offer this tool',
        },
      },
    ]);
    const granted = build({ capabilities: ['*', 'vendor.secret'] });
    expect(granted.availability().find((item) => item.name === 'vendor-x.lookup')).toEqual({
      name: 'vendor-x.lookup',
      plugin: 'vendor-x',
      offered: true,
    });
  });

  it('lists offered descriptors and answers lookups the way the runtime needs them', () => {
    const catalog = build({ policy: { deny: ['core-fs.write'] } });
    expect(catalog.offered().map((descriptor) => descriptor.name)).toEqual([
      'builtin-tools.now',
      'builtin-tools.echo',
      'builtin-tools.search_tools',
      'builtin-tools.list_plugins',
      'core-fs.read',
      'core-fs.list',
      'core-fs.glob',
      'core-fs.stat',
      'core-table.read_table',
      'core-table.aggregate',
      'git-helper.status',
      'git-helper.diff',
      'git-helper.commit',
    ]);
    const summarize = (name: string) => {
      const found = catalog.lookup(name);
      return found.status === 'offered'
        ? { status: found.status, name: found.descriptor.name }
        : found.status === 'unavailable'
          ? { ...found, descriptor: found.descriptor?.name }
          : found;
    };
    expect(
      ['core-fs.read', 'core-fs.write', 'core-web.fetch', 'core-fs.raed', 'read', 'nothing.like.this', 'git-helper.shadow', 'broken.x'].map(
        summarize,
      ),
    ).toEqual([
      { status: 'offered', name: 'core-fs.read' },
      {
        status: 'unavailable',
        descriptor: 'core-fs.write',
        reason: {
          code: 'POLICY_DENIED',
          message:
            'core-fs.write is denied by [runtime.policy] deny "core-fs.write"; remove that entry from runtime.toml to offer this tool',
        },
      },
      {
        status: 'unavailable',
        descriptor: undefined,
        reason: {
          code: 'DENIED',
          message: 'core-web.fetch is not offered: plugin core-web is disabled ([plugins] deny names core-web; remove it to enable)',
        },
      },
      { status: 'not_found', nearest: 'core-fs.read' },
      { status: 'not_found', nearest: 'core-fs.read' },
      { status: 'not_found' },
      { status: 'not_found', nearest: 'git-helper.status' },
      { status: 'not_found' },
    ]);
    expect(catalog.get('core-web.fetch')).toBeUndefined();
    expect(catalog.get('core-fs.write')?.name).toBe('core-fs.write');
  });

  it('suggests the nearest offered name', () => {
    const catalog = build();
    expect(
      ['core-fs.reed', 'corefs.read', 'core_fs.read', 'status', 'git-helper.stat', 'stat', 'list', 'xyz', 'core-web.fetch'].map((name) =>
        catalog.nearest(name),
      ),
    ).toEqual([
      'core-fs.read',
      'core-fs.read',
      'core-fs.read',
      'git-helper.status',
      'git-helper.status',
      'core-fs.stat',
      'core-fs.list',
      undefined,
      undefined,
    ]);
  });
});

describe('overrides', () => {
  it('replaces description, tags and examples by fully qualified name, and warns about unknown names', () => {
    const catalog = createResourceCatalog({
      snapshot: SNAPSHOT,
      bundled: BUNDLED,
      config: config(),
      overrides: {
        'core-fs.read': { description: 'Read a UTF-8 file.', examples: [{ description: 'the readme', input: { path: 'README.md' } }] },
        'git-helper.status': { tags: ['scm'] },
        'core-web.fetch': { description: 'known, though disabled: no warning' },
        'core-fs.reed': { description: 'typo' },
      },
    });
    expect(
      [catalog.get('core-fs.read'), catalog.get('git-helper.status')].map((descriptor) => ({
        description: descriptor?.description,
        tags: descriptor?.tags,
        examples: descriptor?.examples,
      })),
    ).toEqual([
      { description: 'Read a UTF-8 file.', tags: ['files'], examples: [{ description: 'the readme', input: { path: 'README.md' } }] },
      { description: 'Show the working tree status of the git repository.', tags: ['scm'], examples: [] },
    ]);
    expect(catalog.warnings).toEqual([
      {
        code: 'UNKNOWN_KEY',
        message: 'tools.toml: ["core-fs.reed"]: no tool has this name; did you mean "core-fs.read"? The override is ignored.',
      },
    ]);
  });
});

describe('withDiscoveredTools', () => {
  const discovered: ToolSpec[] = [
    { ...spec('status', 'reported again: the manifest declaration stands'), contract: resolveContract({ deadlineMs: 1 }) },
    {
      ...spec('log', 'Show the commit log.', { tags: ['git'] }),
      contract: resolveContract({ deadlineMs: 600_000, maxRetries: 3, capabilities: ['fs.read'] }),
    },
    {
      ...spec('push', 'Push commits to the remote.'),
      contract: resolveContract({ sideEffects: false, idempotent: true, isolation: 'inline', approval: 'ask' }),
    },
    spec('log', 'a duplicate'),
    spec('bad name\n', 'control characters'),
    spec('naïve', 'a unicode name from a plugin that reports it'),
  ];

  it('returns a new catalog with the reported tools; plugin-level facts from the manifest win', () => {
    const before = build({ max_retries: 1 });
    const after = before.withDiscoveredTools('git-helper', discovered);
    expect(before.get('git-helper.log')).toBeUndefined();
    expect(
      after.descriptors
        .filter((descriptor) => descriptor.plugin === 'git-helper')
        .map((descriptor) => `${descriptor.name} ${descriptor.source}`),
    ).toEqual([
      'git-helper.status manifest',
      'git-helper.diff manifest',
      'git-helper.commit manifest',
      'git-helper.log discovered',
      'git-helper.push discovered',
      'git-helper.naïve discovered',
    ]);
    expect([
      after.get('git-helper.log')?.contract,
      after.get('git-helper.push')?.contract,
      after.get('git-helper.status')?.description,
    ]).toEqual([
      {
        sideEffects: false,
        capabilities: ['process.spawn', 'fs.read'],
        sandbox: 'read-only-fs',
        deadlineMs: 20_000,
        maxRetries: 3,
        idempotent: true,
        isolation: 'process',
        approval: 'auto',
      },
      {
        sideEffects: false,
        capabilities: ['process.spawn'],
        sandbox: 'read-only-fs',
        deadlineMs: 20_000,
        maxRetries: 1,
        idempotent: true,
        isolation: 'process',
        approval: 'ask',
      },
      'Show the working tree status of the git repository.',
    ]);
    expect(after.warnings).toEqual([
      { code: 'TOOL_NAME_INVALID', message: 'plugin git-helper reported the tool "log" twice; the first is kept' },
      {
        code: 'TOOL_NAME_INVALID',
        message:
          'plugin git-helper reported a tool named "bad name\\n"; names must be 1–128 characters without spaces or control characters. The tool is ignored.',
      },
    ]);
    expect([after.toModelToolName('git-helper.naïve'), after.fromModelToolName(after.toModelToolName('git-helper.naïve')!)]).toEqual([
      'git-helper_1e549353b4f9_na-ve',
      'git-helper.naïve',
    ]);
  });

  it('takes a report of more tools than a function call can take arguments', () => {
    // 200,000 is past V8's argument limit: spreading the report into push() threw a RangeError.
    const many = Array.from({ length: 200_000 }, (_, i) => spec(`t${i}`, 'a reported tool'));
    const after = build().withDiscoveredTools('git-helper', many);
    expect(after.descriptors.filter((descriptor) => descriptor.source === 'discovered').length).toBe(200_000);
    expect(after.get('git-helper.t199999')?.source).toBe('discovered');
  });

  it('ignores reported tools whose schemas break the schema limits, naming the plugin and tool, and drops too-deep examples', () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 20_000; i += 1) deep = { type: 'object', properties: { x: deep } };
    let deepInput: Record<string, unknown> = {};
    for (let i = 0; i < 20_000; i += 1) deepInput = { x: deepInput };
    const after = build().withDiscoveredTools('git-helper', [
      spec('deep', 'a schema nested 20,000 levels', { inputSchema: deep }),
      spec('remote', 'a schema that refers outside itself', { outputSchema: { $ref: 'https://example.com/schema.json' } }),
      spec('huge', 'a schema over 256 KiB', { inputSchema: { type: 'object', description: 'x'.repeat(300_000) } }),
      {
        ...spec('fine', 'a usable tool'),
        examples: [
          { description: 'too deep', input: deepInput },
          { description: 'ok', input: { a: 1 } },
        ],
      },
    ]);
    const discoveredNames = after.descriptors
      .filter((descriptor) => descriptor.source === 'discovered')
      .map((descriptor) => descriptor.name);
    expect(discoveredNames).toEqual(['git-helper.fine']);
    expect(after.get('git-helper.fine')?.examples.map((example) => example.description)).toEqual(['ok']);
    expect(after.warnings.filter((warning) => warning.code === 'SCHEMA_UNSAFE').map((warning) => warning.message)).toEqual([
      'plugin git-helper reported the tool "deep" with an inputSchema where the schema nests deeper than 32 levels (at /properties/x/properties/x/properties/x/properties/x/properties/x/properties/x/properties/x/properties/x/properties/x/properties/x/properties/x/properties/x/properties/x/properties/x/properties/x/properties/x/properties). The tool is ignored; fix the schema the plugin\'s get_tools reply sends',
      "plugin git-helper reported the tool \"remote\" with an outputSchema where /$ref refers to 'https://example.com/schema.json', outside the schema; only local references (#/...) are allowed. The tool is ignored; fix the schema the plugin's get_tools reply sends",
      'plugin git-helper reported the tool "huge" with an inputSchema of 300034 bytes, over the 262144-byte limit. The tool is ignored; fix the schema the plugin\'s get_tools reply sends',
    ]);
    // What renders descriptors (tools list --json, a model request) no longer overflows.
    expect(() => JSON.stringify(after.descriptors)).not.toThrow();
  });

  it('replaces an earlier report, keeps model names of static tools, and ignores reports for plugins that are not enabled', () => {
    const first = build().withDiscoveredTools('git-helper', discovered);
    const second = first.withDiscoveredTools('git-helper', [spec('blame', 'Show who changed each line.')]);
    expect(second.descriptors.filter((descriptor) => descriptor.source === 'discovered').map((descriptor) => descriptor.name)).toEqual([
      'git-helper.blame',
    ]);
    expect(second.toModelToolName('git-helper.status')).toBe(first.toModelToolName('git-helper.status'));
    const ignored = build()
      .withDiscoveredTools('core-web', [spec('x', 'y')])
      .withDiscoveredTools('nobody', [spec('x', 'y')]);
    expect([ignored.get('core-web.x'), ignored.get('nobody.x'), ignored.lookup('core-web.x')]).toEqual([
      undefined,
      undefined,
      { status: 'not_found' },
    ]);
    expect(ignored.availability().length).toBe(build().availability().length);
    expect(ignored.warnings).toEqual([
      { code: 'TOOL_NAME_INVALID', message: 'tools reported by plugin core-web are ignored: no enabled plugin has that id' },
      { code: 'TOOL_NAME_INVALID', message: 'tools reported by plugin nobody are ignored: no enabled plugin has that id' },
    ]);
  });
});

describe('snapshot edge cases', () => {
  it('skips shadowed copies, prefers the enabled entry of an id, and warns about duplicate tools and missing bundled specs', () => {
    const catalog = createResourceCatalog({
      snapshot: {
        plugins: [
          entry('twice', 'rejected', { manifest: manifest({ id: 'twice', tools: [{ name: 'a', description: 'rejected copy' }] }) }),
          entry('twice', 'enabled', {
            manifest: manifest({
              id: 'twice',
              runtime: { type: 'script', command: 'sh' },
              tools: [
                { name: 'a', description: 'first' },
                { name: 'a', description: 'second' },
              ],
            }),
          }),
          entry('lost', 'enabled', { bundled: true }),
        ],
      },
      bundled: [],
      config: config(),
    });
    expect(catalog.descriptors.map((descriptor) => [descriptor.name, descriptor.description])).toEqual([['twice.a', 'first']]);
    expect(catalog.warnings).toEqual([
      { code: 'TOOL_NAME_INVALID', message: 'plugin twice declares the tool "a" twice; the first is kept. Rename or remove the other.' },
      {
        code: 'INTERNAL_ERROR',
        message: "bundled plugin lost has no build-time descriptor, so its tools are unknown; rebuild the app's bundled index",
      },
    ]);
  });
});

describe('immutability', () => {
  it('freezes the catalog and its descriptors; withDiscoveredTools leaves the original as it was', () => {
    const catalog = build();
    const descriptor = catalog.get('core-fs.read')!;
    expect([Object.isFrozen(catalog), Object.isFrozen(descriptor)]).toEqual([true, true]);
    expect(() => {
      (descriptor as { description: string }).description = 'changed';
    }).toThrow(TypeError);
    const next = catalog.withDiscoveredTools('git-helper', [spec('log', 'Show the log.')]);
    expect([catalog.descriptors.length, next.descriptors.length, catalog.availability().length, next.availability().length]).toEqual([
      15, 16, 18, 19,
    ]);
    expect(next.get('core-fs.read')).not.toBe(descriptor);
    expect(descriptor.schemaHash).toBe(next.get('core-fs.read')!.schemaHash);
  });
});
