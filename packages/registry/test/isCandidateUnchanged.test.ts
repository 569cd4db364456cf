import { execFileSync } from 'node:child_process';
import { chmodSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { discoverCandidates, isCandidateUnchanged } from '../src/index.ts';
import type { ExternalCandidateFacts } from '../src/types.ts';
import { PROCESS_RUNTIME, fileRoot, makeTree, manifestText } from './helpers.ts';

function discovered(base: string): ExternalCandidateFacts {
  const [facts] = discoverCandidates({ roots: [fileRoot(join(base, 'plugins'))], bundled: [] }).candidates;
  if (facts === undefined || facts.bundled) throw new Error('no external candidate found');
  return facts;
}
const MANIFEST = manifestText({ id: 'alpha', runtime: PROCESS_RUNTIME, description: 'aaaa' });

describe('isCandidateUnchanged', () => {
  it('holds while nothing changed, and fails on each change admission would judge', () => {
    const base = makeTree({ 'plugins/alpha/plugin.toml': MANIFEST });
    const manifest = join(base, 'plugins/alpha/plugin.toml');
    expect(isCandidateUnchanged(discovered(base))).toBe(true);

    // Other bytes of the same size.
    let facts = discovered(base);
    writeFileSync(manifest, MANIFEST.replace('aaaa', 'bbbb'));
    expect(isCandidateUnchanged(facts)).toBe(false);

    // A mode on the way to the root.
    facts = discovered(base);
    chmodSync(join(base, 'plugins/alpha'), 0o777);
    expect(isCandidateUnchanged(facts)).toBe(false);
    chmodSync(join(base, 'plugins/alpha'), 0o755);
    expect(isCandidateUnchanged(facts)).toBe(true);

    // The manifest's own mode, and a second link to it.
    chmodSync(manifest, 0o666);
    expect(isCandidateUnchanged(facts)).toBe(false);
    chmodSync(manifest, 0o644);
    execFileSync('ln', [manifest, join(base, 'elsewhere.toml')]);
    expect(isCandidateUnchanged(facts)).toBe(false);
    rmSync(join(base, 'elsewhere.toml'));
    expect(isCandidateUnchanged(facts)).toBe(true);
  });

  it('fails, without blocking, when the manifest became a FIFO or is gone', () => {
    const base = makeTree({ 'plugins/alpha/plugin.toml': MANIFEST });
    const manifest = join(base, 'plugins/alpha/plugin.toml');
    const facts = discovered(base);
    renameSync(manifest, join(base, 'old.toml'));
    expect(isCandidateUnchanged(facts)).toBe(false);
    execFileSync('mkfifo', [manifest]);
    expect(isCandidateUnchanged(facts)).toBe(false);
  });
});
