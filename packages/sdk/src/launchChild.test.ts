import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleForAnotherUser, SECRET_HUNT, spawnAsNobody } from '@trellis/test-support';
import { describeSecretIsolation, isolatedCommandLine, launchChild, prepareChildLauncher } from './launchChild.ts';

const here = dirname(fileURLToPath(import.meta.url));

const SECRET = `sk-or-v1-trellis-test-${process.pid}-${Date.now()}`;
let host: ReturnType<typeof bundleForAnotherUser>;

beforeAll(() => {
  // A self-contained host (the real runProcess/launcher bundled into one file) in a folder every
  // user can read, so it also runs as an unprivileged user whatever the checkout's modes are.
  const source = `import { runProcess } from ${JSON.stringify(resolve(here, 'runProcess.ts'))};
import { describeSecretIsolation } from ${JSON.stringify(resolve(here, 'launchChild.ts'))};
const isolation = await describeSecretIsolation();
const result = await runProcess({ command: '/bin/sh', args: ['-c', process.argv[2], 'sh', process.argv[3]], env: { PATH: '/usr/bin:/bin' }, timeoutMs: 20000, maxOutputBytes: 100000 });
process.stdout.write(JSON.stringify({ isolation, stdout: result.stdout, stderr: result.stderr, exitCode: result.exitCode, isolated: result.isolated }));
`;
  host = bundleForAnotherUser(source, here);
});

afterAll(() => host.remove());

interface HostReport {
  isolation: { mechanism: string; detail: string };
  stdout: string;
  exitCode: number | null;
  isolated: boolean;
}

function runHost(asUser: 'self' | 'nobody'): HostReport {
  const env = {
    PATH: '/usr/bin:/bin',
    OPENROUTER_API_KEY: SECRET,
    ...(process.env.TRELLIS_CHILD_ISOLATION ? { TRELLIS_CHILD_ISOLATION: process.env.TRELLIS_CHILD_ISOLATION } : {}),
  };
  const argv = [host.file, SECRET_HUNT, SECRET];
  if (asUser === 'self')
    return JSON.parse(execFileSync(process.execPath, argv, { env, cwd: host.dir, encoding: 'utf8', timeout: 60_000 })) as HostReport;
  const child = spawnAsNobody(process.execPath, argv, { cwd: host.dir, env });
  expect(child.status, child.stderr).toBe(0);
  return JSON.parse(child.stdout) as HostReport;
}

describe('secrets and child processes', () => {
  const cases: Array<'self' | 'nobody'> = process.getuid?.() === 0 ? ['self', 'nobody'] : ['self'];
  for (const who of cases) {
    it(`a child cannot read the host's start-up environment (host runs as ${who === 'self' ? 'the current user' : 'nobody'})`, () => {
      const report = runHost(who);
      expect(report.exitCode).toBe(0);
      if (report.isolation.mechanism === 'pid-namespace') {
        expect(report.isolated).toBe(true);
        expect(report.stdout.trim()).toBe('found:');
      } else {
        // Without a mechanism the hole is real, and doctor must say so.
        expect(report.isolation.detail).toMatch(/NOT isolated|isolation is off/);
        expect(report.stdout).toContain('ancestor:');
      }
    }, 60_000);
  }

  it('reports the mechanism in one line for doctor', async () => {
    const isolation = await describeSecretIsolation();
    expect(isolation.detail.length).toBeGreaterThan(20);
    expect(['pid-namespace', 'none']).toContain(isolation.mechanism);
  });

  it('reports a missing program as ENOENT, like a direct spawn, even behind the wrapper', async () => {
    await prepareChildLauncher();
    expect(() => launchChild({ command: 'no-such-program-trellis', env: { PATH: '/usr/bin:/bin' } })).toThrow(
      expect.objectContaining({ code: 'ENOENT' }),
    );
  });

  it('puts prlimit inside the wrapper, next to the command', async () => {
    await prepareChildLauncher();
    const line = isolatedCommandLine({ command: '/bin/true', args: ['x'], maxMemoryMb: 64 });
    expect(line.args.slice(-4)).toEqual([`--as=${64 * 1024 * 1024}`, '--', '/bin/true', 'x']);
  });
});
