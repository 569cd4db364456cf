import { statSync, type Stats } from 'node:fs';
import { resolve } from 'node:path';
import type { TrustStore } from '@trellis/config';
import { findTrust, loadTrustStore, realWorkspacePath, resolveConfigHome, saveTrustStore, trustStorePath } from '@trellis/config/lookup';
import { ConfigError, EXIT, FailedError, UsageError } from '../errors.ts';
import { toJson, type CommandIO } from '../io.ts';
import { resolveHostPaths } from '../loadConfig.ts';
import type { CommandLine } from '../parseCommandLine.ts';

/**
 * `trellis trust [DIR]`, `trellis trust --list`, `trellis trust --revoke DIR`: the folders whose
 * `.trellis` config, plugins and skills the user accepts. Stored by real path in
 * `$XDG_CONFIG_HOME/trellis/trusted-workspaces.json` (mode 600, admitted like every config file).
 * Trusting a folder trusts the folders below it.
 */
export function trust(line: CommandLine, io: CommandIO, env: Readonly<Record<string, string | undefined>>): number {
  const { workspace, home } = resolveHostPaths({ workspace: line.flags.workspace, env });
  const storePath = trustStorePath(resolveConfigHome({ env, home }));
  const loaded = loadTrustStore(storePath);
  if (loaded.errors.length > 0) throw new ConfigError(loaded.errors);
  const store = loaded.value;
  const { list, revoke } = line.options;
  const dirArg = line.args[0];
  if (list === true && (revoke !== undefined || dirArg !== undefined))
    throw new UsageError('`trellis trust --list` takes no folder and no --revoke');
  if (revoke !== undefined && dirArg !== undefined)
    throw new UsageError('`trellis trust --revoke DIR` takes its folder after --revoke only');

  if (list === true) {
    if (line.flags.json) io.out(toJson({ store: storePath, workspaces: store.workspaces }));
    else if (store.workspaces.length === 0) io.out(`No trusted folders (${storePath}). Trust one with \`trellis trust DIR\`.\n`);
    else {
      io.out(`Trusted folders (${storePath}):\n`);
      for (const w of store.workspaces) io.out(`  ${w.path}${w.trusted_at ? `  (since ${w.trusted_at})` : ''}\n`);
    }
    return EXIT.OK;
  }

  if (revoke !== undefined) {
    const real = realWorkspacePath(resolve(revoke));
    const kept = store.workspaces.filter((w) => w.path !== real);
    if (kept.length === store.workspaces.length) {
      const parent = findTrust(store, real);
      const why =
        parent !== undefined
          ? `; it is trusted through ${parent.path}: run \`trellis trust --revoke ${parent.path}\` to revoke that`
          : '; `trellis trust --list` shows what is trusted';
      throw new FailedError(`${real} is not in the trust store ${storePath}${why}`);
    }
    saveTrustStore(storePath, { version: 1, workspaces: kept });
    const still = findTrust({ version: 1, workspaces: kept }, real);
    if (line.flags.json) io.out(toJson({ revoked: real, store: storePath, stillTrustedBy: still?.path ?? null }));
    else io.out(`Revoked trust in ${real}.${still !== undefined ? ` It is still trusted through ${still.path}.` : ''}\n`);
    return EXIT.OK;
  }

  const target = resolve(dirArg ?? workspace);
  let stats: Stats | undefined;
  try {
    stats = statSync(target);
  } catch {
    stats = undefined;
  }
  if (stats === undefined || !stats.isDirectory())
    throw new UsageError(`cannot trust ${target}: it is not a folder; name an existing workspace folder`);
  const real = realWorkspacePath(target);
  // Trust covers the folders below: a folder others can add to (like /tmp) would trust what they put there.
  if ((stats.mode & 0o002) !== 0) {
    throw new UsageError(
      `cannot trust ${real}: every user can create folders in it (mode ${(stats.mode & 0o7777).toString(8)}), and trust covers the folders below; trust a folder of your own inside it instead`,
    );
  }
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  if (stats.uid !== uid && stats.uid !== 0) {
    throw new UsageError(
      `cannot trust ${real}: it belongs to uid ${stats.uid}, not to you (uid ${uid}) or root, who decides what it holds; copy it to a folder of your own or \`chown -R ${uid} ${real}\``,
    );
  }
  const covered = findTrust(store, real);
  if (covered !== undefined) {
    if (line.flags.json) io.out(toJson({ trusted: real, store: storePath, already: true, by: covered.path }));
    else io.out(`${real} is already trusted${covered.path === real ? '' : ` (through ${covered.path})`}.\n`);
    return EXIT.OK;
  }
  const next: TrustStore = { version: 1, workspaces: [...store.workspaces, { path: real, trusted_at: new Date().toISOString() }] };
  saveTrustStore(storePath, next);
  if (line.flags.json) io.out(toJson({ trusted: real, store: storePath, already: false }));
  else {
    io.out(`Trusted ${real}.\n`);
    io.out(
      `Its .trellis/runtime.toml now applies, its .trellis/plugins may run, and its skills count as trusted. Undo with \`trellis trust --revoke ${real}\`.\n`,
    );
  }
  return EXIT.OK;
}
