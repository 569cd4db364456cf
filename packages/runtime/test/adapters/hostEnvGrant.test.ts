import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PluginManifestInput } from '@trellis/sdk';
import { createExternalImplementation } from '../../src/adapters/createExternalImplementation.ts';
import type { PluginImplementation } from '../../src/PluginImplementation.ts';
import { callOf, manifestOf } from './helpers.ts';

// The host's environment as an embedder or the CLI would pass it: secrets included.
const hostEnv = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: '/home/someone',
  OPENROUTER_API_KEY: 'sk-or-host-secret',
  GITHUB_TOKEN: 'ghp-granted',
  NOTES_TOKEN: 'notes-secret',
};

let dir: string;
const live: PluginImplementation[] = [];
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'trellis-grant-')));
  // Prints every variable it was given whose value looks like one of the host's.
  writeFileSync(
    join(dir, 'show-env.sh'),
    'cat >/dev/null\nenv | grep -E "^(OPENROUTER_API_KEY|GITHUB_TOKEN|NOTES_TOKEN|AUTH)=" | sort | tr "\\n" " "\n',
  );
});
afterEach(async () => {
  for (const impl of live.splice(0)) await impl.dispose();
  rmSync(dir, { recursive: true, force: true });
});

function plugin(manifest: Partial<PluginManifestInput>, passEnv?: string[]): PluginImplementation {
  const impl = createExternalImplementation(
    {
      id: 'envy',
      manifest: manifestOf({ id: 'envy', runtime: { type: 'script', command: 'sh', args: ['show-env.sh'] }, ...manifest }),
      pluginDir: dir,
    },
    { env: hostEnv, ...(passEnv ? { overrides: { pass_env: passEnv } } : {}) },
  );
  live.push(impl);
  return impl;
}

describe('which host variables a plugin receives', () => {
  it('gives a plugin that declares nothing none of the host variables', async () => {
    expect(await plugin({}).call(callOf('show'))).toEqual({ ok: true, value: { message: '' } });
  });

  it('refuses a [runtime.env] expansion of a variable the manifest does not declare, naming plugin, key and variable', async () => {
    const impl = plugin({ runtime: { type: 'script', command: 'sh', args: ['show-env.sh'], env: { AUTH: '${OPENROUTER_API_KEY}' } } }, [
      'OPENROUTER_API_KEY',
    ]);
    expect(impl.state()).toBe('disabled');
    expect(await impl.call(callOf('show'))).toEqual({
      ok: false,
      notDispatched: true,
      error: {
        code: 'ENV_NOT_GRANTED',
        message:
          'plugin envy: runtime.env.AUTH uses ${OPENROUTER_API_KEY}, which the manifest does not declare; a plugin may only expand variables listed in its env_from_host or requires_env',
        retryable: false,
      },
    });
  });

  it('refuses an expansion of a declared variable the config does not grant, naming the pass_env line that would', async () => {
    const impl = plugin({
      env_from_host: ['GITHUB_TOKEN'],
      runtime: { type: 'script', command: 'sh', args: ['show-env.sh'], env: { AUTH: 'token ${GITHUB_TOKEN}' } },
    });
    expect((await impl.call(callOf('show'))) as unknown).toMatchObject({
      ok: false,
      error: {
        code: 'ENV_NOT_GRANTED',
        message:
          'plugin envy: runtime.env.AUTH uses ${GITHUB_TOKEN}, which your config does not grant to it; add [plugins.entries.envy] pass_env = ["GITHUB_TOKEN"] to runtime.toml to pass it',
      },
    });
  });

  it('refuses a plugin whose requires_env is not granted, and runs it once it is', async () => {
    expect((await plugin({ requires_env: ['NOTES_TOKEN'] }).call(callOf('show'))) as unknown).toMatchObject({
      ok: false,
      error: {
        code: 'ENV_NOT_GRANTED',
        message:
          'plugin envy requires NOTES_TOKEN from the host (requires_env), but your config does not grant it; add [plugins.entries.envy] pass_env = ["NOTES_TOKEN"] to runtime.toml if you want this plugin to receive it',
      },
    });
    expect(await plugin({ requires_env: ['NOTES_TOKEN'] }, ['NOTES_TOKEN']).call(callOf('show'))).toEqual({
      ok: true,
      value: { message: 'NOTES_TOKEN=notes-secret' },
    });
  });

  it('passes exactly the declared and granted variables, and never an undeclared grant', async () => {
    const impl = plugin(
      {
        env_from_host: ['GITHUB_TOKEN'],
        runtime: { type: 'script', command: 'sh', args: ['show-env.sh'], env: { AUTH: 'token ${GITHUB_TOKEN}' } },
      },
      ['GITHUB_TOKEN', 'OPENROUTER_API_KEY'],
    );
    expect(await impl.call(callOf('show'))).toEqual({ ok: true, value: { message: 'AUTH=token ghp-granted GITHUB_TOKEN=ghp-granted' } });
  });
});
