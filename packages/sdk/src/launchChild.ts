import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import type { ChildProcessWithoutNullStreams, spawn as SpawnFunction } from 'node:child_process';
import { killGroup, killTrackedGroups, trackGroup, untrackGroup } from './processGroups.ts';
import { SpawnHelper, SpawnHelperUnavailable } from './spawnHelper.ts';
import type { StartedChild } from './spawnHelper.ts';

/**
 * How children are kept from reading the host's secrets. `pid-namespace`: every child runs as
 * pid 1 of its own PID namespace with its own `/proc`, so neither `/proc/<host pid>/environ`
 * nor ptrace, `process_vm_readv` or `/proc/<pid>/mem` can name the host or any process outside
 * the child's namespace. `none`: children are plain same-user processes and can read the
 * host's start-up environment through `/proc/$PPID/environ`.
 */
export interface SecretIsolation {
  readonly mechanism: 'pid-namespace' | 'none';
  /** Whether a user namespace is used too (needed to create a PID namespace without root). */
  readonly userNamespace: boolean;
  /** `auto` (default), `required` (refuse to start a child without isolation) or `off`, from `TRELLIS_CHILD_ISOLATION`. */
  readonly mode: ChildIsolationMode;
  /** One line for `doctor`: what protects children, or why nothing does and how to fix it. */
  readonly detail: string;
}

/** `TRELLIS_CHILD_ISOLATION`: `auto` isolates where possible, `required` refuses otherwise, `off` never isolates. */
export type ChildIsolationMode = 'auto' | 'required' | 'off';

/** How to start one child. The command is never given to a shell. */
export interface LaunchChildOptions {
  readonly command: string;
  readonly args?: readonly string[];
  readonly cwd?: string;
  /** The child's whole environment; nothing of the host's is inherited that is not listed here. */
  readonly env: Readonly<Record<string, string>>;
  /** Address-space limit, through prlimit(1) where available. */
  readonly maxMemoryMb?: number;
  /** CPU-time limit, through prlimit(1) where available. */
  readonly maxCpuSeconds?: number;
}

/** A started child: its process (its pid is the process group to kill) and what was applied. */
export interface LaunchedChild<C extends StartedChild = ChildProcessWithoutNullStreams> {
  readonly child: C;
  /** The group to signal: the child's pid (it leads its own group). */
  readonly pgid: number | undefined;
  readonly isolated: boolean;
  readonly limits: { readonly memory: boolean; readonly cpu: boolean };
}

/** Thrown by `launchChild` when `TRELLIS_CHILD_ISOLATION=required` and no isolation is available. */
export class IsolationUnavailableError extends Error {
  readonly code = 'ISOLATION_UNAVAILABLE';
}

const SYSTEM_DIRS = ['/usr/bin', '/bin', '/usr/sbin', '/sbin'];
function findSystemProgram(name: string): string | undefined {
  for (const dir of SYSTEM_DIRS) {
    const path = `${dir}/${name}`;
    if (existsSync(path)) return path;
  }
  return undefined;
}

const PRLIMIT = findSystemProgram('prlimit');

interface Prepared {
  readonly spawn: typeof SpawnFunction;
  readonly prefix: readonly string[] | undefined;
  /**
   * `setpriv --pdeathsig KILL --` where setpriv knows it, else empty: without isolation every child
   * runs behind it (so it still dies with a host killed outright), and so does the spawn helper.
   */
  readonly pdeathsig: readonly string[];
  readonly isolation: SecretIsolation;
}

let prepared: Prepared | undefined;
let preparing: Promise<Prepared> | undefined;

function readMode(): ChildIsolationMode {
  const raw = process.env.TRELLIS_CHILD_ISOLATION?.trim().toLowerCase();
  return raw === 'off' || raw === 'required' ? raw : 'auto';
}

/**
 * The wrappers tried, best first. Each ends with `--` and is followed by the real command. The
 * child must never hold CAP_SYS_ADMIN over its mount namespace: with it, it could unmount its
 * private `/proc` and see the host's again. As root, capabilities are dropped with setpriv; as
 * another user, a user namespace that maps only the current user leaves none after exec.
 */
function candidatePrefixes(reap: readonly string[]): Array<{ prefix: string[]; userNamespace: boolean; label: string }> {
  const unshare = findSystemProgram('unshare');
  if (unshare === undefined) return [];
  const setpriv = findSystemProgram('setpriv');
  const dropCaps = setpriv === undefined ? undefined : [setpriv, '--bounding-set=-all', '--inh-caps=-all', '--'];
  const pidNs = ['--pid', '--fork', '--mount-proc', '--kill-child'];
  // A host that dies without running its exit hook (SIGKILL, the OOM killer, a signal it does not
  // trap) cannot stop its children. The kernel can: unshare gets SIGKILL when the host dies
  // (parent-death signal, kept across exec), and --kill-child passes it on to the namespace's pid 1,
  // whose death ends everything inside. Without a setpriv that knows --pdeathsig (`reap` is empty),
  // unshare alone (the host's exit hook still covers every way out that runs JavaScript).
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const list: Array<{ prefix: string[]; userNamespace: boolean; label: string }> = [];
  if (root) {
    if (dropCaps)
      list.push({
        prefix: [...reap, unshare, ...pidNs, '--', ...dropCaps],
        userNamespace: false,
        label: 'unshare --pid, capabilities dropped',
      });
  } else {
    list.push({
      prefix: [...reap, unshare, '--user', '--map-current-user', ...pidNs, '--'],
      userNamespace: true,
      label: 'unshare --user --pid',
    });
  }
  // Older util-linux (no --map-current-user), or root without CAP_SYS_ADMIN (a container).
  if (dropCaps)
    list.push({
      prefix: [...reap, unshare, '--user', '--map-root-user', ...pidNs, '--', ...dropCaps],
      userNamespace: true,
      label: 'unshare --user --pid, capabilities dropped',
    });
  return list;
}

/** `setpriv --pdeathsig KILL --` when this setpriv knows the option (util-linux ≥ 2.33), else empty. */
async function findReaper(spawn: Prepared['spawn']): Promise<readonly string[]> {
  const setpriv = findSystemProgram('setpriv');
  if (setpriv === undefined) return [];
  const reap = [setpriv, '--pdeathsig', 'KILL', '--'];
  return (await probe(spawn, reap, 'echo ok', 'ok')) ? reap : [];
}

async function probe(
  spawn: Prepared['spawn'],
  prefix: readonly string[],
  // Inside a working wrapper the shell is pid 1 of its namespace and /proc is that namespace's.
  script = 'read pid rest < /proc/self/stat; echo "$$ $pid"',
  expected = '1 1',
): Promise<boolean> {
  const [command, ...args] = [...prefix, '/bin/sh', '-c', script];
  return new Promise((resolve) => {
    let out = '';
    let child;
    try {
      child = spawn(command!, args, { env: { PATH: '/usr/bin:/bin' }, stdio: ['ignore', 'pipe', 'ignore'], cwd: '/' });
    } catch {
      resolve(false);
      return;
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.on('error', () => {
      clearTimeout(timer);
      resolve(false);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve(code === 0 && out.trim() === expected);
    });
  });
}

/**
 * Loads the spawner and finds out, once per process, how children can be isolated (a short probe
 * run of the wrapper). Concurrent first calls share one probe. Call before `launchChild`.
 */
export function prepareChildLauncher(): Promise<SecretIsolation> {
  if (prepared) return Promise.resolve(prepared.isolation);
  preparing ??= (async () => {
    const { spawn } = await import('node:child_process');
    const mode = readMode();
    let result: Prepared | undefined;
    const reap = process.platform === 'linux' ? await findReaper(spawn) : [];
    if (mode !== 'off' && process.platform === 'linux') {
      for (const candidate of candidatePrefixes(reap)) {
        if (await probe(spawn, candidate.prefix)) {
          result = {
            spawn,
            prefix: candidate.prefix,
            pdeathsig: reap,
            isolation: {
              mechanism: 'pid-namespace',
              userNamespace: candidate.userNamespace,
              mode,
              detail: `children run in their own PID namespace with a private /proc (${candidate.label}); they cannot read the host's environment`,
            },
          };
          break;
        }
      }
    }
    result ??= {
      spawn,
      prefix: undefined,
      pdeathsig: reap,
      isolation: { mechanism: 'none', userNamespace: false, mode, detail: noIsolationDetail(mode) },
    };
    prepared = result;
    return result;
  })();
  return preparing.then((p) => p.isolation);
}

function noIsolationDetail(mode: ChildIsolationMode): string {
  if (mode === 'off')
    return 'child isolation is off (TRELLIS_CHILD_ISOLATION=off): any child can read the host environment through /proc/$PPID/environ';
  const why =
    process.platform !== 'linux'
      ? `PID namespaces are Linux-only (this is ${process.platform})`
      : findSystemProgram('unshare') === undefined
        ? 'unshare(1) from util-linux is not installed'
        : 'unshare could not create a PID namespace here (user namespaces disabled, or a container without CAP_SYS_ADMIN)';
  return `children are NOT isolated: ${why}; any child can read the host environment through /proc/$PPID/environ. Keep secrets out of the host environment (pass them with assemble({ secrets })) or enable user namespaces (sysctl kernel.unprivileged_userns_clone=1 / user.max_user_namespaces)`;
}

/** What protects children from the host's secrets on this machine; runs the probe on first use. */
export function describeSecretIsolation(): Promise<SecretIsolation> {
  return prepareChildLauncher();
}

/**
 * The command line that runs `command args` isolated (the wrapper, then prlimit when a limit is
 * asked for, then the command), for spawners Trellis does not own (e.g. an MCP stdio transport).
 * Call `prepareChildLauncher` first; without isolation the command is returned as is, behind
 * `setpriv --pdeathsig KILL` where setpriv exists (the child dies with a host killed outright).
 */
export function isolatedCommandLine(options: Pick<LaunchChildOptions, 'command' | 'args' | 'maxMemoryMb' | 'maxCpuSeconds'>): {
  command: string;
  args: string[];
  isolated: boolean;
  limits: { memory: boolean; cpu: boolean };
} {
  if (!prepared) throw new Error('prepareChildLauncher() must be awaited before isolatedCommandLine()');
  if (prepared.isolation.mode === 'required' && prepared.prefix === undefined) {
    throw new IsolationUnavailableError(`TRELLIS_CHILD_ISOLATION=required, but ${prepared.isolation.detail}`);
  }
  const memory = options.maxMemoryMb !== undefined && PRLIMIT !== undefined;
  const cpu = options.maxCpuSeconds !== undefined && PRLIMIT !== undefined;
  let line = [options.command, ...(options.args ?? [])];
  if (memory || cpu) {
    const limits: string[] = [];
    if (memory) limits.push(`--as=${Math.floor(options.maxMemoryMb! * 1024 * 1024)}`);
    if (cpu) limits.push(`--cpu=${Math.max(1, Math.ceil(options.maxCpuSeconds!))}`);
    line = [PRLIMIT!, ...limits, '--', ...line];
  }
  if (prepared.prefix) line = [...prepared.prefix, ...line];
  else line = [...prepared.pdeathsig, ...line];
  const [command, ...args] = line;
  return { command: command!, args, isolated: prepared.prefix !== undefined, limits: { memory, cpu } };
}

/** What `launchChild` and `startChild` share: the argument checks and the full command line. */
function planLaunch(options: LaunchChildOptions): ReturnType<typeof isolatedCommandLine> {
  if (!prepared) throw new Error('prepareChildLauncher() must be awaited before launchChild()');
  // Node's own check, done here so the index names the caller's argument, not the wrapper's.
  (options.args ?? []).forEach((arg, index) => {
    if (arg.includes('\0'))
      throw new TypeError(`The argument 'args[${index}]' must be a string without null bytes. Received ${JSON.stringify(arg)}`);
  });
  // Behind a wrapper a missing program would only be the wrapper's exit status; find it first so
  // the caller gets ENOENT / EACCES as from a direct spawn.
  const command = findExecutable(options.command, options.env.PATH, options.cwd);
  return isolatedCommandLine({ ...options, command });
}

/** Tracks a started child's group for the exit safety net until its leader exits. */
function tracked<C extends StartedChild>(child: C, line: ReturnType<typeof isolatedCommandLine>): LaunchedChild<C> {
  const pid = child.pid;
  if (pid !== undefined) {
    trackGroup(pid);
    child.once('exit', () => untrackGroup(pid));
  }
  return { child, pgid: pid, isolated: line.isolated, limits: line.limits };
}

/**
 * The one way Trellis starts a child: no shell, its own process group, exactly the environment
 * given, resource limits through prlimit(1), and — where the machine allows — its own PID
 * namespace so it cannot read the host's secrets (see docs/security-model.md, "Secrets and child
 * processes"). Throws like `child_process.spawn` for arguments Node refuses (a NUL byte), and
 * `IsolationUnavailableError` under `TRELLIS_CHILD_ISOLATION=required` without isolation.
 */
export function launchChild(options: LaunchChildOptions): LaunchedChild {
  return spawnHere(options, planLaunch(options));
}

function spawnHere(options: LaunchChildOptions, line: ReturnType<typeof isolatedCommandLine>): LaunchedChild {
  const child = prepared!.spawn(line.command, line.args, {
    cwd: options.cwd,
    env: { ...options.env },
    detached: true,
    shell: false,
    stdio: ['pipe', 'pipe', 'pipe'],
    windowsHide: true,
  });
  return tracked(child, line);
}

/**
 * `launchChild` for a long-running host: when a spawn helper runs (`acquireSpawnHelper`), the
 * child is forked by that small process instead of this one, so starting it does not hold the
 * host's event loop; otherwise, or when the helper is gone before the request reached it, it is
 * spawned here. The same checks, wrapper, limits and tracking either way. Rejects where
 * `launchChild` throws; with the spawn's error (EAGAIN) where a direct spawn would emit `'error'`;
 * and when the helper is lost after the request left (it may have started the child, so it is not
 * started a second time here).
 */
export async function startChild(options: LaunchChildOptions): Promise<LaunchedChild<StartedChild>> {
  const line = planLaunch(options);
  if (helper?.usable) {
    try {
      // The helper's own working folder is `/`: the child's is resolved here, as a direct spawn would.
      const cwd = resolve(options.cwd ?? '.');
      return tracked(await helper.spawn(line.command, line.args, { cwd, env: { ...options.env } }), line);
    } catch (error) {
      if (!(error instanceof SpawnHelperUnavailable)) throw error;
    }
  }
  return spawnHere(options, line);
}

let helper: SpawnHelper | undefined;
let helperStarting: Promise<void> | undefined;
let helperUsers = 0;
const helperGone = new Set<(reason: string) => void>();

/**
 * Starts the spawn helper (one per process, shared) for a host that starts children for a long
 * time (`serve`, `run`, a live host). The returned function lets go of it; after the last user's
 * release it takes no more spawns and stops once the children started through it are gone.
 * `onGone` hears if the helper dies or stops answering (spawns then fall back to this process).
 */
export function acquireSpawnHelper(onGone?: (reason: string) => void): () => void {
  helperUsers += 1;
  if (onGone) helperGone.add(onGone);
  helperStarting ??= prepareChildLauncher().then(() => {
    helperStarting = undefined;
    if (helperUsers === 0 || helper !== undefined) return;
    try {
      helper = new SpawnHelper(prepared!.spawn, prepared!.pdeathsig, (reason) => {
        for (const listener of helperGone) listener(reason);
      });
    } catch {
      return; // No helper (the spawn was refused): children are spawned here, as before.
    }
    if (helper.pid !== undefined) trackGroup(helper.pid);
  });
  let released = false;
  return () => {
    if (released) return;
    released = true;
    helperUsers -= 1;
    if (onGone) helperGone.delete(onGone);
    if (helperUsers > 0 || helper === undefined) return;
    // Children other code started through it (an `assemble()` beside the live host) run on: the
    // helper stops once they are gone. Should the host exit first, the helper ends them with it.
    helper.retire();
    helper = undefined;
  };
}

/** Resolves when the spawn helper is ready (true), or when there is none or it failed (false). */
export async function spawnHelperReady(): Promise<boolean> {
  await helperStarting;
  return helper === undefined ? false : helper.ready;
}

function spawnError(code: 'ENOENT' | 'EACCES', command: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`spawn ${command} ${code}`);
  error.code = code;
  return error;
}

/** Resolves a command as execvp would: a name with a slash from `cwd`, a bare name on `PATH`. */
function findExecutable(command: string, path: string | undefined, cwd: string | undefined): string {
  const check = (candidate: string): 'ok' | 'ENOENT' | 'EACCES' => {
    try {
      if (!statSync(candidate).isFile()) return 'EACCES';
      accessSync(candidate, constants.X_OK);
      return 'ok';
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'EACCES' ? 'EACCES' : 'ENOENT';
    }
  };
  if (command.includes('/')) {
    const full = isAbsolute(command) ? command : resolve(cwd ?? process.cwd(), command);
    const verdict = check(full);
    if (verdict !== 'ok') throw spawnError(verdict, command);
    return full;
  }
  let denied = false;
  for (const dir of (path ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = resolve(cwd ?? process.cwd(), join(dir, command));
    const verdict = check(candidate);
    if (verdict === 'ok') return candidate;
    if (verdict === 'EACCES') denied = true;
  }
  throw spawnError(denied ? 'EACCES' : 'ENOENT', command);
}

/** prlimit(1), used for memory and CPU caps, when the machine has it. */
export const PRLIMIT_PATH: string | undefined = PRLIMIT;

export { killGroup, killTrackedGroups, trackGroup, untrackGroup };
