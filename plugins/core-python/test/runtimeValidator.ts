import { Ajv2020 } from 'ajv/dist/2020.js';
import { RE2JS } from 're2js';
import { z } from 'zod';

// What the build and runtime do with a tool's zod input: JSON Schema (input side, draft 2020-12),
// then ajv with defaults filled and patterns run by re2js. Tests use it to prove each schema
// accepts and refuses in the runtime exactly what zod does.
const ajv = new Ajv2020({
  allErrors: true,
  useDefaults: true,
  strict: false,
  logger: false,
  validateFormats: false,
  code: {
    regExp: Object.assign(
      (pattern: string) => {
        const re = RE2JS.compile(pattern);
        return { test: (input: string) => re.test(input), toString: () => `re2:${pattern}` };
      },
      { code: 're2js' },
    ) as never,
  },
});

/** A validator for `schema` as the runtime would compile it. */
export function runtimeValidator(schema: z.ZodType): (input: unknown) => boolean {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete json.$schema;
  const validate = ajv.compile(json);
  return (input) => validate(structuredClone(input)) === true;
}

/** Asserts-by-return: for each input, whether zod and the runtime validator agree, as `[zod, runtime]` pairs. */
export function agreement(schema: z.ZodType, inputs: readonly unknown[]): Array<[boolean, boolean]> {
  const validate = runtimeValidator(schema);
  return inputs.map((input) => [schema.safeParse(input).success, validate(input)]);
}
