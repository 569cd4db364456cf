import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeSecretIsolation, isolatedCommandLine, launchChild, prepareChildLauncher } from './launchChild.ts';

const here = dirname(fileURLToPath(import.meta.url));

/**
 * What a hostile child does to find the host's secret: walk its ancestors through
 * /proc/<pid>/status PPid reading each environ, scan every /proc/<pid>/environ, and try to
 * unmount a private /proc to see the host's. Prints each place it found the marker.
 */
export const SECRET_HUNT = `
mark="$1"; found=""
pid=$$
while [ -n "$pid" ] && [ "$pid" -gt 0 ]; do
  grep -qa "$mark" /proc/$pid/environ 2>/dev/null && found="$found ancestor:$pid"
  pid=$(sed -n 's/^PPid:[[:space:]]*//p' /proc/$pid/status 2>/dev/null)
done
for f in /proc/[0-9]*/environ; do grep -qa "$mark" "$f" 2>/dev/null && found="$found scan:$f"; done
if umount /proc 2>/dev/null; then
  for f in /proc/[0-9]*/environ; do grep -qa "$mark" "$f" 2>/dev/null && found="$found after-umount:$f"; done
fi
echo "found:$found"
`;

const SECRET = `sk-or-v1-trellis-test-${process.pid}-${Date.now()}`;
let work: string;
let hostScript: string;

beforeAll(() => {
  // A self-contained host (the real runProcess/launcher bundled into one file) in a folder every
  // user can read, so it also runs as an unprivileged user whatever the checkout's modes are.
  work = mkdtempSync(join(tmpdir(), 'trellis-secrets-'));
  chmodSync(work, 0o755);
  const entry = join(work, 'host.ts');
  writeFileSync(
    entry,
    `import { runProcess } from ${JSON.stringify(resolve(here, 'runProcess.ts'))};
import { describeSecretIsolation } from ${JSON.stringify(resolve(here, 'launchChild.ts'))};
const isolation = await describeSecretIsolation();
const result = await runProcess({ command: '/bin/sh', args: ['-c', process.argv[2], 'sh', process.argv[3]], env: { PATH: '/usr/bin:/bin' }, timeoutMs: 20000, maxOutputBytes: 100000 });
process.stdout.write(JSON.stringify({ isolation, stdout: result.stdout, stderr: result.stderr, exitCode: result.exitCode, isolated: result.isolated }));
`,
  );
  const fromTsx = createRequire(createRequire(import.meta.url).resolve('tsx/package.json'));
  const esbuild = fromTsx('esbuild') as { buildSync(options: Record<string, unknown>): unknown };
  hostScript = join(work, 'host.mjs');
  esbuild.buildSync({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: hostScript,
    logLevel: 'silent',
  });
  chmodSync(hostScript, 0o644);
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

interface HostReport {
  isolation: { mechanism: string; detail: string };
  stdout: string;
  exitCode: number | null;
  isolated: boolean;
}

function runHost(asUser: 'self' | 'nobody'): HostReport {
  const node = process.execPath;
  const env = {
    PATH: '/usr/bin:/bin',
    OPENROUTER_API_KEY: SECRET,
    ...(process.env.TRELLIS_CHILD_ISOLATION ? { TRELLIS_CHILD_ISOLATION: process.env.TRELLIS_CHILD_ISOLATION } : {}),
  };
  const argv = [hostScript, SECRET_HUNT, SECRET];
  const out =
    asUser === 'self'
      ? execFileSync(node, argv, { env, cwd: work, encoding: 'utf8', timeout: 60_000 })
      : execFileSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', '--', node, ...argv], {
          env,
          cwd: work,
          encoding: 'utf8',
          timeout: 60_000,
        });
  return JSON.parse(out) as HostReport;
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
