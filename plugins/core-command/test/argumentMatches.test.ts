import { describe, expect, it } from 'vitest';
import { argumentMatches } from '../src/index.ts';

describe('argumentMatches', () => {
  it.each([
    ['--upload-pack', '--upload-pack', true],
    ['--upload-pack', '--upload-pack=cmd', true],
    ['--upload-pack', '--upl=cmd', true],
    ['--upload-pack', '--u', true],
    ['--upload-pack', '--', false],
    ['--upload-pack', '--update-head-ok', false],
    ['--exec', '--exec-path=/x', false],
    ['-c', '-c', true],
    ['-c', '-cfoo', true],
    ['-c', '-qc', true],
    ['-c', '-C', false],
    ['-c', '--cached', false],
    ['-c', 'c', false],
    ['ext::*', 'ext::sh -c id', true],
    ['ext::*', 'EXT::sh', true],
    ['ext::*', 'https://example.com/ext::x', false],
    ['run', 'run', true],
    ['run', 'runner', false],
    ['*', 'anything', true],
  ])('%s vs %s → %s', (pattern, arg, expected) => {
    expect(argumentMatches(pattern, arg)).toBe(expected);
  });
});
