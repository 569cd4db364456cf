import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { plugin } from '../src/index.ts';

describe('plugin', () => {
  it('declares list, read and run and the `skills` settings key with safe defaults from {}', () => {
    expect(plugin.manifest).toEqual({ id: 'skill-source-local' });
    expect(plugin.tools.map((t) => t.name)).toEqual(['list', 'read', 'run']);
    expect(plugin.settings?.key).toBe('skills');
    expect(plugin.settings?.schema.parse({})).toEqual({
      paths: [],
      in_process: [],
      run_skill_timeout: 60,
      max_output_bytes: 262144,
      interpreters: {},
      pass_env: [],
      worker_max_memory_mb: 256,
    });
  });

  it('refuses unknown or unsafe settings with the key named', () => {
    const result = plugin.settings!.schema.safeParse({ run_skill_timout: 5, interpreters: { rb: 'ruby' } });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`)).toEqual([
      'interpreters.rb: keys must be file extensions with the dot, such as ".py"',
      ': Unrecognized key: "run_skill_timout"',
    ]);
  });

  it('has tool inputs and settings that convert to JSON Schema', () => {
    expect(plugin.tools.map((t) => z.toJSONSchema(t.input, { io: 'input' }))).toEqual([
      { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: {}, additionalProperties: false },
      {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: { name: { type: 'string', minLength: 1, maxLength: 128, description: 'The skill name, as listed.' } },
        required: ['name'],
        additionalProperties: false,
      },
      {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 128, description: 'The skill name, as listed.' },
          script: {
            type: 'string',
            minLength: 1,
            maxLength: 256,
            description: 'Which script, by the name `read` shows; default the first.',
          },
          input: { description: "The script's input; must match the skill's input_schema. Default {}." },
        },
        required: ['name'],
        additionalProperties: false,
      },
    ]);
    expect(() => z.toJSONSchema(plugin.settings!.schema, { io: 'input' })).not.toThrow();
  });
});
