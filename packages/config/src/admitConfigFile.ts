import { ERROR_CODES } from '@trellis/sdk';
import { formatMode, isUnsafeFolderMode, isWorldWritable } from '@trellis/sdk/internal';
import { makeProblem } from './ConfigProblem.ts';
import type { ConfigProblem } from './ConfigProblem.ts';

/** The few `stat` fields admission reads. */
export interface ConfigStatFacts {
  /** Full `st_mode`. */
  readonly mode: number;
  readonly uid: number;
  readonly nlink: number;
}

/** What {@link admitConfigFile} decides from: plain facts, gathered by the reader. */
export interface ConfigFileFacts {
  /** The path as the user gave it (shown in messages). */
  readonly file: string;
  /** Its real path (symlinks resolved); the folders below are this path's ancestors. */
  readonly real: string;
  /** `fstat` of the opened file: what is actually read. */
  readonly stat: ConfigStatFacts;
  /**
   * `lstat` of every folder on the real path, from the file's own folder up to `/`; `null` when a
   * folder could not be examined.
   */
  readonly folders: ReadonlyArray<{ readonly path: string; readonly stat: ConfigStatFacts | null }>;
  /** The current user's uid. */
  readonly uid: number;
}

/**
 * Admits a config file (any layer, and the trust store) with the rules plugin manifests follow:
 * a single-linked file; not writable by every user; owned by you or root; its own folder owned by
 * you or root and not writable by every user; no folder above it writable by every user (unless
 * sticky and owned by root, like `/tmp`). Pure. Returns the one `CONFIG_UNSAFE` problem naming
 * every finding and the `chmod`/`chown` that fixes each, or `undefined` when the file is safe.
 */
export function admitConfigFile(facts: ConfigFileFacts): ConfigProblem | undefined {
  const findings: string[] = [];
  const fixes: string[] = [];
  const { stat, uid } = facts;
  const yours = (owner: number): boolean => owner === uid || owner === 0;
  if (stat.nlink > 1) {
    findings.push(`it has ${stat.nlink} hard links, so it can be changed through another path`);
    fixes.push(`cp ${facts.real} ${facts.real}.new && mv ${facts.real}.new ${facts.real}`);
  }
  if (isWorldWritable(stat.mode)) {
    findings.push(`any user can write it (mode ${formatMode(stat.mode)})`);
    fixes.push(`chmod o-w ${facts.real}`);
  }
  if (!yours(stat.uid)) {
    findings.push(`it belongs to uid ${stat.uid}, not to you (uid ${uid}) or root`);
    fixes.push(`chown ${uid} ${facts.real}`);
  }
  facts.folders.forEach((folder, index) => {
    const own = index === 0;
    const label = own ? 'its folder' : 'the folder';
    if (folder.stat === null) {
      if (own) findings.push(`${label} ${folder.path} cannot be examined`);
      return;
    }
    if (isUnsafeFolderMode(folder.stat.mode, folder.stat.uid)) {
      const sticky = (folder.stat.mode & 0o1000) !== 0 ? ', sticky but not owned by root' : '';
      findings.push(`any user can change ${label} ${folder.path} (mode ${formatMode(folder.stat.mode)}${sticky})`);
      fixes.push(`chmod o-w ${folder.path}`);
    }
    if (own && !yours(folder.stat.uid)) {
      findings.push(`${label} ${folder.path} belongs to uid ${folder.stat.uid}, not to you (uid ${uid}) or root`);
      fixes.push(`chown ${uid} ${folder.path}`);
    }
  });
  if (findings.length === 0) return undefined;
  const target = facts.real === facts.file ? '' : ` (resolves to ${facts.real})`;
  return makeProblem({
    code: ERROR_CODES.CONFIG_UNSAFE,
    file: facts.file,
    text: `not loaded: someone else could change this file${target}: ${findings.join('; ')}. ${fixes.length > 0 ? `Fix it with \`${fixes.join(' && ')}\`` : 'Fix the permissions of the folder'}, or remove the file`,
  });
}
