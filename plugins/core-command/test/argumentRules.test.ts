import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CommandSettingsSchema, SHIPPED_PROGRAM_RULES, effectiveRules, runTool } from '../src/index.ts';
import { failureOf, makeCommandFixture } from './commandFixture.ts';
import type { CommandFixture } from './commandFixture.ts';

// Issue 12, item 8: an allowed program became a shell through its own options
// (git -c 'alias.x=!id; env' x). Each refusal below is checked through the tool with the real
// git, and a marker file proves the command never ran.

let fx: CommandFixture;
let marker: string;
const GIT = { allow: ['git'] };

beforeEach(() => {
  fx = makeCommandFixture();
  marker = join(fx.base, 'ran');
  // A small repository inside the workspace, to fetch and clone from.
  const repo = join(fx.ws, 'repo');
  mkdirSync(repo);
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: repo, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: fx.base } });
  git('init', '-q', '-b', 'main');
  writeFileSync(join(repo, 'a.txt'), 'alpha\n');
  git('add', 'a.txt');
  git('-c', 'user.name=T', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'first');
});
afterEach(() => fx.remove());

async function refused(
  args: string[],
  settings: Record<string, unknown> = GIT,
  program = 'git',
): Promise<{ code: string; message: string }> {
  const failure = await failureOf(fx, () => runTool.run({ program, args, cwd: 'repo' }, fx.context(settings)));
  expect(existsSync(marker), 'the refused command must not have run').toBe(false);
  return failure;
}

describe('git: options that run commands are refused before anything runs', () => {
  it('refuses git -c (the alias-to-shell of issue 12), naming program, argument, rule and key', async () => {
    expect(await refused(['-c', `alias.x=!touch ${marker}; env`, 'x'])).toEqual({
      code: 'POLICY_DENIED',
      message:
        'args[0]: "-c" is refused for git because it sets any configuration value for the call, and repository config can name commands (core.fsmonitor, core.hooksPath, core.pager, core.sshCommand, aliases with "!"); e.g. -c \'alias.x=!id\' x runs id through a shell (the shipped rule "-c" in [runtime.tools.command.programs.git] deny_global_args). Run it without that argument; if the user trusts this use, they can change the rule under [runtime.tools.command.programs.git] in runtime.toml.',
    });
    // canonicalize refuses it too, so policy and approval never see it as harmless.
    const canonical = await failureOf(fx, () =>
      runTool.canonicalize!({ program: 'git', args: ['-c', 'alias.x=!id', 'x'] }, fx.context(GIT)),
    );
    expect(canonical.code).toBe('POLICY_DENIED');
  });

  it.each([
    [['--config-env=alias.x=HOME', 'x'], '--config-env'],
    [['--exec-path=/tmp', 'status'], '--exec-path'],
    [['-p', 'log'], '-p'],
    [['clone', `--upload-pack=touch ${'MARKER'}`, '.', '../copy'], '--upload-pack'],
    [['clone', '-u', `touch ${'MARKER'}`, '.', '../copy'], 'clone -u'],
    [['ls-remote', `--upl=touch ${'MARKER'}`, '.'], '--upload-pack (abbreviated)'],
    [['fetch', `--upload-pack=touch ${'MARKER'}`, '.'], '--upload-pack'],
    [['push', `--receive-pack=touch ${'MARKER'}`, '.', 'main:other'], '--receive-pack'],
    [['push', `--exec=touch ${'MARKER'}`, '.', 'main:other'], '--exec'],
    [['clone', `ext::sh -c touch% ${'MARKER'}`, '../copy'], 'ext::'],
    [['clone', 'fd::3', '../copy'], 'fd::'],
    [['clone', '-c', `core.hooksPath=/tmp`, '.', '../copy'], 'clone -c'],
    [['init', '--template=/tmp', '../other'], '--template'],
    [['rebase', '-x', `touch ${'MARKER'}`, 'HEAD'], 'rebase -x'],
    [['rebase', `--exec=touch ${'MARKER'}`, 'HEAD'], 'rebase --exec'],
    [['grep', `-Otouch ${'MARKER'}`, 'alpha'], 'grep -O'],
    [['bisect', 'run', 'touch', 'MARKER'], 'bisect run'],
    [['submodule', 'foreach', `touch ${'MARKER'}`], 'submodule foreach'],
    [['config', 'core.fsmonitor', `touch ${'MARKER'}`], 'config'],
    [['difftool', '-x', `touch ${'MARKER'}`, 'HEAD'], 'difftool -x'],
  ])('refuses git %j (%s)', async (args, _what) => {
    const failure = await refused(args.map((a) => a.replace('MARKER', marker)));
    expect(failure.code).toBe('POLICY_DENIED');
    expect(failure.message).toMatch(/is refused for git because .* in \[runtime\.tools\.command\.programs\.git\] /);
  });

  it('refuses -C, --git-dir and --work-tree pointing outside the workspace, and allows them inside', async () => {
    expect(await refused(['-C', fx.base, 'status'])).toEqual({
      code: 'POLICY_DENIED',
      message:
        'args[0]: -C "<tmp>" leads to "<tmp>", outside the workspace "<tmp>/ws" (it runs git in another folder, with that repository\'s config and hooks); git may only be pointed inside the workspace (the rule "-C" in [runtime.tools.command.programs.git] path_args). Use a path inside the workspace; the user can change the rule under [runtime.tools.command.programs.git] in runtime.toml.',
    });
    expect((await refused(['--git-dir=../../.git', 'status'])).message).toMatch(
      /^args\[0\]: --git-dir "\.\.\/\.\.\/\.git" leads to "<tmp>\/\.git", outside the workspace/,
    );
    expect((await refused(['--work-tree', '/etc', 'status'])).code).toBe('POLICY_DENIED');
    const inside = await runTool.run(
      { program: 'git', args: ['-C', '.', '--git-dir=.git', 'log', '--format=%s'], cwd: 'repo' },
      fx.context(GIT),
    );
    expect({ exit: inside.exitCode, out: inside.stdout }).toEqual({ exit: 0, out: 'first\n' });
  });

  it('leaves ordinary git use alone: status -uno, grep -c, log -C, log -1', async () => {
    for (const args of [
      ['status', '-uno', '--short'],
      ['grep', '-c', 'alpha'],
      ['log', '-C', '--format=%s'],
      ['log', '-1', '--format=%s'],
    ]) {
      const result = await runTool.run({ program: 'git', args, cwd: 'repo' }, fx.context(GIT));
      expect({ args, exit: result.exitCode }).toEqual({ args, exit: 0 });
    }
  });

  it("applies git's rules to git under another name (a symlink found on PATH)", async () => {
    const bin = join(fx.base, 'bin');
    mkdirSync(bin);
    symlinkSync(execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim(), join(bin, 'g'));
    const failure = await failureOf(fx, () =>
      runTool.run(
        { program: 'g', args: ['-c', `alias.x=!touch ${marker}`, 'x'], cwd: 'repo' },
        fx.context({ allow: ['g'] }, { env: { PATH: `${bin}:/usr/bin:/bin` } }),
      ),
    );
    expect(failure.code).toBe('POLICY_DENIED');
    expect(existsSync(marker)).toBe(false);
  });
});

describe('rules are configurable per program in [runtime.tools.command.programs.<name>]', () => {
  it('a user rule for another program refuses its argument and names the configured rule', async () => {
    const settings = { allow: ['ls'], programs: { ls: { deny_args: ['-R', '--recursive'] } } };
    expect(await refused(['-laR'], settings, 'ls')).toEqual({
      code: 'POLICY_DENIED',
      message:
        'args[0]: "-laR" is refused for ls (the configured rule "-R" in [runtime.tools.command.programs.ls] deny_args). Run it without that argument; if the user trusts this use, they can change the rule under [runtime.tools.command.programs.ls] in runtime.toml.',
    });
    const ok = await runTool.run({ program: 'ls', args: ['-la'], cwd: 'repo' }, fx.context(settings));
    expect(ok.exitCode).toBe(0);
  });

  it('a key the user sets replaces that key of the shipped rules; the others stay', async () => {
    const settings = { allow: ['git'], programs: { git: { subcommand_deny_args: { config: [] } } } };
    const read = await runTool.run({ program: 'git', args: ['config', '--get', 'core.bare'], cwd: 'repo' }, fx.context(settings));
    expect({ exit: read.exitCode, out: read.stdout }).toEqual({ exit: 0, out: 'false\n' });
    expect((await refused(['rebase', '-x', `touch ${marker}`, 'HEAD'], settings)).code).toBe('POLICY_DENIED');
    expect((await refused(['-c', 'a.b=c', 'status'], settings)).code).toBe('POLICY_DENIED');
    const opened = { allow: ['git'], programs: { git: { deny_global_args: [] } } };
    const withC = await runTool.run(
      { program: 'git', args: ['-c', 'core.abbrev=12', 'log', '-1', '--format=%h'], cwd: 'repo' },
      fx.context(opened),
    );
    expect(withC.stdout.trim()).toHaveLength(12);
  });

  it('without has_subcommands every argument is checked; with it, only those before the subcommand', async () => {
    const flat = { allow: ['ls', 'tar'], programs: { ls: { deny_global_args: ['-R'] }, tar: { path_args: ['-C', '--directory'] } } };
    expect((await refused(['.', '-R'], flat, 'ls')).message).toMatch(
      /^args\[1\]: "-R" is refused for ls \(the configured rule "-R" in \[runtime\.tools\.command\.programs\.ls\] deny_global_args\)/,
    );
    expect((await refused(['-cf', 'out.tar', 'a.txt', '-C', '/etc'], flat, 'tar')).message).toMatch(
      /^args\[3\]: -C "\/etc" leads to "\/etc", outside the workspace/,
    );
    const nested = { allow: ['ls'], programs: { ls: { has_subcommands: true, deny_global_args: ['-R'] } } };
    expect((await runTool.run({ program: 'ls', args: ['.', '-R'], cwd: 'repo' }, fx.context(nested))).exitCode).toBe(0);
  });

  it('validates the rules table and refuses unknown keys', () => {
    expect(CommandSettingsSchema.safeParse({ programs: { git: { deny_args: ['-x'] } } }).success).toBe(true);
    expect(CommandSettingsSchema.safeParse({ programs: { git: { deny: ['-x'] } } }).success).toBe(false);
    expect(CommandSettingsSchema.safeParse({ programs: { 'bin/git': {} } }).success).toBe(false);
    expect(CommandSettingsSchema.safeParse({ programs: { git: { deny_args: [''] } } }).success).toBe(false);
  });
});

describe('find and rg ship rules too', () => {
  it('refuses find -exec and -delete through the tool', async () => {
    const settings = { allow: ['find'] };
    expect((await refused(['.', '-name', 'a.txt', '-exec', 'touch', marker, ';'], settings, 'find')).message).toMatch(
      /^args\[3\]: "-exec" is refused for find because it runs a command of the caller's choosing on every file found/,
    );
    expect((await refused(['.', '-delete'], settings, 'find')).code).toBe('POLICY_DENIED');
    const ok = await runTool.run({ program: 'find', args: ['.', '-name', 'a.txt'], cwd: 'repo' }, fx.context(settings));
    expect(ok.stdout).toBe('./a.txt\n');
  });

  it('has rg rules for --pre and --hostname-bin', () => {
    const rules = effectiveRules('rg', {})!;
    expect(rules.rules.deny_args).toEqual(['--pre', '--hostname-bin']);
    expect(Object.keys(SHIPPED_PROGRAM_RULES).sort()).toEqual(['find', 'git', 'rg']);
  });
});
