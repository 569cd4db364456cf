import { spawnSync } from 'node:child_process';
import {
  chownSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
  chmodSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadRuntimeConfig } from './loadRuntimeConfig.ts';
import type { ConfigLoadResult } from './ConfigProblem.ts';
import { runProbeAsNobody } from '@trellis/test-support';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-config-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** The result with the temp folder replaced by `<tmp>`, for exact comparison. */
function normalized(result: ConfigLoadResult): unknown {
  return JSON.parse(JSON.stringify(result).split(dir).join('<tmp>'));
}

function load(path: string, env: Record<string, string> = {}): unknown {
  return normalized(loadRuntimeConfig(path, { env }));
}

describe('loadRuntimeConfig', () => {
  it('loads a file and resolves relative paths against its folder', () => {
    mkdirSync(join(dir, 'etc'));
    writeFileSync(join(dir, 'etc', 'runtime.toml'), '[plugins]\npaths = ["plugins", "../shared"]\n[runtime]\naudit_log = "audit.jsonl"\n');
    const result = loadRuntimeConfig(join(dir, 'etc', 'runtime.toml'), { env: {} });
    expect(result.errors).toEqual([]);
    expect(result.value?.plugins.paths).toEqual([join(dir, 'etc', 'plugins'), join(dir, 'shared')]);
    expect(result.value?.runtime.audit_log).toBe(join(dir, 'etc', 'audit.jsonl'));
  });

  it('resolves against the folder of the symlink, not of its target', () => {
    mkdirSync(join(dir, 'dotfiles'));
    mkdirSync(join(dir, 'home'));
    writeFileSync(join(dir, 'dotfiles', 'runtime.toml'), '[plugins]\npaths = ["p"]\n');
    symlinkSync(join(dir, 'dotfiles', 'runtime.toml'), join(dir, 'home', 'runtime.toml'));
    expect(loadRuntimeConfig(join(dir, 'home', 'runtime.toml'), { env: {} }).value?.plugins.paths).toEqual([join(dir, 'home', 'p')]);
  });

  it('reports a missing file', () => {
    expect(load(join(dir, 'nope.toml'))).toEqual({
      warnings: [],
      errors: [{ code: 'CONFIG_NOT_FOUND', file: '<tmp>/nope.toml', message: '<tmp>/nope.toml: no such file' }],
    });
  });

  it('reports a path through a file as not found', () => {
    writeFileSync(join(dir, 'file'), '');
    expect(load(join(dir, 'file', 'runtime.toml'))).toEqual({
      warnings: [],
      errors: [
        {
          code: 'CONFIG_NOT_FOUND',
          file: '<tmp>/file/runtime.toml',
          message: '<tmp>/file/runtime.toml: no such file (a part of the path is not a folder)',
        },
      ],
    });
  });

  it('refuses a directory', () => {
    expect(load(dir)).toEqual({
      warnings: [],
      errors: [
        {
          code: 'CONFIG_UNREADABLE',
          file: '<tmp>',
          message: '<tmp>: is a folder, not a regular file; point --config or TRELLIS_CONFIG at a runtime.toml file',
        },
      ],
    });
  });

  it('refuses a FIFO without blocking on it', () => {
    const fifo = join(dir, 'runtime.toml');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    expect(load(fifo)).toEqual({
      warnings: [],
      errors: [
        {
          code: 'CONFIG_UNREADABLE',
          file: '<tmp>/runtime.toml',
          message:
            '<tmp>/runtime.toml: is a FIFO (named pipe), not a regular file; point --config or TRELLIS_CONFIG at a runtime.toml file',
        },
      ],
    });
  });

  it('refuses a Unix socket', async () => {
    const socket = join(dir, 'runtime.toml');
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    try {
      expect(load(socket)).toEqual({
        warnings: [],
        errors: [
          {
            code: 'CONFIG_UNREADABLE',
            file: '<tmp>/runtime.toml',
            message: '<tmp>/runtime.toml: is a socket, not a regular file; point --config or TRELLIS_CONFIG at a runtime.toml file',
          },
        ],
      });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('refuses character devices without reading them', () => {
    for (const device of ['/dev/zero', '/dev/null']) {
      expect(load(device)).toEqual({
        warnings: [],
        errors: [
          {
            code: 'CONFIG_UNREADABLE',
            file: device,
            message: `${device}: is a character device, not a regular file; point --config or TRELLIS_CONFIG at a runtime.toml file`,
          },
        ],
      });
    }
  });

  it('refuses a symlink loop', () => {
    symlinkSync(join(dir, 'b'), join(dir, 'a'));
    symlinkSync(join(dir, 'a'), join(dir, 'b'));
    expect(load(join(dir, 'a'))).toEqual({
      warnings: [],
      errors: [
        {
          code: 'CONFIG_UNREADABLE',
          file: '<tmp>/a',
          message: '<tmp>/a: too many levels of symbolic links (a symlink loop?); point at the real file',
        },
      ],
    });
  });

  it('refuses a file over 1 MiB by its size, before reading it', () => {
    const big = join(dir, 'runtime.toml');
    writeFileSync(big, '');
    truncateSync(big, 8 * 1024 * 1024 * 1024); // sparse: 8 GiB that would take long to read
    expect(load(big)).toEqual({
      warnings: [],
      errors: [
        {
          code: 'CONFIG_TOO_LARGE',
          file: '<tmp>/runtime.toml',
          message:
            '<tmp>/runtime.toml: the file is 8589934592 bytes, over the 1048576-byte (1 MiB) limit; a runtime.toml is a few KiB — check that this is the right file',
        },
      ],
    });
  });

  it('accepts a file of exactly 1 MiB and refuses one byte more', () => {
    const file = join(dir, 'runtime.toml');
    writeFileSync(file, `#${'x'.repeat(1024 * 1024 - 2)}\n`);
    expect(loadRuntimeConfig(file, { env: {} }).errors).toEqual([]);
    writeFileSync(file, `#${'x'.repeat(1024 * 1024 - 1)}\n`);
    expect(loadRuntimeConfig(file, { env: {} }).errors.map((e) => e.code)).toEqual(['CONFIG_TOO_LARGE']);
  });

  it('reports encoding problems with the byte offset', () => {
    const file = join(dir, 'runtime.toml');
    writeFileSync(file, Buffer.concat([Buffer.from('\uFEFF[runtime]\r\nmax_retries = 1\r\n'), Buffer.from([0xfe])]));
    expect(load(file)).toEqual({
      warnings: [],
      errors: [
        {
          code: 'CONFIG_ENCODING',
          file: '<tmp>/runtime.toml',
          line: 3,
          column: 1,
          message: '<tmp>/runtime.toml:3:1: invalid UTF-8 at byte offset 31; save the file as UTF-8',
        },
      ],
    });
  });

  it('refuses a file the current user cannot read', () => {
    const file = join(dir, 'runtime.toml');
    writeFileSync(file, '[plugins]\n');
    chmodSync(file, 0o600);
    chmodSync(dir, 0o755);
    const packageDir = fileURLToPath(new URL('..', import.meta.url));
    const script = `import { loadRuntimeConfig } from '@trellis/config';
process.stdout.write(JSON.stringify(loadRuntimeConfig(${JSON.stringify(file)}, { env: {} })));`;
    // A self-contained bundle in a folder nobody can read, so the checkout itself may be private.
    const child = runProbeAsNobody(script, packageDir);
    expect(child.stderr).toBe('');
    // spawnSync waited for the child; make sure nothing it started is left behind.
    const left = spawnSync('ps', ['-eo', 'args='], { encoding: 'utf8' })
      .stdout.split('\n')
      .filter((line) => line.includes(file));
    expect(left).toEqual([]);
    expect(JSON.parse(child.stdout.split(dir).join('<tmp>'))).toEqual({
      warnings: [],
      errors: [
        {
          code: 'CONFIG_UNREADABLE',
          file: '<tmp>/runtime.toml',
          message: '<tmp>/runtime.toml: permission denied; make the file readable by the user running trellis',
        },
      ],
    });
  });

  describe('admission (CONFIG_UNSAFE), as for plugin manifests', () => {
    const codes = (path: string) => loadRuntimeConfig(path, { env: {} }).errors.map((e) => e.code);

    it('refuses a world-writable file, and loads it again after chmod o-w', () => {
      const file = join(dir, 'runtime.toml');
      writeFileSync(file, '[plugins]\nallow = ["x"]\n');
      chmodSync(file, 0o666);
      expect(load(file)).toEqual({
        warnings: [],
        errors: [
          {
            code: 'CONFIG_UNSAFE',
            file: '<tmp>/runtime.toml',
            message:
              '<tmp>/runtime.toml: not loaded: someone else could change this file: any user can write it (mode 666). Fix it with `chmod o-w <tmp>/runtime.toml`, or remove the file',
          },
        ],
      });
      chmodSync(file, 0o644);
      expect(codes(file)).toEqual([]);
    });

    it('refuses a file or folder owned by another user (a real chown to nobody)', () => {
      const folder = join(dir, 'etc');
      mkdirSync(folder);
      const file = join(folder, 'runtime.toml');
      writeFileSync(file, '[plugins]\n');
      chownSync(file, 65534, 65534);
      expect(codes(file)).toEqual(['CONFIG_UNSAFE']);
      expect(loadRuntimeConfig(file, { env: {}, uid: 65534 }).errors).toEqual([]);
      chownSync(file, 0, 0);
      chownSync(folder, 65534, 65534);
      const message = loadRuntimeConfig(file, { env: {} }).errors[0]?.message ?? '';
      expect(message.split(dir).join('<tmp>')).toBe(
        '<tmp>/etc/runtime.toml: not loaded: someone else could change this file: its folder <tmp>/etc belongs to uid 65534, not to you (uid 0) or root. Fix it with `chown 0 <tmp>/etc`, or remove the file',
      );
    });

    it('refuses a file in a world-writable folder anywhere above it, but not under a sticky root-owned one', () => {
      const shared = join(dir, 'shared');
      mkdirSync(join(shared, 'me'), { recursive: true });
      const file = join(shared, 'me', 'runtime.toml');
      writeFileSync(file, '[plugins]\n');
      chmodSync(shared, 0o777);
      expect(loadRuntimeConfig(file, { env: {} }).errors[0]?.message.split(dir).join('<tmp>')).toBe(
        '<tmp>/shared/me/runtime.toml: not loaded: someone else could change this file: any user can change the folder <tmp>/shared (mode 777). Fix it with `chmod o-w <tmp>/shared`, or remove the file',
      );
      chmodSync(shared, 0o1777);
      expect(codes(file)).toEqual([]);
    });

    it('refuses a hard-linked file and checks the target of a symlink', () => {
      const file = join(dir, 'runtime.toml');
      writeFileSync(file, '[plugins]\n');
      linkSync(file, join(dir, 'twin.toml'));
      expect(codes(file)).toEqual(['CONFIG_UNSAFE']);
      rmSync(join(dir, 'twin.toml'));
      mkdirSync(join(dir, 'open'));
      chmodSync(join(dir, 'open'), 0o777);
      const target = join(dir, 'open', 'real.toml');
      writeFileSync(target, '[plugins]\n');
      symlinkSync(target, join(dir, 'link.toml'));
      const problem = loadRuntimeConfig(join(dir, 'link.toml'), { env: {} }).errors[0];
      expect(problem?.code).toBe('CONFIG_UNSAFE');
      expect(problem?.message).toContain(`(resolves to ${realpathSync(target)})`);
    });
  });
});
