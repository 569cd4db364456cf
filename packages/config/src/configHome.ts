import { isAbsolute, join } from 'node:path';

/** Inputs of {@link resolveConfigHome}. */
export interface ConfigHomeOptions {
  /** Read for `XDG_CONFIG_HOME`. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The user's home folder, for `~/.config`. */
  readonly home: string;
  /** Overrides `env.XDG_CONFIG_HOME`. */
  readonly xdgConfigHome?: string | undefined;
}

/**
 * The user's Trellis folder: `$XDG_CONFIG_HOME/trellis`, or `~/.config/trellis` when
 * `XDG_CONFIG_HOME` is unset, empty or relative (the XDG spec says a relative value is invalid).
 * It holds the user config (`runtime.toml`), the trust store, user plugins and user skills.
 */
export function resolveConfigHome(options: ConfigHomeOptions): string {
  const xdg = options.xdgConfigHome ?? options.env.XDG_CONFIG_HOME;
  const base = xdg !== undefined && xdg !== '' && isAbsolute(xdg) ? xdg : join(options.home, '.config');
  return join(base, 'trellis');
}
