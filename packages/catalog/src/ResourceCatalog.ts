import { CAPABILITIES, ERROR_CODES, resolveContract } from '@trellis/sdk';
import {
  DEFAULT_SCHEMA_LIMITS,
  checkSchemaSafety,
  compileToolGlob,
  nestsDeeperThan,
  runSteps,
  keptByInputs,
  runStepsPausing,
  type Pause,
  type Steps,
} from '@trellis/sdk/internal';
import type { ManifestTool, PluginManifest, ToolContract, ToolExample, ToolSpec } from '@trellis/sdk';
import type {
  CatalogBundledView,
  CatalogConfigView,
  CatalogPluginView,
  CatalogReason,
  CatalogSnapshotView,
} from './CatalogSnapshotView.ts';
import { nearestName } from './nearestName.ts';
import type { ToolOverrides } from './parseToolOverrides.ts';
import { renderTools } from './renderTools.ts';
import type { RenderedTool, ToolRenderFormat } from './renderTools.ts';
import { createSearchIndex } from './searchIndex.ts';
import type { SearchIndex, ToolSearchHit } from './searchIndex.ts';
import { createToolDescriptor } from './ToolDescriptor.ts';
import type { ToolDescriptor, ToolDescriptorFields, ToolSource } from './ToolDescriptor.ts';
import { createModelNameTable } from './toModelToolName.ts';
import type { ModelNameTable } from './toModelToolName.ts';

/** Whether one known tool is offered now, and if not, why. */
export interface ToolAvailability {
  /** Fully qualified name. */
  readonly name: string;
  readonly plugin: string;
  readonly offered: boolean;
  /** Present exactly when `offered` is false. */
  readonly reason?: CatalogReason;
}

/** What `ResourceCatalog.lookup` found for a name. */
export type ToolLookup =
  | { readonly status: 'offered'; readonly descriptor: ToolDescriptor }
  /** Known but not offered; `descriptor` is present when the plugin is enabled (capability or policy refused it). */
  | { readonly status: 'unavailable'; readonly descriptor?: ToolDescriptor; readonly reason: CatalogReason }
  | { readonly status: 'not_found'; readonly nearest?: string };

/** Options of `createResourceCatalog`. */
export interface CreateResourceCatalogOptions {
  readonly snapshot: CatalogSnapshotView;
  /** Bundled plugins' build-time descriptors (manifest id and tool specs). */
  readonly bundled: readonly CatalogBundledView[];
  /** Parsed `config/tools.toml`. */
  readonly overrides?: ToolOverrides;
  readonly config: CatalogConfigView;
  /**
   * A host that builds catalogs again and again (a live host's reloads) passes one cache to each
   * build: a tool of an entry the snapshot kept, described from the same inputs, keeps its
   * descriptor, and its availability when the capabilities and the tool policy are the same.
   */
  readonly buildCache?: CatalogBuildCache;
}

/** Freezes an availability answer and its reason. */
function frozenAvailability(availability: ToolAvailability): ToolAvailability {
  if (availability.reason !== undefined) Object.freeze(availability.reason);
  return Object.freeze(availability);
}

/** What one catalog build takes over from the one before; see {@link createCatalogBuildCache}. */
export interface CatalogBuildCache {
  /** The last build's tool made of this entry and tool spec, when `inputs` are equal; else `make()`. */
  tool(entry: CatalogPluginView, spec: object, inputs: unknown, make: () => KnownToolOf): KnownToolOf;
  /** The last availability decided for this very tool under equal `inputs`; else `decide()`. */
  availability(tool: KnownToolOf, inputs: unknown, decide: () => ToolAvailability): ToolAvailability;
}

/** A known tool, as the build cache holds it (opaque outside the catalog). */
export interface KnownToolOf {
  readonly name: string;
}

/**
 * Creates a {@link CatalogBuildCache}; pass it as `buildCache` to every build of one host. Entries
 * and specs are kept by identity (a registry build cache keeps unchanged entries), so nothing of
 * a plugin that is gone stays reachable.
 */
export function createCatalogBuildCache(): CatalogBuildCache {
  const tools = new WeakMap<CatalogPluginView, WeakMap<object, { readonly inputs: unknown; readonly value: KnownToolOf }>>();
  const availabilities = new WeakMap<KnownToolOf, { readonly inputs: unknown; readonly value: ToolAvailability }>();
  return {
    tool(entry, spec, inputs, make) {
      let bySpec = tools.get(entry);
      if (bySpec === undefined) tools.set(entry, (bySpec = new WeakMap()));
      return keptByInputs(bySpec, spec, inputs, make);
    },
    availability(tool, inputs, decide) {
      return keptByInputs(availabilities, tool, inputs, decide);
    },
  };
}

/** The tools a host knows, as data: descriptors, availability, renderings and search. Immutable. */
export interface ResourceCatalog {
  /** Descriptors of every tool of every enabled plugin, offered or not: snapshot order, then declaration order, then discovered tools. */
  readonly descriptors: readonly ToolDescriptor[];
  /** Problems found while building: unusable or duplicate tool names, overrides for unknown tools, missing bundled specs. */
  readonly warnings: readonly CatalogReason[];
  /** The descriptor of an enabled plugin's tool, offered or not; undefined for any other name. */
  get(name: string): ToolDescriptor | undefined;
  /** The descriptors offered now: plugin enabled, capabilities granted, tool policy allows. */
  offered(): readonly ToolDescriptor[];
  /** Every known tool (also of disabled, unavailable and rejected plugins) with whether it is offered and why not. */
  availability(): readonly ToolAvailability[];
  /**
   * The runtime's lookup: offered; known but not offered (with the reason); or not found (with the
   * nearest offered name). Accepts the fully qualified name or a model-API name this catalog renders.
   */
  lookup(name: string): ToolLookup;
  /** The offered tool name closest to `name` (same own name, or small edit distance); undefined when none is close. */
  nearest(name: string): string | undefined;
  /** Ranked BM25F search over offered tools' names, tags and descriptions; the index is built on first use. Default limit 10. */
  search(query: string, options?: { readonly limit?: number }): readonly ToolSearchHit[];
  /** A new catalog that also holds the tools a running plugin reported; replaces that plugin's earlier report. */
  withDiscoveredTools(pluginId: string, specs: readonly ToolSpec[]): ResourceCatalog;
  /** The model-API name of a known tool, collision-free across this catalog; undefined for unknown names. */
  toModelToolName(name: string): string | undefined;
  /** The fully qualified name behind a model-API name this catalog renders; undefined when none. */
  fromModelToolName(modelName: string): string | undefined;
  /** Renders descriptors (default: `offered()`) with this catalog's model-API names. */
  render(format: ToolRenderFormat, descriptors?: readonly ToolDescriptor[]): RenderedTool[];
}

interface KnownTool {
  readonly name: string;
  readonly plugin: string;
  readonly entry: CatalogPluginView;
  readonly descriptor: ToolDescriptor | undefined;
  /** A running plugin's own word that it withholds this tool (a dynamic source's `unavailable`). */
  readonly withheld?: CatalogReason;
}

interface BuildInput extends CreateResourceCatalogOptions {
  readonly discovered: ReadonlyMap<string, readonly ToolSpec[]>;
}

const STATE_RANK: Readonly<Record<string, number>> = { enabled: 0, unavailable: 1, disabled: 2, rejected: 3 };
const MAX_DISCOVERED_NAME = 128;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\s]/u;

/**
 * Builds the catalog from a snapshot alone. One plugin per id is considered: the enabled entry,
 * else the unavailable, disabled or rejected one (first in snapshot order); shadowed entries never.
 * Only enabled plugins get descriptors; the others' tools are kept by name for `availability()`.
 * Nothing is compiled, hashed or serialized here.
 */
export function createResourceCatalog(options: CreateResourceCatalogOptions): ResourceCatalog {
  return buildCatalog({ ...options, discovered: new Map() });
}

/**
 * {@link createResourceCatalog} in steps for a long-running host that rebuilds while it serves:
 * it asks `pause()` after every plugin's tools and every tool's availability (see `createPacer` in
 * `@trellis/sdk/internal`), and settles the availability of every tool before it returns, so the
 * first call the new catalog looks up does not pay for that either. The same catalog.
 */
export function createResourceCatalogInSteps(options: CreateResourceCatalogOptions, pause: Pause): Promise<ResourceCatalog> {
  return runStepsPausing(buildCatalogSteps({ ...options, discovered: new Map() }, true), pause);
}

function buildCatalog(input: BuildInput): ResourceCatalog {
  return runSteps(buildCatalogSteps(input, false));
}

/** The catalog, pausable after each plugin; with `settle`, every tool's availability is decided before it returns. */
function* buildCatalogSteps(input: BuildInput, settle: boolean): Steps<ResourceCatalog> {
  const { config, discovered } = input;
  const overrides = new Map(Object.entries(input.overrides ?? {}));
  const warnings: CatalogReason[] = [];
  const askMatchers = config.runtime.policy.ask.map(compileToolGlob);
  const bundledById = new Map<string, CatalogBundledView>();
  for (const bundled of input.bundled) bundledById.set(bundled.manifest.id, bundled);

  const chosen = new Map<string, CatalogPluginView>();
  for (const entry of input.snapshot.plugins) {
    const rank = STATE_RANK[entry.state];
    if (rank === undefined || entry.manifest === null) continue;
    const current = chosen.get(entry.id);
    if (current === undefined || rank < (STATE_RANK[current.state] ?? Infinity)) chosen.set(entry.id, entry);
  }

  const known: KnownTool[] = [];
  const knownByName = new Map<string, KnownTool>();
  const discoveredKnown: KnownTool[] = [];
  const descriptors: ToolDescriptor[] = [];

  const makeTool = (
    entry: CatalogPluginView,
    fields: Omit<ToolDescriptorFields, 'name' | 'plugin' | 'contract'> & { contract: ToolContract },
    withheld?: CatalogReason,
  ): KnownTool => {
    const name = `${entry.id}.${fields.tool}`;
    let descriptor: ToolDescriptor | undefined;
    if (entry.state === 'enabled') {
      // Map lookups: a freshly concatenated name would be hashed into an object's key table otherwise.
      const override = overrides.size === 0 ? undefined : overrides.get(name);
      const ask = askMatchers.length > 0 && askMatchers.some((matches) => matches(name));
      descriptor = createToolDescriptor({
        name,
        plugin: entry.id,
        tool: fields.tool,
        description: override?.description ?? fields.description,
        tags: override?.tags ?? fields.tags,
        examples: override?.examples ?? fields.examples,
        inputSchema: fields.inputSchema,
        outputSchema: fields.outputSchema,
        contract: ask && fields.contract.approval !== 'ask' ? { ...fields.contract, approval: 'ask' } : fields.contract,
        source: fields.source,
        ...(fields.annotations !== undefined ? { annotations: fields.annotations } : {}),
      });
    }
    return withheld === undefined ? { name, plugin: entry.id, entry, descriptor } : { name, plugin: entry.id, entry, descriptor, withheld };
  };
  const add = (tool: KnownTool, into: KnownTool[]): void => {
    if (tool.descriptor !== undefined) descriptors.push(tool.descriptor);
    knownByName.set(tool.name, tool);
    into.push(tool);
  };
  // A tool the plugin declares (its manifest, or a bundled plugin's build-time spec): kept from the
  // last build when its entry and spec are the same objects and so is everything else it reads.
  const cache = input.buildCache;
  const declared = (entry: CatalogPluginView, spec: { readonly name: string }, fields: () => ToolFields): void => {
    if (cache === undefined) return add(makeTool(entry, fields()), known);
    const name = `${entry.id}.${spec.name}`;
    const inputs = [
      overrides.size === 0 ? null : (overrides.get(name) ?? null),
      askMatchers.length > 0 && askMatchers.some((matches) => matches(name)),
      config.runtime.tool_timeout_seconds,
      config.runtime.max_retries,
    ];
    add(cache.tool(entry, spec, inputs, () => makeTool(entry, fields())) as KnownTool, known);
  };

  let visited = 0;
  for (const entry of input.snapshot.plugins) {
    if (chosen.get(entry.id) !== entry) continue;
    if (visited++ > 0) yield;
    const manifest = entry.manifest as PluginManifest;
    const seen = new Set<string>();
    const claim = (tool: string, what: string): boolean => {
      if (!seen.has(tool)) {
        seen.add(tool);
        return true;
      }
      warnings.push({
        code: ERROR_CODES.TOOL_NAME_INVALID,
        message: `plugin ${entry.id} ${what} the tool "${tool}" twice; the first is kept. Rename or remove the other.`,
      });
      return false;
    };
    if (entry.bundled) {
      const bundled = bundledById.get(entry.id);
      if (bundled === undefined) {
        warnings.push({
          code: ERROR_CODES.INTERNAL_ERROR,
          message: `bundled plugin ${entry.id} has no build-time descriptor, so its tools are unknown; rebuild the app's bundled index`,
        });
      } else {
        for (const spec of bundled.tools) {
          if (claim(spec.name, 'declares')) declared(entry, spec, () => fromBundledSpec(spec, manifest, input));
        }
      }
    } else {
      for (const tool of manifest.tools) {
        if (claim(tool.name, 'declares')) declared(entry, tool, () => fromManifestTool(tool, manifest, input));
      }
    }
    const reported = entry.state === 'enabled' ? discovered.get(entry.id) : undefined;
    if (reported === undefined) continue;
    const reportedSeen = new Set<string>();
    for (const spec of reported) {
      const tool = typeof spec?.name === 'string' ? spec.name : '';
      if (tool.length === 0 || tool.length > MAX_DISCOVERED_NAME || CONTROL.test(tool)) {
        warnings.push({
          code: ERROR_CODES.TOOL_NAME_INVALID,
          message: `plugin ${entry.id} reported a tool named ${JSON.stringify(tool)}; names must be 1–${MAX_DISCOVERED_NAME} characters without spaces or control characters. The tool is ignored.`,
        });
        continue;
      }
      if (seen.has(tool)) continue; // declared statically: the manifest's declaration stands
      if (reportedSeen.has(tool)) {
        warnings.push({
          code: ERROR_CODES.TOOL_NAME_INVALID,
          message: `plugin ${entry.id} reported the tool "${tool}" twice; the first is kept`,
        });
        continue;
      }
      reportedSeen.add(tool);
      const unsafe = discoveredSchemaProblem(spec);
      if (unsafe !== undefined) {
        warnings.push({
          code: ERROR_CODES.SCHEMA_UNSAFE,
          message: `plugin ${entry.id} reported the tool "${tool}" with ${unsafe}. The tool is ignored; fix the schema the plugin's get_tools reply sends`,
        });
        continue;
      }
      add(makeTool(entry, fromDiscoveredSpec(spec, manifest, input), withheldReason(spec)), discoveredKnown);
    }
  }
  for (const pluginId of discovered.keys()) {
    if (chosen.get(pluginId)?.state !== 'enabled') {
      warnings.push({
        code: ERROR_CODES.TOOL_NAME_INVALID,
        message: `tools reported by plugin ${pluginId} are ignored: no enabled plugin has that id`,
      });
    }
  }
  // A loop, not push(...): a plugin may report more tools than a call can take arguments.
  for (const tool of discoveredKnown) known.push(tool);

  const knownNames = known.map((tool) => tool.name);
  for (const name of overrides.keys()) {
    if (knownByName.has(name)) continue;
    const near = nearestName(name, knownNames);
    warnings.push({
      code: ERROR_CODES.UNKNOWN_KEY,
      message: `tools.toml: ["${name}"]: no tool has this name${near === undefined ? '' : `; did you mean "${near}"?`} The override is ignored.`,
    });
  }

  const descriptorByName = new Map<string, ToolDescriptor>();
  for (const descriptor of descriptors) descriptorByName.set(descriptor.name, descriptor);

  let availabilityCache: ToolAvailability[] | undefined;
  let availabilityByName: Map<string, ToolAvailability> | undefined;
  let offeredCache: ToolDescriptor[] | undefined;
  let offeredNames: string[] | undefined;
  let searchIndex: SearchIndex | undefined;
  let names: ModelNameTable | undefined;

  const settleAvailability = (list: ToolAvailability[]): ToolAvailability[] => {
    availabilityCache = list;
    availabilityByName = new Map(list.map((item) => [item.name, item]));
    return list;
  };
  // Whether a tool is offered: from the tool (its entry, descriptor, withholding) and the rule
  // below; a kept tool under an equal rule keeps its answer.
  const availabilityRule = (): ((tool: KnownTool) => ToolAvailability) => {
    const rule = createAvailabilityRule(config);
    if (cache === undefined) return rule;
    const inputs = [config.runtime.capabilities, config.runtime.policy.allow, config.runtime.policy.deny];
    // Frozen: a kept answer is shared by the catalogs of every generation that keeps the tool.
    return (tool) => cache.availability(tool, inputs, () => frozenAvailability(rule(tool)));
  };
  const availability = (): ToolAvailability[] => {
    if (availabilityCache !== undefined) return availabilityCache;
    const decide = availabilityRule();
    return settleAvailability(known.map((tool) => decide(tool)));
  };
  if (settle) {
    const decide = availabilityRule();
    const list = new Array<ToolAvailability>(known.length);
    for (let i = 0; i < known.length; i += 1) {
      if (i > 0) yield;
      list[i] = decide(known[i]!);
    }
    settleAvailability(list);
  }
  const offered = (): ToolDescriptor[] => {
    if (offeredCache !== undefined) return offeredCache;
    availability();
    offeredCache = descriptors.filter((descriptor) => availabilityByName?.get(descriptor.name)?.offered === true);
    return offeredCache;
  };
  const nearest = (name: string): string | undefined => {
    offeredNames ??= offered().map((descriptor) => descriptor.name);
    return nearestName(name, offeredNames);
  };
  const nameTable = (): ModelNameTable => {
    names ??= createModelNameTable(knownNames);
    return names;
  };

  const catalog: ResourceCatalog = {
    descriptors,
    warnings,
    get: (name) => descriptorByName.get(name),
    offered,
    availability,
    lookup(requested) {
      availability();
      // Model-API names never contain a dot and every known name does, so accepting both is unambiguous.
      const name = availabilityByName?.has(requested) === true ? requested : (nameTable().fromModel(requested) ?? requested);
      const item = availabilityByName?.get(name);
      if (item === undefined) {
        const near = nearest(name);
        return near === undefined ? { status: 'not_found' } : { status: 'not_found', nearest: near };
      }
      const descriptor = descriptorByName.get(name);
      if (item.offered && descriptor !== undefined) return { status: 'offered', descriptor };
      const reason = item.reason ?? { code: ERROR_CODES.TOOL_UNAVAILABLE, message: `${name} is not offered` };
      return descriptor === undefined ? { status: 'unavailable', reason } : { status: 'unavailable', descriptor, reason };
    },
    nearest,
    search(query, searchOptions = {}) {
      const limit = searchOptions.limit ?? 10;
      if (!(limit > 0)) return [];
      searchIndex ??= createSearchIndex(offered());
      return searchIndex.search(query, Math.floor(limit));
    },
    withDiscoveredTools(pluginId, specs) {
      const next = new Map(discovered);
      next.set(pluginId, specs);
      return buildCatalog({ ...input, discovered: next });
    },
    toModelToolName: (name) => nameTable().toModel(name),
    fromModelToolName: (modelName) => nameTable().fromModel(modelName),
    render(format, list = offered()) {
      const table = nameTable();
      const foreign = list.filter((descriptor) => table.toModel(descriptor.name) === undefined).map((descriptor) => descriptor.name);
      // Descriptors from elsewhere get names after this catalog's own, so they can never take one.
      const names = foreign.length === 0 ? table : createModelNameTable([...knownNames, ...foreign]);
      return renderTools(list, format, { names });
    },
  };
  return Object.freeze(catalog);
}

function createAvailabilityRule(config: CatalogConfigView): (tool: KnownTool) => ToolAvailability {
  const granted = new Set<string>();
  for (const capability of config.runtime.capabilities) {
    if (capability === '*') for (const standard of CAPABILITIES) granted.add(standard);
    else granted.add(capability);
  }
  const { allow, deny } = config.runtime.policy;
  const allowMatchers = allow.map(compileToolGlob);
  const denyMatchers = deny.map((pattern) => ({ pattern, matches: compileToolGlob(pattern) }));
  return (tool) => {
    const { name, plugin, entry, descriptor } = tool;
    const no = (code: string, message: string): ToolAvailability => ({ name, plugin, offered: false, reason: { code, message } });
    if (entry.state !== 'enabled' || descriptor === undefined) {
      const headline = entry.reasons[0];
      return no(
        headline?.code ?? ERROR_CODES.TOOL_UNAVAILABLE,
        `${name} is not offered: plugin ${plugin} is ${entry.state}${headline === undefined ? '' : ` (${headline.message})`}`,
      );
    }
    if (tool.withheld !== undefined) return no(tool.withheld.code, tool.withheld.message);
    const missing = descriptor.contract.capabilities.filter((capability) => !granted.has(capability));
    if (missing.length > 0) {
      return no(
        ERROR_CODES.CAPABILITY_DENIED,
        `${name} needs ${missing.length === 1 ? 'capability' : 'capabilities'} ${missing.join(', ')}, which [runtime] capabilities does not grant; add ${missing.length === 1 ? 'it' : 'them'} to [runtime] capabilities in runtime.toml to offer this tool`,
      );
    }
    const denied = denyMatchers.find((matcher) => matcher.matches(name));
    if (denied !== undefined) {
      return no(
        ERROR_CODES.POLICY_DENIED,
        `${name} is denied by [runtime.policy] deny "${denied.pattern}"; remove that entry from runtime.toml to offer this tool`,
      );
    }
    if (!allowMatchers.some((matches) => matches(name))) {
      return no(
        ERROR_CODES.POLICY_DENIED,
        `${name} matches no [runtime.policy] allow glob (${allow.map((pattern) => `"${pattern}"`).join(', ') || 'the list is empty'}); add "${name}" or "${plugin}.*" to it in runtime.toml to offer this tool`,
      );
    }
    return { name, plugin, offered: true };
  };
}

type ToolFields = Omit<ToolDescriptorFields, 'name' | 'plugin' | 'contract'> & { contract: ToolContract };

function effectiveRetries(declared: number, input: BuildInput): number {
  return declared > 0 ? declared : input.config.runtime.max_retries;
}

function fromBundledSpec(spec: ToolSpec, manifest: PluginManifest, input: BuildInput): ToolFields {
  const declared = spec.contract;
  const contract: ToolContract = {
    ...declared,
    capabilities: declared.capabilities.length > 0 ? declared.capabilities : manifest.capabilities,
    sandbox: declared.sandbox !== 'no-isolation' ? declared.sandbox : manifest.sandbox,
    deadlineMs: Math.min(declared.deadlineMs, input.config.runtime.tool_timeout_seconds * 1000),
    maxRetries: effectiveRetries(declared.maxRetries, input),
  };
  return withSchemas(spec.name, spec.description, spec.tags, spec.examples, spec.inputSchema, spec.outputSchema, contract, 'bundled');
}

function fromManifestTool(tool: ManifestTool, manifest: PluginManifest, input: BuildInput): ToolFields {
  const sideEffects = tool.side_effects ?? manifest.side_effects;
  const seconds = tool.timeout_seconds ?? manifest.runtime?.timeout_seconds ?? 30;
  const contract: ToolContract = {
    sideEffects,
    capabilities: manifest.capabilities,
    sandbox: manifest.sandbox,
    deadlineMs: Math.min(seconds, input.config.runtime.tool_timeout_seconds) * 1000,
    maxRetries: input.config.runtime.max_retries,
    idempotent: tool.idempotent ?? !sideEffects,
    isolation: manifest.runtime === undefined ? 'inline' : 'process',
    approval: tool.approval ?? 'auto',
  };
  return withSchemas(tool.name, tool.description, tool.tags, [], tool.input_schema, tool.output_schema, contract, 'manifest');
}

// A running plugin's report is untrusted: plugin-level facts from the reviewed manifest win.
/**
 * What is wrong with the schemas a running plugin reported for a tool, or undefined. They are the
 * plugin's word, so the limits that guard the validator guard the catalog too: a schema nested
 * thousands deep would overflow the stack of everything that walks or renders descriptors (`tools
 * list --json`, a model request), and one with an outside `$ref` could never be compiled for a call.
 */
function discoveredSchemaProblem(spec: ToolSpec): string | undefined {
  for (const [key, schema] of [
    ['inputSchema', spec.inputSchema],
    ['outputSchema', spec.outputSchema],
  ] as const) {
    if (!isRecord(schema)) continue;
    const problem = checkSchemaSafety(schema).problem;
    if (problem !== undefined) return `an ${key} where ${problem}`;
    // Serializing is safe once the depth is known to be bounded.
    const bytes = JSON.stringify(schema).length;
    if (bytes > DEFAULT_SCHEMA_LIMITS.maxBytes) return `an ${key} of ${bytes} bytes, over the ${DEFAULT_SCHEMA_LIMITS.maxBytes}-byte limit`;
  }
  return undefined;
}

function fromDiscoveredSpec(spec: ToolSpec, manifest: PluginManifest, input: BuildInput): ToolFields {
  const declared = resolveContract(isRecord(spec.contract) ? (spec.contract as Partial<ToolContract>) : undefined);
  const sideEffects = declared.sideEffects === true || manifest.side_effects;
  const runtimeSeconds = manifest.runtime?.timeout_seconds ?? Infinity;
  const declaredMs = typeof declared.deadlineMs === 'number' && declared.deadlineMs > 0 ? declared.deadlineMs : 30_000;
  const contract: ToolContract = {
    sideEffects,
    capabilities: union(manifest.capabilities, Array.isArray(declared.capabilities) ? declared.capabilities.filter(isString) : []),
    sandbox: manifest.sandbox,
    deadlineMs: Math.min(declaredMs, runtimeSeconds * 1000, input.config.runtime.tool_timeout_seconds * 1000),
    maxRetries: effectiveRetries(Number.isInteger(declared.maxRetries) ? Math.min(Math.max(declared.maxRetries, 0), 10) : 0, input),
    idempotent: declared.idempotent === true && !(sideEffects && !declared.sideEffects),
    isolation: manifest.runtime === undefined ? declared.isolation : 'process',
    approval: declared.approval === 'ask' ? 'ask' : 'auto',
  };
  const tags = Array.isArray(spec.tags) ? spec.tags.filter(isString) : [];
  // An example nested past the schema depth limit could not be valid input anyway: it is dropped.
  const examples = Array.isArray(spec.examples)
    ? spec.examples.filter(
        (example) =>
          isRecord(example) &&
          isString(example.description) &&
          isRecord(example.input) &&
          !nestsDeeperThan(example.input, DEFAULT_SCHEMA_LIMITS.maxDepth),
      )
    : [];
  const inputSchema = isRecord(spec.inputSchema) ? spec.inputSchema : { type: 'object' };
  const outputSchema = isRecord(spec.outputSchema) ? spec.outputSchema : undefined;
  const description = isString(spec.description) ? spec.description : '';
  const fields = withSchemas(spec.name, description, tags, examples, inputSchema, outputSchema, contract, 'discovered');
  // A dynamic source's hints (MCP annotations, title), kept as reported when they are a small JSON object.
  const annotations = (spec as { annotations?: unknown }).annotations;
  return isRecord(annotations) && !nestsDeeperThan(annotations, 4) && JSON.stringify(annotations).length <= 4096
    ? { ...fields, annotations }
    : fields;
}

function withSchemas(
  tool: string,
  description: string,
  tags: readonly string[],
  examples: readonly ToolExample[],
  inputSchema: Readonly<Record<string, unknown>>,
  outputSchema: Readonly<Record<string, unknown>> | undefined,
  contract: ToolContract,
  source: ToolSource,
): ToolFields {
  return outputSchema === undefined
    ? { tool, description, tags, examples, inputSchema, contract, source }
    : { tool, description, tags, examples, inputSchema, outputSchema, contract, source };
}

/** A discovered spec's `unavailable: { code, message }` (a dynamic tool source withholding it), when well-formed. */
function withheldReason(spec: ToolSpec): CatalogReason | undefined {
  const reason = (spec as { unavailable?: unknown }).unavailable;
  if (!isRecord(reason) || !isString(reason.code) || !isString(reason.message)) return undefined;
  return { code: reason.code, message: reason.message };
}

function union(left: readonly string[], right: readonly string[]): string[] {
  return [...new Set([...left, ...right])];
}

function isString(value: unknown): value is string {
  return typeof value === 'string';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
