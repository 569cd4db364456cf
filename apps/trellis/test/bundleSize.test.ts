import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { CLI } from './cliHarness.ts';

// The built app keeps zod's English messages only (tsup.config.ts, zodEnglishOnly): its other ~50
// locales were a third of the code parsed whenever zod first loads.
it('the bundle carries zod with its English messages and none of its other locales', () => {
  const dist = join(CLI, '..');
  const texts = readdirSync(dist)
    .filter((name) => name.endsWith('.js'))
    .map((name) => readFileSync(join(dist, name), 'utf8'));
  expect(texts.some((text) => text.includes('ZodError'))).toBe(true);
  expect(texts.some((text) => text.includes('Invalid input'))).toBe(true);
  // Dutch, one of the locales left out (an ASCII phrase: esbuild escapes other characters).
  expect(texts.filter((text) => text.includes('Ongeldige invoer')).length).toBe(0);
});
