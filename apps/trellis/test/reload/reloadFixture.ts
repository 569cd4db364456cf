import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LiveHost, ReloadResult } from '../../src/reload/startLiveHost.ts';

const PLUGIN_SCRIPT = join(import.meta.dirname, '..', 'fixtures', 'reload-plugin.mjs');

/** A temp folder with a home, a plugin root and a runtime.toml, for one live-host test. */
export interface ReloadSandbox {
  readonly dir: string;
  readonly home: string;
  readonly root: string;
  readonly config: string;
  readonly env: Record<string, string | undefined>;
  /**
   * Writes a process plugin `<folder>` (default `<root>/<id>`) running reload-plugin.mjs with `tag`.
   * With `logStarts`, it runs through a shell that counts each spawn in `spawns.log` before node
   * boots (a child stopped at once still counts), and each child appends its `start` id to
   * `starts.log` (see {@link ReloadSandbox.spawns}, {@link ReloadSandbox.starts}).
   */
  writePlugin(
    id: string,
    options?: { tag?: string; reportedTools?: boolean; logStarts?: boolean; version?: string; folder?: string },
  ): void;
  /** How many children a `logStarts` plugin's folder has spawned. */
  spawns(id: string, folder?: string): number;
  /** The `start` ids (also in `where`'s answer) of the children a `logStarts` plugin has started, in order. */
  starts(id: string): string[];
  removePlugin(id: string): void;
  /** Replaces runtime.toml the way editors do: write a temp file, rename it over. */
  writeConfig(text: string): void;
  cleanup(): void;
}

export function createReloadSandbox(prefix: string): ReloadSandbox {
  const dir = mkdtempSync(join(tmpdir(), `trellis-${prefix}-`));
  const home = join(dir, 'home');
  const root = join(dir, 'plugins');
  mkdirSync(home);
  mkdirSync(root);
  const config = join(dir, 'runtime.toml');
  let writes = 0;
  return {
    dir,
    home,
    root,
    config,
    env: { PATH: process.env.PATH, HOME: home, XDG_STATE_HOME: join(dir, 'state'), XDG_CONFIG_HOME: join(home, '.config') },
    writePlugin(id, options = {}) {
      const folder = options.folder ?? join(root, id);
      mkdirSync(folder, { recursive: true });
      cpSync(PLUGIN_SCRIPT, join(folder, 'reload-plugin.mjs'));
      const logStarts = options.logStarts === true;
      if (logStarts) writeFileSync(join(folder, 'log-spawn.sh'), 'echo spawned >> spawns.log\nexec node "$@"\n');
      const command = logStarts ? 'sh' : 'node';
      const args = JSON.stringify([
        ...(logStarts ? ['log-spawn.sh'] : []),
        'reload-plugin.mjs',
        options.tag ?? `${dir}/${id}`,
        options.reportedTools === true ? 'reported' : 'manifest',
        ...(logStarts ? ['log-starts'] : []),
      ]);
      const tools =
        options.reportedTools === true
          ? ''
          : `\n[[tools]]\nname = "where"\ndescription = "Says which child answered."\ninput_schema = { type = "object", properties = { ms = { type = "number" } } }\n`;
      writeFileSync(
        join(folder, 'plugin.toml'),
        `schema_version = 1\nid = "${id}"\nname = "${id}"\nversion = "${options.version ?? '1.0.0'}"\nkind = "toolset"\ndescription = "Reload test plugin."\n\n` +
          `[runtime]\ntype = "process"\ncommand = "${command}"\nargs = ${args}\ntimeout_seconds = 60\n${tools}`,
      );
    },
    spawns(id, folder = join(root, id)) {
      const log = join(folder, 'spawns.log');
      return existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0;
    },
    starts(id) {
      const log = join(root, id, 'starts.log');
      return existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
    },
    removePlugin(id) {
      rmSync(join(root, id), { recursive: true, force: true });
    },
    writeConfig(text) {
      writes += 1;
      const temp = join(dir, `.runtime.toml.${writes}.tmp`);
      writeFileSync(temp, text);
      renameSync(temp, config);
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Resolves with the first reload result that `accept` takes. */
export function nextReload(host: LiveHost, accept: (result: ReloadResult) => boolean = () => true): Promise<ReloadResult> {
  return new Promise((resolve) => {
    const off = host.onReload((result) => {
      if (!accept(result)) return;
      off();
      resolve(result);
    });
  });
}

/** Polls `check` every 50 ms until it is true or `limitMs` passes. */
export async function waitFor(check: () => boolean, limitMs = 20_000): Promise<boolean> {
  const end = Date.now() + limitMs;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return check();
}
