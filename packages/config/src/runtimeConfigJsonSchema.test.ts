import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runtimeConfigJsonSchema } from './runtimeConfigJsonSchema.ts';

describe('schema/runtime.schema.json', () => {
  it('matches the zod schema (run `pnpm --filter @trellis/config schema` when this fails)', () => {
    const committed: unknown = JSON.parse(readFileSync(new URL('../schema/runtime.schema.json', import.meta.url), 'utf8'));
    expect(committed).toEqual(runtimeConfigJsonSchema());
  });

  it('describes the file as written: the top-level tables and no required keys', () => {
    const schema = runtimeConfigJsonSchema();
    expect(schema.$id).toBe('https://trellis.dev/schema/runtime.schema.json');
    expect(Object.keys(schema.properties as object)).toEqual(['plugins', 'runtime']);
    expect(schema.required).toBeUndefined();
  });
});
