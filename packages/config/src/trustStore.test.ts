import { mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadTrustStore, resolveWorkspaceTrust, saveTrustStore, trustStorePath } from './trustStore.ts';

let dir: string;
let configHome: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'trellis-trust-')));
  configHome = join(dir, 'home', '.config', 'trellis');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('the trust store', () => {
  it('is empty when missing, and written mode 600 in a folder made mode 700', () => {
    const path = trustStorePath(configHome);
    expect(loadTrustStore(path)).toEqual({ path, value: { version: 1, workspaces: [] }, errors: [] });
    saveTrustStore(path, { version: 1, workspaces: [{ path: '/srv/app', trusted_at: 't' }] });
    expect((statSync(path).mode & 0o777).toString(8)).toBe('600');
    expect((statSync(configHome).mode & 0o777).toString(8)).toBe('700');
    expect(loadTrustStore(path).value.workspaces).toEqual([{ path: '/srv/app', trusted_at: 't' }]);
  });

  it('matches by real path, also through a symlink and for folders below a trusted one', () => {
    const project = join(dir, 'project');
    mkdirSync(join(project, 'sub'), { recursive: true });
    symlinkSync(project, join(dir, 'link'));
    saveTrustStore(trustStorePath(configHome), { version: 1, workspaces: [{ path: project, trusted_at: '' }] });
    for (const folder of [project, join(project, 'sub'), join(dir, 'link'), join(dir, 'link', 'sub')]) {
      expect(resolveWorkspaceTrust({ workspace: folder, configHome })).toMatchObject({ trusted: true, by: project });
    }
    // A sibling whose name starts the same is not below it.
    mkdirSync(join(dir, 'project-evil'));
    expect(resolveWorkspaceTrust({ workspace: join(dir, 'project-evil'), configHome }).trusted).toBe(false);
  });

  it('trusts nothing from a broken file and says how to recover', () => {
    const path = trustStorePath(configHome);
    mkdirSync(configHome, { recursive: true });
    writeFileSync(path, '{"version":1,"workspaces":[{"path":"relative"}]}');
    const loaded = loadTrustStore(path);
    expect(loaded.value.workspaces).toEqual([]);
    expect(loaded.errors.map((e) => e.message)).toEqual([
      `${path}: workspaces[0].path must be an absolute path; nothing is trusted until it is fixed. Remove the file and trust your workspaces again with \`trellis trust DIR\``,
    ]);
    writeFileSync(path, 'not json');
    expect(loadTrustStore(path).errors.map((e) => e.code)).toEqual(['CONFIG_SCHEMA']);
    expect(resolveWorkspaceTrust({ workspace: dir, configHome }).trusted).toBe(false);
  });
});
