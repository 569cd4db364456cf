import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { defineTool } from '@trellis/sdk';
import { agreement, runtimeValidator } from './runtimeValidator.ts';

describe('runtimeValidator', () => {
  const input = z.object({ name: z.string().regex(/^[a-z]+$/), limit: z.number().int().max(10).default(5) }).strict();

  it('accepts and refuses what zod does, patterns included', () => {
    expect(agreement(input, [{ name: 'abc' }, { name: 'ABC' }, { name: 'abc', limit: 11 }, { name: 'abc', extra: 1 }, {}])).toEqual([
      [true, true],
      [false, false],
      [false, false],
      [false, false],
      [false, false],
    ]);
  });

  it('takes a whole tool and validates its input', () => {
    const tool = defineTool({ name: 't', description: 'x', input, run: () => null });
    const validate = runtimeValidator(tool);
    expect([validate({ name: 'ok' }), validate({ name: 1 })]).toEqual([true, false]);
  });
});
