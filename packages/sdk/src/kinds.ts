/** Every kind of plugin Trellis knows. A plugin declares exactly one in `plugin.toml`. */
export const PLUGIN_KINDS = [
  'toolset',
  'provider',
  'connector',
  'skill-source',
  'bridge',
  'memory-slot',
  'context-engine',
  'workflow-adapter',
  'subagent-runtime',
] as const;

/** The kind of a plugin: what it contributes to the host. */
export type PluginKind = (typeof PLUGIN_KINDS)[number];

/**
 * Isolation a tool expects. Trellis records the profile in each tool's contract; which parts are
 * enforced by the OS is documented per tool in docs/security-model.md.
 */
export const SANDBOX_PROFILES = ['no-isolation', 'read-only-fs', 'python-research', 'container-restricted'] as const;

/** A sandbox profile name. */
export type SandboxProfile = (typeof SANDBOX_PROFILES)[number];

/** Startup profiles, smallest first. Each profile includes every plugin of the ones before it. */
export const PROFILE_NAMES = ['minimal', 'messaging', 'full'] as const;

/** A startup profile name. */
export type ProfileName = (typeof PROFILE_NAMES)[number];

/**
 * Capabilities a tool or plugin may need. The runtime grants a set of them (`[runtime] capabilities`)
 * and refuses calls to tools that need one it did not grant.
 */
export const CAPABILITIES = ['fs.read', 'fs.write', 'process.spawn', 'net.outbound', 'net.inbound', 'env.read'] as const;

/** A capability name. Plugins may name others (`vendor.thing`); unknown ones are never granted by `*`. */
export type Capability = (typeof CAPABILITIES)[number];

/** The discovery roots, in priority order (lower index wins). */
export const DISCOVERY_ROOTS = ['explicit', 'env', 'workspace', 'user', 'bundled'] as const;

/** The name of a discovery root. */
export type DiscoveryRoot = (typeof DISCOVERY_ROOTS)[number];

/** How a tool runs relative to the host process. */
export const ISOLATION_MODES = ['inline', 'worker', 'process'] as const;

/** `inline`: in the host's event loop; `worker`: in a worker thread killed at the deadline; `process`: out of process. */
export type IsolationMode = (typeof ISOLATION_MODES)[number];
