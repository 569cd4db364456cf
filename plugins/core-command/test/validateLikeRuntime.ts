import { Ajv2020 } from 'ajv/dist/2020.js';
import { RE2JS } from 're2js';
import { z } from 'zod';
import type { ToolDefinition } from '@trellis/sdk';

// The runtime validates with ajv (draft 2020-12, defaults filled, patterns on re2js) against the
// JSON Schema the build generates from each zod input; this mirrors it so the schemas are proven
// to work there, not only in zod.
const ajv = new Ajv2020({
  allErrors: true,
  useDefaults: true,
  strict: false,
  logger: false,
  validateFormats: false,
  code: {
    regExp: Object.assign((pattern: string) => {
      const re = RE2JS.compile(pattern);
      // ajv caches patterns by toString(), so each must name its own source.
      return { test: (input: string) => re.test(input), toString: () => `re2:${pattern}` };
    }, { code: 're2js' }) as never,
  },
});

/** Compiles a tool's input schema the way the build and runtime do; returns a validator. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function runtimeValidator(tool: ToolDefinition<any, any, any>): (input: unknown) => boolean {
  const schema = z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  const validate = ajv.compile(schema);
  return (input) => validate(structuredClone(input)) === true;
}
