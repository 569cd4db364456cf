import { ERROR_CODES, failOutcome } from '@trellis/sdk';
import { findTooDeep } from '../findTooDeep.ts';
import { precompiledSchema } from '../schemaCheck.ts';
import type { CompiledSchema, SchemaValidatorCache, UnsafeSchema } from '../SchemaValidatorCache.ts';
import { type CallContext, type Parked, type StageResult } from './CallContext.ts';
import { NO_STRINGS } from './ToolEntry.ts';

/** Checks the arguments against the tool's input schema (`SCHEMA_UNSAFE`, `INPUT_INVALID`). */
export function validateInput(ctx: CallContext): StageResult | Parked {
  let schema = ctx.entry.schema ?? precompiledInputSchema(ctx);
  if (schema === undefined) {
    const validators = ctx.core.validators;
    if (validators === undefined) return waitForValidators(ctx);
    schema = compileInputSchema(ctx, validators);
  }
  return checkInput(ctx, schema);
}

/**
 * The runtime's first validation: the call waits for the validator's one load in a list with every
 * other call that needs it, and the plugin starts alongside, so a burst of first calls waits once.
 */
function waitForValidators(ctx: CallContext): Parked {
  const { core, entry } = ctx;
  if (entry.gate.starting === undefined) core.prefetch(entry.gate);
  return core.validatorsWait().add(ctx, validateAfterLoad);
}

/** Validates once the validator has loaded (or ends the call: interrupted, or the load failed). */
function validateAfterLoad(ctx: CallContext): StageResult {
  const { core, call } = ctx;
  if (call.interrupted !== undefined) return call.interruption();
  const validators = core.validators;
  if (validators === undefined) throw core.validatorsFailure;
  return checkInput(ctx, ctx.entry.schema ?? compileInputSchema(ctx, validators));
}

/** The tool's first call, when its validator was compiled ahead of time: no ajv to load, nothing to compile. */
function precompiledInputSchema(ctx: CallContext): CompiledSchema | undefined {
  const validator = ctx.core.precompiled?.get(ctx.descriptor.inputSchema);
  if (validator === undefined) return undefined;
  const schema = precompiledSchema(validator);
  ctx.entry.schema = schema;
  return schema;
}

/** The tool's first call: compiles its input schema, once (the validator cache dedupes by content). */
function compileInputSchema(ctx: CallContext, validators: SchemaValidatorCache): CompiledSchema | UnsafeSchema {
  const { entry, descriptor } = ctx;
  // Bundled schemas were checked against the meta-schema when the build embedded them.
  const schema = validators.get(descriptor.inputSchema, { trusted: descriptor.source === 'bundled' });
  entry.schema = schema;
  return schema;
}

/** Checks the arguments (`{}` when absent) with the compiled schema; the valid input goes on the call. */
function checkInput(ctx: CallContext, schema: CompiledSchema | UnsafeSchema): StageResult {
  const { core, call, name } = ctx;
  if (!schema.ok) {
    if (ctx.observed) core.emit({ type: 'validate', callId: call.callId, tool: name, ok: false, errors: [schema.problem] });
    return failOutcome(
      ERROR_CODES.SCHEMA_UNSAFE,
      `the input schema of ${name} cannot be used safely: ${schema.problem}; the plugin ${ctx.descriptor.plugin} must fix its schema`,
    );
  }
  let input: unknown = ctx.request.input === undefined ? {} : ctx.request.input;
  const tooDeep = findTooDeep(input);
  if (tooDeep !== undefined) {
    if (ctx.observed) core.emit({ type: 'validate', callId: call.callId, tool: name, ok: false, errors: [tooDeep] });
    return failOutcome(ERROR_CODES.INPUT_INVALID, `invalid arguments for ${name}:\n${tooDeep}`);
  }
  if (schema.fillsDefaults) {
    // Defaults are written into the input: the caller's object stays as it was.
    try {
      input = structuredClone(input);
    } catch {
      if (ctx.observed) core.emit({ type: 'validate', callId: call.callId, tool: name, ok: false, errors: ['(root): must be plain JSON'] });
      return failOutcome(
        ERROR_CODES.INPUT_INVALID,
        `invalid arguments for ${name}:\n(root): must be plain JSON (no functions, symbols or class instances)`,
      );
    }
  }
  const errors = schema.check(input);
  if (ctx.observed)
    core.emit({ type: 'validate', callId: call.callId, tool: name, ok: errors === undefined, errors: errors ?? NO_STRINGS });
  if (errors !== undefined) return failOutcome(ERROR_CODES.INPUT_INVALID, `invalid arguments for ${name}:\n${errors.join('\n')}`);
  call.input = input;
  return undefined;
}
