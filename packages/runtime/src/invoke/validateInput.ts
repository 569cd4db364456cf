import { ERROR_CODES } from '@trellis/sdk';
import { findTooDeep } from '../findTooDeep.ts';
import type { CompiledSchema, UnsafeSchema } from '../SchemaValidatorCache.ts';
import { failed, type CallContext, type StageResult } from './CallContext.ts';
import { NO_STRINGS } from './ToolEntry.ts';

/** Checks the arguments against the tool's input schema (`SCHEMA_UNSAFE`, `INPUT_INVALID`). */
export function validateInput(ctx: CallContext): StageResult | Promise<StageResult> {
  const schema = ctx.entry.schema;
  if (schema !== undefined) return checkInput(ctx, schema);
  return compileInputSchema(ctx).then((compiled) => checkInput(ctx, compiled));
}

/**
 * The tool's first call: compiles its schema, once. On a cold runtime the validator loads first,
 * and the plugin starts alongside it, so a burst of first calls waits once, not twice.
 */
async function compileInputSchema(ctx: CallContext): Promise<CompiledSchema | UnsafeSchema> {
  const { core, entry, descriptor } = ctx;
  let validators = core.validators;
  if (validators === undefined) {
    if (entry.gate.starting === undefined) core.prefetch(entry.gate);
    validators = await core.loadValidators();
  }
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
    return failed(
      ERROR_CODES.SCHEMA_UNSAFE,
      `the input schema of ${name} cannot be used safely: ${schema.problem}; the plugin ${ctx.descriptor.plugin} must fix its schema`,
    );
  }
  let input: unknown = ctx.request.input === undefined ? {} : ctx.request.input;
  const tooDeep = findTooDeep(input);
  if (tooDeep !== undefined) {
    if (ctx.observed) core.emit({ type: 'validate', callId: call.callId, tool: name, ok: false, errors: [tooDeep] });
    return failed(ERROR_CODES.INPUT_INVALID, `invalid arguments for ${name}:\n${tooDeep}`);
  }
  if (schema.fillsDefaults) {
    // Defaults are written into the input: the caller's object stays as it was.
    try {
      input = structuredClone(input);
    } catch {
      if (ctx.observed) core.emit({ type: 'validate', callId: call.callId, tool: name, ok: false, errors: ['(root): must be plain JSON'] });
      return failed(
        ERROR_CODES.INPUT_INVALID,
        `invalid arguments for ${name}:\n(root): must be plain JSON (no functions, symbols or class instances)`,
      );
    }
  }
  const errors = schema.check(input);
  if (ctx.observed)
    core.emit({ type: 'validate', callId: call.callId, tool: name, ok: errors === undefined, errors: errors ?? NO_STRINGS });
  if (errors !== undefined) return failed(ERROR_CODES.INPUT_INVALID, `invalid arguments for ${name}:\n${errors.join('\n')}`);
  call.input = input;
  return undefined;
}
