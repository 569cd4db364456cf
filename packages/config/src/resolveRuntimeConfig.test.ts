import { chmodSync, chownSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findRuntimeConfig } from './findRuntimeConfig.ts';
import { EMBEDDED_CONFIG_NAME, resolveRuntimeConfig, resolveRuntimeConfigInSteps } from './resolveRuntimeConfig.ts';
import { RuntimeConfigSchema } from './RuntimeConfigSchema.ts';

let dir: string;
let workspace: string;
let home: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-lookup-'));
  workspace = join(dir, 'ws');
  home = join(dir, 'home');
  mkdirSync(workspace);
  mkdirSync(home);
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function put(path: string, text: string): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  return path;
}

const profileFile = (profile: string) => `[plugins]\nprofile = "${profile}"\n`;

describe('findRuntimeConfig', () => {
  it('walks flag → TRELLIS_CONFIG → workspace → XDG → ~/.config → embedded, first found wins', () => {
    const flag = put(join(dir, 'flag.toml'), '');
    const fromEnv = put(join(dir, 'env.toml'), '');
    const inWorkspace = put(join(workspace, '.trellis', 'runtime.toml'), '');
    const xdg = join(dir, 'xdg');
    const inXdg = put(join(xdg, 'trellis', 'runtime.toml'), '');
    const inHome = put(join(home, '.config', 'trellis', 'runtime.toml'), '');
    const env = { TRELLIS_CONFIG: fromEnv, XDG_CONFIG_HOME: xdg };
    expect(findRuntimeConfig({ configFlag: flag, env, workspace, home })).toEqual({ source: 'flag', path: flag });
    expect(findRuntimeConfig({ env, workspace, home })).toEqual({ source: 'env', path: fromEnv });
    expect(findRuntimeConfig({ env: { XDG_CONFIG_HOME: xdg }, workspace, home })).toEqual({ source: 'workspace', path: inWorkspace });
    rmSync(inWorkspace);
    expect(findRuntimeConfig({ env: { XDG_CONFIG_HOME: xdg }, workspace, home })).toEqual({ source: 'user', path: inXdg });
    expect(findRuntimeConfig({ env: {}, workspace, home })).toEqual({ source: 'user', path: inHome });
    rmSync(inHome);
    expect(findRuntimeConfig({ env: {}, workspace, home })).toEqual({ source: 'embedded' });
  });

  it('does not fall back to ~/.config when XDG_CONFIG_HOME is set but has no config', () => {
    put(join(home, '.config', 'trellis', 'runtime.toml'), '');
    expect(findRuntimeConfig({ env: { XDG_CONFIG_HOME: join(dir, 'empty-xdg') }, workspace, home })).toEqual({ source: 'embedded' });
  });

  it('ignores an empty or relative XDG_CONFIG_HOME and an empty TRELLIS_CONFIG', () => {
    const inHome = put(join(home, '.config', 'trellis', 'runtime.toml'), '');
    for (const xdg of ['', 'relative/xdg']) {
      expect(findRuntimeConfig({ env: { XDG_CONFIG_HOME: xdg, TRELLIS_CONFIG: '' }, workspace, home })).toEqual({
        source: 'user',
        path: inHome,
      });
    }
  });

  it('prefers the xdgConfigHome option over the environment', () => {
    const inOption = put(join(dir, 'opt-xdg', 'trellis', 'runtime.toml'), '');
    put(join(dir, 'env-xdg', 'trellis', 'runtime.toml'), '');
    expect(
      findRuntimeConfig({ env: { XDG_CONFIG_HOME: join(dir, 'env-xdg') }, xdgConfigHome: join(dir, 'opt-xdg'), workspace, home }),
    ).toEqual({
      source: 'user',
      path: inOption,
    });
  });

  it('chooses a flag or TRELLIS_CONFIG even when the file is missing, resolving relative paths against cwd', () => {
    expect(findRuntimeConfig({ configFlag: 'conf/missing.toml', env: {}, workspace, home, cwd: dir })).toEqual({
      source: 'flag',
      path: join(dir, 'conf', 'missing.toml'),
    });
    expect(findRuntimeConfig({ env: { TRELLIS_CONFIG: 'missing.toml' }, workspace, home, cwd: dir })).toEqual({
      source: 'env',
      path: join(dir, 'missing.toml'),
    });
  });

  it('counts a dangling symlink or a directory in the workspace as found, so loading can say what is wrong', () => {
    mkdirSync(join(workspace, '.trellis'));
    symlinkSync(join(dir, 'gone.toml'), join(workspace, '.trellis', 'runtime.toml'));
    expect(findRuntimeConfig({ env: {}, workspace, home })).toEqual({
      source: 'workspace',
      path: join(workspace, '.trellis', 'runtime.toml'),
    });
    rmSync(join(workspace, '.trellis', 'runtime.toml'));
    mkdirSync(join(workspace, '.trellis', 'runtime.toml'));
    expect(findRuntimeConfig({ env: {}, workspace, home })).toEqual({
      source: 'workspace',
      path: join(workspace, '.trellis', 'runtime.toml'),
    });
  });
});

describe('resolveRuntimeConfig', () => {
  const embeddedDefault = '[plugins]\npaths = ["vendor"]\n';
  const trustFile = () => join(home, '.config', 'trellis', 'trusted-workspaces.json');
  const trust = (folder: string) => {
    put(trustFile(), JSON.stringify({ version: 1, workspaces: [{ path: realpathSync(folder), trusted_at: '2026-01-01T00:00:00.000Z' }] }));
    chmodSync(trustFile(), 0o600);
  };
  /** The parts a test compares: the value, the problems, the top layer, and each layer's summary. */
  const summary = (result: ReturnType<typeof resolveRuntimeConfig>) => ({
    source: result.source,
    path: result.path,
    value: result.value,
    errors: result.errors.map((e) => e.code),
    warnings: result.warnings.map((w) => w.code),
    layers: result.layers?.map((l) => `${l.source}:${l.applied ? 'applied' : (l.reason?.code ?? 'skipped')}`),
  });

  it('merges layers, each a patch over the one below, and names the file of every key', () => {
    const user = put(
      join(home, '.config', 'trellis', 'runtime.toml'),
      `${profileFile('messaging')}deny = ["core-web"]\n[runtime]\nmax_retries = 2\n`,
    );
    const ws = put(join(workspace, '.trellis', 'runtime.toml'), `${profileFile('full')}[runtime]\nmax_concurrency = 3\n`);
    const flag = put(join(dir, 'c.toml'), '[runtime]\nmax_retries = 4\n');
    trust(workspace);
    const result = resolveRuntimeConfig({ configPath: flag, env: {}, workspace, home, embeddedDefault });
    expect(summary(result)).toEqual({
      source: 'flag',
      path: flag,
      value: RuntimeConfigSchema.parse({
        plugins: { profile: 'full', deny: ['core-web'], paths: [join(workspace, 'vendor')] },
        runtime: { max_retries: 4, max_concurrency: 3 },
      }),
      errors: [],
      warnings: [],
      layers: ['embedded:applied', 'user:applied', 'workspace:applied', 'flag:applied'],
    });
    expect(Object.fromEntries([...(result.origins ?? [])].map(([k, o]) => [k, o.path ?? o.source]))).toEqual({
      'plugins.paths': 'embedded',
      'plugins.profile': ws,
      'plugins.deny': user,
      'runtime.max_retries': flag,
      'runtime.max_concurrency': ws,
    });
  });

  it('does not apply an untrusted workspace file, never expands its ${VAR}, and says how to trust it', () => {
    put(join(home, '.config', 'trellis', 'runtime.toml'), profileFile('messaging'));
    const ws = put(
      join(workspace, '.trellis', 'runtime.toml'),
      '[plugins]\nallow = ["x"]\n[runtime.tools.fs]\nroot = "/"\n[runtime.tools.web]\nheader = "${SECRET}"\n',
    );
    const result = resolveRuntimeConfig({ env: { SECRET: 's3cr3t-value' }, workspace, home, embeddedDefault });
    expect(summary(result)).toMatchObject({
      source: 'user',
      errors: [],
      warnings: ['WORKSPACE_UNTRUSTED'],
      layers: ['embedded:applied', 'user:applied', 'workspace:WORKSPACE_UNTRUSTED'],
    });
    expect(result.value?.plugins.allow).toEqual([]);
    expect(result.value?.runtime.tools).toEqual({});
    expect(result.workspaceTrust?.trusted).toBe(false);
    expect(result.warnings[0]?.message).toBe(
      `${ws}: not applied: the workspace ${realpathSync(workspace)} is not trusted, so its config is ignored (3 keys: plugins.allow, runtime.tools.fs.root, runtime.tools.web.header). If you trust this folder, run \`trellis trust ${realpathSync(workspace)}\``,
    );
    expect(JSON.stringify(result)).not.toContain('s3cr3t-value');
    // A missing variable in an untrusted file is no error either: nothing there is expanded.
    expect(resolveRuntimeConfig({ env: {}, workspace, home, embeddedDefault }).errors).toEqual([]);
    // Trusted (here through its parent folder), the same file applies.
    trust(dir);
    const trusted = resolveRuntimeConfig({ env: { SECRET: 's3cr3t-value' }, workspace, home, embeddedDefault });
    expect(trusted.errors).toEqual([]);
    expect(trusted.workspaceTrust).toMatchObject({ trusted: true, by: realpathSync(dir) });
    expect(trusted.value?.plugins.allow).toEqual(['x']);
    expect(trusted.value?.runtime.tools).toEqual({ fs: { root: '/' }, web: { header: 's3cr3t-value' } });
    expect(trusted.origins?.get('runtime.tools.web.header')).toEqual({ source: 'workspace', path: ws, fromEnv: true });
  });

  it('refuses a config layer or trust store that another user could change (CONFIG_UNSAFE)', () => {
    const user = put(join(home, '.config', 'trellis', 'runtime.toml'), profileFile('messaging'));
    chmodSync(user, 0o666);
    let result = resolveRuntimeConfig({ env: {}, workspace, home, embeddedDefault });
    expect(summary(result)).toMatchObject({ errors: ['CONFIG_UNSAFE'], value: undefined });
    expect(result.errors[0]?.message).toBe(
      `${user}: not loaded: someone else could change this file: any user can write it (mode 666). Fix it with \`chmod o-w ${user}\`, or remove the file`,
    );
    chmodSync(user, 0o644);
    chownSync(user, 65534, 65534);
    result = resolveRuntimeConfig({ env: {}, workspace, home, embeddedDefault });
    expect(result.errors.map((e) => e.message)).toEqual([
      `${user}: not loaded: someone else could change this file: it belongs to uid 65534, not to you (uid 0) or root. Fix it with \`chown 0 ${user}\`, or remove the file`,
    ]);
    chownSync(user, 0, 0);
    trust(workspace);
    chmodSync(trustFile(), 0o666);
    result = resolveRuntimeConfig({ env: {}, workspace, home, embeddedDefault });
    expect(result.errors.map((e) => `${e.code} ${e.file}`)).toEqual([`CONFIG_UNSAFE ${trustFile()}`]);
    expect(result.workspaceTrust?.trusted).toBe(false);
  });

  it('parses the embedded default with the workspace as the base of relative paths', () => {
    const result = resolveRuntimeConfig({ env: {}, workspace, home, embeddedDefault });
    expect(summary(result)).toEqual({
      source: 'embedded',
      path: undefined,
      value: RuntimeConfigSchema.parse({ plugins: { paths: [join(workspace, 'vendor')] } }),
      warnings: [],
      errors: [],
      layers: ['embedded:applied'],
    });
  });

  it('names the embedded default in its problems', () => {
    const result = resolveRuntimeConfig({ env: {}, workspace, home, embeddedDefault: '[plugins]\nprofile = 1\n' });
    expect(result.errors).toEqual([
      {
        code: 'CONFIG_SCHEMA',
        file: EMBEDDED_CONFIG_NAME,
        keyPath: 'plugins.profile',
        line: 2,
        column: 1,
        message: '<embedded runtime.toml>:2:1: plugins.profile: must be one of "minimal", "messaging", "full"',
      },
    ]);
  });

  it('reports a missing --config file instead of falling through', () => {
    put(join(workspace, '.trellis', 'runtime.toml'), profileFile('full'));
    const path = join(dir, 'missing.toml');
    const result = resolveRuntimeConfig({ configPath: path, env: {}, workspace, home, embeddedDefault });
    expect(summary(result)).toMatchObject({ source: 'flag', path, value: undefined, errors: ['CONFIG_NOT_FOUND'] });
    expect(result.errors[0]?.message).toBe(
      `${path}: no such file; fix the path given to --config, or drop --config to use the normal lookup`,
    );
  });

  it('reports a missing TRELLIS_CONFIG file instead of falling through', () => {
    const path = join(dir, 'missing.toml');
    const result = resolveRuntimeConfig({ env: { TRELLIS_CONFIG: path }, workspace, home, embeddedDefault });
    expect(summary(result)).toMatchObject({ source: 'env', path, value: undefined, errors: ['CONFIG_NOT_FOUND'] });
    expect(result.errors[0]?.message).toBe(`${path}: no such file; fix TRELLIS_CONFIG, or unset it to use the normal lookup`);
  });

  it('expands ${VAR} from the env it is given', () => {
    const path = put(join(dir, 'c.toml'), '[runtime.tools.openrouter]\napi_key = "${KEY}"\n');
    const result = resolveRuntimeConfig({ configPath: path, env: { KEY: 'k-123' }, workspace, home, embeddedDefault });
    expect(result.value?.runtime.tools).toEqual({ openrouter: { api_key: 'k-123' } });
  });
});

describe('resolveRuntimeConfigInSteps', () => {
  it('resolves the same layers, value and problems as the one-piece load, pausing between the phases of each layer', async () => {
    const ids = Array.from({ length: 300 }, (_, i) => `p${i}`);
    put(join(home, '.config', 'trellis', 'runtime.toml'), `[runtime]\ntool_timeout_seconds = 9\n`);
    const flag = put(join(dir, 'flag.toml'), `[plugins]\nallow = ${JSON.stringify(ids)}\nprofile = "full"\n`);
    const broken = put(join(dir, 'broken.toml'), `[plugins]\nallow = ["Not An Id"]\n`);
    for (const configPath of [flag, broken]) {
      const options = { configPath, env: {}, workspace, home, embeddedDefault: '[runtime]\naudit_log = ""\n' };
      const whole = resolveRuntimeConfig(options);
      let asked = 0;
      const stepped = await resolveRuntimeConfigInSteps(options, () => {
        asked += 1;
        return new Promise((resolve) => setImmediate(resolve));
      });
      expect(stepped).toEqual(whole);
      if (configPath === flag) {
        expect(stepped.value?.plugins.allow).toEqual(ids);
        expect(stepped.value?.runtime.tool_timeout_seconds).toBe(9);
        // After each layer's TOML (embedded, user, flag) and keys (not the embedded one's: it sets
        // only defaults, so it skips the schema), and before the merged config is validated.
        expect(asked).toBe(3 + 2 + 1);
      } else {
        expect(stepped.errors.map((problem) => problem.code)).toEqual(['CONFIG_SCHEMA']);
      }
    }
  });
});
