import type { RuntimeConfig } from '@trellis/config';
import type { CommandLineSwitches } from '@trellis/registry';

/**
 * Applies `--allow/--enable/--disable` as the last, highest config layer of one run: allowed ids
 * join `[plugins] allow` (which also admits side-effecting external plugins), enabled/disabled ids
 * set `[plugins.entries.<id>] enabled`, over whatever runtime.toml said.
 */
export function applyCommandLineSwitches(config: RuntimeConfig, switches: CommandLineSwitches): RuntimeConfig {
  const allow = switches.allow ?? [];
  const enable = switches.enable ?? [];
  const disable = switches.disable ?? [];
  if (allow.length === 0 && enable.length === 0 && disable.length === 0) return config;
  const entries = { ...config.plugins.entries };
  for (const id of enable) entries[id] = { ...entries[id], enabled: true };
  for (const id of disable) entries[id] = { ...entries[id], enabled: false };
  return {
    ...config,
    plugins: {
      ...config.plugins,
      allow: [...config.plugins.allow, ...allow.filter((id) => !config.plugins.allow.includes(id))],
      // An id allowed for this run is no longer denied by the file: the command line is the higher layer.
      deny: config.plugins.deny.filter((id) => !allow.includes(id) && !enable.includes(id)),
      entries,
    },
  };
}
