import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleForAnotherUser, isAlive, NOBODY, pidsMentioning } from '@trellis/test-support';

// A host that dies without running any JavaScript (SIGKILL, the OOM killer, a signal it does not
// trap) cannot stop its children itself. A child that ignores end of input and SIGTERM (here:
// `sleep`, which reads nothing) must still not outlive it.

const here = dirname(fileURLToPath(import.meta.url));
let host: ReturnType<typeof bundleForAnotherUser>;

beforeAll(() => {
  // With TRELLIS_TEST_SPAWN_HELPER=1 the child is started through the spawn helper, as a live host
  // starts its children; the host then reports the helper's pid too (its only child of its own).
  const source = `import { readFileSync } from 'node:fs';
import { acquireSpawnHelper, describeSecretIsolation, launchChild, spawnHelperReady, startChild } from ${JSON.stringify(resolve(here, 'launchChild.ts'))};
const isolation = await describeSecretIsolation();
const viaHelper = process.env.TRELLIS_TEST_SPAWN_HELPER === '1';
if (viaHelper) {
  acquireSpawnHelper();
  if (!(await spawnHelperReady())) throw new Error('the spawn helper did not start');
}
const options = { command: 'sleep', args: [process.argv[2]], env: { PATH: '/usr/bin:/bin' }, cwd: '/' };
const { child } = viaHelper ? await startChild(options) : launchChild(options);
child.stdout.resume();
child.stderr.resume();
const own = readFileSync('/proc/self/task/' + process.pid + '/children', 'utf8').trim().split(/\\s+/).filter(Boolean).map(Number);
process.stdout.write(JSON.stringify({ mechanism: isolation.mechanism, pid: child.pid, helper: viaHelper ? own : [] }) + '\\n');
setInterval(() => {}, 1000);
`;
  host = bundleForAnotherUser(source, here);
});

afterAll(() => host.remove());

interface HostReady {
  mechanism: string;
  pid: number;
  /** With the spawn helper: the host's own children, the helper alone. */
  helper: number[];
}

async function waitFor(check: () => boolean, limitMs = 20_000): Promise<boolean> {
  const end = Date.now() + limitMs;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

function startHost(
  asNobody: boolean,
  tag: string,
  extraEnv: Record<string, string> = {},
): { child: ChildProcess; ready: Promise<HostReady> } {
  const argv = [host.file, tag];
  const env = { PATH: '/usr/bin:/bin', ...extraEnv };
  const child = asNobody
    ? spawn('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--', process.execPath, ...argv], {
        cwd: host.dir,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      })
    : spawn(process.execPath, argv, { cwd: host.dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const ready = new Promise<HostReady>((resolvePromise, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolvePromise(JSON.parse(out) as HostReady);
    });
    child.on('exit', (code) => reject(new Error(`the host exited (${code}) before starting its child: ${err}`)));
  });
  return { child, ready };
}

describe('a host killed outright leaves no child behind', () => {
  const users = process.getuid?.() === 0 ? [false, true] : [false];
  for (const asNobody of users) {
    it(
      `SIGKILL of the host ends its isolated child (host runs as ${asNobody ? 'nobody' : 'the current user'})`,
      { timeout: 60_000 },
      async () => {
        // `sleep` takes fractional seconds: a unique duration tags this test's processes.
        const tag = `86400.${process.pid}${Math.floor(Math.random() * 1e6)}`;
        const { child, ready } = startHost(asNobody, tag);
        try {
          const { mechanism } = await ready;
          if (mechanism !== 'pid-namespace') return; // nothing to hold the child without a namespace
          expect(await waitFor(() => pidsMentioning(tag).length > 0)).toBe(true);
          child.kill('SIGKILL');
          expect(await waitFor(() => child.exitCode !== null || child.signalCode !== null)).toBe(true);
          // The wrapper and the child inside it both end.
          expect(await waitFor(() => pidsMentioning(tag).length === 0, 10_000)).toBe(true);
        } finally {
          if (child.pid !== undefined && isAlive(child.pid)) child.kill('SIGKILL');
          for (const pid of pidsMentioning(tag)) process.kill(pid, 'SIGKILL');
        }
      },
    );
  }

  for (const isolation of ['auto', 'off']) {
    for (const asNobody of isolation === 'auto' ? users : [false]) {
      it(
        `SIGKILL of the host ends the spawn helper and the child it started (isolation ${isolation}, host runs as ${asNobody ? 'nobody' : 'the current user'})`,
        { timeout: 60_000 },
        async () => {
          const tag = `86400.${process.pid}${Math.floor(Math.random() * 1e6)}`;
          const { child, ready } = startHost(asNobody, tag, { TRELLIS_TEST_SPAWN_HELPER: '1', TRELLIS_CHILD_ISOLATION: isolation });
          let helpers: number[] = [];
          try {
            helpers = (await ready).helper;
            expect(helpers).toHaveLength(1);
            expect(isAlive(helpers[0]!)).toBe(true);
            expect(await waitFor(() => pidsMentioning(tag).length > 0)).toBe(true);
            child.kill('SIGKILL');
            expect(await waitFor(() => child.exitCode !== null || child.signalCode !== null)).toBe(true);
            expect(await waitFor(() => pidsMentioning(tag).length === 0 && !isAlive(helpers[0]!), 10_000)).toBe(true);
          } finally {
            if (child.pid !== undefined && isAlive(child.pid)) child.kill('SIGKILL');
            for (const pid of [...pidsMentioning(tag), ...helpers.filter(isAlive)]) process.kill(pid, 'SIGKILL');
          }
        },
      );
    }
  }

  it('SIGKILL of the host ends its child also without isolation (TRELLIS_CHILD_ISOLATION=off)', { timeout: 60_000 }, async () => {
    const tag = `86400.${process.pid}${Math.floor(Math.random() * 1e6)}`;
    const { child, ready } = startHost(false, tag, { TRELLIS_CHILD_ISOLATION: 'off' });
    try {
      expect((await ready).mechanism).toBe('none');
      expect(await waitFor(() => pidsMentioning(tag).length > 0)).toBe(true);
      child.kill('SIGKILL');
      expect(await waitFor(() => child.exitCode !== null || child.signalCode !== null)).toBe(true);
      expect(await waitFor(() => pidsMentioning(tag).length === 0, 10_000)).toBe(true);
    } finally {
      if (child.pid !== undefined && isAlive(child.pid)) child.kill('SIGKILL');
      for (const pid of pidsMentioning(tag)) process.kill(pid, 'SIGKILL');
    }
  });
});
