import { z } from 'zod';
import { PLUGIN_KINDS, PROFILE_NAMES, SANDBOX_PROFILES } from './kinds.ts';
import { PLUGIN_ID_PATTERN, TOOL_NAME_PATTERN } from './manifestLimits.ts';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const PluginIdSchema = z
  .string()
  .regex(PLUGIN_ID_PATTERN, 'must be 1–64 lowercase letters, digits or dashes, starting and ending with a letter or digit');

const JsonObjectSchema = z.record(z.string(), z.unknown());

/**
 * Seconds between health checks: 0 turns them off, anything else is at least 1 s. A plugin (or a
 * config) asking for a check every 0.1 ms would have the host spend a good part of a core on it.
 */
export const HealthCheckIntervalSchema = z
  .number()
  .min(0)
  .max(86_400)
  .refine((seconds) => seconds === 0 || seconds >= 1, 'must be 0 (no health checks) or at least 1 second');

const RuntimeCommonShape = {
  timeout_seconds: z.number().positive().max(86_400).default(30),
  env: z.record(z.string().regex(ENV_NAME, 'must be an environment variable name'), z.string()).default({}),
};

/** `[runtime] type = "process"`: a persistent child speaking newline-delimited JSON. */
export const ProcessRuntimeSchema = z.strictObject({
  type: z.literal('process'),
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  /**
   * The child's working folder: a path relative to the plugin folder (default "."), or
   * "${WORKSPACE}" / "${WORKSPACE}/sub" for the host's workspace. Must stay inside either.
   */
  cwd: z.string().min(1).max(4096).optional(),
  ...RuntimeCommonShape,
  restart_on_crash: z.boolean().default(true),
  max_restarts: z.number().int().min(0).max(100).default(3),
  restart_delay_seconds: z.number().min(0).max(3600).default(1),
  health_check_interval_seconds: HealthCheckIntervalSchema.default(0),
  max_memory_mb: z.number().int().positive().optional(),
  /** Seconds the child has to answer `initialize` and `get_tools`; default `timeout_seconds`. */
  handshake_timeout_seconds: z.number().positive().max(86_400).optional(),
  /** Seconds the child has to answer one `health_check`; default `timeout_seconds`. */
  health_check_timeout_seconds: z.number().positive().max(86_400).optional(),
});

/** `[runtime] type = "script"`: one child per call, JSON on stdin, JSON or text on stdout. */
export const ScriptRuntimeSchema = z.strictObject({
  type: z.literal('script'),
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  /**
   * The child's working folder: a path relative to the plugin folder (default "."), or
   * "${WORKSPACE}" / "${WORKSPACE}/sub" for the host's workspace. Must stay inside either.
   */
  cwd: z.string().min(1).max(4096).optional(),
  ...RuntimeCommonShape,
  max_output_bytes: z.number().int().positive().default(1_048_576),
  max_memory_mb: z.number().int().positive().optional(),
});

/** `[runtime] type = "http"`: a plugin served over HTTP. */
export const HttpRuntimeSchema = z.strictObject({
  type: z.literal('http'),
  endpoint: z.string().url(),
  headers: z.record(z.string(), z.string()).default({}),
  timeout_seconds: z.number().positive().max(86_400).default(30),
  retry_count: z.number().int().min(0).max(10).default(1),
  retry_delay_seconds: z.number().min(0).max(60).default(0.5),
  max_response_bytes: z.number().int().positive().default(4_194_304),
});

/** How an external plugin runs out of process. */
export const PluginRuntimeSchema = z.discriminatedUnion('type', [ProcessRuntimeSchema, ScriptRuntimeSchema, HttpRuntimeSchema]);

/** A `[[tools]]` entry: a tool declared statically in the manifest. */
export const ManifestToolSchema = z.strictObject({
  name: z.string().regex(TOOL_NAME_PATTERN, 'must start with a letter and use letters, digits, _ or -, at most 64 characters'),
  description: z.string().min(1).max(4096),
  input_schema: JsonObjectSchema.default({ type: 'object' }),
  output_schema: JsonObjectSchema.optional(),
  tags: z.array(z.string()).default([]),
  side_effects: z.boolean().optional(),
  idempotent: z.boolean().optional(),
  timeout_seconds: z.number().positive().max(86_400).optional(),
  approval: z.enum(['auto', 'ask']).optional(),
});

/** The `plugin.toml` schema, version 1. */
export const PluginManifestSchema = z.strictObject({
  schema_version: z.literal(1),
  id: PluginIdSchema,
  name: z.string().min(1).max(128),
  version: z.string().regex(/^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$/, 'must be a semantic version such as 1.2.3'),
  kind: z.enum(PLUGIN_KINDS),
  description: z.string().max(4096).default(''),
  side_effects: z.boolean().default(false),
  capabilities: z.array(z.string().regex(/^[a-z][a-z0-9-]*(?:\.[a-z0-9-]+)+$/, 'must look like area.action, e.g. fs.read')).default([]),
  sandbox: z.enum(SANDBOX_PROFILES).default('no-isolation'),
  requires_env: z.array(z.string().regex(ENV_NAME, 'must be an environment variable name')).default([]),
  /**
   * Host variables the plugin would like but can run without. Like `requires_env`, each reaches the
   * plugin (as a variable of its own and for `${VAR}` in `[runtime]`) only when the user grants it
   * with `[plugins.entries.<id>] pass_env`; a `${VAR}` not declared here or in `requires_env` is refused.
   */
  env_from_host: z.array(z.string().regex(ENV_NAME, 'must be an environment variable name')).optional(),
  /** Programs that must be found on PATH for the plugin to be available, e.g. `["python3"]`. */
  requires_commands: z.array(z.string().regex(/^[A-Za-z0-9._+-]+$/, 'must be a program name, not a path')).default([]),
  /** The smallest startup profile that enables this plugin; absent means opt-in only. */
  profile: z.enum(PROFILE_NAMES).optional(),
  /** Only bundled plugins may be required; required plugins cannot be disabled. */
  required: z.boolean().default(false),
  runtime: PluginRuntimeSchema.optional(),
  tools: z.array(ManifestToolSchema).default([]),
  /** JSON Schema for `[plugins.entries.<id>] config`, for external plugins. */
  config_schema: JsonObjectSchema.optional(),
});

/** A parsed, validated `plugin.toml`. */
export type PluginManifest = z.infer<typeof PluginManifestSchema>;
/** A `plugin.toml` as written, before defaults are applied. */
export type PluginManifestInput = z.input<typeof PluginManifestSchema>;
/** A manifest's `[runtime]` table. */
export type PluginRuntime = z.infer<typeof PluginRuntimeSchema>;
/** A manifest's `[[tools]]` entry. */
export type ManifestTool = z.infer<typeof ManifestToolSchema>;
