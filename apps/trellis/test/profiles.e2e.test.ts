import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '@trellis/testing';
import { createSandbox, runCliAsync, type Sandbox } from './cliHarness.ts';

// What each profile gives, with the provider and connector variables set and unset. The mcp bridge
// (full) has no tools yet on this branch; when it gains some, add them to FULL_EXTRA_TOOLS.
const TOOLSET = ['builtin-tools', 'core-command', 'core-fs', 'core-table', 'core-web', 'skill-source-local'];
const TOOLS = [
  'builtin-tools.now',
  'builtin-tools.echo',
  'builtin-tools.search_tools',
  'builtin-tools.list_plugins',
  'builtin-tools.explain_plugin',
  'core-command.run',
  'core-fs.read',
  'core-fs.write',
  'core-fs.edit',
  'core-fs.list',
  'core-fs.glob',
  'core-fs.stat',
  'core-fs.search',
  'core-table.read',
  'core-table.query',
  'core-table.describe',
  'core-web.fetch',
  'skill-source-local.list',
  'skill-source-local.read',
  'skill-source-local.run',
];
const FULL_EXTRA_TOOLS: string[] = [];

const CASES = [
  { profile: 'minimal', vars: false, enabled: TOOLSET, unavailable: ['openrouter'], tools: TOOLS },
  { profile: 'minimal', vars: true, enabled: [...TOOLSET, 'openrouter'], unavailable: [], tools: TOOLS },
  { profile: 'messaging', vars: false, enabled: TOOLSET, unavailable: ['openrouter', 'telegram'], tools: TOOLS },
  { profile: 'messaging', vars: true, enabled: [...TOOLSET, 'openrouter', 'telegram'], unavailable: [], tools: TOOLS },
  {
    profile: 'full',
    vars: false,
    enabled: [...TOOLSET, 'mcp'],
    unavailable: ['openrouter', 'telegram'],
    tools: [...TOOLS, ...FULL_EXTRA_TOOLS],
  },
  {
    profile: 'full',
    vars: true,
    enabled: [...TOOLSET, 'mcp', 'openrouter', 'telegram'],
    unavailable: [],
    tools: [...TOOLS, ...FULL_EXTRA_TOOLS],
  },
] as const;

let sandbox: Sandbox;
let server: FakeOpenAiServer;
let config: string;
beforeAll(async () => {
  sandbox = createSandbox();
  server = await startFakeOpenAiServer({ respond: () => ({ kind: 'stream', text: ['ok'] }) });
  config = join(sandbox.dir, 'runtime.toml');
  writeFileSync(config, `[plugins.entries.openrouter.config]\nbase_url = "${server.baseUrl}"\n`);
});
afterAll(async () => {
  await server.close();
  sandbox.cleanup();
});

describe.each(CASES)('profile $profile, variables set: $vars', ({ profile, vars, enabled, unavailable, tools }) => {
  const env: Record<string, string> = vars ? { OPENROUTER_API_KEY: 'sk-profile', TELEGRAM_BOT_TOKEN: '1:profile' } : {};

  it('enables and marks unavailable exactly the expected plugins, and offers exactly the expected tools', async () => {
    const plugins = await runCliAsync(sandbox, ['plugins', 'list', '--json', '--profile', profile, '--config', config], env);
    expect(plugins.code).toBe(0);
    const snapshot = JSON.parse(plugins.stdout) as { plugins: Array<{ id: string; state: string; warnings: Array<{ code: string }> }> };
    const ids = (state: string) =>
      snapshot.plugins
        .filter((p) => p.state === state)
        .map((p) => p.id)
        .sort();
    expect(ids('enabled')).toEqual([...enabled].sort());
    expect(ids('unavailable')).toEqual([...unavailable].sort());
    // A provider and a connector implement their contract: no NO_TOOLS for them.
    const warned = snapshot.plugins.filter((p) => p.warnings.some((w) => w.code === 'NO_TOOLS')).map((p) => p.id);
    expect(warned.filter((id) => id === 'openrouter' || id === 'telegram')).toEqual([]);

    const listed = await runCliAsync(sandbox, ['tools', 'list', '--json', '--profile', profile, '--config', config], env);
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.stdout) as { tools: Array<{ name: string }> }).tools.map((t) => t.name)).toEqual(tools);
  });

  it(vars ? 'offers the model exactly those tools' : 'refuses to chat, naming OPENROUTER_API_KEY', async () => {
    const before = server.requests.length;
    const chat = await runCliAsync(sandbox, ['chat', 'which tools?', '--json', '--profile', profile, '--config', config], env);
    if (!vars) {
      expect(chat.code).toBe(2);
      expect(chat.stderr).toContain('OPENROUTER_API_KEY');
      expect(server.requests.length).toBe(before);
      return;
    }
    expect(chat.code).toBe(0);
    expect(JSON.parse(chat.stdout).reply).toBe('ok');
    const offered = server.requests.at(-1)!.body.tools!.map((t) => t.function.name);
    expect(offered).toEqual(tools.map((name) => name.replace(/\./g, '__')));
  });
});
