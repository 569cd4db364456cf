import { chmodSync, closeSync, fsyncSync, mkdirSync, openSync, realpathSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ERROR_CODES } from '@trellis/sdk';
import { isPathInside } from '@trellis/sdk/internal';
import { makeProblem } from './ConfigProblem.ts';
import type { ConfigProblem } from './ConfigProblem.ts';
import { readConfigFile } from './readConfigFile.ts';

/** The trust store's file name inside the user's Trellis folder (`$XDG_CONFIG_HOME/trellis`). */
export const TRUST_STORE_FILE = 'trusted-workspaces.json';

/** One trusted folder: its real path and when it was trusted (ISO 8601). */
export interface TrustedWorkspace {
  readonly path: string;
  readonly trusted_at: string;
}

/** The trust store: the folders the user trusted with `trellis trust`, by real path. */
export interface TrustStore {
  readonly version: 1;
  readonly workspaces: readonly TrustedWorkspace[];
}

/** A loaded trust store, or why it could not be used (then nothing counts as trusted). */
export interface TrustStoreLoad {
  readonly path: string;
  readonly value: TrustStore;
  readonly errors: ConfigProblem[];
}

/** Whether one workspace is trusted, and why. */
export interface WorkspaceTrust {
  /** The workspace as given, absolute. */
  readonly workspace: string;
  /** Its real path: what trust is recorded and matched by. */
  readonly real: string;
  readonly trusted: boolean;
  /** The trusted folder that covers it (itself or a parent), when trusted. */
  readonly by?: string;
  /** The trust store consulted. */
  readonly storePath: string;
  /** Problems with the trust store (`CONFIG_UNSAFE`, a broken file): they make the workspace untrusted. */
  readonly errors: ConfigProblem[];
}

const EMPTY: TrustStore = Object.freeze({ version: 1, workspaces: Object.freeze([]) });

/** `<configHome>/trusted-workspaces.json`. */
export function trustStorePath(configHome: string): string {
  return join(configHome, TRUST_STORE_FILE);
}

/** The real path of a folder, or its absolute path when it does not resolve (it does not exist yet). */
export function realWorkspacePath(folder: string): string {
  try {
    return realpathSync(folder);
  } catch {
    return resolve(folder);
  }
}

/**
 * Loads the trust store, admitted like every config file (`CONFIG_UNSAFE` when another user could
 * change it). A missing file is an empty store. A broken or unsafe one trusts nothing and says why.
 */
export function loadTrustStore(path: string, options: { readonly uid?: number } = {}): TrustStoreLoad {
  const read = readConfigFile(path, { uid: options.uid, pointAt: `remove it; \`trellis trust DIR\` writes a new one` });
  if (read.problem !== undefined) {
    if (read.problem.code === ERROR_CODES.CONFIG_NOT_FOUND) return { path, value: EMPTY, errors: [] };
    return { path, value: EMPTY, errors: [read.problem] };
  }
  const broken = (what: string): TrustStoreLoad => ({
    path,
    value: EMPTY,
    errors: [
      makeProblem({
        code: ERROR_CODES.CONFIG_SCHEMA,
        file: path,
        text: `${what}; nothing is trusted until it is fixed. Remove the file and trust your workspaces again with \`trellis trust DIR\``,
      }),
    ],
  });
  let data: unknown;
  try {
    data = JSON.parse(new TextDecoder().decode(read.bytes));
  } catch (error) {
    return broken(`not valid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return broken('not a JSON object');
  const record = data as Record<string, unknown>;
  if (record.version !== 1) return broken(`version must be 1, got ${JSON.stringify(record.version)}`);
  if (!Array.isArray(record.workspaces)) return broken('"workspaces" must be an array');
  const workspaces: TrustedWorkspace[] = [];
  for (const [i, item] of record.workspaces.entries()) {
    const entry = item as Record<string, unknown> | null;
    if (entry === null || typeof entry !== 'object' || typeof entry.path !== 'string' || !entry.path.startsWith('/')) {
      return broken(`workspaces[${i}].path must be an absolute path`);
    }
    workspaces.push({ path: entry.path, trusted_at: typeof entry.trusted_at === 'string' ? entry.trusted_at : '' });
  }
  return { path, value: { version: 1, workspaces }, errors: [] };
}

/** The trusted folder that covers `real` (the folder itself or one of its parents), if any. */
export function findTrust(store: TrustStore, real: string): TrustedWorkspace | undefined {
  return store.workspaces.find((w) => isPathInside(w.path, real));
}

/** Whether `workspace` is trusted according to the store at `<configHome>/trusted-workspaces.json`. */
export function resolveWorkspaceTrust(options: {
  readonly workspace: string;
  readonly configHome: string;
  readonly uid?: number;
}): WorkspaceTrust {
  const workspace = resolve(options.workspace);
  const real = realWorkspacePath(workspace);
  const loaded = loadTrustStore(trustStorePath(options.configHome), options.uid === undefined ? {} : { uid: options.uid });
  const by = loaded.errors.length > 0 ? undefined : findTrust(loaded.value, real);
  return {
    workspace,
    real,
    trusted: by !== undefined,
    ...(by !== undefined ? { by: by.path } : {}),
    storePath: loaded.path,
    errors: loaded.errors,
  };
}

/**
 * Writes the trust store atomically (a temp file in the same folder, then rename), mode 600, in a
 * folder created mode 700 when missing.
 */
export function saveTrustStore(path: string, store: TrustStore): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${process.pid}.tmp`;
  const fd = openSync(temp, 'wx', 0o600);
  try {
    writeSync(fd, `${JSON.stringify({ version: 1, workspaces: store.workspaces }, null, 2)}\n`);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(temp, { force: true });
    throw error;
  }
  closeSync(fd);
  chmodSync(temp, 0o600);
  renameSync(temp, path);
}
