import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSync } from 'esbuild';

/**
 * Bundles `source` (TypeScript, imports resolved from `resolveDir` with the workspace's source
 * condition) into one self-contained `.mjs` in a fresh temp folder any user can read, so a test
 * can run it as another user (setpriv) even from a checkout that user cannot enter (a clone in a
 * mode-700 home folder). `remove()` deletes the folder.
 */
export function bundleForAnotherUser(source: string, resolveDir: string): { file: string; dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-as-user-'));
  chmodSync(dir, 0o755);
  const file = join(dir, 'probe.mjs');
  buildSync({
    stdin: { contents: source, resolveDir, loader: 'ts', sourcefile: 'probe.ts' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    conditions: ['@trellis/source'],
    outfile: file,
    // Bundled CommonJS dependencies call require() for Node built-ins.
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
    logLevel: 'silent',
  });
  chmodSync(file, 0o644);
  return { file, dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
