import { describe, expect, it } from 'vitest';
import { describeTomlSyntaxError } from './describeTomlSyntaxError.ts';
import { parseRuntimeConfig } from './parseRuntimeConfig.ts';

describe('describeTomlSyntaxError', () => {
  it('reports "[plugins" as an unclosed table header, naming the file and line', () => {
    const result = parseRuntimeConfig('# mine\n[plugins\nprofile = "full"\n', { fileName: '/w/.trellis/runtime.toml', env: {} });
    expect(result.errors.map((e) => [e.code, e.message])).toEqual([
      [
        'TOML_SYNTAX',
        expect.stringMatching(
          /^\/w\/\.trellis\/runtime\.toml:2(:\d+)?: the table header "\[plugins" is not closed; end it with "\]": \[plugins\]$/,
        ),
      ],
    ]);
    expect(result.errors[0]!.message).not.toContain('illegal character');
  });

  it('knows array-of-tables headers and leaves other mistakes to the parser', () => {
    expect(describeTomlSyntaxError('[[plugins.x\n', 1)).toBe(
      'the array-of-tables header "[[plugins.x" is not closed; end it with "]]": [[plugins.x]]',
    );
    expect(describeTomlSyntaxError('[plugins]\n', 1)).toBeUndefined();
    expect(describeTomlSyntaxError('x = [1,\n', 1)).toBeUndefined();
    expect(describeTomlSyntaxError('[a]\n', undefined)).toBeUndefined();
  });
});
