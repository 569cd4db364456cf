import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import type { RuntimeConfig } from '@trellis/config';
import { formatKeyPath } from '@trellis/sdk/internal';
import type { PluginManifest } from '@trellis/sdk';
import type { BundledPluginDescriptor } from '@trellis/sdk/internal';
import { deepMerge } from './deepMerge.ts';
import { registryDependency } from './prepareRegistry.ts';

/** Inputs of {@link resolvePluginSettings}. */
export interface ResolvePluginSettingsOptions {
  readonly id: string;
  /** The winning candidate's manifest (for `config_schema` of external plugins). */
  readonly manifest: PluginManifest | null;
  /** The bundled descriptor when the plugin is bundled (for `settings`). */
  readonly descriptor?: BundledPluginDescriptor | undefined;
  readonly config: RuntimeConfig;
}

/** Resolved settings, or the problems as `key.path: message` lines. */
export interface PluginSettingsResult {
  readonly value: Record<string, unknown> | null;
  readonly errors: readonly string[];
}

/**
 * The settings validators of one run (one snapshot build): one ajv, created on the first schema,
 * and its compiled validators by schema object and by schema text. Dropped with the run, so
 * nothing outlives it.
 */
export class SettingsValidators {
  private ajv: Ajv | null = null;
  private readonly bySchemaObject = new WeakMap<object, ValidateFunction | Error>();
  private readonly bySchemaText = new Map<string, ValidateFunction | Error>();

  /** The schema's validator, or why it does not compile; `byText` also shares it between equal schemas. */
  compile(schema: Readonly<Record<string, unknown>>, byText: boolean): ValidateFunction | Error {
    const cachedByObject = this.bySchemaObject.get(schema);
    if (cachedByObject !== undefined) return cachedByObject;
    const text = byText ? JSON.stringify(schema) : '';
    const cachedByText = byText ? this.bySchemaText.get(text) : undefined;
    if (cachedByText !== undefined) return cachedByText;
    if (this.ajv === null) {
      const AjvClass = registryDependency('Ajv');
      this.ajv = new AjvClass({ allErrors: true, strict: false });
    }
    let out: ValidateFunction | Error;
    try {
      out = this.ajv.compile(schema);
    } catch (error) {
      out = error instanceof Error ? error : new Error(String(error));
    }
    this.bySchemaObject.set(schema, out);
    if (byText) this.bySchemaText.set(text, out);
    return out;
  }
}

function pointerToPath(pointer: string): string[] {
  return pointer === ''
    ? []
    : pointer
        .slice(1)
        .split('/')
        .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function has(obj: unknown, path: readonly string[]): boolean {
  let cur = obj;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object' || !Object.prototype.hasOwnProperty.call(cur, key)) return false;
    cur = (cur as Record<string, unknown>)[key];
  }
  return true;
}

function describe(error: ErrorObject): { extra: string[]; message: string } {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'additionalProperties') return { extra: [String(params.additionalProperty)], message: 'unknown key' };
  if (error.keyword === 'required') return { extra: [String(params.missingProperty)], message: 'is required' };
  if (error.keyword === 'enum')
    return { extra: [], message: `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}` };
  return { extra: [], message: error.message ?? error.keyword };
}

/** Formats ajv errors as `key.path: message`, naming the config table the bad value came from. */
function formatAjvErrors(
  errors: readonly ErrorObject[],
  sources: ReadonlyArray<{ prefix: readonly string[]; patch: unknown }>,
  fallback: readonly string[],
): string[] {
  const lines = new Set<string>();
  for (const error of errors) {
    const { extra, message } = describe(error);
    const path = [...pointerToPath(error.instancePath), ...extra];
    // Blame the last patch that set this key (or its nearest parent), else the fallback table.
    let prefix = fallback;
    for (let n = path.length; n >= 0; n -= 1) {
      const found = [...sources].reverse().find((s) => has(s.patch, path.slice(0, n)) && n > 0);
      if (found !== undefined) {
        prefix = found.prefix;
        break;
      }
    }
    lines.add(`${formatKeyPath([...prefix, ...path])}: ${message}`);
  }
  return [...lines];
}

/**
 * A plugin's settings. Bundled plugin with `settings`: its defaults, deep-merged with
 * `[runtime.tools.<key>]`, then with `[plugins.entries.<id>] config`, validated by its JSON
 * Schema (ajv; skipped when nothing was patched, the defaults are valid by construction).
 * External plugin: `[plugins.entries.<id>] config`, validated by the manifest's `config_schema`
 * when it has one. Without a schema the entry config is passed through. Pure: compiled validators
 * are cached for this call only (see {@link resolvePluginSettingsWith}).
 */
export function resolvePluginSettings(options: ResolvePluginSettingsOptions): PluginSettingsResult {
  return resolvePluginSettingsWith(options, new SettingsValidators());
}

/** {@link resolvePluginSettings} with the validators of the run it belongs to (shared by its plugins). */
export function resolvePluginSettingsWith(options: ResolvePluginSettingsOptions, validators: SettingsValidators): PluginSettingsResult {
  const { id, config } = options;
  const entryConfig = config.plugins.entries[id]?.config;
  const entryPrefix = ['plugins', 'entries', id, 'config'];
  const settings = options.descriptor?.settings;
  if (settings !== undefined) {
    const toolPatch = config.runtime.tools[settings.key];
    if (toolPatch === undefined && entryConfig === undefined) return { value: deepMerge(settings.defaults, {}), errors: [] };
    const merged = deepMerge(deepMerge(settings.defaults, toolPatch ?? {}), entryConfig ?? {});
    return validate(
      validators.compile(settings.jsonSchema, false),
      merged,
      [
        { prefix: ['runtime', 'tools', settings.key], patch: toolPatch },
        { prefix: entryPrefix, patch: entryConfig },
      ],
      ['runtime', 'tools', settings.key],
    );
  }
  const value = deepMerge({}, entryConfig ?? {});
  const schema = options.descriptor === undefined ? options.manifest?.config_schema : undefined;
  if (schema === undefined) return { value, errors: [] };
  return validate(validators.compile(schema, true), value, [{ prefix: entryPrefix, patch: entryConfig }], entryPrefix);
}

function validate(
  validator: ValidateFunction | Error,
  value: Record<string, unknown>,
  sources: ReadonlyArray<{ prefix: readonly string[]; patch: unknown }>,
  fallback: readonly string[],
): PluginSettingsResult {
  if (validator instanceof Error) {
    return {
      value: null,
      errors: [
        `the plugin's settings schema cannot be compiled (${validator.message.split('\n', 1)[0]}); this is a bug in the plugin, report it to its author`,
      ],
    };
  }
  if (validator(value)) return { value, errors: [] };
  return { value: null, errors: formatAjvErrors(validator.errors ?? [], sources, fallback) };
}
