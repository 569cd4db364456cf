import { createRequire } from 'node:module';
import type * as NodeCrypto from 'node:crypto';

// A local require for a built-in: bundlers leave it alone, and Node loads node:crypto on the
// first call instead of at import (importing it eagerly costs a few ms of every startup).
const requireBuiltin = createRequire(import.meta.url);
let loaded: typeof NodeCrypto | undefined;

/** `node:crypto`, loaded on first use. */
export function lazyCrypto(): typeof NodeCrypto {
  return (loaded ??= requireBuiltin('node:crypto') as typeof NodeCrypto);
}

/** Hex sha256 of a UTF-8 string. */
export function sha256Hex(text: string): string {
  return lazyCrypto().createHash('sha256').update(text, 'utf8').digest('hex');
}
