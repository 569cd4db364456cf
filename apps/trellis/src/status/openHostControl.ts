import type { Assembly } from '../assemble.ts';
import type { LiveHost } from '../reload/startLiveHost.ts';
import { TRELLIS_VERSION } from '../bundled.gen.ts';
import { resolveControlDir } from './controlDir.ts';
import { assemblyStatusProvider, type HostStatus } from './HostStatus.ts';
import { startControlServer } from './startControlServer.ts';

/** What a long-running command holds while it serves: close it on the way out. */
export interface HostControl {
  /** The socket's path, when it could be opened. */
  readonly path: string | undefined;
  close(): Promise<void>;
}

/**
 * Opens the control socket of a `serve`/`run` host, answering `trellis status` with `status()`
 * (the assembly's status with pid, command and start time; with `live`, also the generation
 * serving and the last reload's result). Never throws: without
 * a socket the host serves on, after a warning on stderr.
 */
export async function openHostControl(options: {
  readonly assembly: Assembly;
  readonly command: 'serve' | 'run';
  readonly warn: (message: string) => void;
  /** A live host's own view: its generation and last reload join the answer. */
  readonly live?: Pick<LiveHost, 'status'>;
}): Promise<HostControl> {
  const { assembly, live } = options;
  const base = assemblyStatusProvider(assembly, { command: options.command, version: TRELLIS_VERSION });
  const status: () => HostStatus =
    live === undefined
      ? base
      : () => {
          const { generation, lastReload } = live.status();
          return { ...base(), generation, ...(lastReload !== undefined ? { lastReload } : {}) };
        };
  const server = await startControlServer({
    dir: resolveControlDir(assembly.env),
    status,
    warn: options.warn,
  }).catch((error: unknown) => {
    options.warn(`no control socket (trellis status will not see this host): ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  });
  return { path: server?.path, close: () => server?.close() ?? Promise.resolve() };
}
