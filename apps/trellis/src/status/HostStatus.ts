import type { Assembly } from '../assemble.ts';
import type { PluginStatus } from './pluginStatus.ts';

/** What a running host (`trellis serve`, `trellis run`) answers on its control socket: plain JSON. */
export interface HostStatus {
  readonly pid: number;
  /** The command that runs the host: `serve` or `run`. */
  readonly command: string;
  /** ISO 8601 time the host started. */
  readonly startedAt: string;
  readonly version: string;
  readonly workspace: string;
  /** The top config file in use, when there is one. */
  readonly configPath?: string;
  readonly profile: string;
  /** The generation serving now (live reload; absent in a host without it). */
  readonly generation?: number;
  /** The last reload's result (live reload; absent in a host without it). */
  readonly lastReload?: unknown;
  readonly plugins: readonly PluginStatus[];
}

/** The status provider of a host built once: its assembly's `status()` plus who and when. */
export function assemblyStatusProvider(
  assembly: Assembly,
  host: { readonly command: string; readonly version: string; readonly startedAt?: Date },
): () => HostStatus {
  const startedAt = (host.startedAt ?? new Date()).toISOString();
  return () => {
    const status = assembly.status();
    return {
      pid: process.pid,
      command: host.command,
      startedAt,
      version: host.version,
      workspace: assembly.workspace,
      ...(assembly.configSource.path !== undefined ? { configPath: assembly.configSource.path } : {}),
      profile: status.profile,
      plugins: status.plugins,
    };
  };
}
