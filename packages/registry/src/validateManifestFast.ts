import { PLUGIN_ID_PATTERN, PLUGIN_KINDS, PROFILE_NAMES, SANDBOX_PROFILES, TOOL_NAME_PATTERN } from '@trellis/sdk';
import type { PluginManifest } from '@trellis/sdk';

// A hand-written check of the common, valid plugin.toml shape, used before the zod schema
// (`PluginManifestSchema` in @trellis/sdk) because zod costs ~10 µs per manifest and 10,000
// manifests are discovered at a time. It is a pre-filter, never a judge: it returns the manifest
// zod would return (same keys in the same order, the same defaults, fresh arrays and objects where
// zod makes them, the same references where zod passes values through) when it is SURE the
// document is valid, and null otherwise, so anything unusual (an http runtime, a date, an unknown
// key, any doubt) goes through zod, which gives the verdict and the error text. The rules below
// copy the schema's; a test holds the two equal over many documents and fails when the schema
// changes (update this file with it).

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const VERSION = /^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$/;
const CAPABILITY = /^[a-z][a-z0-9-]*(?:\.[a-z0-9-]+)+$/;
const COMMAND_NAME = /^[A-Za-z0-9._+-]+$/;

const KINDS: ReadonlySet<unknown> = new Set(PLUGIN_KINDS);
const SANDBOXES: ReadonlySet<unknown> = new Set(SANDBOX_PROFILES);
const PROFILES: ReadonlySet<unknown> = new Set(PROFILE_NAMES);

// `env_from_host` is not listed: a manifest that declares host variables is rare and goes to zod.
const MANIFEST_KEYS: ReadonlySet<string> = new Set([
  'schema_version',
  'id',
  'name',
  'version',
  'kind',
  'description',
  'side_effects',
  'capabilities',
  'sandbox',
  'requires_env',
  'requires_commands',
  'profile',
  'required',
  'runtime',
  'tools',
  'config_schema',
]);
const PROCESS_KEYS: ReadonlySet<string> = new Set([
  'type',
  'command',
  'args',
  'timeout_seconds',
  'env',
  'restart_on_crash',
  'max_restarts',
  'restart_delay_seconds',
  'health_check_interval_seconds',
  'max_memory_mb',
]);
const SCRIPT_KEYS: ReadonlySet<string> = new Set(['type', 'command', 'args', 'timeout_seconds', 'env', 'max_output_bytes', 'max_memory_mb']);
const TOOL_KEYS: ReadonlySet<string> = new Set([
  'name',
  'description',
  'input_schema',
  'output_schema',
  'tags',
  'side_effects',
  'idempotent',
  'timeout_seconds',
  'approval',
]);

type Table = Record<string, unknown>;

/**
 * A TOML table: a null-prototype object as smol-toml makes it, or a plain one as `parseTomlFast`
 * makes it. Anything else (an array, a TOML date, which is a Date) goes to zod.
 */
function isTable(value: unknown): value is Table {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === null || prototype === Object.prototype;
}

function onlyKeys(table: Table, known: ReadonlySet<string>): boolean {
  for (const key in table) if (!known.has(key)) return false;
  return true;
}

// Everything this file returns is deep-frozen as it is built: freezing a fresh object whose shape
// many others share is a cached map transition, far cheaper than the snapshot's deepFreeze walking
// the finished manifest (which then stops at the frozen top). zod's results are frozen there.
const freeze = Object.freeze;
const NO_STRINGS: readonly string[] = freeze([]);

/**
 * A string value to keep. smol-toml's values are substrings of the whole document, and V8 keeps a
 * substring of 13 or more characters as a slice that holds on to the document it was cut from:
 * one long description would keep the manifest's whole text alive for as long as the snapshot
 * lives. The copy below is flat (the concatenation is flattened before it is sliced again), so it
 * holds only its own characters. Shorter substrings are copies already.
 */
function own(value: string): string {
  return value.length < 13 ? value : (' ' + value).slice(1);
}

/** `z.array(z.string()[.regex(re)])`, defaulted to `[]`; undefined = not sure. */
function strings(value: unknown, pattern: RegExp | null): string[] | undefined {
  if (value === undefined) return NO_STRINGS as string[];
  if (!Array.isArray(value)) return undefined;
  const out: string[] = new Array<string>(value.length);
  for (let i = 0; i < value.length; i += 1) {
    const item: unknown = value[i];
    if (typeof item !== 'string' || (pattern !== null && !pattern.test(item))) return undefined;
    out[i] = own(item);
  }
  return freeze(out) as string[];
}

/**
 * `z.record(z.string(), z.unknown())`: a fresh object with the same members; undefined = not sure.
 * The members are copied deeply into plain objects and arrays (zod passes them through): smol-toml's
 * null-prototype tables are dictionary-mode objects, slower to read and to freeze, and larger to keep.
 */
function record(value: unknown, depth = 0): Table | undefined {
  if (!isTable(value)) return undefined;
  // A plain object is `parseTomlFast`'s: fresh, unshared, fast-mode already. It is kept as it is
  // (its strings made the manifest's own, then frozen) instead of copied.
  return Object.getPrototypeOf(value) === null ? copyMembers(value, depth) : (adopt(value, depth) as Table | undefined);
}

/**
 * `parseTomlFast` data kept in place: every string replaced by its own copy (see {@link own}),
 * every object and array frozen. Undefined for anything else or anything deeper than
 * COPY_DEPTH (ask zod); the data is then still valid, partly frozen, and zod only reads it.
 */
function adopt(value: unknown, depth: number): unknown {
  if (depth > COPY_DEPTH) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) {
      const item: unknown = value[i];
      if (typeof item === 'string') value[i] = own(item);
      else if (typeof item === 'object' && item !== null && adopt(item, depth + 1) === undefined) return undefined;
    }
    return freeze(value);
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return undefined;
  const table = value as Table;
  for (const key in table) {
    const item = table[key];
    if (typeof item === 'string') table[key] = own(item);
    else if (typeof item === 'object' && item !== null && adopt(item, depth + 1) === undefined) return undefined;
  }
  return freeze(table);
}

/** {@link record}'s copy, for a table already known to be one (zod's plain-object records too). */
function copyMembers(value: Table, depth: number): Table | undefined {
  if (depth > COPY_DEPTH) return undefined;
  const out: Table = {};
  for (const key in value) {
    if (key === '__proto__') return undefined;
    const copy = plain(value[key], depth + 1);
    if (copy === undefined) return undefined;
    out[key] = copy;
  }
  return freeze(out);
}

// Deeper data is not copied here: zod takes it, and parseManifest's depth check rejects it (dotted
// keys can nest far deeper than any real schema, and this copy recurses).
const COPY_DEPTH = 40;

/** A deep, frozen copy of TOML data into plain objects and arrays; undefined for anything else (ask zod). */
function plain(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null) return typeof value === 'string' ? own(value) : value;
  if (depth > COPY_DEPTH) return undefined;
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i += 1) {
      const copy = plain(value[i], depth + 1);
      if (copy === undefined) return undefined;
      out[i] = copy;
    }
    return freeze(out);
  }
  // A TOML date or time (a Date subclass), or anything unexpected: zod decides.
  if (!isTable(value)) return undefined;
  return record(value, depth);
}

const NO_ENV: Readonly<Record<string, string>> = freeze({});

/** `z.record(ENV_NAME, z.string()).default({})`. */
function envRecord(value: unknown): Record<string, string> | undefined {
  if (value === undefined) return NO_ENV as Record<string, string>;
  if (!isTable(value)) return undefined;
  const out: Record<string, string> = {};
  for (const key in value) {
    const item = value[key];
    if (key === '__proto__' || !ENV_NAME.test(key) || typeof item !== 'string') return undefined;
    out[key] = own(item);
  }
  return freeze(out);
}

const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isSafeInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);
const isBool = (v: unknown): v is boolean => typeof v === 'boolean';

function runtimeOf(value: Table): PluginManifest['runtime'] | null {
  const type = value.type;
  if (type !== 'process' && type !== 'script') return null; // http (URL rules) and errors: zod
  if (!onlyKeys(value, type === 'process' ? PROCESS_KEYS : SCRIPT_KEYS)) return null;
  const command = value.command;
  if (typeof command !== 'string' || command.length < 1) return null;
  const args = strings(value.args, null);
  if (args === undefined) return null;
  const timeout = value.timeout_seconds ?? 30;
  if (!isNumber(timeout) || timeout <= 0 || timeout > 86_400) return null;
  const env = envRecord(value.env);
  if (env === undefined) return null;
  const memory = value.max_memory_mb;
  if (memory !== undefined && !(isSafeInt(memory) && memory > 0)) return null;
  if (type === 'process') {
    const restart = value.restart_on_crash ?? true;
    const maxRestarts = value.max_restarts ?? 3;
    const delay = value.restart_delay_seconds ?? 1;
    const health = value.health_check_interval_seconds ?? 0;
    if (!isBool(restart)) return null;
    if (!isSafeInt(maxRestarts) || maxRestarts < 0 || maxRestarts > 100) return null;
    if (!isNumber(delay) || delay < 0 || delay > 3600) return null;
    if (!isNumber(health) || health < 0 || health > 86_400) return null;
    const out: Table = {
      type,
      command: own(command),
      args,
      timeout_seconds: timeout,
      env,
      restart_on_crash: restart,
      max_restarts: maxRestarts,
      restart_delay_seconds: delay,
      health_check_interval_seconds: health,
    };
    if (memory !== undefined) out.max_memory_mb = memory;
    return freeze(out) as PluginManifest['runtime'];
  }
  const maxOutput = value.max_output_bytes ?? 1_048_576;
  if (!isSafeInt(maxOutput) || maxOutput <= 0) return null;
  const out: Table = { type, command: own(command), args, timeout_seconds: timeout, env, max_output_bytes: maxOutput };
  if (memory !== undefined) out.max_memory_mb = memory;
  return freeze(out) as PluginManifest['runtime'];
}

const DEFAULT_INPUT_SCHEMA: Table = freeze({ type: 'object' });
const NO_TOOLS: Table[] = freeze([]) as unknown as Table[];

function toolOf(value: unknown): Table | null {
  if (!isTable(value) || !onlyKeys(value, TOOL_KEYS)) return null;
  const name = value.name;
  if (typeof name !== 'string' || !TOOL_NAME_PATTERN.test(name)) return null;
  const description = value.description;
  if (typeof description !== 'string' || description.length < 1 || description.length > 4096) return null;
  const input = value.input_schema === undefined ? DEFAULT_INPUT_SCHEMA : record(value.input_schema);
  if (input === undefined) return null;
  let output: Table | undefined;
  if (value.output_schema !== undefined) {
    output = record(value.output_schema);
    if (output === undefined) return null;
  }
  const tags = strings(value.tags, null);
  if (tags === undefined) return null;
  const { side_effects: sideEffects, idempotent, timeout_seconds: timeout, approval } = value;
  if (sideEffects !== undefined && !isBool(sideEffects)) return null;
  if (idempotent !== undefined && !isBool(idempotent)) return null;
  if (timeout !== undefined && !(isNumber(timeout) && timeout > 0 && timeout <= 86_400)) return null;
  if (approval !== undefined && approval !== 'auto' && approval !== 'ask') return null;
  const out: Table = { name: own(name), description: own(description), input_schema: input };
  if (output !== undefined) out.output_schema = output;
  out.tags = tags;
  if (sideEffects !== undefined) out.side_effects = sideEffects;
  if (idempotent !== undefined) out.idempotent = idempotent;
  if (timeout !== undefined) out.timeout_seconds = timeout;
  if (approval !== undefined) out.approval = approval;
  return freeze(out);
}

/**
 * Brings a manifest zod returned to the form {@link validateManifestFast} returns: a copy in plain
 * objects and arrays (zod passes smol-toml's null-prototype tables through in the free-form JSON
 * Schemas) whose strings are the manifest's own (see {@link own}; zod passes those through too), so
 * every manifest has one shape and keeps no document text alive, whichever path checked it. A TOML
 * date in a schema stays as zod gave it.
 */
export function withPlainSchemas(manifest: PluginManifest): PluginManifest {
  return ownCopy(manifest, 0) as PluginManifest;
}

function ownCopy(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return own(value);
  if (typeof value !== 'object' || value === null || depth > COPY_DEPTH) return value;
  if (Array.isArray(value)) return value.map((item: unknown) => ownCopy(item, depth + 1));
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== null && prototype !== Object.prototype) return value;
  const out: Table = {};
  for (const key in value) {
    // Not reachable (the parser refuses the key), and copying it would set the prototype.
    if (key === '__proto__') return value;
    out[key] = ownCopy((value as Table)[key], depth + 1);
  }
  return out;
}

/**
 * The manifest `PluginManifestSchema.parse(doc)` would return (deep-frozen), when `doc` (smol-toml
 * output) is certainly valid; null when it is not or when this check is not sure — then ask zod. Pure.
 */
export function validateManifestFast(doc: unknown): PluginManifest | null {
  if (!isTable(doc) || !onlyKeys(doc, MANIFEST_KEYS)) return null;
  if (doc.schema_version !== 1) return null;
  const { id, name, version, kind } = doc;
  if (typeof id !== 'string' || !PLUGIN_ID_PATTERN.test(id)) return null;
  if (typeof name !== 'string' || name.length < 1 || name.length > 128) return null;
  if (typeof version !== 'string' || !VERSION.test(version)) return null;
  if (!KINDS.has(kind)) return null;
  const description = doc.description ?? '';
  if (typeof description !== 'string' || description.length > 4096) return null;
  const sideEffects = doc.side_effects ?? false;
  if (!isBool(sideEffects)) return null;
  const capabilities = strings(doc.capabilities, CAPABILITY);
  if (capabilities === undefined) return null;
  const sandbox = doc.sandbox ?? 'no-isolation';
  if (!SANDBOXES.has(sandbox)) return null;
  const requiresEnv = strings(doc.requires_env, ENV_NAME);
  if (requiresEnv === undefined) return null;
  const requiresCommands = strings(doc.requires_commands, COMMAND_NAME);
  if (requiresCommands === undefined) return null;
  const profile = doc.profile;
  if (profile !== undefined && !PROFILES.has(profile)) return null;
  const required = doc.required ?? false;
  if (!isBool(required)) return null;
  let runtime: PluginManifest['runtime'] | null | undefined;
  if (doc.runtime !== undefined) {
    if (!isTable(doc.runtime)) return null;
    runtime = runtimeOf(doc.runtime);
    if (runtime === null) return null;
  }
  let tools: Table[];
  if (doc.tools === undefined) {
    tools = NO_TOOLS;
  } else {
    if (!Array.isArray(doc.tools)) return null;
    tools = new Array<Table>(doc.tools.length);
    for (let i = 0; i < doc.tools.length; i += 1) {
      const tool = toolOf(doc.tools[i]);
      if (tool === null) return null;
      tools[i] = tool;
    }
    freeze(tools);
  }
  let configSchema: Table | undefined;
  if (doc.config_schema !== undefined) {
    configSchema = record(doc.config_schema);
    if (configSchema === undefined) return null;
  }
  const out: Table = {
    schema_version: 1,
    id: own(id),
    name: own(name),
    version: own(version),
    kind,
    description: own(description as string),
    side_effects: sideEffects,
    capabilities,
    sandbox,
    requires_env: requiresEnv,
    requires_commands: requiresCommands,
  };
  if (profile !== undefined) out.profile = profile;
  out.required = required;
  if (runtime !== undefined) out.runtime = runtime;
  out.tools = tools;
  if (configSchema !== undefined) out.config_schema = configSchema;
  return freeze(out) as PluginManifest;
}
