import { readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';

// Tests find the processes Trellis starts through the host's /proc: the pids a plugin reports
// about itself are its own PID namespace's (every child runs with a private /proc).

/** The one-letter state of `pid` from /proc (`R`, `S`, `Z`…), undefined when it is gone. */
function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const end = stat.lastIndexOf(')');
    return stat.slice(end + 2, end + 3);
  } catch {
    return undefined;
  }
}

/** True while `pid` runs: a zombie (or a dead process) counts as gone, it runs nothing. */
export function isAlive(pid: number): boolean {
  const state = processState(pid);
  return state !== undefined && state !== 'Z' && state !== 'X';
}

/** Live processes other than this one for which `match` holds, by ascending pid. */
export function livePids(match: (pid: number) => boolean): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    try {
      if (match(pid) && isAlive(pid)) found.push(pid);
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found.sort((a, b) => a - b);
}

/** Live processes whose command line mentions `needle` (a path or tag unique to one test). */
export function pidsMentioning(needle: string): number[] {
  return livePids((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle));
}

/** Live processes whose working folder is `dir` (a plugin runs in its own folder). */
export function pidsWorkingIn(dir: string): number[] {
  const real = realpathSync(dir);
  return livePids((pid) => readlinkSync(`/proc/${pid}/cwd`) === real);
}

/** The live children of `pid`'s main thread whose command line mentions `needle`. */
export function childPidsMentioning(pid: number, needle: string): number[] {
  let children: number[];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
  return children.filter((child) => {
    try {
      return isAlive(child) && readFileSync(`/proc/${child}/cmdline`, 'utf8').includes(needle);
    } catch {
      return false;
    }
  });
}
