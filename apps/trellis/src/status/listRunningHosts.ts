import { lstatSync, readdirSync, unlinkSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { controlDirProblem } from './controlDir.ts';
import type { HostStatus } from './HostStatus.ts';

/** How long `trellis status` waits for one host's answer. */
const ANSWER_TIMEOUT_MS = 5_000;
/** Longest answer read from a host (a status of thousands of plugins fits). */
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

/** A socket whose host is gone: its file is removed (or could not be). */
export interface StaleSocket {
  readonly pid: number;
  readonly path: string;
  readonly removed: boolean;
  readonly reason: string;
}

/** A live host that did not answer as it should. */
export interface UnreachableHost {
  readonly pid: number;
  readonly path: string;
  readonly message: string;
}

/** What `trellis status` found in the control folder. */
export interface RunningHosts {
  readonly dir: string;
  readonly hosts: readonly HostStatus[];
  readonly stale: readonly StaleSocket[];
  readonly unreachable: readonly UnreachableHost[];
  /** Why the folder could not be used (not ours, a symlink); absent when fine or missing. */
  readonly problem?: string;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function removeStale(pid: number, path: string, reason: string): StaleSocket {
  try {
    unlinkSync(path);
    return { pid, path, removed: true, reason };
  } catch {
    return { pid, path, removed: false, reason };
  }
}

type Asked = { kind: 'status'; status: HostStatus } | { kind: 'refused' } | { kind: 'failed'; message: string };

/** One status request to one socket. */
export function askHost(path: string, request: unknown = { type: 'status' }): Promise<Asked> {
  return new Promise((resolve) => {
    const socket = connect(path);
    let text = '';
    let done = false;
    const finish = (result: Asked) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(
      () => finish({ kind: 'failed', message: `no answer within ${ANSWER_TIMEOUT_MS / 1000} s` }),
      ANSWER_TIMEOUT_MS,
    );
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(`${JSON.stringify(request)}\n`));
    socket.on('data', (chunk: string) => {
      text += chunk;
      if (text.length > MAX_ANSWER_BYTES) finish({ kind: 'failed', message: `the answer is larger than ${MAX_ANSWER_BYTES} bytes` });
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED' || error.code === 'ENOENT') finish({ kind: 'refused' });
      else finish({ kind: 'failed', message: error.code ?? error.message });
    });
    socket.on('end', () => {
      try {
        const answer = JSON.parse(text) as { ok?: unknown; status?: HostStatus; error?: { code?: string; message?: string } };
        if (answer.ok === true && typeof answer.status === 'object' && answer.status !== null)
          finish({ kind: 'status', status: answer.status });
        else finish({ kind: 'failed', message: `${answer.error?.code ?? 'ERROR'}: ${answer.error?.message ?? 'no status in the answer'}` });
      } catch {
        finish({ kind: 'failed', message: 'the answer is not JSON' });
      }
    });
  });
}

/**
 * Asks every host with a socket in `dir` for its status. A socket nobody listens on is stale
 * (its process is gone, or its pid is another program now): its file is removed and reported.
 * Hosts are sorted by start time.
 */
export async function listRunningHosts(dir: string): Promise<RunningHosts> {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT'
      ? { dir, hosts: [], stale: [], unreachable: [] }
      : { dir, hosts: [], stale: [], unreachable: [], problem: `${dir} cannot be read (${code})` };
  }
  const problem = controlDirProblem(dir);
  if (problem !== undefined) return { dir, hosts: [], stale: [], unreachable: [], problem };
  const uid = process.getuid?.();
  const hosts: HostStatus[] = [];
  const stale: StaleSocket[] = [];
  const unreachable: UnreachableHost[] = [];
  await Promise.all(
    names.map(async (name) => {
      const match = /^(\d+)\.sock$/.exec(name);
      if (match === null) return;
      const pid = Number(match[1]);
      const path = join(dir, name);
      try {
        const stat = lstatSync(path);
        if (!stat.isSocket() || (uid !== undefined && stat.uid !== uid)) return;
      } catch {
        return;
      }
      // A pid that looks gone may be one of another PID namespace (a container sharing this
      // folder, or a child of a Trellis host, which runs in a namespace of its own): only a
      // socket nobody listens on is stale. Connecting to a dead socket is refused at once.
      const alive = isAlive(pid);
      const asked = await askHost(path);
      if (asked.kind === 'status') hosts.push(asked.status);
      else if (asked.kind === 'refused')
        stale.push(
          removeStale(pid, path, alive ? `nobody listens on it (process ${pid} is another program now)` : `process ${pid} is gone`),
        );
      else unreachable.push({ pid, path, message: asked.message });
    }),
  );
  hosts.sort((a, b) => a.startedAt.localeCompare(b.startedAt) || a.pid - b.pid);
  stale.sort((a, b) => a.pid - b.pid);
  unreachable.sort((a, b) => a.pid - b.pid);
  return { dir, hosts, stale, unreachable };
}
