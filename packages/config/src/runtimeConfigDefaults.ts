import type { RuntimeConfig } from './RuntimeConfigSchema.ts';

/**
 * A fresh copy of the schema defaults, i.e. `RuntimeConfigSchema.parse({})`, written out as a
 * literal so that producing it costs no schema pass (a test keeps the two equal). Also what the
 * stock `config/runtime.toml` parses to.
 */
export function runtimeConfigDefaults(): RuntimeConfig {
  return {
    plugins: { profile: 'minimal', allow: [], deny: [], paths: [], entries: {} },
    runtime: {
      tool_timeout_seconds: 120,
      max_retries: 0,
      retry_backoff_ms: 200,
      max_output_bytes: 1_048_576,
      max_concurrency: 8,
      capabilities: ['*'],
      audit_log: '',
      debug_log: '',
      policy: { allow: ['*'], deny: [], ask: [] },
      tools: {},
      config_poll_interval: 0,
      reload_queue_timeout: 5,
    },
    serve: { token: '', tool_names: 'qualified', allowed_origins: [] },
  };
}

/**
 * True when every key in `tree` also exists in `defaults` with an equal value, so that
 * validating `tree` would give exactly `defaults`. This is the fast path for the stock config
 * (every key set to its default): no schema pass is needed for it.
 */
export function onlyDefaults(tree: unknown, defaults: unknown): boolean {
  if (Array.isArray(defaults)) {
    return Array.isArray(tree) && tree.length === defaults.length && tree.every((item, i) => onlyDefaults(item, defaults[i]));
  }
  if (defaults !== null && typeof defaults === 'object') {
    if (tree === null || typeof tree !== 'object' || Array.isArray(tree) || tree instanceof Date) return false;
    return Object.keys(tree).every(
      (key) =>
        Object.hasOwn(defaults, key) && onlyDefaults((tree as Record<string, unknown>)[key], (defaults as Record<string, unknown>)[key]),
    );
  }
  return tree === defaults;
}
