import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI, createSandbox, runCli, trustWorkspace, type Sandbox } from './cliHarness.ts';

let sandbox: Sandbox;
beforeEach(() => {
  sandbox = createSandbox();
});
afterEach(() => sandbox.cleanup());

describe('trellis (built binary)', () => {
  it('prints its version and help', () => {
    const version = runCli(sandbox, ['--version']);
    expect(version).toEqual({ code: 0, stdout: '0.1.0\n', stderr: '' });
    const help = runCli(sandbox, ['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^trellis — a statically composed plugin registry/);
    expect(help.stdout).toContain('Exit codes: 0 ok, 1 a check or tool failed, 2 usage or config error.');
  });

  it('tools list without a config file loads neither the schema library nor the TOML parser (bench/startup)', () => {
    // A preload records every module the CLI compiles; each library is known by a class name its
    // minified code keeps (zod's ZodError, smol-toml's TomlError).
    const preload = join(sandbox.dir, 'record-modules.cjs');
    const record = join(sandbox.dir, 'modules.txt');
    writeFileSync(
      preload,
      `const Module = require('node:module');
const compile = Module.prototype._compile;
const seen = [];
Module.prototype._compile = function (content, filename) { seen.push(filename); return compile.call(this, content, filename); };
process.on('exit', () => require('node:fs').writeFileSync(process.env.RECORD, seen.join('\\n')));
`,
    );
    const result = spawnSync(process.execPath, ['-r', preload, CLI, 'tools', 'list', '--json'], {
      cwd: sandbox.workspace,
      env: { ...sandbox.env, RECORD: record },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.status).toBe(0);
    const loaded = readFileSync(record, 'utf8').split('\n');
    expect(loaded).toContain(CLI);
    const libraries = loaded.filter((file) => /ZodError|TomlError/.test(readFileSync(file, 'utf8')));
    expect(libraries).toEqual([]);
  });

  it('stops quietly with exit 0 when its reader goes away (EPIPE), like other Unix tools', () => {
    // `| true` closes the pipe at once, so every write the CLI makes meets a reader that is gone.
    const script = '"$NODE" "$CLI" tools list --json 2>"$ERR" | true; echo "${PIPESTATUS[0]}"';
    const errFile = join(sandbox.dir, 'stderr.txt');
    const result = spawnSync('bash', ['-c', script], {
      cwd: sandbox.workspace,
      env: { ...sandbox.env, NODE: process.execPath, CLI, ERR: errFile },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.stdout).toBe('0\n');
    expect(readFileSync(errFile, 'utf8')).toBe('');
  });

  it('exits 2 with a precise message for bad usage', () => {
    expect(runCli(sandbox, ['frobnicate'])).toEqual({
      code: 2,
      stdout: '',
      stderr: 'trellis: unknown command "frobnicate"; run `trellis --help` for the list\n',
    });
    const noArgs = runCli(sandbox, []);
    expect(noArgs.code).toBe(2);
    expect(noArgs.stdout).toBe('');
  });

  it('config check: the embedded default is clean', () => {
    const result = runCli(sandbox, ['config', 'check', '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      ok: true,
      source: 'embedded',
      path: null,
      layers: [{ source: 'embedded', path: null, applied: true }],
      workspace: { path: sandbox.workspace, trusted: false, by: null },
      errors: [],
      warnings: [],
      problems: [],
    });
  });

  it('config check: lists every error with file, line and key, and exits 2', () => {
    const file = join(sandbox.workspace, 'bad.toml');
    writeFileSync(file, '[plugins]\nprofile = "huge"\nallow = "core-python"\n[runtime]\ntool_timeout_secs = 5\n');
    const result = runCli(sandbox, ['config', 'check', '--config', file]);
    expect(result.code).toBe(2);
    expect(result.stdout).toContain(`Config: ${file} (from --config)`);
    expect(result.stdout).toMatch(/error\s+CONFIG_SCHEMA\s+.*bad\.toml:2:\d+: plugins\.profile: /);
    expect(result.stdout).toMatch(/error\s+CONFIG_SCHEMA\s+.*bad\.toml:3:\d+: plugins\.allow: /);
    expect(result.stdout).toMatch(
      /warning UNKNOWN_KEY\s+.*bad\.toml:5:\d+: runtime\.tool_timeout_secs: .*did you mean `tool_timeout_seconds`/,
    );
  });

  it('every command refuses a broken config with exit 2', () => {
    const file = join(sandbox.workspace, 'broken.toml');
    writeFileSync(file, '[plugins\nprofile = 1\n');
    const result = runCli(sandbox, ['plugins', 'list', '--config', file]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^trellis: the config cannot be used:\n {2}TOML_SYNTAX {2}.*broken\.toml:1:\d+: /);
  });

  it('doctor: config in use, registry, catalog, and a harmless tool call', () => {
    const result = runCli(sandbox, ['doctor']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Config in use: the built-in default (config/runtime.toml, embedded at build time)');
    expect(result.stdout).toMatch(/Registry \(profile minimal, hash [0-9a-f]{12}\):/);
    expect(result.stdout).toContain('✓ runtime: builtin-tools.echo answered in');
    expect(result.stdout).toContain('All checks passed.');
    const json = JSON.parse(runCli(sandbox, ['doctor', '--json']).stdout);
    expect(json.ok).toBe(true);
    expect(json.checks.map((c: { name: string; ok: boolean }) => [c.name, c.ok])).toEqual([
      ['config', true],
      ['workspace trust', true],
      ['registry', true],
      ['catalog', true],
      ['bundled modules', true],
      ['secrets', true],
      ['runtime', true],
    ]);
    expect(result.stdout).toMatch(/✓ bundled modules: \d+ plugin modules present/);
    // Whether children can read the host's secrets, and by which mechanism (or why not).
    expect(result.stdout).toMatch(/✓ secrets: (children run in their own PID namespace|children are NOT isolated)/);
  });

  it('doctor fails, naming the plugin, when an install lost a bundled plugin module', () => {
    // A copy of the built app with one plugin's ESM module (the one a worker thread imports) gone.
    const copy = join(sandbox.dir, 'app');
    cpSync(dirname(CLI), join(copy, 'dist'), { recursive: true });
    cpSync(join(dirname(CLI), '..', 'package.json'), join(copy, 'package.json'));
    rmSync(join(copy, 'dist', 'plugins', 'core-fs.js'));
    const result = spawnSync(process.execPath, [join(copy, 'dist', 'cli.cjs'), 'doctor'], {
      cwd: sandbox.workspace,
      env: sandbox.env,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.status).toBe(1);
    expect(result.stdout).toContain(
      `✗ bundled modules: missing: core-fs (${pathToFileURL(join(copy, 'dist', 'plugins', 'core-fs.js')).href}); reinstall or rebuild trellis`,
    );
    expect(result.stdout).toContain('Some checks failed.');
  });

  it('plugins list --json: the bundled plugins with state and reasons', () => {
    const result = runCli(sandbox, ['plugins', 'list', '--json']);
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout);
    expect(json.profile).toBe('minimal');
    expect(json.hash).toMatch(/^[0-9a-f]{64}$/);
    const states = Object.fromEntries(
      json.plugins.map((p: { id: string; state: string; reasons: Array<{ code: string }>; source: { root: string } }) => [
        p.id,
        `${p.source.root}:${p.state}:${p.reasons[0]?.code ?? ''}`,
      ]),
    );
    expect(states).toEqual({
      'builtin-tools': 'bundled:enabled:REQUIRED',
      'core-command': 'bundled:enabled:IN_PROFILE',
      'core-fs': 'bundled:enabled:IN_PROFILE',
      'core-python': 'bundled:disabled:NOT_IN_PROFILE',
      'core-table': 'bundled:enabled:IN_PROFILE',
      'core-web': 'bundled:enabled:IN_PROFILE',
      mcp: 'bundled:disabled:NOT_IN_PROFILE',
      openrouter: 'bundled:unavailable:MISSING_ENV',
      'skill-source-local': 'bundled:enabled:REQUIRED',
      telegram: 'bundled:disabled:NOT_IN_PROFILE',
    });
    // Byte-identical across runs over the same inputs.
    expect(runCli(sandbox, ['plugins', 'list', '--json']).stdout).toBe(result.stdout);
  });

  it('--profile and runtime.toml allow change the decision; explain says why', () => {
    const full = JSON.parse(runCli(sandbox, ['plugins', 'list', '--json', '--profile', 'full']).stdout);
    expect(full.plugins.find((p: { id: string }) => p.id === 'mcp').state).toBe('enabled');
    mkdirSync(join(sandbox.workspace, '.trellis'));
    writeFileSync(join(sandbox.workspace, '.trellis', 'runtime.toml'), '[plugins]\nallow = ["core-python"]\ndeny = ["core-web"]\n');
    trustWorkspace(sandbox);
    const listed = JSON.parse(runCli(sandbox, ['plugins', 'list', '--json']).stdout);
    const byId = (id: string) => listed.plugins.find((p: { id: string }) => p.id === id);
    expect([byId('core-python').state, byId('core-python').reasons[0].code]).toEqual(['enabled', 'ALLOWED']);
    expect([byId('core-web').state, byId('core-web').reasons[0].code]).toEqual(['disabled', 'DENIED']);
    const explained = runCli(sandbox, ['plugins', 'explain', 'core-web']);
    expect(explained.code).toBe(0);
    expect(explained.stdout).toContain('DENIED');
    const unknown = runCli(sandbox, ['plugins', 'explain', 'core-wbe']);
    expect(unknown.code).toBe(1);
  });

  it('a bad [runtime.tools.<key>] patch quarantines that plugin alone, with the key named', () => {
    mkdirSync(join(sandbox.workspace, '.trellis'));
    writeFileSync(join(sandbox.workspace, '.trellis', 'runtime.toml'), '[runtime.tools.fs]\nmax_read_bytes = "lots"\n');
    trustWorkspace(sandbox);
    const listed = JSON.parse(runCli(sandbox, ['plugins', 'list', '--json']).stdout);
    const fs = listed.plugins.find((p: { id: string }) => p.id === 'core-fs');
    expect([fs.state, fs.reasons[0].code]).toEqual(['disabled', 'CONFIG_INVALID']);
    expect(fs.reasons[0].message).toContain('runtime.tools.fs.max_read_bytes');
    const others = listed.plugins
      .filter((p: { id: string; state: string }) => p.id !== 'core-fs' && p.state === 'enabled')
      .map((p: { id: string }) => p.id);
    expect(others).toEqual(['builtin-tools', 'core-command', 'core-table', 'core-web', 'skill-source-local']);
    const call = runCli(sandbox, ['tools', 'call', 'core-fs.read', '--args', '{"path":"x"}', '--json']);
    expect(call.code).toBe(1);
    expect(JSON.parse(call.stdout).error.code).toBe('TOOL_UNAVAILABLE');
  });

  it('tools list/describe/search, and the model-API renderings', () => {
    const listed = JSON.parse(runCli(sandbox, ['tools', 'list', '--json']).stdout);
    const names: string[] = listed.tools.map((t: { name: string }) => t.name);
    expect(names).toContain('builtin-tools.echo');
    expect(names).toContain('core-fs.read');
    expect(names.some((n) => n.startsWith('core-python.'))).toBe(false);
    for (const tool of listed.tools) expect(Object.keys(tool).sort()).toEqual(['contract', 'description', 'inputSchema', 'name', 'plugin']);
    const openai = JSON.parse(runCli(sandbox, ['tools', 'list', '--format', 'openai']).stdout);
    expect(Array.isArray(openai)).toBe(true);
    for (const tool of openai) expect(tool.function.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    const described = runCli(sandbox, ['tools', 'describe', 'core-fs.read']);
    expect(described.code).toBe(0);
    expect(described.stdout).toMatch(/^core-fs\.read\n {2}plugin: core-fs\n/);
    const missing = runCli(sandbox, ['tools', 'describe', 'core-fs.raed']);
    expect(missing).toEqual({
      code: 1,
      stdout: '',
      stderr: 'trellis: no tool is named "core-fs.raed"; did you mean "core-fs.read"? (`trellis tools list --all` shows them all)\n',
    });
    const search = JSON.parse(runCli(sandbox, ['tools', 'search', 'read a file', '--json']).stdout);
    expect(search.hits[0].name).toBe('core-fs.read');
  });

  it('tools call: --json prints exactly the outcome; exit 0 ok, 1 failed, 2 usage', () => {
    const ok = runCli(sandbox, ['tools', 'call', 'builtin-tools.echo', '--args', '{"hello":"world","n":[1,2]}', '--json']);
    expect(ok).toEqual({ code: 0, stdout: `${JSON.stringify({ ok: true, value: { hello: 'world', n: [1, 2] } }, null, 2)}\n`, stderr: '' });
    const notFound = runCli(sandbox, ['tools', 'call', 'builtin-tools.ecko', '--json']);
    expect(notFound.code).toBe(1);
    expect(JSON.parse(notFound.stdout).error.code).toBe('TOOL_NOT_FOUND');
    expect(JSON.parse(notFound.stdout).error.message).toContain('builtin-tools.echo');
    const unavailable = runCli(sandbox, ['tools', 'call', 'core-python.run', '--args', '{"code":"print(1)"}', '--json']);
    expect(unavailable.code).toBe(1);
    expect(JSON.parse(unavailable.stdout).error.code).toMatch(/^TOOL_(UNAVAILABLE|NOT_FOUND)$/);
    const badJson = runCli(sandbox, ['tools', 'call', 'builtin-tools.echo', '--args', '{nope']);
    expect(badJson.code).toBe(2);
    expect(badJson.stderr).toMatch(/^trellis: --args must be JSON/);
  });

  it('tools call refuses --args nested 60,000 levels deep with INPUT_INVALID, not as a tool bug', () => {
    // 120 KB: near the most one argv string may hold. JSON.parse takes it; echo used to run and its
    // result then failed to serialize ("a bug in the tool").
    const deep = `{"a":${'['.repeat(60_000)}${']'.repeat(60_000)}}`;
    expect(runCli(sandbox, ['tools', 'call', 'builtin-tools.echo', '--args', deep])).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'INPUT_INVALID: invalid arguments for builtin-tools.echo:\n/a/0/0/0/0/0/0/0/…: nests objects and arrays more than 256 levels deep; send flatter arguments\n',
    });
  });

  it('tools call reads a real file through core-fs and refuses an escape', () => {
    writeFileSync(join(sandbox.workspace, 'notes.txt'), 'one\ntwo\nthree\n');
    const read = runCli(sandbox, ['tools', 'call', 'core-fs.read', '--args', '{"path":"notes.txt"}', '--json']);
    expect(read.code).toBe(0);
    expect(JSON.stringify(JSON.parse(read.stdout).value)).toContain('two');
    const escape = runCli(sandbox, ['tools', 'call', 'core-fs.read', '--args', '{"path":"../../../etc/passwd"}', '--json']);
    expect(escape.code).toBe(1);
    expect(JSON.parse(escape.stdout).error.code).toBe('PATH_NOT_ALLOWED');
  });
});
