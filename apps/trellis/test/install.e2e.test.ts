import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// What a user outside the repository does: pack the packages, npm install the tarballs into an
// empty folder, then run the CLI and assemble() from there, and compile TypeScript against them.
const appDir = join(import.meta.dirname, '..');
const repoRoot = join(appDir, '..', '..');
const sdkDir = join(repoRoot, 'packages', 'sdk');
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
  it('trellis depends only on @trellis/sdk and zod, for its types; installed beside the sdk, the CLI and assemble() work', () => {
    const tarball = readdirSync(dir).find((f) => /^trellis-\d.*\.tgz$/.test(f))!;
    const sdkTarball = readdirSync(dir).find((f) => /^trellis-sdk-.*\.tgz$/.test(f))!;
    expect(tarball).toBeDefined();
    expect(sdkTarball).toBeDefined();
    const manifest = JSON.parse(sh('tar', ['-xOzf', join(dir, tarball), 'package/package.json'], dir)) as Record<string, unknown>;
    const sdkManifest = JSON.parse(sh('tar', ['-xOzf', join(dir, sdkTarball), 'package/package.json'], dir)) as { version: string };
    expect(manifest.private).toBeUndefined();
    // The code is bundled; the published sdk (and zod, for the config's type) are dependencies because the types refer to them.
    expect(Object.keys(manifest.dependencies as object).sort()).toEqual(['@trellis/sdk', 'zod']);
    expect((manifest.dependencies as Record<string, string>)['@trellis/sdk']).toBe(`^${sdkManifest.version}`);
    expect(manifest.bin).toEqual({ trellis: './dist/cli.cjs' });

    // Both tarballs in one install: the sdk tarball satisfies trellis's dependency.
    sh('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', join(dir, tarball), join(dir, sdkTarball)], consumer);
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

  it("the tarballs' type declarations import only their own dependencies, no unpublished @trellis package", () => {
    const offenders: string[] = [];
    let declarations = 0;
    for (const tarball of readdirSync(dir).filter((f) => f.endsWith('.tgz'))) {
      const manifest = JSON.parse(sh('tar', ['-xOzf', join(dir, tarball), 'package/package.json'], dir)) as {
        name: string;
        dependencies?: Record<string, string>;
      };
      const allowed = new Set([manifest.name, ...Object.keys(manifest.dependencies ?? {})]);
      for (const entry of sh('tar', ['-tzf', join(dir, tarball)], dir).split('\n')) {
        if (!/\.d\.[cm]?ts$/.test(entry)) continue;
        declarations += 1;
        const text = sh('tar', ['-xOzf', join(dir, tarball), entry], dir);
        // `from '…'`, `import '…'` and `import('…')`: every module a declaration file names.
        for (const match of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)['"]([^'"]+)['"]/g)) {
          const specifier = match[1]!;
          if (specifier.startsWith('.') || specifier.startsWith('node:')) continue;
          const packageName = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!;
          const unpublished = specifier.startsWith('@trellis/') && packageName !== '@trellis/sdk';
          if (unpublished || !allowed.has(packageName)) offenders.push(`${manifest.name} ${entry}: ${specifier}`);
        }
      }
    }
    expect(declarations).toBeGreaterThan(1);
    expect(offenders).toEqual([]);
  });

  it('TypeScript sees real types for assemble() and the Assembly: good code compiles, a wrong line is an error', () => {
    writeFileSync(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          // Declaration files are checked too: an import they cannot resolve is an error, not `any`.
          skipLibCheck: false,
          types: ['node'],
          typeRoots: [join(repoRoot, 'node_modules', '@types')],
        },
        files: ['good.ts', 'bad.ts'],
      }),
    );
    writeFileSync(
      join(consumer, 'good.ts'),
      `import { assemble, type Assembly } from 'trellis';
import { ERROR_CODES, type ToolOutcome } from '@trellis/sdk';

export async function run(): Promise<number> {
  const host: Assembly = await assemble({ workspace: process.cwd(), profile: 'minimal' });
  try {
    const offered: number = host.catalog.offered().length;
    const outcome: ToolOutcome = await host.runtime.invoke({ name: 'builtin-tools.echo', input: { typed: true } });
    const code: string = outcome.ok ? 'ok' : outcome.error.code;
    return offered + code.length + (host.snapshot.plugins.length > 0 ? 1 : 0) + ERROR_CODES.USAGE.length;
  } finally {
    await host.dispose();
  }
}
`,
    );
    writeFileSync(
      join(consumer, 'bad.ts'),
      `import { assemble } from 'trellis';

const host = await assemble();
export const count: string = host.catalog.offered().length;
export const outcome = host.runtime.invok({ name: 'builtin-tools.echo', input: {} });
export const wrongOption = await assemble({ profile: 'everything' });
`,
    );
    const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.json', '--pretty', 'false'], {
      cwd: consumer,
      encoding: 'utf8',
      timeout: 180_000,
    });
    const errors = result.stdout
      .split('\n')
      .filter((line) => /error TS\d+/.test(line))
      .map((line) => line.replace(/: error (TS\d+):.*$/, ' $1'));
    // Only the three wrong lines, each with the error a typed API gives (with `any` there would be none).
    expect(errors, result.stdout).toEqual(['bad.ts(4,14) TS2322', 'bad.ts(5,37) TS2551', 'bad.ts(6,45) TS2322']);
    expect(result.status).toBe(2);
  }, 300_000);
});
