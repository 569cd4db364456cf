// The floor of bench/coldburst: the same burst with no host code, in a fresh process. Each call is
// a small record with its outcome promise; a gate of 8 slots (the default [runtime]
// max_concurrency) queues the rest as records; the first call imports the "plugin" (peerTool.mjs)
// once, and every call runs it and gets a fresh outcome object. What is left of the cold/warm ratio
// here is V8's own warm-up (interpreter to optimized code, heap growth) for a 10k burst of this shape.
// Prints {"coldMs", "warmMs"} as its last line.
const BURST = Number(process.argv[2] ?? 10_000);
const SLOTS = 8;

let tool;
let loading;
const queue = [];
let head = 0;
let active = 0;

class Call {
  constructor(request, resolve) {
    this.request = request;
    this.resolve = resolve;
    this.started = performance.now();
  }
}

function run(call) {
  loading ??= import('./peerTool.mjs').then((m) => (tool = m));
  const done = tool === undefined ? loading.then(() => tool.echo(call.request.input)) : Promise.resolve(tool.echo(call.request.input));
  done.then((value) => {
    const next = head < queue.length ? queue[head] : undefined;
    if (next !== undefined) queue[head++] = undefined;
    else active -= 1;
    call.resolve({ ok: true, value });
    if (next !== undefined) run(next);
  });
}

function invoke(request) {
  return new Promise((resolve) => {
    const call = new Call(request, resolve);
    if (active < SLOTS) {
      active += 1;
      run(call);
    } else queue.push(call);
  });
}

const burst = async () => {
  const t0 = performance.now();
  const outcomes = await Promise.all(Array.from({ length: BURST }, (_, i) => invoke({ name: 'peer.echo', input: { text: `t${i}` } })));
  const ms = performance.now() - t0;
  if (outcomes.some((o) => !o.ok)) throw new Error('a floor call failed');
  return ms;
};
const coldMs = await burst();
const warmMs = await burst();
process.stdout.write(`${JSON.stringify({ coldMs, warmMs })}\n`);
