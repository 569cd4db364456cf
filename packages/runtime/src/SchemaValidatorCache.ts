import { Ajv, type Options } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { canonicalJson, checkSchemaSafety, DEFAULT_SCHEMA_LIMITS, sha256Hex, type SchemaLimits } from '@trellis/sdk/internal';
import { linearRegExp, UnsupportedPatternError } from '@trellis/sdk/linear-regexp';
import { runValidate } from './schemaCheck.ts';

export { formatSchemaError } from './schemaCheck.ts';

/** A compiled schema, ready to check inputs. */
export interface CompiledSchema {
  readonly ok: true;
  /** Hex sha256 of the schema's canonical JSON (the cache key). */
  readonly hash: string;
  /** True when the schema has `default`s: ajv fills them in, so validate a copy of the caller's input. */
  readonly fillsDefaults: boolean;
  /** Validates (and, with defaults, fills in) `data`; undefined when valid, else `path: message` lines. */
  check(data: unknown): readonly string[] | undefined;
}

/** A schema that could not be compiled safely. `problem` says why. */
export interface UnsafeSchema {
  readonly ok: false;
  readonly hash: string;
  readonly problem: string;
}

/** How {@link SchemaValidatorCache.get} treats a schema. */
export interface SchemaTrust {
  /**
   * True for a schema the build already checked against the draft 2020-12 meta-schema (bundled
   * tools: `apps/trellis/scripts/bundledIndex.ts` fails the build otherwise). ajv then skips its
   * own meta-schema check, which costs ~35 ms the first time (compiling the meta-schema), on the
   * first call of every process. The safety limits still apply.
   */
  readonly trusted?: boolean;
}

/** Compiles JSON Schemas on first use and caches them by content hash. */
export interface SchemaValidatorCache {
  get(schema: Readonly<Record<string, unknown>>, trust?: SchemaTrust): CompiledSchema | UnsafeSchema;
  /** How many distinct schemas were compiled (for tests and diagnostics). */
  readonly size: number;
}

type Draft = '2020-12' | '2019-09' | 'draft-07';

/**
 * The ajv options every schema is compiled with (besides the linear-time `regExp` engine). The
 * build compiles the bundled tools' schemas ahead of time with the same options.
 */
export function validatorOptions(trust: SchemaTrust): Options {
  return {
    validateSchema: trust.trusted !== true,
    allErrors: true,
    useDefaults: true,
    strict: false,
    logger: false,
    validateFormats: false,
    addUsedSchema: false,
  };
}

/**
 * Creates a validator cache. Every schema is treated as untrusted: depth and size are capped,
 * references must stay inside the schema, and `pattern`s run on a linear-time engine (re2js).
 * Supported dialects: draft 2020-12 (also the default when `$schema` is absent, with a draft-07
 * retry when that fails to compile), draft 2019-09 and draft-07. `format` is an annotation only.
 */
export function createSchemaValidatorCache(options: { limits?: SchemaLimits } = {}): SchemaValidatorCache {
  const limits = options.limits ?? DEFAULT_SCHEMA_LIMITS;
  const bySchema = new WeakMap<object, CompiledSchema | UnsafeSchema>();
  const byHash = new Map<string, CompiledSchema | UnsafeSchema>();
  const engines = new Map<string, Ajv>();

  const engine = (draft: Draft, trusted: boolean): Ajv => {
    const key = trusted ? `${draft} trusted` : draft;
    let ajv = engines.get(key);
    if (ajv === undefined) {
      const ajvOptions: Options = { ...validatorOptions({ trusted }), code: { regExp: linearRegExp } };
      ajv = draft === '2020-12' ? new Ajv2020(ajvOptions) : draft === '2019-09' ? new Ajv2019(ajvOptions) : new Ajv(ajvOptions);
      engines.set(key, ajv);
    }
    return ajv;
  };

  const compile = (schema: Readonly<Record<string, unknown>>, trusted: boolean): CompiledSchema | UnsafeSchema => {
    const safety = checkSchemaSafety(schema, limits);
    if (safety.problem !== undefined) return { ok: false, hash: '', problem: safety.problem };
    let json: string;
    try {
      json = canonicalJson(schema);
    } catch (error) {
      return { ok: false, hash: '', problem: `the schema is not plain JSON (${messageOf(error)})` };
    }
    const hash = sha256Hex(json);
    const cached = byHash.get(hash);
    if (cached !== undefined) return cached;
    const result: CompiledSchema | UnsafeSchema =
      json.length > limits.maxBytes
        ? { ok: false, hash, problem: `the schema is ${json.length} bytes of JSON, more than the ${limits.maxBytes} allowed` }
        : compileFresh(schema, safety.hasDefaults, hash, trusted);
    byHash.set(hash, result);
    return result;
  };

  const compileFresh = (
    schema: Readonly<Record<string, unknown>>,
    fillsDefaults: boolean,
    hash: string,
    trusted: boolean,
  ): CompiledSchema | UnsafeSchema => {
    const declared = schema.$schema;
    let drafts: Draft[];
    // A trusted schema was checked as 2020-12 by the build: no draft-07 retry.
    if (declared === undefined) drafts = trusted ? ['2020-12'] : ['2020-12', 'draft-07'];
    else if (typeof declared === 'string' && declared.includes('2020-12')) drafts = ['2020-12'];
    else if (typeof declared === 'string' && declared.includes('2019-09')) drafts = ['2019-09'];
    else if (typeof declared === 'string' && declared.includes('draft-07')) drafts = ['draft-07'];
    else {
      return { ok: false, hash, problem: `$schema ${JSON.stringify(declared)} is not supported; use draft 2020-12 or draft-07` };
    }
    let firstError: unknown;
    for (const draft of drafts) {
      try {
        const validate = engine(draft, trusted).compile(schema);
        return { ok: true, hash, fillsDefaults, check: (data) => runValidate(validate, data) };
      } catch (error) {
        if (error instanceof UnsupportedPatternError) return { ok: false, hash, problem: error.message };
        firstError ??= error;
      }
    }
    return { ok: false, hash, problem: `the schema does not compile: ${messageOf(firstError)}` };
  };

  return {
    get(schema, trust) {
      let entry = bySchema.get(schema);
      if (entry === undefined) {
        entry = compile(schema, trust?.trusted === true);
        bySchema.set(schema, entry);
      }
      return entry;
    },
    get size() {
      return byHash.size;
    },
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
