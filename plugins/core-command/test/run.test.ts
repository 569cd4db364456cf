import { copyFileSync, existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CommandSettingsSchema, RunInputSchema, matchesGlob, plugin, reduceEnv, runTool } from '../src/index.ts';
import { countProcesses, failureOf, makeCommandFixture } from './commandFixture.ts';
import type { CommandFixture } from './commandFixture.ts';

let fx: CommandFixture;
beforeEach(() => {
  fx = makeCommandFixture();
});
afterEach(() => fx.remove());

describe('settings and schema', () => {
  it('accepts {} with nothing allowed and refuses bad values', () => {
    expect(CommandSettingsSchema.parse({})).toEqual({
      allow: [],
      cwd: '.',
      env_allow: ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ'],
      timeout_seconds: 30,
      max_output_bytes: 65536,
      programs: {},
    });
    expect(CommandSettingsSchema.safeParse({ allow: 'git' }).success).toBe(false);
    expect(CommandSettingsSchema.safeParse({ allow: ['bin/git'] }).success).toBe(false);
    expect(CommandSettingsSchema.safeParse({ allow: ['/usr/bin/*', 'py*'] }).success).toBe(true);
    expect(CommandSettingsSchema.safeParse({ env_allow: ['A=B'] }).success).toBe(false);
    expect(CommandSettingsSchema.safeParse({ timeout_seconds: 0 }).success).toBe(false);
    expect(CommandSettingsSchema.safeParse({ max_output_bytes: 1.5 }).success).toBe(false);
    expect(CommandSettingsSchema.safeParse({ shell: true }).success).toBe(false);
    expect(plugin.settings?.key).toBe('command');
  });

  it('requires program, defaults args to none, and takes nothing else', () => {
    expect(RunInputSchema.safeParse({ program: 'git', args: [] }).success).toBe(true);
    expect(RunInputSchema.parse({ program: 'git' })).toEqual({ program: 'git', args: [] });
    expect(RunInputSchema.safeParse({}).success).toBe(false);
    expect(RunInputSchema.safeParse({ program: '', args: [] }).success).toBe(false);
    expect(RunInputSchema.safeParse({ program: 'git', args: [1] }).success).toBe(false);
    expect(RunInputSchema.safeParse({ program: 'git', args: [], shell: true }).success).toBe(false);
    expect(RunInputSchema.safeParse({ program: 'git', args: Array.from({ length: 1001 }, () => 'x') }).success).toBe(false);
  });

  it('matches globs within one name and reduces the environment', () => {
    expect(matchesGlob('py*', 'python3')).toBe(true);
    expect(matchesGlob('py*', 'ruby')).toBe(false);
    expect(matchesGlob('/usr/bin/*', '/usr/bin/git')).toBe(true);
    expect(matchesGlob('/usr/bin/*', '/usr/bin/x/git')).toBe(false);
    expect(matchesGlob('git', 'git.exe')).toBe(false);
    expect(matchesGlob('a.b', 'axb')).toBe(false);
    expect(reduceEnv({ PATH: '/bin', LC_TIME: 'C', SECRET: 'x', HOME: undefined }, ['PATH', 'HOME', 'LC_*'])).toEqual({
      PATH: '/bin',
      LC_TIME: 'C',
    });
  });
});

describe('allow list', () => {
  it('refuses everything by default and says how to allow a program', async () => {
    expect(await failureOf(fx, () => runTool.run({ program: 'ls', args: [] }, fx.context()))).toEqual({
      code: 'NOT_ALLOWED',
      message:
        'program: "ls" cannot run because no program is allowed yet ([runtime.tools.command] allow = [], the default). Tell the user; they can allow it by adding "ls" to allow under [runtime.tools.command] in runtime.toml.',
    });
  });

  it('refuses a program not on the list', async () => {
    expect(await failureOf(fx, () => runTool.run({ program: 'rm', args: ['-rf', '/'] }, fx.context({ allow: ['ls', 'git'] })))).toEqual({
      code: 'NOT_ALLOWED',
      message:
        'program: "rm" is not on the allow list (no name pattern matches it; allow = ["ls","git"]). Use one of the allowed programs, or ask the user to add it to allow under [runtime.tools.command] in runtime.toml.',
    });
  });

  it('does not let a name pattern admit a program given as a path', async () => {
    mkdirSync(join(fx.ws, 'bin'));
    copyFileSync('/usr/bin/printf', join(fx.ws, 'bin', 'printf'));
    expect(await failureOf(fx, () => runTool.run({ program: './bin/printf', args: ['x'] }, fx.context({ allow: ['printf'] })))).toEqual({
      code: 'NOT_ALLOWED',
      message:
        'program: "./bin/printf" is not on the allow list (a program given as a path must match an absolute path pattern, and there is none; allow = ["printf"]). Use one of the allowed programs, or ask the user to add it to allow under [runtime.tools.command] in runtime.toml.',
    });
    expect(
      await failureOf(fx, () => runTool.run({ program: './bin/printf', args: ['x'] }, fx.context({ allow: ['printf', '/usr/bin/*'] }))),
    ).toEqual({
      code: 'NOT_ALLOWED',
      message:
        'program: "./bin/printf" is not on the allow list (a program given as a path must match an absolute path pattern by its resolved path <tmp>/ws/bin/printf; allow = ["printf","/usr/bin/*"]). Use one of the allowed programs, or ask the user to add it to allow under [runtime.tools.command] in runtime.toml.',
    });
  });

  it('matches a path argument by its resolved path, through symlinks', async () => {
    symlinkSync('/usr/bin/printf', join(fx.ws, 'p'));
    const out = await runTool.run({ program: './p', args: ['ok'] }, fx.context({ allow: ['/usr/bin/printf'] }));
    expect(out.stdout).toBe('ok');
    expect(out.resolvedProgram).toBe(join(fx.ws, 'p'));
  });

  it('lets a path pattern admit a bare name found on PATH', async () => {
    const out = await runTool.run({ program: 'printf', args: ['hi'] }, fx.context({ allow: ['/usr/bin/*', '/usr/local/bin/*'] }));
    expect(out.resolvedProgram).toMatch(/^\/usr(\/local)?\/bin\/printf$/);
    expect(out.stdout).toBe('hi');
    const found = ['/usr/local/bin', '/usr/bin', '/bin'].map((dir) => join(dir, 'printf')).find((p) => existsSync(p));
    expect((await failureOf(fx, () => runTool.run({ program: 'printf', args: [] }, fx.context({ allow: ['/opt/*'] })))).message).toBe(
      `program: "printf" is not on the allow list (no name pattern matches it and its path ${found} matches no path pattern; allow = ["/opt/*"]). Use one of the allowed programs, or ask the user to add it to allow under [runtime.tools.command] in runtime.toml.`,
    );
  });

  it('says when an allowed program is not on PATH, or PATH is not passed', async () => {
    expect(await failureOf(fx, () => runTool.run({ program: 'no-such-tool-xyz', args: [] }, fx.context({ allow: ['no-such-*'] })))).toEqual(
      {
        code: 'NOT_FOUND',
        message:
          'program: "no-such-tool-xyz" was not found in any folder on PATH (/usr/local/bin:/usr/bin:/bin). Check the spelling, or pass the program\'s absolute path.',
      },
    );
    expect(
      (await failureOf(fx, () => runTool.run({ program: 'printf', args: [] }, fx.context({ allow: ['printf'], env_allow: ['HOME'] }))))
        .code,
    ).toBe('NOT_FOUND');
  });

  it('ignores relative PATH entries', async () => {
    mkdirSync(join(fx.ws, 'evil'));
    copyFileSync('/usr/bin/printf', join(fx.ws, 'evil', 'mytool'));
    const ctx = fx.context({ allow: ['mytool'] }, { env: { PATH: 'evil:.' } });
    expect((await failureOf(fx, () => runTool.run({ program: 'mytool', args: [] }, ctx))).code).toBe('NOT_FOUND');
  });
});

describe('running', () => {
  it('passes shell metacharacters to the program literally', async () => {
    const args = ['%s\n', '$(id)', ';', 'echo pwned', '|', '`id`', '&&', '>', 'out.txt', '*', '$HOME', "'quoted'"];
    const out = await runTool.run(RunInputSchema.parse({ program: 'printf', args }), fx.context({ allow: ['printf'] }));
    expect(out).toEqual({
      resolvedProgram: out.resolvedProgram,
      argv: [out.resolvedProgram, ...args],
      cwd: fx.ws,
      exitCode: 0,
      signal: null,
      timedOut: false,
      stdout: "$(id)\n;\necho pwned\n|\n`id`\n&&\n>\nout.txt\n*\n$HOME\n'quoted'\n",
      stderr: '',
      stdoutTruncated: false,
      stderrTruncated: false,
      durationMs: out.durationMs,
    });
    expect(out.resolvedProgram).toMatch(/^\/usr(\/local)?\/bin\/printf$/);
    expect(existsSync(join(fx.ws, 'out.txt'))).toBe(false);
  });

  it('passes only allowed environment variables, never a secret', async () => {
    const env = { PATH: '/usr/bin:/bin', HOME: '/home/tester', LANG: 'C', SECRET_TOKEN: 'hunter2', AWS_SECRET_ACCESS_KEY: 'k' };
    const out = await runTool.run({ program: 'env', args: [] }, fx.context({ allow: ['env'] }, { env }));
    expect(out.stdout.split('\n').filter(Boolean).sort()).toEqual(['HOME=/home/tester', 'LANG=C', 'PATH=/usr/bin:/bin']);
  });

  it('reports a non-zero exit code as a result, with stderr', async () => {
    const out = await runTool.run({ program: 'sh', args: ['-c', 'echo oops >&2; exit 3'] }, fx.context({ allow: ['sh'] }));
    expect({ exitCode: out.exitCode, stderr: out.stderr, stdout: out.stdout, timedOut: out.timedOut }).toEqual({
      exitCode: 3,
      stderr: 'oops\n',
      stdout: '',
      timedOut: false,
    });
  });

  it('caps output with an explicit marker', async () => {
    const out = await runTool.run({ program: 'seq', args: ['1', '100000'] }, fx.context({ allow: ['seq'], max_output_bytes: 20 }));
    expect(out.stdout).toBe(
      '1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n[core-command: stdout truncated at 20 bytes ([runtime.tools.command] max_output_bytes); the rest was dropped]',
    );
    expect(out.stdoutTruncated).toBe(true);
    expect(out.stderrTruncated).toBe(false);
  });

  it('runs in the configured or requested folder inside the workspace, and refuses one outside', async () => {
    mkdirSync(join(fx.ws, 'sub'));
    expect((await runTool.run({ program: 'pwd', args: [], cwd: 'sub' }, fx.context({ allow: ['pwd'] }))).stdout).toBe(
      `${join(fx.ws, 'sub')}\n`,
    );
    expect((await runTool.run({ program: 'pwd', args: [] }, fx.context({ allow: ['pwd'], cwd: 'sub' }))).stdout).toBe(
      `${join(fx.ws, 'sub')}\n`,
    );
    expect(await failureOf(fx, () => runTool.run({ program: 'pwd', args: [], cwd: '..' }, fx.context({ allow: ['pwd'] })))).toEqual({
      code: 'PATH_NOT_ALLOWED',
      message:
        'cwd: ".." resolves to "<tmp>", outside the workspace "<tmp>/ws". Commands run only inside the workspace; use a folder relative to it.',
    });
    symlinkSync('/etc', join(fx.ws, 'etc-link'));
    expect(
      (await failureOf(fx, () => runTool.run({ program: 'pwd', args: [], cwd: 'etc-link' }, fx.context({ allow: ['pwd'] })))).code,
    ).toBe('PATH_NOT_ALLOWED');
    expect(
      (await failureOf(fx, () => runTool.run({ program: 'pwd', args: [] }, fx.context({ allow: ['pwd'], cwd: '/tmp' })))).message,
    ).toMatch(/^\[runtime\.tools\.command\] cwd: "\/tmp" resolves to "\/tmp", outside the workspace/);
  });

  it('refuses NUL bytes in arguments', async () => {
    expect(await failureOf(fx, () => runTool.run({ program: 'printf', args: ['ok', 'a\0b'] }, fx.context({ allow: ['printf'] })))).toEqual({
      code: 'INVALID_ARGUMENT',
      message: 'args[1]: contains a NUL byte, which no program argument can hold. Remove it.',
    });
  });

  it('canonicalizes to the resolved argv for policy', async () => {
    const out = await runTool.canonicalize!({ program: 'printf', args: ['a b', '$(id)'] }, fx.context({ allow: ['printf'] }));
    const resolved = (out.summary as { argv: string[] }).argv[0];
    expect(out).toEqual({
      input: { program: 'printf', args: ['a b', '$(id)'], cwd: fx.ws },
      summary: { argv: [resolved, 'a b', '$(id)'], realProgram: resolved, cwd: fx.ws, env: ['HOME', 'LANG', 'PATH'] },
    });
  });
});

describe('deadline', () => {
  it('kills the whole process group, children included, at timeout_seconds', async () => {
    const marker = 'sleep 97531';
    const running = runTool.run(
      { program: 'sh', args: ['-c', `${marker} & ${marker} & echo started; wait`] },
      fx.context({ allow: ['sh'], timeout_seconds: 1.5 }),
    );
    await new Promise((r) => setTimeout(r, 700));
    expect(countProcesses(marker)).toBe(2);
    const out = await running;
    expect({ timedOut: out.timedOut, exitCode: out.exitCode, stdout: out.stdout }).toEqual({
      timedOut: true,
      exitCode: null,
      stdout: 'started\n',
    });
    expect(out.signal).toMatch(/^SIG(TERM|KILL)$/);
    await new Promise((r) => setTimeout(r, 300));
    expect(countProcesses(marker)).toBe(0);
  });

  it('kills the group when the caller aborts (ctx.signal)', async () => {
    const marker = 'sleep 86420';
    const controller = new AbortController();
    const running = runTool.run(
      { program: 'sh', args: ['-c', `${marker} & wait`] },
      fx.context({ allow: ['sh'], timeout_seconds: 60 }, { signal: controller.signal }),
    );
    await new Promise((r) => setTimeout(r, 500));
    expect(countProcesses(marker)).toBe(1);
    controller.abort();
    const out = await running;
    expect(out.exitCode).toBe(null);
    await new Promise((r) => setTimeout(r, 300));
    expect(countProcesses(marker)).toBe(0);
  });
});

describe('as the runtime validates', () => {
  it('accepts the examples and refuses malformed calls', async () => {
    const { runtimeValidator } = await import('@trellis/testing');
    const valid = runtimeValidator(runTool);
    for (const example of runTool.examples ?? []) expect(valid(example.input)).toBe(true);
    expect(valid({ program: 'git' })).toBe(true);
    expect(valid({})).toBe(false);
    expect(valid({ program: 'git', args: 'status' })).toBe(false);
    expect(valid({ program: 'git', args: [], shell: true })).toBe(false);
  });

  it('runs the canonicalized input the same way', async () => {
    const ctx = fx.context({ allow: ['printf'] });
    const canonical = await runTool.canonicalize!({ program: 'printf', args: ['%s', 'x'] }, ctx);
    expect((await runTool.run(canonical.input, ctx)).stdout).toBe('x');
  });
});
