import { parse, TomlError } from 'smol-toml';
import { ERROR_CODES } from '@trellis/sdk';
import type { ToolExample } from '@trellis/sdk';
import type { CatalogReason } from './CatalogSnapshotView.ts';
import { nearestName } from './nearestName.ts';

/** What `config/tools.toml` may change about one tool. Each field given replaces the tool's own. */
export interface ToolOverride {
  readonly description?: string;
  readonly tags?: readonly string[];
  readonly examples?: readonly ToolExample[];
}

/** Overrides by fully qualified tool name. */
export type ToolOverrides = Readonly<Record<string, ToolOverride>>;

/** The result of `parseToolOverrides`: overrides that passed, and what was wrong with the rest. */
export interface ParseToolOverridesResult {
  readonly value: ToolOverrides;
  readonly warnings: CatalogReason[];
  readonly errors: CatalogReason[];
}

/** Options of `parseToolOverrides`. */
export interface ParseToolOverridesOptions {
  /** Named in messages; default `config/tools.toml`. */
  readonly file?: string;
  /** When given, overrides for other names are `UNKNOWN_KEY` warnings (kept in `value` all the same). */
  readonly knownTools?: Iterable<string>;
}

const FIELDS = new Set(['description', 'tags', 'examples']);
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Parses `config/tools.toml`: tables keyed by fully qualified tool name, with `description`, `tags`
 * and `examples`. Both `["core-fs.read"]` and the nested `[core-fs.read]` spell the same tool. A
 * bad entry is dropped with an error; the others still apply. Never throws.
 */
export function parseToolOverrides(text: string, options: ParseToolOverridesOptions = {}): ParseToolOverridesResult {
  const file = options.file ?? 'config/tools.toml';
  const warnings: CatalogReason[] = [];
  const errors: CatalogReason[] = [];
  const value: Record<string, ToolOverride> = Object.create(null) as Record<string, ToolOverride>;
  let document: Record<string, unknown>;
  try {
    document = parse(text) as Record<string, unknown>;
  } catch (error) {
    const where = error instanceof TomlError ? ` at line ${error.line}, column ${error.column}` : '';
    const detail = error instanceof Error ? error.message.split('\n')[0] : String(error);
    errors.push({ code: ERROR_CODES.TOML_SYNTAX, message: `${file}: invalid TOML${where}: ${detail}` });
    return { value, warnings, errors };
  }

  const visit = (table: Record<string, unknown>, path: readonly string[]): void => {
    const keys = Object.keys(table);
    const isEntry = keys.some((key) => FIELDS.has(key));
    const name = path.join('.');
    for (const key of keys) {
      if (FORBIDDEN.has(key)) {
        errors.push({
          code: ERROR_CODES.FORBIDDEN_KEY,
          message: `${file}: ${[...path, key].join('.')}: the key "${key}" is not allowed; remove it`,
        });
        continue;
      }
      const child = table[key];
      if (FIELDS.has(key) && path.length > 0) continue;
      if (isPlainTable(child)) {
        visit(child, [...path, key]);
      } else if (path.length === 0) {
        errors.push({
          code: ERROR_CODES.CONFIG_SCHEMA,
          message: `${file}: ${key}: expected a table of overrides for a tool, e.g. ["core-fs.read"] with description, tags or examples`,
        });
      } else if (isEntry) {
        warnings.push({
          code: ERROR_CODES.UNKNOWN_KEY,
          message: `${file}: ${name}.${key}: unknown key; a tool override may set only description, tags and examples`,
        });
      } else {
        errors.push({
          code: ERROR_CODES.CONFIG_SCHEMA,
          message: `${file}: ${name}.${key}: unknown key; a tool override may set only description, tags and examples`,
        });
      }
    }
    if (!isEntry) return;
    if (!name.includes('.')) {
      errors.push({
        code: ERROR_CODES.CONFIG_SCHEMA,
        message: `${file}: ${name}: not a fully qualified tool name; write the table as ["<plugin-id>.<tool>"]`,
      });
      return;
    }
    const entry = readEntry(table, `${file}: ${name}`, errors);
    if (entry !== undefined) value[name] = entry;
  };
  visit(document, []);

  if (options.knownTools !== undefined) {
    const known = [...options.knownTools];
    const knownSet = new Set(known);
    for (const name of Object.keys(value)) {
      if (knownSet.has(name)) continue;
      const near = nearestName(name, known);
      warnings.push({
        code: ERROR_CODES.UNKNOWN_KEY,
        message: `${file}: ["${name}"]: no tool has this name${near === undefined ? '' : `; did you mean "${near}"?`} The override is ignored.`,
      });
    }
  }
  return { value: { ...value }, warnings, errors };
}

function readEntry(table: Record<string, unknown>, where: string, errors: CatalogReason[]): ToolOverride | undefined {
  const before = errors.length;
  const entry: { description?: string; tags?: string[]; examples?: ToolExample[] } = {};
  const { description, tags, examples } = table;
  if (description !== undefined) {
    if (typeof description === 'string' && description.trim().length > 0 && description.length <= 4096) entry.description = description;
    else
      errors.push({
        code: ERROR_CODES.CONFIG_SCHEMA,
        message: `${where}.description: expected a non-empty string of at most 4096 characters`,
      });
  }
  if (tags !== undefined) {
    if (Array.isArray(tags) && tags.every((tag) => typeof tag === 'string' && tag.length > 0)) entry.tags = [...(tags as string[])];
    else
      errors.push({
        code: ERROR_CODES.CONFIG_SCHEMA,
        message: `${where}.tags: expected an array of non-empty strings, e.g. tags = ["files"]`,
      });
  }
  if (examples !== undefined) {
    if (!Array.isArray(examples)) {
      errors.push({ code: ERROR_CODES.CONFIG_SCHEMA, message: `${where}.examples: expected an array of { description, input } tables` });
    } else {
      const read: ToolExample[] = [];
      examples.forEach((example: unknown, index) => {
        if (
          isPlainTable(example) &&
          typeof example.description === 'string' &&
          isPlainTable(example.input) &&
          Object.keys(example).length === 2
        ) {
          read.push({ description: example.description, input: example.input });
        } else {
          errors.push({
            code: ERROR_CODES.CONFIG_SCHEMA,
            message: `${where}.examples.${index}: expected { description = "…", input = { … } } and nothing else`,
          });
        }
      });
      entry.examples = read;
    }
  }
  return errors.length === before ? entry : undefined;
}

function isPlainTable(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}
