import { dirname, resolve } from 'node:path';
import { parse, TomlError } from 'smol-toml';
import type { z } from 'zod';
import { ERROR_CODES } from '@trellis/sdk';
import { formatIssues, formatKeyPath, runSteps, type Steps } from '@trellis/sdk/internal';
import type { ErrorCode } from '@trellis/sdk';
import { FORBIDDEN_KEYS, MAX_CONFIG_DEPTH, MAX_REPORTED_PROBLEMS, failed, makeProblem } from './ConfigProblem.ts';
import type { ConfigLoadResult, ConfigProblem } from './ConfigProblem.ts';
import { decodeConfigText } from './decodeConfigText.ts';
import { describeTomlSyntaxError } from './describeTomlSyntaxError.ts';
import { expandEnvString } from './expandEnvString.ts';
import { createKeyLocator } from './locateKey.ts';
import { suggestKey } from './suggestKey.ts';
import { RuntimeConfigSchema } from './RuntimeConfigSchema.ts';
import type { RuntimeConfig } from './RuntimeConfigSchema.ts';
import { tomlIssueMessage } from './tomlIssueMessage.ts';
import { onlyDefaults, runtimeConfigDefaults } from './runtimeConfigDefaults.ts';

/** Options for {@link parseRuntimeConfig}. */
export interface ParseRuntimeConfigOptions {
  /** Shown in every message and in `ConfigProblem.file`: the path as the user knows it. */
  readonly fileName: string;
  /** Where `${VAR}` references are looked up (usually `process.env`). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /**
   * The folder relative `[plugins] paths`, `audit_log` and `debug_log` resolve against.
   * Default: the folder of `fileName`. For the embedded default, pass the workspace.
   */
  readonly baseDir?: string;
}

type KeyPath = ReadonlyArray<string | number>;

interface Pending {
  readonly code: ErrorCode;
  readonly path: KeyPath;
  readonly text: string;
}

/** Problems found so far; past {@link MAX_REPORTED_PROBLEMS} only counted, so hostile files stay cheap. */
interface ProblemList {
  readonly kept: Pending[];
  dropped: number;
  /** The code of the first dropped problem. */
  droppedCode?: ErrorCode;
}

interface WalkContext {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly errors: ProblemList;
  readonly warnings: ProblemList;
  /** Expanded values, kept out of every message. */
  readonly secrets: Set<string>;
  /** Key paths whose value was replaced because of an env problem; schema issues there are noise. */
  readonly envFailed: Set<string>;
  /** Key paths whose value came from a `${VAR}`. */
  readonly expandedKeys: Set<string>;
}

const DROP = Symbol('drop');

function report(list: ProblemList, code: ErrorCode, path: KeyPath, text: () => string): void {
  if (list.kept.length < MAX_REPORTED_PROBLEMS) list.kept.push({ code, path, text: text() });
  else {
    list.droppedCode ??= code;
    list.dropped++;
  }
}

function count(list: ProblemList): number {
  return list.kept.length + list.dropped;
}

/** One config file parsed as a layer: only the keys it sets, checked on their own. */
export interface ConfigLayerParse {
  /**
   * The keys this file sets (no defaults), `${VAR}` expanded (unless expansion was off) and
   * `plugins.paths`, `runtime.audit_log`, `runtime.debug_log` made absolute against `baseDir`.
   * `undefined` whenever `errors` is not empty.
   */
  readonly tree: Record<string, unknown> | undefined;
  /** The whole config this file alone gives (defaults applied); `undefined` on errors. */
  readonly value: RuntimeConfig | undefined;
  readonly warnings: ConfigProblem[];
  readonly errors: ConfigProblem[];
  /** Dotted key paths whose value came from a `${VAR}` (never shown by `config show`). */
  readonly expandedKeys: ReadonlySet<string>;
}

/** Options of {@link parseConfigLayer}. */
export interface ParseConfigLayerOptions extends ParseRuntimeConfigOptions {
  /** Expand `${VAR}` references. False for a layer that is only reported, never applied. Default true. */
  readonly expand?: boolean;
}

/**
 * Parses and validates the text of a `runtime.toml`: decoding (BOM, CRLF, NUL, UTF-8), TOML,
 * nesting and forbidden keys, `${VAR}` expansion, unknown-key warnings, the schema with its
 * defaults, and relative paths. Never throws for bad input; `value` is `undefined` when there are
 * errors. No message ever contains the value of an expanded variable.
 */
export function parseRuntimeConfig(text: string | Uint8Array, options: ParseRuntimeConfigOptions): ConfigLoadResult {
  const layer = parseConfigLayer(text, options);
  return { value: layer.value, warnings: layer.warnings, errors: layer.errors };
}

/**
 * {@link parseRuntimeConfig} for one layer of the config: the same checks, and also the tree of
 * keys the file itself sets, so layers can be merged key by key and each key traced to its file.
 */
export function parseConfigLayer(text: string | Uint8Array, options: ParseConfigLayerOptions): ConfigLayerParse {
  return runSteps(parseConfigLayerSteps(text, options));
}

/** {@link parseConfigLayer}, pausable after the TOML is parsed and after its keys are walked (see `Steps`). */
export function* parseConfigLayerSteps(text: string | Uint8Array, options: ParseConfigLayerOptions): Steps<ConfigLayerParse> {
  const file = options.fileName;
  const none = new Set<string>();
  const decoded = decodeConfigText(text, file);
  if (decoded.problem !== undefined) return { ...failed([decoded.problem]), tree: undefined, expandedKeys: none };

  let document: Record<string, unknown>;
  try {
    document = parse(decoded.text, { maxDepth: MAX_CONFIG_DEPTH });
  } catch (error) {
    return { ...failed([tomlFailure(error, file, decoded.text)]), tree: undefined, expandedKeys: none };
  }
  yield;

  const ctx: WalkContext = {
    env: options.env,
    errors: { kept: [], dropped: 0 },
    warnings: { kept: [], dropped: 0 },
    secrets: new Set(),
    envFailed: new Set(),
    expandedKeys: new Set(),
  };
  const walked = walk(document, [], RuntimeConfigSchema, options.expand ?? true, ctx);
  const tree = walked === DROP ? {} : (walked as Record<string, unknown>);
  const baseDir = options.baseDir ?? dirname(resolve(file));
  const defaults = runtimeConfigDefaults();
  if (count(ctx.errors) === 0 && count(ctx.warnings) === 0 && onlyDefaults(tree, defaults)) {
    // The stock config: validating it would only reproduce the defaults, so skip the schema pass.
    return {
      value: resolvePaths(defaults, baseDir),
      tree: resolveTreePaths(tree, baseDir),
      warnings: [],
      errors: [],
      expandedKeys: ctx.expandedKeys,
    };
  }
  yield;
  const parsed = RuntimeConfigSchema.safeParse(tree, { error: tomlIssueMessage });
  if (!parsed.success) {
    const issues = formatIssues(parsed.error);
    parsed.error.issues.forEach((issue, i) => {
      const keyPath = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
      if (ctx.envFailed.has(formatKeyPath(keyPath))) return;
      report(ctx.errors, ERROR_CODES.CONFIG_SCHEMA, keyPath, () => issues[i]?.message ?? issue.message);
    });
  }

  const locate = createKeyLocator(decoded.text);
  const finish = (list: ProblemList): ConfigProblem[] => {
    const problems = sortByLine(
      list.kept.map((p) => {
        const at = p.path.length > 0 ? locate(p.path) : undefined;
        return makeProblem({
          code: p.code,
          file,
          keyPath: formatKeyPath(p.path),
          line: at?.line,
          column: at?.column,
          text: redact(p.text, ctx.secrets),
        });
      }),
    );
    if (list.dropped > 0) {
      problems.push(
        makeProblem({
          code: list.droppedCode ?? ERROR_CODES.CONFIG_SCHEMA,
          file,
          text: `${list.dropped} more problem${list.dropped === 1 ? '' : 's'} not shown; fix the ones above first`,
        }),
      );
    }
    return problems;
  };
  const warnings = finish(ctx.warnings);
  if (count(ctx.errors) > 0 || !parsed.success)
    return { ...failed(finish(ctx.errors), warnings), tree: undefined, expandedKeys: ctx.expandedKeys };
  return {
    value: resolvePaths(parsed.data, baseDir),
    tree: resolveTreePaths(tree, baseDir),
    warnings,
    errors: [],
    expandedKeys: ctx.expandedKeys,
  };
}

function tomlFailure(error: unknown, file: string, text: string): ConfigProblem {
  if (error instanceof TomlError) {
    const reason = (error.message.split('\n')[0] ?? '').replace(/^Invalid TOML document: /, '');
    if (reason.startsWith('document contains excessively nested structures')) {
      return makeProblem({
        code: ERROR_CODES.CONFIG_TOO_DEEP,
        file,
        line: error.line,
        column: error.column,
        text: `arrays and inline tables nest deeper than ${MAX_CONFIG_DEPTH} levels; flatten this value`,
      });
    }
    return makeProblem({
      code: ERROR_CODES.TOML_SYNTAX,
      file,
      line: error.line,
      column: error.column,
      text: describeTomlSyntaxError(text, error.line) ?? `invalid TOML: ${reason}; fix the file at this position`,
    });
  }
  if (error instanceof RangeError) {
    return makeProblem({
      code: ERROR_CODES.CONFIG_TOO_DEEP,
      file,
      text: `the file nests too deeply to parse (${error.message}); flatten its tables and arrays`,
    });
  }
  return makeProblem({
    code: ERROR_CODES.INTERNAL_ERROR,
    file,
    text: `the TOML parser failed unexpectedly (${error instanceof Error ? error.name : typeof error}); please report this with the file`,
  });
}

type AnyDef = {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  valueType?: z.ZodType;
  element?: z.ZodType;
};

function defOf(schema: z.ZodType): AnyDef {
  return schema._zod.def as unknown as AnyDef;
}

/** Strips defaults, optionals and pipes down to the schema that says what the value looks like. */
function unwrap(schema: z.ZodType | undefined): z.ZodType | undefined {
  let s = schema;
  for (let i = 0; s !== undefined && i < 16; i++) {
    const def = defOf(s);
    if (def.innerType !== undefined) s = def.innerType;
    else if (def.type === 'pipe' && def.in !== undefined) s = def.in;
    else break;
  }
  return s;
}

/**
 * Copies the parsed document into plain objects, refusing forbidden keys and excessive depth,
 * expanding `${VAR}` in strings and warning about keys the schema does not know. `schema` is the
 * part of the schema that describes `value`; `undefined` below an open table.
 */
function walk(value: unknown, path: KeyPath, schema: z.ZodType | undefined, expand: boolean, ctx: WalkContext): unknown {
  if (typeof value === 'string') return expand ? expandString(value, path, ctx) : value;
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  if (path.length >= MAX_CONFIG_DEPTH) {
    report(
      ctx.errors,
      ERROR_CODES.CONFIG_TOO_DEEP,
      path,
      () =>
        `tables and arrays nest deeper than ${MAX_CONFIG_DEPTH} levels (dotted keys and table headers count); flatten this part of the config`,
    );
    return DROP;
  }
  const shape = unwrap(schema);
  const def = shape === undefined ? undefined : defOf(shape);
  if (Array.isArray(value)) {
    const element = def?.type === 'array' ? def.element : undefined;
    const out: unknown[] = [];
    value.forEach((item, i) => {
      const child = walk(item, [...path, i], element, expand, ctx);
      if (child !== DROP) out.push(child);
    });
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const childPath = [...path, key];
    if (FORBIDDEN_KEYS.includes(key)) {
      report(
        ctx.errors,
        ERROR_CODES.FORBIDDEN_KEY,
        childPath,
        () => `the key "${key}" is not allowed anywhere in a config file (it could pollute prototypes); rename or remove it`,
      );
      continue;
    }
    let childSchema: z.ZodType | undefined;
    let known = true;
    if (def?.type === 'object' && def.shape !== undefined) {
      childSchema = Object.hasOwn(def.shape, key) ? def.shape[key] : undefined;
      known = childSchema !== undefined;
      const shapeKeys = Object.keys(def.shape);
      if (!known) report(ctx.warnings, ERROR_CODES.UNKNOWN_KEY, childPath, () => unknownKeyText(key, path, shapeKeys));
    } else if (def?.type === 'record') {
      childSchema = def.valueType;
    }
    const child = walk((value as Record<string, unknown>)[key], childPath, childSchema, expand && known, ctx);
    if (known && child !== DROP) out[key] = child;
  }
  return out;
}

function unknownKeyText(key: string, parent: KeyPath, known: readonly string[]): string {
  const suggestion = suggestKey(key, known);
  if (suggestion !== undefined) return `unknown key, ignored; did you mean \`${suggestion}\`?`;
  const where = parent.length === 0 ? 'at the top level' : `in [${formatKeyPath(parent)}]`;
  return `unknown key, ignored; the keys ${where} are ${known.map((k) => `\`${k}\``).join(', ')}`;
}

function expandString(value: string, path: KeyPath, ctx: WalkContext): string {
  const result = expandEnvString(value, ctx.env);
  if (result.ok) {
    for (const secret of result.expanded) ctx.secrets.add(secret);
    if (result.expanded.length > 0) ctx.expandedKeys.add(formatKeyPath(path));
    return result.value;
  }
  ctx.envFailed.add(formatKeyPath(path));
  if (result.missing.length > 0) {
    const names = listSome(result.missing.map((n) => `\${${n}}`));
    const subject =
      result.missing.length === 1
        ? `environment variable ${result.missing[0]} is`
        : `environment variables ${listSome(result.missing)} are`;
    report(
      ctx.errors,
      ERROR_CODES.ENV_VAR_MISSING,
      path,
      () =>
        `${subject} not set (referenced as ${names}); set ${result.missing.length === 1 ? 'it' : 'them'}, or write $\${ for a literal "\${"`,
    );
  }
  if (result.syntax.length > 0) {
    report(
      ctx.errors,
      ERROR_CODES.ENV_VAR_SYNTAX,
      path,
      () =>
        `bad variable reference ${listSome(result.syntax)}; write \${NAME} (letters, digits and _, not starting with a digit), or $\${ for a literal "\${"`,
    );
  }
  return '';
}

/** `a, b, c` — or, for a hostile number of items, the first five and how many more. */
function listSome(items: readonly string[]): string {
  const shown = items.slice(0, 5).map((item) => (item.length > 80 ? `${item.slice(0, 80)}…` : item));
  return items.length > 5 ? `${shown.join(', ')} and ${items.length - 5} more` : shown.join(', ');
}

/** Secrets shorter than this are not redacted: they would blank out ordinary words. */
const MIN_REDACTED_LENGTH = 4;

function redact(text: string, secrets: ReadonlySet<string>): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= MIN_REDACTED_LENGTH) out = out.split(secret).join('***');
  return out;
}

function sortByLine(problems: ConfigProblem[]): ConfigProblem[] {
  return problems
    .map((p, i) => ({ p, i }))
    .sort((a, b) => (a.p.line ?? Number.MAX_SAFE_INTEGER) - (b.p.line ?? Number.MAX_SAFE_INTEGER) || a.i - b.i)
    .map(({ p }) => p);
}

/** Makes `[plugins] paths`, `audit_log` and `debug_log` absolute against `baseDir`. */
function resolvePaths(config: RuntimeConfig, baseDir: string): RuntimeConfig {
  const file = (p: string): string => (p === '' ? '' : resolve(baseDir, p));
  return {
    ...config,
    plugins: { ...config.plugins, paths: config.plugins.paths.map((p) => resolve(baseDir, p)) },
    runtime: { ...config.runtime, audit_log: file(config.runtime.audit_log), debug_log: file(config.runtime.debug_log) },
  };
}

/** {@link resolvePaths} on a layer's own keys: only the path keys it sets are touched. */
function resolveTreePaths(tree: Record<string, unknown>, baseDir: string): Record<string, unknown> {
  const plugins = tree.plugins as Record<string, unknown> | undefined;
  const runtime = tree.runtime as Record<string, unknown> | undefined;
  const out: Record<string, unknown> = { ...tree };
  if (plugins !== undefined && Array.isArray(plugins.paths)) {
    out.plugins = { ...plugins, paths: plugins.paths.map((p) => (typeof p === 'string' ? resolve(baseDir, p) : p)) };
  }
  if (runtime !== undefined) {
    const copy: Record<string, unknown> = { ...runtime };
    for (const key of ['audit_log', 'debug_log'] as const) {
      const value = runtime[key];
      if (typeof value === 'string' && value !== '') copy[key] = resolve(baseDir, value);
    }
    out.runtime = copy;
  }
  return out;
}
