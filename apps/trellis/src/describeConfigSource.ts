/** "the built-in default" or "<path> (from --config)". */
export function describeConfigSource(source: string, path: string | undefined): string {
  const from: Record<string, string> = {
    flag: 'from --config',
    env: 'from TRELLIS_CONFIG',
    workspace: 'the workspace config',
    user: 'the user config',
  };
  if (source === 'embedded' || path === undefined) return 'the built-in default (config/runtime.toml, embedded at build time)';
  return `${path} (${from[source] ?? source})`;
}
