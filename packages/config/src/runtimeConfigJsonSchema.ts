import { z } from 'zod';
import { RuntimeConfigSchema } from './RuntimeConfigSchema.ts';

/** Hover text for editors, by key path (`*` = any key of an open table). Kept here, not in the zod schema, so importing the package costs nothing for it. */
const DESCRIPTIONS: Readonly<Record<string, string>> = {
  plugins: 'Which plugins run.',
  'plugins.profile': 'The set of bundled plugins that are on: minimal, messaging (+ telegram) or full (+ mcp). Default "minimal".',
  'plugins.allow': 'Plugin ids to enable beyond the profile; also admits external plugins with side effects. Default [].',
  'plugins.deny': 'Plugin ids to disable even when the profile includes them (required plugins stay on). Default [].',
  'plugins.paths': "Extra folders searched for external plugins, first of all. Relative to the config file's folder. Default [].",
  'plugins.entries': 'Per-plugin switches and settings, one table per plugin id.',
  'plugins.entries.*': 'One plugin: its switch, its config and overrides of its [runtime].',
  'plugins.entries.*.enabled': 'true or false turns the plugin on or off regardless of profile, allow and deny.',
  'plugins.entries.*.config': "Free-form settings for the plugin, validated by the plugin's own schema.",
  'plugins.entries.*.restart_on_crash': 'Out-of-process plugins: restart the child after it crashes.',
  'plugins.entries.*.max_restarts': 'Out-of-process plugins: stop restarting after this many crashes (0–100).',
  'plugins.entries.*.restart_delay_seconds': 'Out-of-process plugins: seconds to wait before a restart (0–3600).',
  'plugins.entries.*.health_check_interval_seconds':
    'Out-of-process plugins: seconds between health checks; 0 = none, otherwise at least 1.',
  'plugins.entries.*.timeout_seconds': "Out-of-process plugins: overrides the manifest's [runtime] timeout_seconds.",
  'plugins.entries.*.pass_env':
    'Out-of-process plugins: host environment variables granted to the plugin; only those its manifest declares (requires_env, env_from_host) reach it. Default [].',
  'plugins.entries.*.handshake_timeout_seconds':
    "Process plugins: seconds to answer initialize and get_tools; overrides the manifest's [runtime] handshake_timeout_seconds.",
  'plugins.entries.*.health_check_timeout_seconds':
    "Process plugins: seconds to answer one health_check; overrides the manifest's [runtime] health_check_timeout_seconds.",
  runtime: 'How tools run.',
  'runtime.tool_timeout_seconds': "Upper bound on every tool call's deadline, in seconds. Default 120.",
  'runtime.max_retries': 'Extra attempts for retryable failures of idempotent tools (0–10). Default 0.',
  'runtime.retry_backoff_ms': 'First retry delay in milliseconds; doubles each attempt, with jitter. Default 200.',
  'runtime.max_output_bytes': 'Largest serialized tool result, in bytes. Default 1048576.',
  'runtime.max_concurrency': 'Calls in flight per plugin; more wait in a queue. Default 8.',
  'runtime.capabilities': 'Capabilities granted to tools; "*" grants every standard one. Default ["*"].',
  'runtime.audit_log': 'JSON-lines audit log path, relative to the config file\'s folder; empty = off. Default "".',
  'runtime.debug_log': 'Debug log path (plugin stderr, lifecycle), relative to the config file\'s folder; empty = off. Default "".',
  'runtime.policy': 'Tool-level policy by glob on `<plugin-id>.<tool>` names.',
  'runtime.policy.allow': 'Tools that may be called at all. Default ["*"].',
  'runtime.policy.deny': 'Tools that are refused, even when allowed. Default [].',
  'runtime.policy.ask': 'Tools that need approval before every call. Default [].',
  'runtime.tools': "Per-plugin tool settings: [runtime.tools.<key>] is a patch deep-merged over that plugin's defaults.",
  'runtime.tools.*': "A patch over one plugin's settings, validated by the plugin; see docs/plugins/<plugin-id>.md.",
  'runtime.config_poll_interval':
    'serve/run: seconds between polls of the config files and plugin roots where native file events do not arrive; 0 = native events only. Default 0.',
  'runtime.reload_queue_timeout':
    "serve/run: seconds a call arriving during a reload's swap waits before failing with RELOAD_TIMEOUT. Default 5.",
  serve: '`trellis serve`: Trellis as an MCP server (see docs/serve.md).',
  'serve.token':
    'Bearer token `trellis serve --http` requires; TRELLIS_SERVE_TOKEN wins; empty = generated at start and printed to stderr. Else at least 16 characters from letters, digits and -._~+/ (= at the end). Default "".',
  'serve.tool_names':
    'How tool names appear to MCP clients: "qualified" (core-fs__read_file) or "short" (the own name when unique). Default "qualified".',
  'serve.allowed_origins': 'Browser Origin hostnames allowed besides loopback. Default [].',
};

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function describeTree(node: JsonObject, path: string): void {
  const properties = node.properties;
  if (isObject(properties)) {
    for (const [key, child] of Object.entries(properties)) {
      if (!isObject(child)) continue;
      const childPath = path === '' ? key : `${path}.${key}`;
      const text = DESCRIPTIONS[childPath];
      if (text !== undefined) child.description = text;
      describeTree(child, childPath);
    }
  }
  if (isObject(node.additionalProperties) && path !== '') {
    const childPath = `${path}.*`;
    const text = DESCRIPTIONS[childPath];
    if (text !== undefined) node.additionalProperties.description = text;
    describeTree(node.additionalProperties, childPath);
  }
}

/**
 * The JSON Schema of `runtime.toml` as written (input side: every key optional where a default
 * exists), with a description on every key for editor hover and completion (for example with
 * Taplo / Even Better TOML). Built on each call; nothing is computed at import.
 */
export function runtimeConfigJsonSchema(): JsonObject {
  const schema = z.toJSONSchema(RuntimeConfigSchema, { io: 'input', unrepresentable: 'any' }) as JsonObject;
  describeTree(schema, '');
  return {
    ...schema,
    $id: 'https://trellis.dev/schema/runtime.schema.json',
    title: 'Trellis runtime.toml',
    description: 'The Trellis runtime configuration: which plugins run and how tools run. See docs/config-reference.md.',
  };
}
