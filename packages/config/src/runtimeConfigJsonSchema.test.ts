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
    expect(Object.keys(schema.properties as object)).toEqual(['plugins', 'runtime', 'serve']);
    expect(schema.required).toBeUndefined();
  });
});

describe('runtimeConfigJsonSchema descriptions', () => {
  it('describes every key, including the open tables', () => {
    const undescribed: string[] = [];
    const visit = (node: Record<string, unknown>, path: string): void => {
      const properties = node.properties as Record<string, Record<string, unknown>> | undefined;
      for (const [key, child] of Object.entries(properties ?? {})) {
        const childPath = path === '' ? key : `${path}.${key}`;
        if (typeof child.description !== 'string') undescribed.push(childPath);
        visit(child, childPath);
      }
      const extra = node.additionalProperties as Record<string, unknown> | undefined;
      if (path !== '' && extra !== undefined && Object.keys(extra).length > 0) {
        if (typeof extra.description !== 'string') undescribed.push(`${path}.*`);
        visit(extra, `${path}.*`);
      }
    };
    visit(runtimeConfigJsonSchema(), '');
    expect(undescribed).toEqual([]);
  });
});
