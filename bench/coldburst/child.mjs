// One sample of bench/coldburst, in a fresh process: the built `trellis` (dist), as users run it.
// Prints {"coldMs", "warmMs", "coldRssMb"} as its last line.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assemble } from 'trellis';

const BURST = Number(process.argv[2] ?? 10_000);
const dir = mkdtempSync(join(tmpdir(), 'trellis-coldburst-'));
try {
  const assembly = await assemble({ workspace: dir, home: dir, env: { PATH: process.env.PATH } });
  const burst = async () => {
    const t0 = performance.now();
    const outcomes = await Promise.all(
      Array.from({ length: BURST }, (_, i) => assembly.runtime.invoke({ name: 'builtin-tools.echo', input: { text: `t${i}` } })),
    );
    const ms = performance.now() - t0;
    const failed = outcomes.filter((o) => !o.ok);
    if (failed.length > 0) throw new Error(`${failed.length} calls failed, e.g. ${JSON.stringify(failed[0])}`);
    return ms;
  };
  const coldMs = await burst();
  const coldRssMb = process.memoryUsage().rss / 1e6;
  const warmMs = await burst();
  await assembly.dispose();
  process.stdout.write(`${JSON.stringify({ coldMs, warmMs, coldRssMb })}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
