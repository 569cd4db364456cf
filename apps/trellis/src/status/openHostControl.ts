import type { Assembly } from '../assemble.ts';
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
 * (default: the assembly's status with pid, command and start time). A host with live reload
 * passes its own provider (with `generation` and the last reload's result). Never throws: without
 * a socket the host serves on, after a warning on stderr.
 */
export async function openHostControl(options: {
  readonly assembly: Assembly;
  readonly command: 'serve' | 'run';
  readonly warn: (message: string) => void;
  readonly status?: () => HostStatus;
}): Promise<HostControl> {
  const { assembly } = options;
  const server = await startControlServer({
    dir: resolveControlDir(assembly.env),
    status: options.status ?? assemblyStatusProvider(assembly, { command: options.command, version: TRELLIS_VERSION }),
    warn: options.warn,
  }).catch((error: unknown) => {
    options.warn(`no control socket (trellis status will not see this host): ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  });
  return { path: server?.path, close: () => server?.close() ?? Promise.resolve() };
}
