import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canLimitResources } from '@trellis/sdk/internal';
import { plugin } from '../src/index.ts';
import { PythonSettingsSchema } from '../src/PythonSettingsSchema.ts';
import { PythonRunInputSchema, runTool } from '../src/runTool.ts';
import { makeContext } from './makeContext.ts';
import { agreement } from '@trellis/testing';

let workspace: string;

beforeEach(() => {
  workspace = realpathSync(mkdtempSync(join(tmpdir(), 'trellis-python-')));
});
afterEach(() => {
  rmSync(workspace, { recursive: true, force: true });
});

/** Processes whose command line mentions this test's workspace (the script path lies inside it). */
function processesInWorkspace(): string[] {
  const out = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
  return out.split('\n').filter((line) => line.includes(workspace) && !line.includes('ps -eo'));
}

function tempFolders(): string[] {
  return readdirSync(join(workspace, '.trellis', 'tmp'));
}

async function call(input: unknown, settings?: Record<string, unknown>) {
  const parsed = PythonRunInputSchema.parse(input);
  return runTool.run(parsed, makeContext({ workspace, ...(settings ? { settings } : {}) }));
}

describe('settings', () => {
  it('accepts {} with safe defaults and refuses unknown keys', () => {
    expect(PythonSettingsSchema.parse({})).toEqual({
      interpreter: 'python3',
      timeout_seconds: 30,
      max_memory_mb: 512,
      max_output_bytes: 65536,
    });
    expect(PythonSettingsSchema.safeParse({ timeout: 5 }).success).toBe(false);
    expect(PythonSettingsSchema.safeParse({ timeout_seconds: 0 }).success).toBe(false);
    expect(PythonSettingsSchema.safeParse({ max_memory_mb: 1.5 }).success).toBe(false);
  });

  it('declares its key, tool and contract', () => {
    expect(plugin.settings?.key).toBe('python');
    expect(plugin.tools.map((t) => t.name)).toEqual(['run']);
    expect(runTool.contract).toMatchObject({
      sideEffects: true,
      idempotent: false,
      sandbox: 'python-research',
      capabilities: ['process.spawn'],
    });
  });
});

describe('input schema', () => {
  it('accepts code and optional stdin, refuses the rest', () => {
    expect(PythonRunInputSchema.safeParse({ code: 'print(1)' }).success).toBe(true);
    expect(PythonRunInputSchema.safeParse({ code: 'print(1)', stdin: 'x' }).success).toBe(true);
    expect(PythonRunInputSchema.safeParse({ code: '' }).success).toBe(false);
    expect(PythonRunInputSchema.safeParse({}).success).toBe(false);
    expect(PythonRunInputSchema.safeParse({ code: 'print(1)', args: ['x'] }).success).toBe(false);
    expect(PythonRunInputSchema.safeParse({ code: 'x'.repeat(200_001) }).success).toBe(false);
  });

  it('is validated the same way by the runtime (JSON Schema + ajv)', () => {
    const inputs = [
      { code: 'print(1)' },
      { code: 'print(1)', stdin: '' },
      { code: '' },
      {},
      { code: 1 },
      { code: 'x', args: [] },
      { code: 'x', stdin: 3 },
    ];
    expect(agreement(PythonRunInputSchema, inputs)).toEqual([
      [true, true],
      [true, true],
      [false, false],
      [false, false],
      [false, false],
      [false, false],
      [false, false],
    ]);
  });
});

describe('core-python.run', () => {
  it('runs code in a fresh temp folder under the workspace, removed after', async () => {
    const result = await call({ code: 'import os\nprint(os.getcwd())\nprint(open("main.py").read().splitlines()[0])' });
    const [cwd, firstLine] = result.stdout.trim().split('\n');
    expect(cwd).toMatch(new RegExp(`^${workspace}/\\.trellis/tmp/python-[A-Za-z0-9]{6}$`));
    expect(firstLine).toBe('import os');
    expect(result).toMatchObject({
      exit_code: 0,
      signal: null,
      stderr: '',
      timed_out: false,
      stdout_truncated: false,
      summary: 'Exited with code 0.',
    });
    expect(tempFolders()).toEqual([]);
  });

  it('passes stdin', async () => {
    const result = await call({ code: 'import sys\ndata = sys.stdin.read()\nprint(len(data), data.upper())', stdin: 'héllo\nworld' });
    expect(result.stdout).toBe('11 HÉLLO\nWORLD\n');
  });

  it('reports a failing program with its traceback', async () => {
    const result = await call({ code: 'raise ValueError("boom")' });
    expect(result.exit_code).toBe(1);
    expect(result.stderr.trim().split('\n').at(-1)).toBe('ValueError: boom');
    expect(result.summary).toBe('Exited with code 1; see stderr for the traceback.');
  });

  it('gives the program no host environment but PATH and HOME', async () => {
    process.env.TRELLIS_TEST_SECRET = 'hunter2';
    try {
      const result = await call({ code: 'import os\nprint(sorted(k for k in os.environ if k != "LC_CTYPE"))' });
      expect(result.stdout.trim()).toBe(
        "['HOME', 'LANG', 'LC_ALL', 'PATH', 'PYTHONDONTWRITEBYTECODE', 'PYTHONIOENCODING', 'PYTHONUNBUFFERED', 'TMPDIR']",
      );
    } finally {
      delete process.env.TRELLIS_TEST_SECRET;
    }
  });

  it('kills a loop that never ends at the deadline', async () => {
    const result = await call({ code: 'print("start", flush=True)\nwhile True:\n    pass' }, { timeout_seconds: 2 });
    expect(result).toMatchObject({ exit_code: null, timed_out: true, stdout: 'start\n' });
    expect(result.summary).toBe(
      'Killed after 2 s ([runtime.tools.python] timeout_seconds); output so far is shown. Make the program faster or process less data per call.',
    );
    expect(processesInWorkspace()).toEqual([]);
    expect(tempFolders()).toEqual([]);
  });

  it('leaves no forked child behind, whether the program times out or exits', async () => {
    const forker = [
      'import os, time',
      'for _ in range(3):',
      '    if os.fork() == 0:',
      '        time.sleep(60)',
      '        os._exit(0)',
      'print("forked", flush=True)',
    ].join('\n');
    const timedOut = await call({ code: `${forker}\ntime.sleep(60)` }, { timeout_seconds: 2 });
    expect(timedOut).toMatchObject({ timed_out: true, stdout: 'forked\n' });
    expect(processesInWorkspace()).toEqual([]);

    const exited = await call({ code: forker });
    expect(exited).toMatchObject({ timed_out: false, exit_code: 0, stdout: 'forked\n' });
    expect(processesInWorkspace()).toEqual([]);
  });

  it.runIf(canLimitResources())('refuses a memory bomb with the address-space limit', async () => {
    const result = await call({ code: 'x = bytearray(2 * 1024 ** 3)\nprint("allocated")' }, { max_memory_mb: 256 });
    expect(result.exit_code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n').at(-1)).toBe('MemoryError');
    expect(result.limits).toEqual({ timeout_seconds: 30, memory_mb: 256, cpu_seconds: 30 });
  });

  it('caps output and says so', async () => {
    const result = await call(
      { code: 'import sys\nsys.stdout.write("a" * 100000)\nsys.stderr.write("b" * 5000)' },
      { max_output_bytes: 1024 },
    );
    expect(result.stdout).toBe('a'.repeat(1024));
    expect(result.stderr).toBe('b'.repeat(1024));
    expect(result).toMatchObject({ stdout_truncated: true, stderr_truncated: true, exit_code: 0 });
    expect(result.summary).toBe(
      'Exited with code 0. Output was cut at 1024 bytes per stream ([runtime.tools.python] max_output_bytes); print less, e.g. a summary instead of whole data.',
    );
  });

  it('kills the program when the call is aborted', async () => {
    const controller = new AbortController();
    const running = runTool.run(
      PythonRunInputSchema.parse({ code: 'import time\ntime.sleep(60)' }),
      makeContext({ workspace, signal: controller.signal }),
    );
    setTimeout(() => controller.abort(), 500);
    await expect(running).rejects.toMatchObject({ code: 'ABORTED' });
    expect(processesInWorkspace()).toEqual([]);
    expect(tempFolders()).toEqual([]);
  });

  it('names the fix when the configured interpreter is missing', async () => {
    const ctx = makeContext({ workspace, settings: { interpreter: 'python-does-not-exist' } });
    const input = PythonRunInputSchema.parse({ code: 'print(1)' });
    const expected = {
      code: 'NOT_FOUND',
      message:
        'The Python interpreter "python-does-not-exist" was not found on PATH. Install Python 3 or set [runtime.tools.python] interpreter to the absolute path of an executable interpreter. Python code cannot run until then; do the work another way.',
    };
    await expect(runTool.run(input, ctx)).rejects.toMatchObject(expected);
    await expect(runTool.canonicalize!(input, ctx)).rejects.toMatchObject(expected);
    await expect(runTool.run(input, makeContext({ workspace, settings: { interpreter: '/nonexistent/python3' } }))).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });

  it('canonicalizes to the resolved interpreter', async () => {
    const ctx = makeContext({ workspace, settings: { interpreter: 'python3' } });
    const result = await runTool.canonicalize!(PythonRunInputSchema.parse({ code: 'print(1)', stdin: 'ab' }), ctx);
    expect(result.summary).toEqual({
      interpreter: execFileSync('sh', ['-c', 'command -v python3'], { encoding: 'utf8' }).trim(),
      code_chars: 8,
      stdin_chars: 2,
      timeout_seconds: 30,
      max_memory_mb: 512,
    });
  });

  it('says so when the workspace cannot hold its temp folder', async () => {
    const missing = join(workspace, 'no-such-folder');
    await expect(runTool.run(PythonRunInputSchema.parse({ code: 'print(1)' }), makeContext({ workspace: missing }))).rejects.toMatchObject({
      code: 'TOOL_FAILED',
      message: `core-python could not create its temp folder under ${missing}/.trellis/tmp (ENOENT); it needs an existing, writable workspace folder.`,
    });
  });

  it('refuses a .trellis/tmp that is a symlink out of the workspace', async () => {
    const outside = realpathSync(mkdtempSync(join(tmpdir(), 'trellis-outside-')));
    try {
      mkdirSync(join(workspace, '.trellis'));
      symlinkSync(outside, join(workspace, '.trellis', 'tmp'));
      await expect(call({ code: 'print(1)' })).rejects.toMatchObject({ code: 'PATH_NOT_ALLOWED' });
      expect(readdirSync(outside)).toEqual([]);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });
});
