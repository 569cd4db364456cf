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
  const source = `import { describeSecretIsolation, launchChild } from ${JSON.stringify(resolve(here, 'launchChild.ts'))};
const isolation = await describeSecretIsolation();
const { child } = launchChild({ command: 'sleep', args: [process.argv[2]], env: { PATH: '/usr/bin:/bin' }, cwd: '/' });
child.stdout.resume();
child.stderr.resume();
process.stdout.write(JSON.stringify({ mechanism: isolation.mechanism, pid: child.pid }) + '\\n');
setInterval(() => {}, 1000);
`;
  host = bundleForAnotherUser(source, here);
});

afterAll(() => host.remove());

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
): { child: ChildProcess; ready: Promise<{ mechanism: string; pid: number }> } {
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
  const ready = new Promise<{ mechanism: string; pid: number }>((resolvePromise, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolvePromise(JSON.parse(out) as { mechanism: string; pid: number });
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
