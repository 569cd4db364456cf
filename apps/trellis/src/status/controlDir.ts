import { chmodSync, lstatSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

/**
 * The folder of running hosts' control sockets: `$XDG_RUNTIME_DIR/trellis` (per user, on tmpfs,
 * emptied at logout), else `$XDG_STATE_HOME/trellis/hosts`, else `~/.local/state/trellis/hosts`
 * (beside the MCP pin store).
 */
export function resolveControlDir(env: Readonly<Record<string, string | undefined>>, home?: string): string {
  const runtimeDir = env.XDG_RUNTIME_DIR;
  if (runtimeDir !== undefined && isAbsolute(runtimeDir)) return join(runtimeDir, 'trellis');
  const state = env.XDG_STATE_HOME;
  if (state !== undefined && isAbsolute(state)) return join(state, 'trellis', 'hosts');
  const base = home ?? env.HOME ?? homedir();
  return join(base, '.local', 'state', 'trellis', 'hosts');
}

/** Why a control folder cannot be used, or undefined. */
export function controlDirProblem(dir: string): string | undefined {
  let stat;
  try {
    stat = lstatSync(dir);
  } catch (error) {
    return `${dir} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
  }
  if (stat.isSymbolicLink()) return `${dir} is a symlink; remove it (Trellis keeps its control sockets in a real folder)`;
  if (!stat.isDirectory()) return `${dir} is not a folder; remove it`;
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) return `${dir} belongs to uid ${stat.uid}, not to you (uid ${uid}); remove it`;
  return undefined;
}

/**
 * Creates the control folder (mode 700) if needed and checks it is a real folder of this user;
 * a folder of ours that others can enter is narrowed to 700. Returns the problem, or undefined.
 */
export function ensureControlDir(dir: string): string | undefined {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    return `cannot create ${dir} (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
  }
  const problem = controlDirProblem(dir);
  if (problem !== undefined) return problem;
  // Only this user may reach the sockets: the folder's mode is the access control (Node has no SO_PEERCRED).
  if ((lstatSync(dir).mode & 0o077) !== 0) chmodSync(dir, 0o700);
  return undefined;
}
