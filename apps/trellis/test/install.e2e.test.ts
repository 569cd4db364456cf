import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// What a user outside the repository does: pack the packages, npm install the tarballs into an
// empty folder, then run the CLI and assemble() from there.
const appDir = join(import.meta.dirname, '..');
const sdkDir = join(appDir, '..', '..', 'packages', 'sdk');
let dir: string;
let consumer: string;

function sh(command: string, args: readonly string[], cwd: string, env: Record<string, string> = {}): string {
  return execFileSync(command, [...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 180_000,
    env: { ...process.env, ...env },
  });
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-install-'));
  consumer = join(dir, 'consumer');
  mkdirSync(consumer);
  for (const pkg of [appDir, sdkDir]) sh('npx', ['-y', 'pnpm@10', 'pack', '--pack-destination', dir], pkg);
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }));
}, 300_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the packed tarballs, installed with plain npm outside the repository', () => {
  it('trellis needs no dependencies: it installs offline, and the CLI and assemble() work', () => {
    const tarball = readdirSync(dir).find((f) => /^trellis-\d.*\.tgz$/.test(f))!;
    expect(tarball).toBeDefined();
    const manifest = JSON.parse(sh('tar', ['-xOzf', join(dir, tarball), 'package/package.json'], dir)) as Record<string, unknown>;
    expect(manifest.private).toBeUndefined();
    expect(manifest.dependencies).toBeUndefined();
    expect(manifest.bin).toEqual({ trellis: './dist/cli.cjs' });

    sh('npm', ['install', '--offline', '--no-audit', '--no-fund', join(dir, tarball)], consumer);
    const home = join(dir, 'home');
    mkdirSync(home, { recursive: true });
    const env = { HOME: home, XDG_CONFIG_HOME: join(home, '.config') };
    const bin = join(consumer, 'node_modules', '.bin', 'trellis');
    expect(sh(bin, ['--version'], consumer, env).trim()).toMatch(/^\d+\.\d+\.\d+/);
    expect(JSON.parse(sh(bin, ['tools', 'call', 'builtin-tools.echo', '--args', '{"from":"npm"}'], consumer, env))).toEqual({
      from: 'npm',
    });

    writeFileSync(
      join(consumer, 'embed.mjs'),
      `import { assemble } from 'trellis';
const host = await assemble({ workspace: process.cwd() });
try {
  const outcome = await host.runtime.invoke({ name: 'builtin-tools.echo', input: { embedded: true } });
  console.log(JSON.stringify({ outcome, rendered: host.catalog.render('openai').length > 0 }));
} finally {
  await host.dispose();
}
`,
    );
    expect(JSON.parse(sh('node', ['embed.mjs'], consumer, env))).toEqual({
      outcome: { ok: true, value: { embedded: true } },
      rendered: true,
    });
    // Types for the embedding API ship with it.
    const types = readFileSync(join(consumer, 'node_modules', 'trellis', 'dist', 'index.d.ts'), 'utf8');
    expect(types).toMatch(/declare function assemble\(/);
  }, 300_000);

  it('@trellis/sdk installs with its types and exports definePlugin', () => {
    const tarball = readdirSync(dir).find((f) => /^trellis-sdk-.*\.tgz$/.test(f))!;
    expect(tarball).toBeDefined();
    sh('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', join(dir, tarball)], consumer);
    expect(existsSync(join(consumer, 'node_modules', '@trellis', 'sdk', 'dist', 'index.d.ts'))).toBe(true);
    const out = sh(
      'node',
      [
        '--input-type=module',
        '-e',
        "import { definePlugin, ERROR_CODES } from '@trellis/sdk'; console.log(typeof definePlugin, ERROR_CODES.USAGE);",
      ],
      consumer,
    );
    expect(out.trim()).toBe('function USAGE');
  }, 300_000);
});
