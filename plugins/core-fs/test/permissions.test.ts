import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runProbeAsNobody } from '@trellis/test-support';
import { makeFsFixture } from './fsFixture.ts';
import type { FsFixture } from './fsFixture.ts';

// We run as root, which ignores permission bits; a real refusal needs another user. The probe runs
// the tools as `nobody` (setpriv) from a self-contained bundle in a folder any user can read (the
// checkout itself may sit in a private home folder) and prints each outcome as JSON.
const ENTRY = resolve(__dirname, '../src/index.ts');

let fx: FsFixture;
beforeEach(() => {
  fx = makeFsFixture();
  mkdirSync(join(fx.ws, 'private'), { recursive: true });
  writeFileSync(join(fx.ws, 'private', 'x.txt'), 'hidden');
  writeFileSync(join(fx.ws, 'locked.txt'), 'locked');
  writeFileSync(join(fx.ws, 'open.txt'), 'open');
  chmodSync(fx.base, 0o755);
  chmodSync(fx.ws, 0o755);
  chmodSync(join(fx.ws, 'private'), 0o700);
  chmodSync(join(fx.ws, 'locked.txt'), 0o600);
  chmodSync(join(fx.ws, 'open.txt'), 0o644);
});
afterEach(() => fx.remove());

describe('permissions (as another user)', () => {
  it('reports unreadable files and folders as NOT_ALLOWED, naming the path', () => {
    const child = runProbeAsNobody(
      `import { readTool, FsSettingsSchema } from ${JSON.stringify(ENTRY)};
const ctx = { signal: new AbortController().signal, logger: { debug() {}, info() {}, warn() {}, error() {} }, config: FsSettingsSchema.parse({}),
  workspace: { root: ${JSON.stringify(fx.ws)} }, env: {}, callId: 'p', tool: 'core-fs.read', host: {} };
const results = [];
for (const path of ['open.txt', 'locked.txt', 'private/x.txt']) {
  try { results.push({ path, ok: (await readTool.run({ path }, ctx)).content }); }
  catch (error) { results.push({ path, code: error.code, message: error.message }); }
}
process.stdout.write(JSON.stringify(results));
`,
      __dirname,
      { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/tmp' } },
    );
    expect(child.status, child.stderr).toBe(0);
    expect(JSON.parse(fx.normalize(child.stdout))).toEqual([
      { path: 'open.txt', ok: 'open' },
      { path: 'locked.txt', code: 'NOT_ALLOWED', message: 'path: "locked.txt" cannot be read: permission denied.' },
      {
        path: 'private/x.txt',
        code: 'NOT_ALLOWED',
        message: 'path: "private/x.txt" cannot be reached: permission denied on "<tmp>/ws/private".',
      },
    ]);
  });
});
