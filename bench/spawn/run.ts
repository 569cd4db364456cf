// The cost of keeping children from the host's secrets: runProcess (through the launcher, in its
// own PID namespace where the machine allows) against a plain detached spawn of the same program,
// interleaved in one run. Two programs: /bin/true (the pure overhead) and `node -e ""` (a
// realistic interpreter start). Target: an isolated `node -e ""` at most 1.5× the plain spawn.
import { spawn } from 'node:child_process';
import { describeSecretIsolation, runProcess } from '@trellis/sdk/internal';

const runs = Number(process.env.BENCH_RUNS ?? 40);
const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

function plain(command: string, args: string[]): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdin.end();
    child.stdout.resume();
    child.stderr.resume();
    child.on('error', reject);
    child.on('close', () => resolve(performance.now() - started));
  });
}

async function launched(command: string, args: string[]): Promise<number> {
  const started = performance.now();
  const result = await runProcess({ command, args, env, timeoutMs: 30_000, maxOutputBytes: 4096 });
  if (result.exitCode !== 0) throw new Error(`${command} failed: ${result.spawnError ?? result.stderr}`);
  return performance.now() - started;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

const isolation = await describeSecretIsolation();
const programs: Array<[string, string, string[]]> = [
  ['true', '/bin/true', []],
  ['node', process.execPath, ['-e', '']],
];
const figures: Record<string, { plain_ms: number; isolated_ms: number; ratio: number; overhead_ms: number }> = {};
for (const [label, command, args] of programs) {
  await plain(command, args);
  await launched(command, args);
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < runs; i++) {
    a.push(await plain(command, args));
    b.push(await launched(command, args));
  }
  const p = median(a);
  const l = median(b);
  figures[label] = { plain_ms: +p.toFixed(2), isolated_ms: +l.toFixed(2), ratio: +(l / p).toFixed(3), overhead_ms: +(l - p).toFixed(2) };
  process.stderr.write(
    `${label}: plain spawn median ${p.toFixed(1)} ms, runProcess (${isolation.mechanism}) median ${l.toFixed(1)} ms (${(l / p).toFixed(2)}×, +${(l - p).toFixed(1)} ms), ${runs} interleaved runs\n`,
  );
}
const nodeRatio = figures.node!.ratio;
process.stdout.write(
  `BENCH ${JSON.stringify({
    name: 'spawn',
    runs,
    mechanism: isolation.mechanism,
    user_namespace: isolation.userNamespace,
    ...Object.fromEntries(Object.entries(figures).flatMap(([k, v]) => Object.entries(v).map(([f, n]) => [`${k}_${f}`, n]))),
    ratio: nodeRatio,
    target: 'isolated node -e "" median <= 1.5x a plain spawn',
    pass: nodeRatio <= 1.5,
  })}\n`,
);
