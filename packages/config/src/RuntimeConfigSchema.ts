import { z } from 'zod';
import { PROFILE_NAMES } from '@trellis/sdk';
import { HealthCheckIntervalSchema, PluginIdSchema } from '@trellis/sdk/schema';

const PluginIdListSchema = z.array(PluginIdSchema).default([]);
const GlobListSchema = z.array(z.string().min(1));

/** `[plugins.entries.<id>]`: a per-plugin switch, its config, and overrides of its `[runtime]`. */
export const PluginEntrySchema = z.object({
  /** true/false switches the plugin on or off regardless of profile, allow and deny. */
  enabled: z.boolean().optional(),
  /** Free-form config for the plugin, validated by the plugin's own schema. */
  config: z.record(z.string(), z.unknown()).optional(),
  /** Out-of-process plugins: restart the child after it crashes. */
  restart_on_crash: z.boolean().optional(),
  /** Out-of-process plugins: stop restarting after this many crashes. */
  max_restarts: z.number().int().min(0).max(100).optional(),
  /** Out-of-process plugins: seconds to wait before a restart. */
  restart_delay_seconds: z.number().min(0).max(3600).optional(),
  /** Out-of-process plugins: seconds between `health_check` requests; 0 = none. */
  health_check_interval_seconds: HealthCheckIntervalSchema.optional(),
  /** Out-of-process plugins: overrides the manifest's `[runtime] timeout_seconds`. */
  timeout_seconds: z.number().positive().max(86_400).optional(),
  /** Out-of-process plugins: host variables granted to the plugin; only those its manifest declares (requires_env, env_from_host) reach it. */
  pass_env: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')).optional(),
  /** Process plugins: overrides the manifest's `[runtime] handshake_timeout_seconds`. */
  handshake_timeout_seconds: z.number().positive().max(86_400).optional(),
  /** Process plugins: overrides the manifest's `[runtime] health_check_timeout_seconds`. */
  health_check_timeout_seconds: z.number().positive().max(86_400).optional(),
});

/** `[plugins]`: which plugins run. */
export const PluginsConfigSchema = z.object({
  /** The set of bundled plugins that are on (`config/profiles.toml`). */
  profile: z.enum(PROFILE_NAMES).default('minimal'),
  /** Enable beyond the profile; also admits side-effecting external plugins. */
  allow: PluginIdListSchema,
  /** Disable even when the profile includes them; required plugins stay on (with a warning). */
  deny: PluginIdListSchema,
  /**
   * Explicit discovery roots (root 0). Relative paths resolve against the config file's folder
   * (the workspace for the embedded default); after loading, every entry is absolute.
   */
  paths: z.array(z.string().min(1)).default([]),
  /** `[plugins.entries.<id>]`, keyed by plugin id. */
  entries: z.record(PluginIdSchema, PluginEntrySchema).default({}),
});

/** `[runtime.policy]`: tool-level policy by glob on fully qualified tool names. */
export const ToolPolicySchema = z.object({
  allow: GlobListSchema.default(['*']),
  deny: GlobListSchema.default([]),
  /** Tools that need approval before every call, in addition to those whose contract says `ask`. */
  ask: GlobListSchema.default([]),
});

/** `[runtime]`: how tools run. */
export const RuntimeSectionSchema = z.object({
  /** Upper bound on every tool call's deadline, in seconds. */
  tool_timeout_seconds: z.number().positive().max(86_400).default(120),
  /** Extra attempts for retryable failures of idempotent tools, unless a tool's contract says otherwise. */
  max_retries: z.number().int().min(0).max(10).default(0),
  /** First retry delay in milliseconds; doubles each attempt, with jitter. */
  retry_backoff_ms: z.number().int().min(0).max(60_000).default(200),
  /** Largest serialized tool result, in bytes. */
  max_output_bytes: z.number().int().positive().max(1_073_741_824).default(1_048_576),
  /** Calls in flight per plugin; more wait in a queue under the same deadline. */
  max_concurrency: z.number().int().positive().max(1024).default(8),
  /** Capabilities granted to tools; `*` grants every standard capability. */
  capabilities: z.array(z.string().min(1)).default(['*']),
  /**
   * JSON-lines audit log path (call id, tool, argument keys, outcome code, duration); empty = off.
   * Relative to the config file's folder; absolute after loading.
   */
  audit_log: z.string().default(''),
  /** Debug log path (plugin stderr, lifecycle); empty = off. Relative to the config file's folder; absolute after loading. */
  debug_log: z.string().default(''),
  /** `[runtime.policy]`. */
  policy: ToolPolicySchema.default({ allow: ['*'], deny: [], ask: [] }),
  /** `[runtime.tools.<key>]`: patches over each plugin's default settings, validated by that plugin. */
  tools: z.record(z.string(), z.record(z.string(), z.unknown())).default({}),
  /**
   * Long-running hosts (`serve`, `run`): seconds between polls of the config files and plugin roots
   * when native file events do not arrive (network filesystems, some containers); 0 = native events only.
   */
  config_poll_interval: z.number().min(0).max(3600).default(0),
  /** Long-running hosts: seconds a call that arrives during a reload's swap waits before it fails with RELOAD_TIMEOUT. */
  reload_queue_timeout: z.number().positive().max(600).default(5),
});

/**
 * What is wrong with a bearer token for `trellis serve --http`, or undefined when it is usable: at
 * least 16 characters, all from RFC 6750's token set (letters, digits, `-._~+/`, `=` at the end).
 * A space, a newline or a non-ASCII letter would be accepted here and then never match what a
 * client can send in an `Authorization` header, so they are refused up front.
 */
export function bearerTokenProblem(token: string): string | undefined {
  if (token.length < 16) return 'must be at least 16 characters; e.g. a value from `openssl rand -hex 24`';
  if (!/^[A-Za-z0-9\-._~+/]+=*$/.test(token))
    return 'may hold only letters, digits and - . _ ~ + / (and = at the end), as bearer tokens do; a space, a line break or another character cannot be sent in an Authorization header. E.g. a value from `openssl rand -hex 24`';
  return undefined;
}

/** `[serve]`: `trellis serve`, Trellis as an MCP server. */
export const ServeSectionSchema = z.object({
  /** The bearer token `trellis serve --http` requires (TRELLIS_SERVE_TOKEN wins); empty = one is generated at start. */
  token: z
    .string()
    .superRefine((value, context) => {
      const problem = value === '' ? undefined : bearerTokenProblem(value);
      if (problem !== undefined) context.addIssue({ code: 'custom', message: `must be empty or a usable token: it ${problem}` });
    })
    .default(''),
  /** How tool names appear to MCP clients: `qualified` (`core-fs__read_file`) or `short` (the tool's own name when unique). */
  tool_names: z.enum(['qualified', 'short']).default('qualified'),
  /** Browser origins (hostnames) allowed besides loopback, e.g. ["app.example.com"]. */
  allowed_origins: z.array(z.string().min(1)).default([]),
});

/** The whole of `runtime.toml`. */
export const RuntimeConfigSchema = z.object({
  plugins: PluginsConfigSchema.default(() => PluginsConfigSchema.parse({})),
  runtime: RuntimeSectionSchema.default(() => RuntimeSectionSchema.parse({})),
  serve: ServeSectionSchema.default(() => ServeSectionSchema.parse({})),
});

/**
 * A loaded, validated `runtime.toml` with defaults applied, `${VAR}` references expanded, and
 * `plugins.paths`, `runtime.audit_log` and `runtime.debug_log` made absolute.
 */
export type RuntimeConfig = z.infer<typeof RuntimeConfigSchema>;
/** `[plugins]`. */
export type PluginsConfig = z.infer<typeof PluginsConfigSchema>;
/** `[plugins.entries.<id>]`. */
export type PluginEntry = z.infer<typeof PluginEntrySchema>;
/** `[runtime]`. */
export type RuntimeSection = z.infer<typeof RuntimeSectionSchema>;
/** `[serve]`. */
export type ServeSection = z.infer<typeof ServeSectionSchema>;
/** `[runtime.policy]`. */
export type ToolPolicy = z.infer<typeof ToolPolicySchema>;
