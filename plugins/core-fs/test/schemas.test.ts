import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { resolveContract } from '@trellis/sdk';
import { FsSettingsSchema, plugin, readTool } from '../src/index.ts';
import { failureOf, makeFsFixture } from './fsFixture.ts';
import type { FsFixture } from './fsFixture.ts';

describe('tool specs', () => {
  it('every input and the settings turn into JSON Schema objects with described fields', () => {
    for (const tool of plugin.tools) {
      const schema = z.toJSONSchema(tool.input, { io: 'input' }) as {
        type: string;
        properties: Record<string, { description?: string }>;
        additionalProperties: boolean;
      };
      expect(schema.type).toBe('object');
      expect(schema.additionalProperties).toBe(false);
      for (const [key, property] of Object.entries(schema.properties)) {
        expect({ tool: tool.name, key, described: (property.description ?? '').length > 20 }).toEqual({
          tool: tool.name,
          key,
          described: true,
        });
      }
    }
    expect((z.toJSONSchema(FsSettingsSchema, { io: 'input' }) as { type: string }).type).toBe('object');
  });

  it('marks only write and edit as side-effecting', () => {
    expect(plugin.tools.filter((t) => resolveContract(t.contract).sideEffects).map((t) => t.name)).toEqual(['write', 'edit']);
  });
});

describe('special files', () => {
  let fx: FsFixture;
  beforeEach(() => {
    fx = makeFsFixture();
    mkdirSync(fx.ws);
  });
  afterEach(() => fx.remove());

  it('refuses to read a FIFO instead of blocking on it', async () => {
    execFileSync('mkfifo', [join(fx.ws, 'pipe')]);
    expect(await failureOf(fx, () => readTool.run({ path: 'pipe' }, fx.context()))).toEqual({
      code: 'INVALID_ARGUMENT',
      message:
        'path: "pipe" is a FIFO (named pipe), not a regular file; core-fs reads and writes only regular files and never opens anything else. Use core-fs.stat to look at it.',
    });
  });
});

describe('as the runtime validates', () => {
  it('accepts every example and refuses malformed calls', async () => {
    const { runtimeValidator } = await import('@trellis/testing');
    for (const tool of plugin.tools) {
      const valid = runtimeValidator(tool);
      for (const example of tool.examples ?? [])
        expect({ tool: tool.name, ok: valid(example.input) }).toEqual({ tool: tool.name, ok: true });
    }
    const byName = Object.fromEntries(plugin.tools.map((t) => [t.name, runtimeValidator(t)]));
    expect(byName.read!({ path: 'a', offset: 0 })).toBe(false);
    expect(byName.write!({ path: 'a' })).toBe(false);
    expect(byName.edit!({ path: 'a', old: '', new: 'b' })).toBe(false);
    expect(byName.list!({ depth: 9 })).toBe(false);
    expect(byName.glob!({ pattern: '' })).toBe(false);
    expect(byName.search!({ pattern: 'x', max_results: 5000 })).toBe(false);
    expect(byName.stat!({ path: 'a', follow: true })).toBe(false);
  });
});
