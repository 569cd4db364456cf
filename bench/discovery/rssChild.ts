// Peak RSS of the registry pipeline on its own: run by bench/discovery/run.ts in a fresh process
// over a tree the parent already wrote (argv[2]: the file roots as JSON), so neither the tree
// generator nor the floor's allocations count. Loads what a host loads (the registry and its lazy
// dependencies), records RSS, runs the pipeline `runs` times (argv[3]; run.ts asks for 1, as a
// host builds one snapshot at startup), and prints one JSON line:
// { baselineMb, peakMb, count } — peakMb is getrusage's maxrss of this process.
import { prepareRegistry } from '@trellis/registry';
import type { FileRootSpec } from '@trellis/registry';
import { full } from './pipeline.ts';

const roots = JSON.parse(process.argv[2] ?? '[]') as FileRootSpec[];
const runs = Number(process.argv[3] ?? 1);
await prepareRegistry();
const baselineMb = process.memoryUsage().rss / 1048576;
let count = 0;
for (let i = 0; i < runs; i += 1) count = full(roots);
const peakMb = process.resourceUsage().maxRSS / 1024;
process.stdout.write(`${JSON.stringify({ baselineMb, peakMb, count })}\n`);
