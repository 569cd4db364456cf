import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'smol-toml';
import { PluginManifestSchema } from './manifest.ts';
import { pluginManifestJsonSchema } from './pluginManifestJsonSchema.ts';
import { formatIssues, issueToString } from './formatIssues.ts';

describe('plugin.schema.json', () => {
  it('matches the zod schema (run `pnpm --filter @trellis/sdk schema` when this fails)', () => {
    const committed = JSON.parse(readFileSync(new URL('../schema/plugin.schema.json', import.meta.url), 'utf8'));
    expect(committed).toEqual(pluginManifestJsonSchema());
  });
});

describe('PluginManifestSchema', () => {
  const minimal = { schema_version: 1, id: 'git-helper', name: 'Git helper', version: '0.3.0', kind: 'toolset' };

  it('refuses a process plugin asking for a health check more often than once a second', () => {
    const runtime = (interval: number) => ({
      ...minimal,
      runtime: { type: 'process', command: 'node', health_check_interval_seconds: interval },
    });
    const refused = PluginManifestSchema.safeParse(runtime(0.0001));
    expect(refused.success).toBe(false);
    expect(JSON.stringify(formatIssues(refused.error!))).toMatch(
      /health_check_interval_seconds.*must be 0 \(no health checks\) or at least 1 second/,
    );
    expect(PluginManifestSchema.safeParse(runtime(0)).success).toBe(true);
    expect(PluginManifestSchema.safeParse(runtime(1)).success).toBe(true);
  });

  it('fills in safe defaults', () => {
    const manifest = PluginManifestSchema.parse(minimal);
    expect(manifest).toEqual({
      ...minimal,
      description: '',
      side_effects: false,
      capabilities: [],
      sandbox: 'no-isolation',
      requires_env: [],
      requires_commands: [],
      required: false,
      tools: [],
    });
  });

  it('parses the ARCHITECTURE example', () => {
    const toml = `
schema_version = 1
id = "git-helper"
name = "Git helper"
version = "0.3.0"
kind = "toolset"
description = "Git status and diff"
side_effects = false
capabilities = ["process.spawn"]
sandbox = "no-isolation"
requires_env = []

[runtime]
type = "process"
command = "python3"
args = ["git_helper.py"]
timeout_seconds = 30

[[tools]]
name = "status"
description = "Show git status"
input_schema = { type = "object", properties = { short = { type = "boolean" } } }
`;
    const manifest = PluginManifestSchema.parse(parse(toml));
    expect(manifest.runtime).toEqual({
      type: 'process',
      command: 'python3',
      args: ['git_helper.py'],
      timeout_seconds: 30,
      env: {},
      restart_on_crash: true,
      max_restarts: 3,
      restart_delay_seconds: 1,
      health_check_interval_seconds: 0,
    });
    expect(manifest.tools[0]?.name).toBe('status');
  });

  it('reports every problem as key.path: message', () => {
    const result = PluginManifestSchema.safeParse({
      ...minimal,
      id: 'Bad_Id',
      kind: 'widget',
      runtime: { type: 'process', command: 'x', extra: 1 },
      tools: [{ name: '1bad', description: 'x' }],
    });
    expect(result.success).toBe(false);
    const lines = formatIssues(result.error!).map(issueToString);
    expect(lines).toEqual([
      'id: must be 1–64 lowercase letters, digits or dashes, starting and ending with a letter or digit',
      'kind: must be one of "toolset", "provider", "connector", "skill-source", "bridge", "memory-slot", "context-engine", "workflow-adapter", "subagent-runtime"',
      'runtime: unknown key "extra"',
      'tools[0].name: must start with a letter and use letters, digits, _ or -, at most 64 characters',
    ]);
  });

  it('rejects ids at the length and character boundaries', () => {
    const ok = (id: string) => PluginManifestSchema.safeParse({ ...minimal, id }).success;
    expect(ok('a')).toBe(true);
    expect(ok('a'.repeat(64))).toBe(true);
    expect(ok('a'.repeat(65))).toBe(false);
    expect(ok('-a')).toBe(false);
    expect(ok('a-')).toBe(false);
    expect(ok('a.b')).toBe(false);
  });
});
