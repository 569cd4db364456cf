import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { isPathInside } from '@trellis/sdk/internal';

/** Where a plugin's `command` was found, or why it was not. */
export type ResolvedCommand = { readonly ok: true; readonly path: string } | { readonly ok: false; readonly message: string };

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Resolves a manifest's `[runtime] command` without a shell: a path with a slash is taken
 * relative to the plugin folder and must stay inside it after resolving symlinks (an absolute
 * path is used as written); a bare name is looked up on the child's `PATH`.
 */
export function resolveCommand(options: {
  pluginId: string;
  pluginDir: string;
  command: string;
  path: string | undefined;
}): ResolvedCommand {
  const { pluginId, pluginDir, command } = options;
  if (command.includes('\0')) return { ok: false, message: `plugin ${pluginId}: [runtime] command contains a NUL byte` };
  if (isAbsolute(command)) {
    return isExecutableFile(command)
      ? { ok: true, path: command }
      : {
          ok: false,
          message: `plugin ${pluginId}: [runtime] command ${command} is not an executable file; fix the path or its mode (chmod +x)`,
        };
  }
  if (command.includes('/')) {
    const candidate = resolve(pluginDir, command);
    let real: string;
    let realDir: string;
    try {
      real = realpathSync(candidate);
      realDir = realpathSync(pluginDir);
    } catch {
      return { ok: false, message: `plugin ${pluginId}: [runtime] command ${command} does not exist in ${pluginDir}` };
    }
    if (!isPathInside(realDir, real)) {
      return {
        ok: false,
        message: `plugin ${pluginId}: [runtime] command ${command} resolves to ${real}, outside the plugin folder ${realDir}; keep plugin programs inside their folder`,
      };
    }
    return isExecutableFile(real)
      ? { ok: true, path: real }
      : {
          ok: false,
          message: `plugin ${pluginId}: [runtime] command ${command} is not executable; run chmod +x on it or name an interpreter such as python3 and put the script in args`,
        };
  }
  for (const dir of (options.path ?? '').split(delimiter)) {
    if (dir === '' || !isAbsolute(dir)) continue;
    const candidate = join(dir, command);
    if (isExecutableFile(candidate)) return { ok: true, path: candidate };
  }
  return {
    ok: false,
    message: `plugin ${pluginId}: [runtime] command ${command} was not found on PATH; install it or give a path inside the plugin folder`,
  };
}
