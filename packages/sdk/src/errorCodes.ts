/**
 * Every stable error and reason code Trellis emits, in one place. Codes never change meaning;
 * messages may improve. Each entry's value equals its key so the map doubles as an enum.
 */
export const ERROR_CODES = {
  // ── configuration ────────────────────────────────────────────────────────────
  /** The config file named by `--config` or `TRELLIS_CONFIG` does not exist. */
  CONFIG_NOT_FOUND: 'CONFIG_NOT_FOUND',
  /** The config path is not a regular file (a directory, FIFO, socket or device) or cannot be read. */
  CONFIG_UNREADABLE: 'CONFIG_UNREADABLE',
  /** The config file is larger than the 1 MiB limit. */
  CONFIG_TOO_LARGE: 'CONFIG_TOO_LARGE',
  /** The config file is not valid UTF-8 or contains NUL bytes. */
  CONFIG_ENCODING: 'CONFIG_ENCODING',
  /** The config file is not valid TOML; the message carries line and column. */
  TOML_SYNTAX: 'TOML_SYNTAX',
  /** Tables or dotted keys nest deeper than Trellis accepts. */
  CONFIG_TOO_DEEP: 'CONFIG_TOO_DEEP',
  /** A value has the wrong type or is out of range; the message is `key.path: problem`. */
  CONFIG_SCHEMA: 'CONFIG_SCHEMA',
  /** A key Trellis does not know (a warning, with a "did you mean" suggestion when one is close). */
  UNKNOWN_KEY: 'UNKNOWN_KEY',
  /** A key such as `__proto__` or `constructor` that could pollute prototypes. */
  FORBIDDEN_KEY: 'FORBIDDEN_KEY',
  /** A `${VAR}` reference names an environment variable that is not set. */
  ENV_VAR_MISSING: 'ENV_VAR_MISSING',
  /** A `${` in a config string does not start a well-formed `${NAME}` reference (write `$${` for a literal). */
  ENV_VAR_SYNTAX: 'ENV_VAR_SYNTAX',

  // ── discovery and admission ─────────────────────────────────────────────────
  /** An explicit or env discovery root does not exist (a warning). */
  ROOT_MISSING: 'ROOT_MISSING',
  /** The manifest or plugin folder resolves outside its discovery root, or a runtime path leaves the plugin folder. */
  PATH_ESCAPE: 'PATH_ESCAPE',
  /** The manifest, plugin folder or a folder between it and the root is writable by every user. */
  WORLD_WRITABLE: 'WORLD_WRITABLE',
  /** The manifest or a folder on its way is owned by a user other than the current one or root. */
  UNSAFE_OWNER: 'UNSAFE_OWNER',
  /** The manifest is not a regular file, is hard-linked, or is larger than 256 KiB. */
  UNSAFE_FILE: 'UNSAFE_FILE',
  /** The manifest is not valid TOML or does not match the plugin.toml schema. */
  MANIFEST_INVALID: 'MANIFEST_INVALID',
  /** A plugin with side effects was found outside the bundle and is not in `[plugins] allow`. */
  SIDE_EFFECTS_NOT_ALLOWED: 'SIDE_EFFECTS_NOT_ALLOWED',
  /** An external manifest takes the id of a required bundled plugin. */
  RESERVED_ID: 'RESERVED_ID',
  /** A symlink was followed on the way to the manifest (a warning, not a rejection). */
  SYMLINK: 'SYMLINK',
  /** Two manifests in one discovery root declare the same id; both are rejected. */
  AMBIGUOUS_ID: 'AMBIGUOUS_ID',
  /** A higher-priority root holds a plugin with the same id. */
  SHADOWED: 'SHADOWED',
  /** An external manifest takes a non-required bundled plugin's id but has no `[runtime]` of its own. */
  BUNDLED_ID_WITHOUT_RUNTIME: 'BUNDLED_ID_WITHOUT_RUNTIME',
  /** An external manifest says `required = true`; only bundled plugins can be required (a warning; ignored). */
  REQUIRED_NOT_ALLOWED: 'REQUIRED_NOT_ALLOWED',

  // ── decision ────────────────────────────────────────────────────────────────
  /** The plugin is required and therefore enabled whatever the policy says. */
  REQUIRED: 'REQUIRED',
  /** Enabled by `[plugins.entries.<id>] enabled = true`. */
  ENABLED_BY_ENTRY: 'ENABLED_BY_ENTRY',
  /** Disabled by `[plugins.entries.<id>] enabled = false`. */
  DISABLED_BY_ENTRY: 'DISABLED_BY_ENTRY',
  /** Disabled because `[plugins] deny` names it. */
  DENIED: 'DENIED',
  /** Enabled because `[plugins] allow` names it. */
  ALLOWED: 'ALLOWED',
  /** Enabled because the active profile includes it. */
  IN_PROFILE: 'IN_PROFILE',
  /** Disabled because the active profile does not include it and nothing allows it. */
  NOT_IN_PROFILE: 'NOT_IN_PROFILE',
  /** A deny or disable targets a required plugin; it stays enabled (a warning). */
  REQUIRED_OVERRIDE_IGNORED: 'REQUIRED_OVERRIDE_IGNORED',
  /** An external manifest has no `[runtime]` and no bundled implementation exists for its id. */
  NO_IMPLEMENTATION: 'NO_IMPLEMENTATION',
  /** An environment variable named in `requires_env` is not set; the plugin is unavailable. */
  MISSING_ENV: 'MISSING_ENV',
  /** A program named in `requires_commands` is not on PATH; the plugin is unavailable. */
  MISSING_COMMAND: 'MISSING_COMMAND',
  /** The plugin's settings or entry config do not match its schema; the plugin is quarantined. */
  CONFIG_INVALID: 'CONFIG_INVALID',
  /** The plugin declares no tools (yet). */
  NO_TOOLS: 'NO_TOOLS',
  /** A plugin declares or reports two tools with one name, or a tool name the catalog cannot use; the first good one is kept (a warning). */
  TOOL_NAME_INVALID: 'TOOL_NAME_INVALID',

  // ── runtime outcomes ────────────────────────────────────────────────────────
  /** No tool has that name. The message names the nearest match. */
  TOOL_NOT_FOUND: 'TOOL_NOT_FOUND',
  /** The tool exists but is not offered now (plugin disabled or unavailable, capability or policy). */
  TOOL_UNAVAILABLE: 'TOOL_UNAVAILABLE',
  /** The arguments do not match the tool's input schema; the message lists `path: problem` lines. */
  INPUT_INVALID: 'INPUT_INVALID',
  /** The tool's schema cannot be used safely (too deep, too large, remote `$ref`, unsafe pattern). */
  SCHEMA_UNSAFE: 'SCHEMA_UNSAFE',
  /** The tool needs a capability `[runtime] capabilities` does not grant. */
  CAPABILITY_DENIED: 'CAPABILITY_DENIED',
  /** The tool's canonicalization step rejected the arguments. */
  CANONICALIZE_FAILED: 'CANONICALIZE_FAILED',
  /** A tool-level policy (`[runtime.policy] deny`, or not in `allow`) refused the call. */
  POLICY_DENIED: 'POLICY_DENIED',
  /** The tool needs approval and none was given (no TTY, or the user said no). */
  APPROVAL_DENIED: 'APPROVAL_DENIED',
  /** The call did not finish before its deadline. */
  TIMEOUT: 'TIMEOUT',
  /** The caller aborted the call. */
  ABORTED: 'ABORTED',
  /** The tool reported a failure of its own (a `ToolError`). */
  TOOL_FAILED: 'TOOL_FAILED',
  /** The tool threw something that was not a `ToolError`; a bug in the tool. */
  TOOL_THREW: 'TOOL_THREW',
  /** The tool's result cannot be serialized to JSON (cycle, BigInt, function). */
  OUTPUT_NOT_SERIALIZABLE: 'OUTPUT_NOT_SERIALIZABLE',
  /** The tool's result is larger than the output cap. */
  OUTPUT_TOO_LARGE: 'OUTPUT_TOO_LARGE',
  /** The tool's result does not match its declared output schema. */
  OUTPUT_INVALID: 'OUTPUT_INVALID',
  /** The plugin's implementation could not be loaded or set up. */
  PLUGIN_LOAD_FAILED: 'PLUGIN_LOAD_FAILED',
  /** An out-of-process plugin exited or was killed. */
  PLUGIN_CRASHED: 'PLUGIN_CRASHED',
  /** An out-of-process plugin broke the wire protocol (bad JSON, wrong id, oversize line). */
  PROTOCOL_ERROR: 'PROTOCOL_ERROR',
  /** An out-of-process plugin is not running (failed its health check and is recovering, past its restart limit, or shut down). */
  PLUGIN_UNAVAILABLE: 'PLUGIN_UNAVAILABLE',
  /** An HTTP plugin answered with an error status or could not be reached. */
  HTTP_ERROR: 'HTTP_ERROR',
  /** An HTTP plugin's endpoint is plain `http://` to a host that is not loopback; it is never contacted. */
  INSECURE_ENDPOINT: 'INSECURE_ENDPOINT',
  /** A bug in Trellis itself; please report it. */
  INTERNAL_ERROR: 'INTERNAL_ERROR',

  // ── tool-level failures used by bundled tools ───────────────────────────────
  /** A path argument leaves the allowed root, or is malformed (NUL byte, too long). */
  PATH_NOT_ALLOWED: 'PATH_NOT_ALLOWED',
  /** A file or folder named by an argument does not exist. */
  NOT_FOUND: 'NOT_FOUND',
  /** The operation is refused by the plugin's settings (e.g. writes disabled, program not allowed). */
  NOT_ALLOWED: 'NOT_ALLOWED',
  /** The arguments are well-formed but cannot be acted on (e.g. an edit string that is not unique). */
  INVALID_ARGUMENT: 'INVALID_ARGUMENT',
  /** A target is too large to handle under the configured limits. */
  TOO_LARGE: 'TOO_LARGE',
  /** A network request failed or was refused. */
  NETWORK_ERROR: 'NETWORK_ERROR',

  // ── trust boundaries ─────────────────────────────────────────────────────────
  /**
   * A config file (any layer) or the trust store is unsafe to read: not a regular file, hard-linked,
   * writable by every user, or owned by another user than you or root (the file or its folder).
   * The message names the file and the `chmod`/`chown` that fixes it. Exit 2.
   */
  CONFIG_UNSAFE: 'CONFIG_UNSAFE',
  /**
   * The workspace is not trusted (`trellis trust DIR` trusts it): its `.trellis/runtime.toml` is not
   * applied, its plugins are disabled, its skills never run in process.
   */
  WORKSPACE_UNTRUSTED: 'WORKSPACE_UNTRUSTED',
  /** `trellis doctor` started an external plugin and its handshake or health check failed. */
  PLUGIN_CHECK_FAILED: 'PLUGIN_CHECK_FAILED',
  // ── MCP bridge (plugin mcp) ───────────────────────────────────────────────
  /** A bridged MCP tool's description or schema differs from its pin; withheld until `trellis mcp approve <server> [tool]`. */
  TOOL_CHANGED: 'TOOL_CHANGED',
  /** An MCP server failed to start, died, or did not answer in time; only its own tools are unavailable while it reconnects. */
  MCP_SERVER_UNAVAILABLE: 'MCP_SERVER_UNAVAILABLE',
  /** A `[[plugins.entries.mcp.config.servers]]` entry cannot be used (no or two transports, a bad or duplicate name). */
  MCP_SERVER_INVALID: 'MCP_SERVER_INVALID',
  /** A skill named in `in_process` was found outside a trusted skill root: refused, it never runs in the host. */
  SKILL_NOT_TRUSTED: 'SKILL_NOT_TRUSTED',
  /** A manifest expands a host variable it did not declare, or that the user's config does not grant it (`pass_env`). */
  ENV_NOT_GRANTED: 'ENV_NOT_GRANTED',
  /** No mechanism keeps children from the host's secrets and `TRELLIS_CHILD_ISOLATION=required` asks for one. */
  ISOLATION_UNAVAILABLE: 'ISOLATION_UNAVAILABLE',
  // ── providers, the agent loop and connectors ────────────────────────────────
  /** No provider plugin is enabled and available (e.g. OPENROUTER_API_KEY is not set). */
  PROVIDER_UNAVAILABLE: 'PROVIDER_UNAVAILABLE',
  /** The provider refused the API key (HTTP 401/403). */
  PROVIDER_AUTH: 'PROVIDER_AUTH',
  /** The provider wants payment or credits (HTTP 402); never retried. */
  PROVIDER_PAYMENT_REQUIRED: 'PROVIDER_PAYMENT_REQUIRED',
  /** The provider kept rate-limiting (HTTP 429) after the configured retries. */
  PROVIDER_RATE_LIMITED: 'PROVIDER_RATE_LIMITED',
  /** The provider answered with another error status, an error event mid-stream, or could not be reached. */
  PROVIDER_FAILED: 'PROVIDER_FAILED',
  /** The provider's answer broke its protocol (unparseable stream, a tool call without a name). */
  PROVIDER_PROTOCOL: 'PROVIDER_PROTOCOL',
  /** A connector could not start (bad token, unreachable API) or failed while serving. */
  CONNECTOR_FAILED: 'CONNECTOR_FAILED',
  /**
   * An external plugin reported a failure under a code the host reserves (see
   * `HOST_RESERVED_CODES`); the message names the plugin and the code it sent, so a caller can
   * tell the plugin's refusal from the host's.
   */
  PLUGIN_ERROR: 'PLUGIN_ERROR',
  /** The `trellis` command line is wrong (unknown command or flag, missing argument); exit 2. */
  USAGE: 'USAGE',
  /** A `trellis` command's check failed after it was reported (e.g. no tool or plugin by that name); exit 1. */
  COMMAND_FAILED: 'COMMAND_FAILED',
  /** A request on a host's control socket (`trellis status`) is malformed, unknown or too large. */
  CONTROL_REQUEST_INVALID: 'CONTROL_REQUEST_INVALID',
  /**
   * A call arrived while a live host (`serve`, `run`, `startLiveHost`) was swapping the plugin it
   * needs to a new config generation, and the swap took longer than `[runtime] reload_queue_timeout`;
   * the call was not run. Retry it, or raise the timeout if reloads start slow plugins.
   */
  RELOAD_TIMEOUT: 'RELOAD_TIMEOUT',
} as const;

/** A stable error or reason code. */
export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * Codes only the host may report: configuration, admission and decision reasons, and the
 * runtime's own outcomes (lookup, validation, capability, policy and approval, deadlines,
 * availability, protocol, output checks, internal errors). A code in this set that arrives from
 * a plugin (a process or HTTP plugin's `error.code`) is reported as `PLUGIN_ERROR` with the
 * plugin's code in the message. `TOOL_FAILED` and the tool-level codes stay open to plugins.
 */
export const HOST_RESERVED_CODES: ReadonlySet<string> = new Set<string>(
  Object.keys(ERROR_CODES).filter(
    (code) =>
      !['TOOL_FAILED', 'PATH_NOT_ALLOWED', 'NOT_FOUND', 'NOT_ALLOWED', 'INVALID_ARGUMENT', 'TOO_LARGE', 'NETWORK_ERROR'].includes(code),
  ),
);

/** True when `code` is one only the host may report (see {@link HOST_RESERVED_CODES}). */
export function isHostReservedCode(code: string): boolean {
  return HOST_RESERVED_CODES.has(code);
}
