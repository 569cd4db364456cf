import { ERROR_CODES } from '@trellis/sdk';
import { formatMode, isWorldWritable } from '@trellis/sdk/internal';
import type { Reason } from './Reason.ts';

/** The largest SKILL.md read, in bytes. */
export const MAX_SKILL_FILE_BYTES = 256 * 1024;

/** What admission looks at for one file or folder: plain `lstat`/`fstat` facts. */
export interface PathFacts {
  readonly path: string;
  readonly mode: number;
  readonly uid: number;
  readonly nlink: number;
  readonly size: number;
  /** `file`, `directory`, `symlink`, `fifo`, `socket`, `device`. */
  readonly type: 'file' | 'directory' | 'symlink' | 'fifo' | 'socket' | 'device';
}

const STICKY = 0o1000;

/**
 * Why a folder on the way from a skill to its root is unsafe, if it is: writable by every user
 * (a world-writable folder with the sticky bit is accepted only when root owns it, like `/tmp`),
 * or owned by someone other than the current user or root.
 */
export function folderProblems(facts: PathFacts, currentUid: number): Reason[] {
  const problems: Reason[] = [];
  if (isWorldWritable(facts.mode) && !((facts.mode & STICKY) !== 0 && facts.uid === 0)) {
    problems.push({
      code: ERROR_CODES.WORLD_WRITABLE,
      message: `${facts.path} is writable by every user (mode ${formatMode(facts.mode)}): anyone could change this skill; run \`chmod o-w ${facts.path}\``,
    });
  }
  problems.push(...ownerProblems(facts, currentUid));
  return problems;
}

/**
 * Why a SKILL.md or script file is unsafe, if it is: not a regular file, world-writable, or owned
 * by another user. `manifest` adds the SKILL.md-only rules: no hard links, at most 256 KiB.
 */
export function fileProblems(facts: PathFacts, currentUid: number, options: { readonly manifest: boolean }): Reason[] {
  if (facts.type !== 'file') {
    return [
      {
        code: ERROR_CODES.UNSAFE_FILE,
        message: `${facts.path} is a ${describeType(facts.type)}, not a regular file; replace it with a regular file`,
      },
    ];
  }
  const problems: Reason[] = [];
  if (options.manifest && facts.nlink > 1) {
    problems.push({
      code: ERROR_CODES.UNSAFE_FILE,
      message: `${facts.path} has ${facts.nlink} hard links; copy it so it is a file of its own`,
    });
  }
  if (options.manifest && facts.size > MAX_SKILL_FILE_BYTES) {
    problems.push({
      code: ERROR_CODES.UNSAFE_FILE,
      message: `${facts.path} is ${facts.size} bytes, more than the ${MAX_SKILL_FILE_BYTES}-byte limit for SKILL.md; move long material into other files of the skill folder`,
    });
  }
  if (isWorldWritable(facts.mode)) {
    problems.push({
      code: ERROR_CODES.WORLD_WRITABLE,
      message: `${facts.path} is writable by every user (mode ${formatMode(facts.mode)}); run \`chmod o-w ${facts.path}\``,
    });
  }
  problems.push(...ownerProblems(facts, currentUid));
  return problems;
}

function ownerProblems(facts: PathFacts, currentUid: number): Reason[] {
  if (facts.uid === currentUid || facts.uid === 0) return [];
  return [
    {
      code: ERROR_CODES.UNSAFE_OWNER,
      message: `${facts.path} is owned by uid ${facts.uid}, not by the current user (uid ${currentUid}) or root; \`chown\` it to yourself if you trust it`,
    },
  ];
}

function describeType(type: PathFacts['type']): string {
  switch (type) {
    case 'fifo':
      return 'FIFO (named pipe)';
    case 'symlink':
      return 'symbolic link';
    default:
      return type;
  }
}
