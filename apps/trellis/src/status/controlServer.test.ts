import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { controlDirProblem, ensureControlDir, resolveControlDir } from './controlDir.ts';
import type { HostStatus } from './HostStatus.ts';
import { askHost, listRunningHosts } from './listRunningHosts.ts';
import { startControlServer, type ControlServer } from './startControlServer.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A base folder others may enter (755), as a home or XDG_RUNTIME_DIR of another user would not be. */
function base(): string {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-ctl-'));
  chmodSync(dir, 0o755);
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const STATUS: HostStatus = {
  pid: process.pid,
  command: 'serve',
  startedAt: '2026-01-01T00:00:00.000Z',
  version: '0',
  workspace: '/w',
  profile: 'full',
  plugins: [],
};

async function start(dir: string, status: () => HostStatus = () => STATUS): Promise<ControlServer> {
  const warnings: string[] = [];
  const server = await startControlServer({ dir, status, warn: (m) => warnings.push(m) });
  expect(warnings).toEqual([]);
  cleanups.push(() => server!.close());
  return server!;
}

/** Connects to `path` as the user nobody and prints the error code (or "connected"). */
function connectAsNobody(path: string): string {
  const script = `const s = require('node:net').connect(${JSON.stringify(path)}); s.on('connect', () => { console.log('connected'); s.destroy(); }); s.on('error', (e) => console.log(e.code));`;
  const result = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '-e', script], {
    encoding: 'utf8',
    timeout: 30_000,
    cwd: '/',
  });
  return result.stdout.trim() || result.stderr.trim();
}

describe('the control folder', () => {
  it('is $XDG_RUNTIME_DIR/trellis, else $XDG_STATE_HOME/trellis/hosts, else ~/.local/state/trellis/hosts', () => {
    expect(resolveControlDir({ XDG_RUNTIME_DIR: '/run/user/1000', XDG_STATE_HOME: '/s', HOME: '/h' })).toBe('/run/user/1000/trellis');
    expect(resolveControlDir({ XDG_RUNTIME_DIR: 'relative', XDG_STATE_HOME: '/s', HOME: '/h' })).toBe('/s/trellis/hosts');
    expect(resolveControlDir({ HOME: '/h' })).toBe('/h/.local/state/trellis/hosts');
  });

  it('is created 700; one of ours that others can enter is narrowed to 700', () => {
    const dir = join(base(), 'trellis');
    expect(ensureControlDir(dir)).toBeUndefined();
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    chmodSync(dir, 0o755);
    expect(ensureControlDir(dir)).toBeUndefined();
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });

  it('refuses a symlink and a folder of another user, and the host serves on without a socket', async () => {
    const root = base();
    mkdirSync(join(root, 'elsewhere'));
    symlinkSync(join(root, 'elsewhere'), join(root, 'link'));
    expect(controlDirProblem(join(root, 'link'))).toBe(
      `${join(root, 'link')} is a symlink; remove it (Trellis keeps its control sockets in a real folder)`,
    );
    const theirs = join(root, 'theirs');
    mkdirSync(theirs, { mode: 0o700 });
    chownSync(theirs, 65534, 65534);
    expect(ensureControlDir(theirs)).toBe(`${theirs} belongs to uid 65534, not to you (uid ${process.getuid!()}); remove it`);
    const warnings: string[] = [];
    expect(await startControlServer({ dir: theirs, status: () => STATUS, warn: (m) => warnings.push(m) })).toBeUndefined();
    expect(warnings).toEqual([
      `no control socket (trellis status will not see this host): ${theirs} belongs to uid 65534, not to you (uid ${process.getuid!()}); remove it`,
    ]);
    expect((await listRunningHosts(theirs)).problem).toBe(
      `${theirs} belongs to uid 65534, not to you (uid ${process.getuid!()}); remove it`,
    );
  });
});

describe('the control socket', () => {
  it('another user cannot connect: the folder (700) and the socket (600) both refuse', async () => {
    const dir = join(base(), 'trellis');
    const server = await start(dir);
    expect(statSync(server.path).mode & 0o777).toBe(0o600);
    expect(connectAsNobody(server.path)).toBe('EACCES');
    // Even with the folder opened up by hand, the socket's own mode refuses.
    chmodSync(dir, 0o755);
    expect(connectAsNobody(server.path)).toBe('EACCES');
    // The owner is served.
    expect(await askHost(server.path)).toEqual({ kind: 'status', status: STATUS });
  });

  it('answers each request with the status of that moment, and a provider that throws with INTERNAL_ERROR', async () => {
    let generation = 1;
    let fail = false;
    const server = await start(join(base(), 'trellis'), () => {
      if (fail) throw new Error('boom');
      return { ...STATUS, generation };
    });
    expect(await askHost(server.path)).toMatchObject({ kind: 'status', status: { generation: 1 } });
    generation = 2;
    expect(await askHost(server.path)).toMatchObject({ kind: 'status', status: { generation: 2 } });
    fail = true;
    expect(await askHost(server.path)).toEqual({
      kind: 'failed',
      message: 'INTERNAL_ERROR: the host could not describe itself (boom); this is a bug in Trellis, please report it',
    });
    fail = false;
    expect(await askHost(server.path)).toMatchObject({ kind: 'status' });
  });

  it('close() removes the socket and is idempotent', async () => {
    const server = await start(join(base(), 'trellis'));
    await server.close();
    await server.close();
    expect(() => statSync(server.path)).toThrow(/ENOENT/);
  });
});
