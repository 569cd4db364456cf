// Build-time linking: finds every workspace package under plugins/ that has a plugin.toml,
// validates it, computes its tools' JSON Schemas from their zod inputs, and renders the app's
// bundled index. Nobody edits a list by hand; removing a plugin folder unlinks it.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse, TomlError } from 'smol-toml';
import {
  resolveContract,
  type PluginCode,
  type PluginContract,
  type PluginDefinition,
  type PluginManifest,
  type ToolImplementation,
  type ToolSpec,
} from '@trellis/sdk';
import { formatIssues, issueToString } from '@trellis/sdk/internal';
import { PluginManifestSchema, toolJsonSchema } from '@trellis/sdk/schema';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { bundledManifestDigest } from '@trellis/registry';

/** One plugin package found in the workspace, ready to be embedded. */
export interface LinkedPlugin {
  readonly packageName: string;
  /** The plugin folder relative to the workspace root, e.g. `plugins/core-fs`. */
  readonly folder: string;
  /** Absolute path of the TypeScript entry with the plugin's definition (`definePlugin`). */
  readonly entry: string;
  /**
   * Absolute path of its code entry (`definePluginCode`, exported as `./code`), when the package
   * has one: what the host imports on the first call instead of the definition.
   */
  readonly codeEntry?: string;
  readonly manifest: PluginManifest;
  readonly tools: readonly ToolSpec[];
  readonly settings?: { key: string; jsonSchema: Record<string, unknown>; defaults: Record<string, unknown> };
  /** True when the plugin's definition has a `toolSource` (tools learned at run time). */
  readonly dynamicTools?: boolean;
  /** The contracts besides tools its code implements (`provider`, `connector`). */
  readonly contracts?: readonly PluginContract[];
  /** Its tools that have a canonicalize hook. */
  readonly canonicalizing?: readonly string[];
}

/** The result of linking: the plugins, or every problem found (the build fails on any). */
export interface LinkResult {
  readonly plugins: readonly LinkedPlugin[];
  readonly errors: readonly string[];
}

/** Reads and validates every `plugins/<folder>/plugin.toml` of a workspace, then imports each plugin to describe its tools. */
export async function linkBundledPlugins(workspaceRoot: string): Promise<LinkResult> {
  const errors: string[] = [];
  const found: Array<{ folder: string; packageName: string; entry: string; codeEntry?: string; manifest: PluginManifest }> = [];
  const pluginsDir = join(workspaceRoot, 'plugins');
  const folders = existsSync(pluginsDir) ? readdirSync(pluginsDir).sort() : [];

  for (const name of folders) {
    const folder = `plugins/${name}`;
    const manifestPath = join(pluginsDir, name, 'plugin.toml');
    const packagePath = join(pluginsDir, name, 'package.json');
    if (!existsSync(manifestPath)) continue;
    if (!existsSync(packagePath)) {
      errors.push(`${folder}: has a plugin.toml but no package.json; a bundled plugin is a workspace package`);
      continue;
    }
    let raw: unknown;
    try {
      raw = parse(readFileSync(manifestPath, 'utf8'));
    } catch (error) {
      const where = error instanceof TomlError ? `:${error.line}:${error.column}` : '';
      const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
      errors.push(`${folder}/plugin.toml${where}: ${reason}`);
      continue;
    }
    const parsed = PluginManifestSchema.safeParse(raw);
    if (!parsed.success) {
      for (const issue of formatIssues(parsed.error)) errors.push(`${folder}/plugin.toml: ${issueToString(issue)}`);
      continue;
    }
    if (parsed.data.runtime !== undefined) {
      errors.push(`${folder}/plugin.toml: runtime: a bundled plugin runs in process; remove [runtime] or move the plugin out of plugins/`);
      continue;
    }
    const pkg = JSON.parse(readFileSync(packagePath, 'utf8')) as {
      name?: string;
      exports?: Record<string, Record<string, string> | string>;
    };
    const exportsDot = pkg.exports?.['.'];
    const source = typeof exportsDot === 'object' ? exportsDot['@trellis/source'] : undefined;
    if (pkg.name === undefined || source === undefined) {
      errors.push(`${folder}/package.json: needs "name" and exports["."]["@trellis/source"] pointing at src/index.ts`);
      continue;
    }
    const exportsCode = pkg.exports?.['./code'];
    const codeSource = typeof exportsCode === 'object' ? exportsCode['@trellis/source'] : undefined;
    if (exportsCode !== undefined && codeSource === undefined) {
      errors.push(`${folder}/package.json: exports["./code"] needs a "@trellis/source" condition pointing at the code entry (src/code.ts)`);
      continue;
    }
    found.push({
      folder,
      packageName: pkg.name,
      entry: resolve(pluginsDir, name, source),
      ...(codeSource !== undefined ? { codeEntry: resolve(pluginsDir, name, codeSource) } : {}),
      manifest: parsed.data,
    });
  }

  const byId = new Map<string, string>();
  for (const plugin of found) {
    const other = byId.get(plugin.manifest.id);
    if (other !== undefined) {
      errors.push(
        `${plugin.folder}/plugin.toml: id: "${plugin.manifest.id}" is already used by ${other}/plugin.toml; plugin ids must be unique`,
      );
    } else byId.set(plugin.manifest.id, plugin.folder);
  }
  if (errors.length > 0) return { plugins: [], errors };

  const plugins: LinkedPlugin[] = [];
  for (const plugin of found) {
    let definition: PluginDefinition | undefined;
    try {
      const mod = (await import(pathToFileURL(plugin.entry).href)) as { plugin?: PluginDefinition };
      definition = mod.plugin;
    } catch (error) {
      errors.push(
        `${relativeTo(workspaceRoot, plugin.entry)}: cannot be imported: ${error instanceof Error ? error.message : String(error)}`,
      );
      continue;
    }
    if (definition === undefined || typeof definition !== 'object' || !Array.isArray(definition.tools)) {
      errors.push(
        `${relativeTo(workspaceRoot, plugin.entry)}: must export \`plugin = definePlugin({ manifest: { id: "${plugin.manifest.id}" }, tools })\` (the id is required, and equal to the id in plugin.toml)`,
      );
      continue;
    }
    const problems = checkDefinition(plugin.manifest, definition);
    if (problems.length > 0) {
      errors.push(...problems.map((p) => `${relativeTo(workspaceRoot, plugin.entry)}: ${p}`));
      continue;
    }
    if (plugin.codeEntry !== undefined) {
      let code: unknown;
      try {
        code = ((await import(pathToFileURL(plugin.codeEntry).href)) as { plugin?: unknown }).plugin;
      } catch (error) {
        errors.push(
          `${relativeTo(workspaceRoot, plugin.codeEntry)}: cannot be imported: ${error instanceof Error ? error.message : String(error)}`,
        );
        continue;
      }
      const mismatches = pluginCodeProblems(definition, code, relativeTo(workspaceRoot, plugin.entry));
      if (mismatches.length > 0) {
        errors.push(...mismatches.map((p) => `${relativeTo(workspaceRoot, plugin.codeEntry!)}: ${p}`));
        continue;
      }
    }
    const tools: ToolSpec[] = definition.tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: toolJsonSchema(tool.input),
      ...(tool.output ? { outputSchema: toolJsonSchema(tool.output) } : {}),
      tags: [...(tool.tags ?? [])],
      examples: [...(tool.examples ?? [])],
      contract: resolveContract({
        capabilities: plugin.manifest.capabilities,
        sandbox: plugin.manifest.sandbox,
        ...tool.contract,
      }),
    }));
    // The runtime compiles bundled schemas without ajv's meta-schema check (it costs every process
    // ~35 ms on its first call), so the check happens here, once, at build time.
    const invalid = tools.flatMap((tool) =>
      metaSchemaProblems(tool.inputSchema).map(
        (p) => `tool "${tool.name}": its input schema is not valid JSON Schema 2020-12 (${p}); fix the tool's zod input`,
      ),
    );
    if (invalid.length > 0) {
      errors.push(...invalid.map((p) => `${relativeTo(workspaceRoot, plugin.entry)}: ${p}`));
      continue;
    }
    let settings: LinkedPlugin['settings'];
    if (definition.settings) {
      const defaults = definition.settings.schema.safeParse({});
      if (!defaults.success) {
        errors.push(
          `${relativeTo(workspaceRoot, plugin.entry)}: settings schema must accept {} (safe defaults for every key): ${formatIssues(defaults.error).map(issueToString).join('; ')}`,
        );
        continue;
      }
      settings = {
        key: definition.settings.key,
        jsonSchema: toolJsonSchema(definition.settings.schema),
        defaults: defaults.data as Record<string, unknown>,
      };
    }
    const contracts = CONTRACT_KINDS.filter((kind) => definition[kind] !== undefined);
    plugins.push({
      ...plugin,
      tools,
      canonicalizing: definition.tools.filter((tool) => typeof tool.canonicalize === 'function').map((tool) => tool.name),
      ...(settings ? { settings } : {}),
      ...(typeof definition.toolSource === 'function' ? { dynamicTools: true } : {}),
      ...(contracts.length > 0 ? { contracts } : {}),
    });
  }
  return { plugins, errors };
}

let metaSchemaChecker: Ajv2020 | undefined;

/** Where `schema` breaks the JSON Schema 2020-12 meta-schema, as `path message` lines (none when valid). */
export function metaSchemaProblems(schema: Readonly<Record<string, unknown>>): string[] {
  metaSchemaChecker ??= new Ajv2020({ strict: false, logger: false, validateFormats: false, allErrors: true });
  if (metaSchemaChecker.validateSchema(schema) === true) return [];
  return (metaSchemaChecker.errors ?? []).map((e) => `${e.instancePath === '' ? '(root)' : e.instancePath} ${e.message ?? 'is invalid'}`);
}

const CONTRACT_KINDS: readonly PluginContract[] = ['provider', 'connector'];

function checkDefinition(manifest: PluginManifest, definition: PluginDefinition): string[] {
  const problems: string[] = [];
  // A provider or connector is found by kind: its code must export the contract, and only it may.
  for (const kind of CONTRACT_KINDS) {
    const exported = definition[kind] as { create?: unknown } | undefined;
    if (manifest.kind === kind && typeof exported?.create !== 'function') {
      problems.push(
        `plugin.toml says kind = "${kind}" but the code exports no ${kind}; add \`${kind}: { create(ctx) {…} }\` to definePlugin`,
      );
    } else if (manifest.kind !== kind && exported !== undefined) {
      problems.push(
        `the code exports a ${kind} but plugin.toml says kind = "${manifest.kind}"; set kind = "${kind}" or remove the ${kind}`,
      );
    }
  }
  // One rule for the id: definePlugin must name it, and it must equal plugin.toml's (one message says both).
  if (definition.manifest?.id !== manifest.id) {
    const given =
      definition.manifest?.id === undefined
        ? 'manifest.id is missing'
        : `manifest.id is "${String(definition.manifest.id)}" but plugin.toml says "${manifest.id}"`;
    problems.push(`${given}; definePlugin needs manifest: { id: "${manifest.id}" } (required, and equal to the id in plugin.toml)`);
  }
  for (const [key, value] of Object.entries(definition.manifest ?? {})) {
    if (key === 'id') continue;
    const expected = (manifest as Record<string, unknown>)[key];
    if (JSON.stringify(value) !== JSON.stringify(expected)) {
      problems.push(
        `manifest.${key} disagrees with plugin.toml, the source of truth for every field but the id; remove ${key} from definePlugin (keep id)`,
      );
    }
  }
  const names = new Set<string>();
  for (const tool of definition.tools) {
    if (names.has(tool.name)) problems.push(`tool "${tool.name}" is defined twice`);
    names.add(tool.name);
  }
  return problems;
}

const CODE_PARTS = ['setup', 'dispose', 'toolSource', 'provider', 'connector'] as const;

/**
 * Where a plugin's code entry (`definePluginCode`) differs from its definition (`definePlugin`):
 * it must export `plugin` with the same tools, in any order, and the very same functions and
 * objects, so the code the host runs is the code the build described. `definitionFile` names the
 * other file in the messages.
 */
export function pluginCodeProblems(definition: PluginDefinition, code: unknown, definitionFile: string): string[] {
  if (code === null || typeof code !== 'object' || !Array.isArray((code as PluginCode).tools)) {
    return ['must export `plugin = definePluginCode({ tools })`, the code of the plugin defined in ' + definitionFile];
  }
  const problems: string[] = [];
  const given = new Map<string, ToolImplementation>();
  for (const [index, tool] of (code as PluginCode).tools.entries()) {
    if (tool === null || typeof tool !== 'object' || typeof tool.name !== 'string') {
      problems.push(`tools[${index}] is not a { name, run } object`);
      continue;
    }
    if (given.has(tool.name)) problems.push(`tool "${tool.name}" is listed twice`);
    given.set(tool.name, tool);
  }
  for (const tool of definition.tools) {
    const implementation = given.get(tool.name);
    if (implementation === undefined) {
      problems.push(`tool "${tool.name}" is missing; add { name: "${tool.name}", run } with the run function ${definitionFile} uses`);
      continue;
    }
    if (implementation.run !== tool.run) {
      problems.push(
        `tool "${tool.name}": its run is not the one ${definitionFile} gives it; import that function and use it in both places`,
      );
    }
    if (implementation.canonicalize !== tool.canonicalize) {
      problems.push(
        tool.canonicalize === undefined
          ? `tool "${tool.name}": has a canonicalize that ${definitionFile} does not give it; remove it here or add it there`
          : implementation.canonicalize === undefined
            ? `tool "${tool.name}": its canonicalize is missing; add the one ${definitionFile} gives it`
            : `tool "${tool.name}": its canonicalize is not the one ${definitionFile} gives it; import that function and use it in both places`,
      );
    }
  }
  const defined = new Set(definition.tools.map((tool) => tool.name));
  for (const name of given.keys()) {
    if (!defined.has(name)) problems.push(`tool "${name}" is not defined in ${definitionFile}; remove it here or define it there`);
  }
  for (const part of CODE_PARTS) {
    const here = (code as PluginCode)[part];
    const there = definition[part];
    if (here === there) continue;
    problems.push(
      there === undefined
        ? `${part} is given here but not in ${definitionFile}; remove it here or add it there`
        : here === undefined
          ? `${part} is missing; add the one ${definitionFile} gives the plugin`
          : `${part} is not the one ${definitionFile} gives the plugin; use the same value in both places`,
    );
  }
  return problems;
}

function relativeTo(root: string, path: string): string {
  return relative(root, path).split(sep).join('/');
}

/** Renders `src/bundled.gen.ts`: static descriptors, lazy imports, and the embedded config files. */
export function renderBundledIndex(options: {
  plugins: readonly LinkedPlugin[];
  outDir: string;
  /** Named values embedded as JSON: config texts and their pre-parsed forms. */
  embedded: Readonly<Record<string, { value: unknown; type?: string }>>;
  version: string;
}): string {
  const lines: string[] = [
    '// Generated by apps/trellis/scripts/generateBundledIndex.ts from plugins/*/plugin.toml. Do not edit;',
    '// add or remove a workspace package under plugins/ and rebuild.',
    "import type { PluginCode } from '@trellis/sdk';",
    "import type { BundledPluginDescriptor } from '@trellis/sdk/internal';",
    "import type { RuntimeConfig } from '@trellis/config';",
    "import type { ProfilesData } from '@trellis/registry';",
    "import type { ToolOverrides } from '@trellis/catalog';",
    '',
    `export const TRELLIS_VERSION = ${JSON.stringify(options.version)};`,
    '',
  ];
  for (const [name, { value, type }] of Object.entries(options.embedded)) {
    lines.push(`export const ${name}${type ? `: ${type}` : ''} = ${JSON.stringify(value)};`, '');
  }
  lines.push("const inSource = import.meta.url.endsWith('.ts');", '');
  // The data is one JSON.parse of a string literal: V8 parses JSON much faster than the same
  // object written as JavaScript, and this is on every command's startup path.
  const data = options.plugins.map((plugin) => ({
    packageName: plugin.packageName,
    manifest: plugin.manifest,
    manifestSha256: bundledManifestDigest(plugin.manifest),
    tools: plugin.tools,
    ...(plugin.settings ? { settings: plugin.settings } : {}),
    ...(plugin.dynamicTools ? { dynamicTools: true } : {}),
    ...(plugin.contracts ? { contracts: plugin.contracts } : {}),
    ...(plugin.canonicalizing ? { canonicalizing: plugin.canonicalizing } : {}),
  }));
  lines.push(
    `const DATA = JSON.parse(${JSON.stringify(JSON.stringify(data))}) as Array<Omit<BundledPluginDescriptor, 'load' | 'moduleUrl'>>;`,
    '',
  );
  lines.push('export const BUNDLED_PLUGINS: readonly BundledPluginDescriptor[] = [');
  options.plugins.forEach((plugin, index) => {
    // The worker URL of a plugin run from source; its built chunk otherwise. Both are the module
    // `load` imports: the code entry when the package has one.
    let spec = relative(options.outDir, plugin.codeEntry ?? plugin.entry)
      .split(sep)
      .join('/');
    if (!spec.startsWith('.')) spec = `./${spec}`;
    const id = plugin.manifest.id;
    lines.push('  {');
    lines.push(`    ...DATA[${index}]!,`);
    const specifier = plugin.codeEntry === undefined ? plugin.packageName : `${plugin.packageName}/code`;
    lines.push(`    load: async () => ((await import(${JSON.stringify(specifier)})) as { plugin: PluginCode }).plugin,`);
    lines.push(
      `    moduleUrl: inSource ? new URL(${JSON.stringify(spec)}, import.meta.url).href : new URL(${JSON.stringify(`./plugins/${id}.js`)}, import.meta.url).href,`,
    );
    lines.push('  },');
  });
  lines.push('];', '');
  return lines.join('\n');
}

/**
 * The bundled plugins are the app's declared dependencies: the app's package.json must list each
 * plugin package as `workspace:*`, and nothing else under the plugin scope. Returns the exact edits
 * when the two differ, so "add a package and rebuild" stays one step the build explains.
 */
export function undeclaredPluginProblems(
  appPackage: { dependencies?: Record<string, string>; devDependencies?: Record<string, string> },
  plugins: readonly Pick<LinkedPlugin, 'packageName' | 'folder'>[],
  appPackageFile = 'apps/trellis/package.json',
): string[] {
  // devDependencies: the app bundles every plugin, so its published package depends on nothing.
  const declared = { ...appPackage.dependencies, ...appPackage.devDependencies };
  const wanted = new Set(plugins.map((p) => p.packageName));
  const problems: string[] = [];
  for (const plugin of plugins) {
    if (declared[plugin.packageName] !== 'workspace:*') {
      problems.push(
        `${appPackageFile}: devDependencies: add "${plugin.packageName}": "workspace:*" (the bundled plugin in ${plugin.folder}), then run pnpm install`,
      );
    }
  }
  for (const name of Object.keys(declared).sort()) {
    if (name.startsWith('@trellis/plugin-') && !wanted.has(name)) {
      problems.push(`${appPackageFile}: devDependencies: remove "${name}" (no folder under plugins/ provides it), then run pnpm install`);
    }
  }
  return problems;
}

/** The tsup entries that give each bundled plugin a chunk of its own at `dist/plugins/<id>.js`. */
export function pluginEntries(plugins: readonly LinkedPlugin[]): Record<string, string> {
  return Object.fromEntries(plugins.map((p) => [`plugins/${p.manifest.id}`, p.codeEntry ?? p.entry]));
}

/** The workspace root above a folder inside it (the folder holding pnpm-workspace.yaml). */
export function findWorkspaceRoot(from: string): string {
  let dir = resolve(from);
  while (!existsSync(join(dir, 'pnpm-workspace.yaml'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no pnpm-workspace.yaml above ${from}`);
    dir = parent;
  }
  return dir;
}
