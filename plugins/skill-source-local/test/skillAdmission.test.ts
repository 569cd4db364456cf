import { describe, expect, it } from 'vitest';
import { fileProblems, folderProblems, type PathFacts } from '../src/skillAdmission.ts';

const folder = (mode: number, uid = 1000): PathFacts => ({
  path: '/r/s',
  mode: 0o40000 | mode,
  uid,
  nlink: 2,
  size: 4096,
  type: 'directory',
});
const file = (over: Partial<PathFacts> = {}): PathFacts => ({
  path: '/r/s/SKILL.md',
  mode: 0o100644,
  uid: 1000,
  nlink: 1,
  size: 10,
  type: 'file',
  ...over,
});

describe('folderProblems', () => {
  it('accepts private folders of the user or root', () => {
    expect(folderProblems(folder(0o755), 1000)).toEqual([]);
    expect(folderProblems(folder(0o755, 0), 1000)).toEqual([]);
  });

  it('accepts a world-writable folder only when it is sticky and root-owned', () => {
    expect(folderProblems(folder(0o1777, 0), 1000)).toEqual([]);
    expect(folderProblems(folder(0o1777, 1000), 1000)).toEqual([
      {
        code: 'WORLD_WRITABLE',
        message: '/r/s is writable by every user (mode 1777): anyone could change this skill; run `chmod o-w /r/s`',
      },
    ]);
    expect(folderProblems(folder(0o777, 0), 1000).map((p) => p.code)).toEqual(['WORLD_WRITABLE']);
  });

  it('refuses a folder owned by another user', () => {
    expect(folderProblems(folder(0o755, 65534), 1000)).toEqual([
      {
        code: 'UNSAFE_OWNER',
        message: '/r/s is owned by uid 65534, not by the current user (uid 1000) or root; `chown` it to yourself if you trust it',
      },
    ]);
  });
});

describe('fileProblems', () => {
  it('accepts a private regular file', () => {
    expect(fileProblems(file(), 1000, { manifest: true })).toEqual([]);
  });

  it('refuses FIFOs, hard links, oversize manifests, o+w and foreign owners', () => {
    expect(fileProblems(file({ type: 'fifo' }), 1000, { manifest: true })).toEqual([
      { code: 'UNSAFE_FILE', message: '/r/s/SKILL.md is a FIFO (named pipe), not a regular file; replace it with a regular file' },
    ]);
    expect(fileProblems(file({ nlink: 2, size: 300_000, mode: 0o100666, uid: 42 }), 1000, { manifest: true }).map((p) => p.code)).toEqual([
      'UNSAFE_FILE',
      'UNSAFE_FILE',
      'WORLD_WRITABLE',
      'UNSAFE_OWNER',
    ]);
    // Hard links and size only matter for SKILL.md, not for scripts.
    expect(fileProblems(file({ nlink: 2, size: 300_000 }), 1000, { manifest: false })).toEqual([]);
  });
});
