import { describe, expect, it } from 'vitest';
import { isToolError, resolveContract } from '@trellis/sdk';
import type { HostPluginView } from '@trellis/sdk';
import { z } from 'zod';
import {
  EchoInputSchema,
  ExplainPluginInputSchema,
  ListPluginsInputSchema,
  NowInputSchema,
  SearchToolsInputSchema,
  echoTool,
  explainPluginTool,
  formatInTimeZone,
  listPluginsTool,
  nowTool,
  plugin,
  searchToolsTool,
} from '../src/index.ts';
import { makeContext, makeHost } from './makeContext.ts';

async function failureOf(promise: unknown): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (isToolError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected a ToolError');
}

const PLUGINS: HostPluginView[] = [
  {
    id: 'builtin-tools',
    kind: 'toolset',
    state: 'enabled',
    source: { root: 'bundled', priority: 4, manifestPath: null },
    reasons: [{ code: 'REQUIRED', message: 'required plugin' }],
    warnings: [],
  },
  {
    id: 'core-python',
    kind: 'toolset',
    state: 'disabled',
    source: { root: 'bundled', priority: 4, manifestPath: null },
    reasons: [
      { code: 'NOT_IN_PROFILE', message: 'not in profile minimal; add it to [plugins] allow' },
      { code: 'OTHER', message: 'second' },
    ],
    warnings: [],
  },
  {
    id: 'git-helper',
    kind: 'unknown',
    state: 'rejected',
    source: { root: 'workspace', priority: 2, manifestPath: '/w/.trellis/plugins/git-helper/plugin.toml' },
    reasons: [],
    warnings: [],
  },
];

describe('plugin', () => {
  it('declares the five tools, all read-only with JSON-Schema-able inputs', () => {
    expect(plugin.manifest.id).toBe('builtin-tools');
    expect(plugin.tools.map((t) => t.name)).toEqual(['now', 'echo', 'search_tools', 'list_plugins', 'explain_plugin']);
    for (const tool of plugin.tools) {
      expect(resolveContract(tool.contract).sideEffects).toBe(false);
      const schema = z.toJSONSchema(tool.input, { io: 'input' }) as { type: string };
      expect(schema.type).toBe('object');
      expect(tool.description.length).toBeGreaterThan(60);
    }
  });
});

describe('now', () => {
  it('accepts an optional timezone and nothing else', () => {
    expect(NowInputSchema.safeParse({}).success).toBe(true);
    expect(NowInputSchema.safeParse({ timezone: 'UTC' }).success).toBe(true);
    expect(NowInputSchema.safeParse({ timezone: '' }).success).toBe(false);
    expect(NowInputSchema.safeParse({ tz: 'UTC' }).success).toBe(false);
    expect(NowInputSchema.safeParse({ timezone: 5 }).success).toBe(false);
  });

  it('formats a fixed instant with the right offset in several zones', () => {
    const date = new Date('2026-01-15T12:34:56.789Z');
    expect(formatInTimeZone(date, 'UTC')).toEqual({
      iso: '2026-01-15T12:34:56.789+00:00',
      timezone: 'UTC',
      utcOffset: '+00:00',
      weekday: 'Thursday',
      unixMs: date.getTime(),
    });
    expect(formatInTimeZone(date, 'Asia/Kolkata').iso).toBe('2026-01-15T18:04:56.789+05:30');
    expect(formatInTimeZone(date, 'America/New_York').iso).toBe('2026-01-15T07:34:56.789-05:00');
    expect(formatInTimeZone(new Date('2026-07-15T23:30:00.000Z'), 'Europe/Berlin').iso).toBe('2026-07-16T01:30:00.000+02:00');
    expect(formatInTimeZone(new Date('2026-07-15T00:30:00.000Z'), 'UTC').iso).toBe('2026-07-15T00:30:00.000+00:00');
  });

  it('returns the current time, which parses back to the same instant', async () => {
    const before = Date.now();
    const out = await nowTool.run(NowInputSchema.parse({ timezone: 'Asia/Tokyo' }), makeContext());
    const after = Date.now();
    expect(out.timezone).toBe('Asia/Tokyo');
    expect(out.utcOffset).toBe('+09:00');
    expect(out.iso).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+09:00$/);
    expect(Date.parse(out.iso)).toBe(out.unixMs);
    expect(out.unixMs).toBeGreaterThanOrEqual(before);
    expect(out.unixMs).toBeLessThanOrEqual(after);
  });

  it('keeps the zone name as given (no ICU alias)', async () => {
    const out = await nowTool.run({ timezone: 'Asia/Kolkata' }, makeContext());
    expect({ timezone: out.timezone, utcOffset: out.utcOffset }).toEqual({ timezone: 'Asia/Kolkata', utcOffset: '+05:30' });
  });

  it('uses the host zone when none is given', async () => {
    const out = await nowTool.run({}, makeContext());
    expect(out.timezone).toBe(new Intl.DateTimeFormat().resolvedOptions().timeZone);
  });

  it('refuses an unknown zone with an error naming the argument and examples', async () => {
    expect(await failureOf((async () => nowTool.run({ timezone: 'Mars/Olympus' }, makeContext()))())).toEqual({
      code: 'INVALID_ARGUMENT',
      message:
        'timezone: "Mars/Olympus" is not an IANA time zone this host knows. Use a name such as "UTC", "Europe/Berlin", "America/New_York" or "Asia/Kolkata", or omit timezone for the host\'s own zone.',
    });
  });
});

describe('echo', () => {
  it('returns any JSON object unchanged and refuses non-objects', async () => {
    const input = { a: 1, nested: { list: [1, 'two', null, true] }, empty: {} };
    expect(EchoInputSchema.parse(input)).toEqual(input);
    expect(await echoTool.run(EchoInputSchema.parse(input), makeContext())).toEqual(input);
    expect(await echoTool.run({}, makeContext())).toEqual({});
    expect(EchoInputSchema.safeParse([1, 2]).success).toBe(false);
    expect(EchoInputSchema.safeParse('text').success).toBe(false);
    expect(EchoInputSchema.safeParse(null).success).toBe(false);
  });
});

describe('search_tools', () => {
  const hits = [
    { name: 'core-fs.read', plugin: 'core-fs', description: 'Read a text file', score: 3.5 },
    { name: 'core-fs.search', plugin: 'core-fs', description: 'Search text', score: 1.25 },
  ];

  it('bounds query and limit', () => {
    expect(SearchToolsInputSchema.safeParse({ query: 'read' }).success).toBe(true);
    expect(SearchToolsInputSchema.safeParse({ query: '' }).success).toBe(false);
    expect(SearchToolsInputSchema.safeParse({ query: 'x'.repeat(201) }).success).toBe(false);
    expect(SearchToolsInputSchema.safeParse({ query: 'read', limit: 0 }).success).toBe(false);
    expect(SearchToolsInputSchema.safeParse({ query: 'read', limit: 51 }).success).toBe(false);
    expect(SearchToolsInputSchema.safeParse({ query: 'read', limit: 2.5 }).success).toBe(false);
  });

  it('asks the host with the default limit and returns its ranked hits', async () => {
    const host = makeHost({ hits });
    const out = await searchToolsTool.run(SearchToolsInputSchema.parse({ query: 'read file' }), makeContext({ host }));
    expect(out).toEqual({ query: 'read file', hits });
    expect(host.searches).toEqual([{ query: 'read file', limit: 10 }]);
  });

  it('passes the limit and explains an empty result', async () => {
    const host = makeHost({ hits: [] });
    const out = await searchToolsTool.run({ query: 'run python', limit: 3 }, makeContext({ host }));
    expect(out).toEqual({
      query: 'run python',
      hits: [],
      hint: 'No offered tool matched. Try other words, or call builtin-tools.list_plugins to see plugins that are disabled, unavailable or rejected and why.',
    });
    expect(host.searches).toEqual([{ query: 'run python', limit: 3 }]);
  });
});

describe('list_plugins', () => {
  it('accepts only known states', () => {
    expect(ListPluginsInputSchema.safeParse({ state: 'disabled' }).success).toBe(true);
    expect(ListPluginsInputSchema.safeParse({ state: 'broken' }).success).toBe(false);
  });

  it('lists id, kind, state, root and the first reason', async () => {
    const out = await listPluginsTool.run({}, makeContext({ host: makeHost({ plugins: PLUGINS }) }));
    expect(out).toEqual({
      plugins: [
        {
          id: 'builtin-tools',
          kind: 'toolset',
          state: 'enabled',
          root: 'bundled',
          reason: { code: 'REQUIRED', message: 'required plugin' },
        },
        {
          id: 'core-python',
          kind: 'toolset',
          state: 'disabled',
          root: 'bundled',
          reason: { code: 'NOT_IN_PROFILE', message: 'not in profile minimal; add it to [plugins] allow' },
        },
        { id: 'git-helper', kind: 'unknown', state: 'rejected', root: 'workspace', reason: null },
      ],
      counts: { enabled: 1, disabled: 1, rejected: 1 },
    });
  });

  it('filters by state and keeps the overall counts', async () => {
    const out = await listPluginsTool.run({ state: 'disabled' }, makeContext({ host: makeHost({ plugins: PLUGINS }) }));
    expect(out.plugins.map((p) => p.id)).toEqual(['core-python']);
    expect(out.counts).toEqual({ enabled: 1, disabled: 1, rejected: 1 });
  });
});

describe('explain_plugin', () => {
  it('accepts only plugin ids', () => {
    expect(ExplainPluginInputSchema.safeParse({ id: 'core-fs' }).success).toBe(true);
    expect(ExplainPluginInputSchema.safeParse({ id: 'Core FS' }).success).toBe(false);
    expect(ExplainPluginInputSchema.safeParse({ id: '-x' }).success).toBe(false);
    expect(ExplainPluginInputSchema.safeParse({}).success).toBe(false);
  });

  it('returns what the host explains', async () => {
    const explanation = [{ id: 'core-python', state: 'disabled', trace: ['not in profile minimal'] }];
    const host = makeHost({ plugins: PLUGINS, explanations: { 'core-python': explanation } });
    expect(await explainPluginTool.run({ id: 'core-python' }, makeContext({ host }))).toEqual({ id: 'core-python', explanation });
  });

  it('says when no plugin has the id and suggests a near one', async () => {
    const host = makeHost({ plugins: PLUGINS });
    expect(await failureOf((async () => explainPluginTool.run({ id: 'core-pyton' }, makeContext({ host })))())).toEqual({
      code: 'NOT_FOUND',
      message:
        'id: no plugin "core-pyton" was found in any discovery root. Did you mean "core-python"? Call builtin-tools.list_plugins to see every id the host knows.',
    });
    expect(await failureOf((async () => explainPluginTool.run({ id: 'zzz' }, makeContext({ host })))())).toEqual({
      code: 'NOT_FOUND',
      message: 'id: no plugin "zzz" was found in any discovery root. Call builtin-tools.list_plugins to see every id the host knows.',
    });
  });

  it('treats the registry shape with no candidates as unknown and uses its suggestions', async () => {
    const host = makeHost({ plugins: PLUGINS, explanations: { git: { id: 'git', candidates: [], suggestions: ['git-helper'] } } });
    expect(await failureOf((async () => explainPluginTool.run({ id: 'git' }, makeContext({ host })))())).toEqual({
      code: 'NOT_FOUND',
      message:
        'id: no plugin "git" was found in any discovery root. Did you mean "git-helper"? Call builtin-tools.list_plugins to see every id the host knows.',
    });
    const found = { id: 'core-python', candidates: [{ state: 'disabled' }], suggestions: [] };
    const host2 = makeHost({ plugins: PLUGINS, explanations: { 'core-python': found } });
    expect(await explainPluginTool.run({ id: 'core-python' }, makeContext({ host: host2 }))).toEqual({
      id: 'core-python',
      explanation: found,
    });
  });
});

describe('as the runtime validates', () => {
  it('accepts every example and refuses malformed calls', async () => {
    const { runtimeValidator } = await import('@trellis/testing');
    for (const tool of plugin.tools) {
      const valid = runtimeValidator(tool);
      for (const example of tool.examples ?? [])
        expect({ tool: tool.name, ok: valid(example.input) }).toEqual({ tool: tool.name, ok: true });
    }
    const byName = Object.fromEntries(plugin.tools.map((t) => [t.name, runtimeValidator(t)]));
    expect(byName.now!({ timezone: 3 })).toBe(false);
    expect(byName.echo!([1])).toBe(false);
    expect(byName.search_tools!({ query: 'x', limit: 99 })).toBe(false);
    expect(byName.list_plugins!({ state: 'broken' })).toBe(false);
    expect(byName.explain_plugin!({ id: 'Bad Id' })).toBe(false);
    expect(byName.explain_plugin!({ id: 'core-fs', extra: 1 })).toBe(false);
  });
});
