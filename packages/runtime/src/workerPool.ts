import { availableParallelism } from 'node:os';
import type { ResourceLimits } from 'node:worker_threads';
import type { Tinypool } from 'tinypool';
import { WORKER_SOURCE } from './workerSource.ts';

/** How a pool's workers are started. Implementations with equal options share one pool. */
export interface WorkerPoolOptions {
  readonly resourceLimits: ResourceLimits;
  /** Options of the workers' Node; `undefined` inherits the host's. */
  readonly execArgv?: readonly string[];
  /** Most workers at once. Default: twice the machine's parallelism, at least 4. */
  readonly maxThreads?: number;
  /** Told about a worker that failed while it had no task (the pool replaces it). */
  readonly onIdleError?: (error: Error) => void;
}

/** A share of a pool: run tasks on it, then release it; the last release destroys the pool. */
export interface WorkerPoolLease {
  /** Runs one task; rejects with an `AbortError` when `signal` aborts (the worker is terminated and replaced). */
  run(task: unknown, signal: AbortSignal): Promise<unknown>;
  release(): Promise<void>;
}

interface SharedPool {
  users: number;
  pool: Promise<Tinypool>;
}

const pools = new Map<string, SharedPool>();
let tinypoolModule: Promise<{ Tinypool: typeof Tinypool }> | undefined;

/** The worker task module as a `data:` URL: no file to locate in a source tree, a build or a bundle. */
const TASK_URL = `data:text/javascript,${encodeURIComponent(WORKER_SOURCE)}`;

/** An idle worker lives this long before it exits; the pool keeps one warm worker regardless. */
const IDLE_MS = 30_000;

/**
 * A lease on the shared worker pool (tinypool) for these options. The pool is built on the first
 * lease, once, however many leases ask at the same moment; tinypool is imported then too, so a
 * host that never isolates a tool never loads it. Workers are unreferenced while idle and never
 * keep the process alive.
 */
export function acquireWorkerPool(options: WorkerPoolOptions): WorkerPoolLease {
  const key = JSON.stringify([options.resourceLimits, options.execArgv ?? null, options.maxThreads ?? null]);
  let shared = pools.get(key);
  if (shared === undefined) {
    shared = { users: 0, pool: buildPool(options) };
    pools.set(key, shared);
  }
  shared.users += 1;
  const entry = shared;
  let released = false;
  return {
    run: (task, signal) => entry.pool.then((pool) => pool.run(task, { signal })),
    async release() {
      if (released) return;
      released = true;
      entry.users -= 1;
      if (entry.users > 0) return;
      if (pools.get(key) === entry) pools.delete(key);
      const pool = await entry.pool.catch(() => undefined);
      await pool?.destroy().catch(() => undefined);
    },
  };
}

async function buildPool(options: WorkerPoolOptions): Promise<Tinypool> {
  tinypoolModule ??= import('tinypool');
  const { Tinypool: Pool } = await tinypoolModule;
  // More workers than cores: a cheap call is not stuck behind two CPU-bound ones until their
  // deadlines, and the workers run at a lower priority than the host thread (workerSource.ts).
  const maxThreads = options.maxThreads ?? Math.max(4, 2 * availableParallelism());
  const pool = new Pool({
    filename: TASK_URL,
    minThreads: 1,
    maxThreads,
    idleTimeout: IDLE_MS,
    resourceLimits: options.resourceLimits,
    ...(options.execArgv === undefined ? {} : { execArgv: [...options.execArgv] }),
  });
  // A worker that dies between tasks is an event on the pool; unheard, it would crash the host.
  pool.on('error', (error: Error) => options.onIdleError?.(error));
  return pool;
}

/** True when `error` is the pool's answer to an aborted task. */
export function isPoolAbort(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || error.message === 'The task has been aborted');
}
