import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findRuntimeConfig } from './findRuntimeConfig.ts';
import { EMBEDDED_CONFIG_NAME, resolveRuntimeConfig } from './resolveRuntimeConfig.ts';
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
      expect(findRuntimeConfig({ env: { XDG_CONFIG_HOME: xdg, TRELLIS_CONFIG: '' }, workspace, home })).toEqual({ source: 'user', path: inHome });
    }
  });

  it('prefers the xdgConfigHome option over the environment', () => {
    const inOption = put(join(dir, 'opt-xdg', 'trellis', 'runtime.toml'), '');
    put(join(dir, 'env-xdg', 'trellis', 'runtime.toml'), '');
    expect(findRuntimeConfig({ env: { XDG_CONFIG_HOME: join(dir, 'env-xdg') }, xdgConfigHome: join(dir, 'opt-xdg'), workspace, home })).toEqual({
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
    expect(findRuntimeConfig({ env: {}, workspace, home })).toEqual({ source: 'workspace', path: join(workspace, '.trellis', 'runtime.toml') });
    rmSync(join(workspace, '.trellis', 'runtime.toml'));
    mkdirSync(join(workspace, '.trellis', 'runtime.toml'));
    expect(findRuntimeConfig({ env: {}, workspace, home })).toEqual({ source: 'workspace', path: join(workspace, '.trellis', 'runtime.toml') });
  });
});

describe('resolveRuntimeConfig', () => {
  const embeddedDefault = '[plugins]\npaths = ["vendor"]\n';

  it('loads the file that wins, with no merging', () => {
    put(join(workspace, '.trellis', 'runtime.toml'), profileFile('full'));
    put(join(home, '.config', 'trellis', 'runtime.toml'), `${profileFile('messaging')}deny = ["core-web"]\n`);
    const result = resolveRuntimeConfig({ env: {}, workspace, home, embeddedDefault });
    expect(result).toEqual({
      source: 'workspace',
      path: join(workspace, '.trellis', 'runtime.toml'),
      value: RuntimeConfigSchema.parse({ plugins: { profile: 'full' } }),
      warnings: [],
      errors: [],
    });
  });

  it('parses the embedded default with the workspace as the base of relative paths', () => {
    const result = resolveRuntimeConfig({ env: {}, workspace, home, embeddedDefault });
    expect(result).toEqual({
      source: 'embedded',
      value: RuntimeConfigSchema.parse({ plugins: { paths: [join(workspace, 'vendor')] } }),
      warnings: [],
      errors: [],
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
    expect(resolveRuntimeConfig({ configPath: path, env: {}, workspace, home, embeddedDefault })).toEqual({
      source: 'flag',
      path,
      value: undefined,
      warnings: [],
      errors: [
        {
          code: 'CONFIG_NOT_FOUND',
          file: path,
          message: `${path}: no such file; fix the path given to --config, or drop --config to use the normal lookup`,
        },
      ],
    });
  });

  it('reports a missing TRELLIS_CONFIG file instead of falling through', () => {
    put(join(workspace, '.trellis', 'runtime.toml'), profileFile('full'));
    const path = join(dir, 'missing.toml');
    expect(resolveRuntimeConfig({ env: { TRELLIS_CONFIG: path }, workspace, home, embeddedDefault })).toEqual({
      source: 'env',
      path,
      value: undefined,
      warnings: [],
      errors: [
        {
          code: 'CONFIG_NOT_FOUND',
          file: path,
          message: `${path}: no such file; fix TRELLIS_CONFIG, or unset it to use the normal lookup`,
        },
      ],
    });
  });

  it('expands ${VAR} from the env it is given', () => {
    const path = put(join(dir, 'c.toml'), '[runtime.tools.openrouter]\napi_key = "${KEY}"\n');
    const result = resolveRuntimeConfig({ configPath: path, env: { KEY: 'k-123' }, workspace, home, embeddedDefault });
    expect(result.value?.runtime.tools).toEqual({ openrouter: { api_key: 'k-123' } });
  });
});
