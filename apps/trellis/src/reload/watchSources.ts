import { existsSync, lstatSync, statSync, watch as watchPath, type FSWatcher as PathWatcher } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { IGNORED_FOLDER_NAMES, MANIFEST_FILE_NAME, MAX_PLUGIN_DEPTH } from '@trellis/registry';
import type { FSWatcher } from 'chokidar';

/** What a live host watches: the config files in use and the plugin discovery roots. */
export interface WatchedSources {
  /** Absolute paths of config files (each layer in use); their folders are watched, so a rename-over counts. */
  readonly configFiles: readonly string[];
  /** Absolute paths of plugin discovery roots; every folder discovery walks, and the `plugin.toml` in it, count. */
  readonly pluginRoots: readonly string[];
}

/** Options of {@link watchSources}. */
export interface WatchSourcesOptions {
  /** Called once per burst of changes, `debounceMs` after the last one, with the time of the first. */
  readonly onChange: (change: { readonly firstEventAt: number; readonly paths: readonly string[] }) => void;
  readonly onError?: (error: Error) => void;
  /** Quiet time that ends a burst (editors write, rename and chmod in quick succession). Default 150 ms. */
  readonly debounceMs?: number;
  /** Poll every this many seconds instead of native events; 0 = native events. */
  readonly pollIntervalSeconds?: number;
}

/** A running watch; `update` follows a new set of sources (after a reload changed the layers or roots). */
export interface SourceWatch {
  /** Resolves once the initial scan is done and events are being delivered. */
  readonly ready: Promise<void>;
  update(sources: WatchedSources): void;
  close(): Promise<void>;
}

/**
 * Watches config files and plugin roots and reports debounced bursts of changes.
 *
 * Config files, with native events: `node:fs.watch` on each file's folder, filtered by name, so an
 * editor's write-to-temp-and-rename is seen like any write, and on the file itself, for what only
 * its own watch hears (a mode, an owner, a second name: the kernel does not tell the folder of a
 * file's link count). A rename-over replaces the file, so its own watch is set again after every
 * event. chokidar would serve too, but it lists and stats the whole folder on every event there:
 * about 4 ms of the host's thread per save, against next to nothing (docs/reload.md).
 *
 * Plugin roots, and everything when polling: chokidar. Roots are watched two levels deep (the
 * root's plugin folders and their `plugin.toml`), never a plugin's own tree (its `node_modules`).
 */
export async function watchSources(sources: WatchedSources, options: WatchSourcesOptions): Promise<SourceWatch> {
  const { watch } = await import('chokidar');
  const debounceMs = options.debounceMs ?? 150;
  const pollSeconds = options.pollIntervalSeconds ?? 0;
  let configFiles = new Set(sources.configFiles);
  let roots = new Set(sources.pluginRoots);
  let pending: string[] = [];
  let firstEventAt = 0;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  // Whether a path is one discovery reads, under any root (roots may nest: a path counts when it
  // counts for one of them, whatever their order).
  const relevant = (path: string): boolean => {
    if (configFiles.has(path)) return true;
    for (const root of roots) if (path === root || (path.startsWith(`${root}/`) && walkedBelow(root, path))) return true;
    return false;
  };
  const noteEvent = (path: string): void => {
    if (closed || !relevant(path)) return;
    if (pending.length === 0) firstEventAt = performance.now();
    pending.push(path);
    clearTimeout(timer);
    timer = setTimeout(flush, debounceMs);
  };
  const flush = (): void => {
    const paths = [...new Set(pending)];
    pending = [];
    followConfigFiles();
    if (paths.length > 0 && !closed) options.onChange({ firstEventAt, paths });
  };

  // Only folders that exist: chokidar stops delivering events when asked to watch a missing path.
  // A folder created later is watched from the next reload on (SIGHUP or any other change).
  const polling = pollSeconds > 0;
  const targetsOf = (): Set<string> =>
    new Set([...(polling ? [...configFiles].map((file) => dirname(file)) : []), ...roots].filter((path) => existsSync(path)));
  let targets = targetsOf();
  const watcher: FSWatcher = watch([...targets], {
    ignoreInitial: true,
    persistent: false,
    // Discovery finds manifests up to MAX_PLUGIN_DEPTH folders below a root; `ignored` keeps the
    // watch out of what it does not walk (a plugin's own tree, node_modules, *.disabled).
    depth: MAX_PLUGIN_DEPTH,
    usePolling: pollSeconds > 0,
    ...(pollSeconds > 0 ? { interval: pollSeconds * 1000, binaryInterval: pollSeconds * 1000 } : {}),
    ignorePermissionErrors: true,
    // A config file's folder is watched only for that file; a root only as far as discovery walks.
    ignored: (path, stats) => {
      if (targets.has(path) || configFiles.has(path)) return false;
      if (stats?.isFile() === true && basename(path) !== MANIFEST_FILE_NAME) return true;
      return !relevant(path);
    },
  });
  for (const event of ['add', 'change', 'unlink', 'addDir', 'unlinkDir'] as const) watcher.on(event, (path: string) => noteEvent(path));
  // chokidar reports a change only when a file's content (its mtime) changed, but admission also
  // judges modes, owners and link counts: a plugin folder made world-writable, a manifest given to
  // another user or hard-linked elsewhere must be rejected without waiting for the next edit. The
  // raw events carry those (inotify IN_ATTRIB; a polled stat whose mode, owner or ctime changed).
  watcher.on('raw', (_event: string, path: unknown, details: unknown) => {
    if (typeof path !== 'string' || path === '') return;
    const watched = (details as { watchedPath?: unknown } | undefined)?.watchedPath;
    if (typeof watched !== 'string') return noteEvent(resolve(path)); // polling: the path itself
    // Native: `path` names an entry of the watched folder, or the watched path itself: its own
    // attributes (a root has no watched parent to report them) or its link count (the kernel tells
    // only the file's own watch that it gained a name elsewhere).
    noteEvent(resolve(watched, path));
    if (path === basename(watched)) noteEvent(resolve(watched));
  });
  watcher.on('error', (error) => options.onError?.(error instanceof Error ? error : new Error(String(error))));
  // chokidar never says `ready` for an empty list (nothing exists yet: no config file, no root).
  const ready = targets.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => watcher.once('ready', () => resolve()));

  // Native events for config files (see above): a watch per folder and per file, by path, with
  // what the path named when it was set (a watch follows its inode, not its path).
  const configWatches = new Map<string, { readonly watcher: PathWatcher; readonly identity: string }>();
  const identityOf = (path: string): string | null => {
    try {
      const stat = statSync(path, { bigint: true });
      return `${stat.dev}:${stat.ino}`;
    } catch {
      return null;
    }
  };
  const unwatchConfig = (path: string): void => {
    configWatches.get(path)?.watcher.close();
    configWatches.delete(path);
  };
  const watchConfig = (path: string, onEvent: (name: string | null) => void): void => {
    unwatchConfig(path);
    if (closed) return;
    const identity = identityOf(path);
    if (identity === null) return; // missing: its folder's watch, or the next reload, sees it come back
    let watcher: PathWatcher;
    try {
      watcher = watchPath(path, { persistent: false }, (_event, name) => onEvent(typeof name === 'string' ? name : null));
    } catch (error) {
      // Gone since, or not watchable: no permission, the kernel's watch limit. Said, as chokidar's errors are.
      const code = (error as { code?: unknown }).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') options.onError?.(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    watcher.on('error', (error) => {
      if (configWatches.get(path)?.watcher === watcher) unwatchConfig(path);
      options.onError?.(error);
    });
    configWatches.set(path, { watcher, identity });
  };
  const watchConfigFile = (file: string): void =>
    watchConfig(file, () => {
      noteEvent(file);
      watchConfigFile(file); // a rename-over left this watch on the old file
    });
  const watchConfigFolder = (folder: string): void =>
    watchConfig(folder, (name) => {
      // The folder itself renamed or removed (reported under its own name, or none): every config
      // file in it changed, and its watches, which follow the old folder, are set again by path.
      const itself = name === null || name === basename(folder);
      for (const file of configFiles) {
        if (dirname(file) !== folder || (!itself && basename(file) !== name)) continue;
        noteEvent(file);
        watchConfigFile(file);
      }
      if (itself) watchConfigFolder(folder);
    });
  // Sets the watches the sources need, and sets again any whose path now names another file or
  // folder (renamed away and recreated). Run at the start, after every burst and on update().
  const followConfigFiles = (): void => {
    const wanted = new Set<string>();
    if (!polling) for (const file of configFiles) wanted.add(file).add(dirname(file));
    for (const path of [...configWatches.keys()]) if (!wanted.has(path)) unwatchConfig(path);
    if (polling) return;
    const current = (path: string): boolean => {
      const watch = configWatches.get(path);
      return watch !== undefined && watch.identity === identityOf(path);
    };
    for (const file of configFiles) {
      if (!current(dirname(file))) watchConfigFolder(dirname(file));
      if (!current(file)) watchConfigFile(file);
    }
  };
  followConfigFiles();

  return {
    ready,
    update(next) {
      const before = targets;
      configFiles = new Set(next.configFiles);
      roots = new Set(next.pluginRoots);
      const after = (targets = targetsOf());
      const added = [...after].filter((path) => !before.has(path));
      const removed = [...before].filter((path) => !after.has(path));
      if (removed.length > 0) watcher.unwatch(removed);
      if (added.length > 0) watcher.add(added);
      followConfigFiles();
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      for (const path of [...configWatches.keys()]) unwatchConfig(path);
      await watcher.close();
    },
  };
}

const IGNORED_FOLDERS: ReadonlySet<string> = new Set(IGNORED_FOLDER_NAMES);
const uid = typeof process.getuid === 'function' ? process.getuid() : null;

/**
 * Whether `path` (below `root`) is something discovery's walk reads (see `walkPluginRoot` in
 * `@trellis/registry`): a folder at most MAX_PLUGIN_DEPTH levels down that it enters, or a
 * `plugin.toml` in one, whatever happens to it (created, removed, renamed, its mode or owner
 * changed). Not a folder named `node_modules`, `.git` or `*.disabled`, nor anything below one, and
 * nothing inside a plugin folder but its manifest: the walk does not enter a folder whose
 * `plugin.toml` is a regular file of yours or root's, so what a plugin writes there reloads nothing.
 */
function walkedBelow(root: string, path: string): boolean {
  const segments = path.slice(root.length + 1).split('/');
  const last = segments.length - 1;
  const manifest = segments[last] === MANIFEST_FILE_NAME;
  // Folders below the root: every segment but a manifest's own name.
  const folders = manifest ? last : segments.length;
  if (folders > MAX_PLUGIN_DEPTH) return false;
  for (let i = 0; i < folders; i += 1) {
    const name = segments[i]!;
    if (IGNORED_FOLDERS.has(name) || name.endsWith('.disabled')) return false;
  }
  // Inside a plugin folder (the root itself may be one), only that folder's manifest counts.
  let dir = root;
  for (let i = 0; i <= last; i += 1) {
    if (isPluginFolder(dir)) return manifest && i === last;
    if (i < last) dir = `${dir}/${segments[i]!}`;
  }
  return true;
}

/** A folder the walk does not enter: its `plugin.toml` is a regular file of yours or root's. */
function isPluginFolder(dir: string): boolean {
  try {
    const stat = lstatSync(`${dir}/${MANIFEST_FILE_NAME}`);
    return stat.isFile() && (uid === null || stat.uid === uid || stat.uid === 0);
  } catch {
    return false; // not there, not a folder (ENOTDIR), not searchable: the walk enters it or cannot
  }
}
