import type * as NodeCrypto from 'node:crypto';

// `process.getBuiltinModule` (Node >= 20.16) loads a built-in on the first call instead of at import:
// importing node:crypto eagerly costs several ms of every `trellis` start, and most commands never
// hash anything. Bundlers leave the call alone, in ESM and CommonJS output alike.
let loaded: typeof NodeCrypto | undefined;

/** `node:crypto`, loaded on first use. */
export function lazyCrypto(): typeof NodeCrypto {
  return (loaded ??= process.getBuiltinModule('node:crypto'));
}

/**
 * Hex sha256 of a UTF-8 string or of bytes. Uses the one-shot `crypto.hash` (no Hash object; about
 * a third less time on small inputs), present in every Node this project supports; same digest.
 */
export function sha256Hex(data: string | Uint8Array): string {
  return lazyCrypto().hash('sha256', data, 'hex');
}
