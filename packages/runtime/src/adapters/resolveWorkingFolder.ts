import { realpathSync, statSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';

/** Where an external plugin's child runs, or why it cannot. */
export type WorkingFolder =
  | { readonly ok: true; readonly path: string }
  | { readonly ok: false; readonly code: 'PATH_ESCAPE' | 'PLUGIN_LOAD_FAILED'; readonly message: string };

/**
 * Resolves `[runtime] cwd` of a process or script plugin: relative to the plugin folder (the
 * default, "."), or `${WORKSPACE}` / `${WORKSPACE}/sub` for the host's workspace. The real path
 * (symlinks followed) must be a folder inside the plugin folder or the workspace: PATH_ESCAPE
 * otherwise, as admission says for the other `[runtime]` paths.
 */
export function resolveWorkingFolder(options: {
  readonly pluginId: string;
  readonly pluginDir: string;
  readonly cwd: string | undefined;
  readonly workspace: string | undefined;
}): WorkingFolder {
  const { pluginId, pluginDir, cwd } = options;
  if (cwd === undefined || cwd === '.') return { ok: true, path: pluginDir };
  const inWorkspace = /^\$\{WORKSPACE\}(\/|$)/.exec(cwd);
  if (inWorkspace && options.workspace === undefined) {
    return {
      ok: false,
      code: 'PLUGIN_LOAD_FAILED',
      message: `plugin ${pluginId}: [runtime] cwd "${cwd}" names the workspace, but this host gave the plugin none`,
    };
  }
  const base = inWorkspace ? options.workspace! : pluginDir;
  const rest = inWorkspace ? cwd.slice(inWorkspace[0].length) : cwd;
  const where = inWorkspace ? `the workspace ${base}` : `the plugin folder ${pluginDir}`;
  const escape = (detail: string): WorkingFolder => ({
    ok: false,
    code: 'PATH_ESCAPE',
    message: `plugin ${pluginId}: [runtime] cwd "${cwd}" ${detail}; use a folder inside the plugin folder, or \${WORKSPACE} or \${WORKSPACE}/sub for the workspace`,
  });
  if (isAbsolute(rest)) return escape('is an absolute path');
  let baseReal: string;
  let target: string;
  try {
    baseReal = realpathSync(base);
    target = realpathSync(resolve(baseReal, rest === '' ? '.' : rest));
  } catch {
    return {
      ok: false,
      code: 'PLUGIN_LOAD_FAILED',
      message: `plugin ${pluginId}: [runtime] cwd "${cwd}" does not exist in ${where}; create the folder or fix plugin.toml`,
    };
  }
  const inside = relative(baseReal, target);
  if (inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside)) return escape(`leaves ${where} (it resolves to ${target})`);
  if (!statSync(target).isDirectory())
    return { ok: false, code: 'PLUGIN_LOAD_FAILED', message: `plugin ${pluginId}: [runtime] cwd "${cwd}" is not a folder (${target})` };
  return { ok: true, path: target };
}
