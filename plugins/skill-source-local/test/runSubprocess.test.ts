import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runSkillTool } from '../src/runSkillTool.ts';
import { createSandbox, createToolContext, failureOf, normalize, processesWithMarker, writeSkill } from './helpers.ts';

let box: ReturnType<typeof createSandbox>;
beforeEach(() => {
  box = createSandbox();
});
afterEach(() => box.cleanup());

const ctx = (config: Record<string, unknown> = {}, signal?: AbortSignal) =>
  createToolContext({
    workspace: box.workspace,
    configHome: box.configHome,
    config,
    env: { SECRET_TOKEN: 'hunter2', LANG: 'C.UTF-8' },
    ...(signal ? { signal } : {}),
  });
const run = (args: { name: string; script?: string; input?: unknown }, config?: Record<string, unknown>, signal?: AbortSignal) =>
  runSkillTool.run(args, ctx(config, signal));
const fail = async (args: { name: string; script?: string; input?: unknown }, config?: Record<string, unknown>) =>
  normalize(await failureOf(() => run(args, config)), box.base);

function scriptSkill(name: string, files: Record<string, string>, extra = ''): string {
  return writeSkill(box.workspaceRoot, name, {
    frontMatter: `name: ${name}\ndescription: d\nscripts: [${Object.keys(files).join(', ')}]${extra}`,
    files,
  });
}

describe('run (subprocess)', () => {
  it('passes the input as JSON on stdin and returns JSON stdout as the value', async () => {
    scriptSkill('echo-json', { 'run.sh': 'read -r line\nprintf \'{"got":%s,"cwd":"%s"}\\n\' "$line" "$(pwd)"\n' });
    expect(normalize(await run({ name: 'echo-json', input: { a: [1, 2] } }), box.base)).toEqual({
      got: { a: [1, 2] },
      cwd: '<base>/ws/.trellis/skills/echo-json',
    });
  });

  it('returns plain text as { message }', async () => {
    scriptSkill('text', { 'run.sh': 'echo "hello world"\necho "second line"\n' });
    expect(await run({ name: 'text' })).toEqual({ message: 'hello world\nsecond line' });
  });

  it('runs Python and Node scripts through their interpreters, picking a script by name', async () => {
    scriptSkill('multi', {
      'a.py': 'import json, sys\ndata = json.load(sys.stdin)\nprint(json.dumps({"py": data["n"] * 2}))\n',
      'b.mjs': 'let s = ""; for await (const c of process.stdin) s += c; console.log(JSON.stringify({ node: JSON.parse(s).n + 1 }));\n',
    });
    expect(await run({ name: 'multi', input: { n: 21 } })).toEqual({ py: 42 });
    expect(await run({ name: 'multi', script: 'b.mjs', input: { n: 41 } })).toEqual({ node: 42 });
  });

  it('gives the script a reduced environment', async () => {
    scriptSkill('env', { 'env.sh': 'env | sort\n' });
    const { message } = (await run({ name: 'env' })) as { message: string };
    const names = message.split('\n').map((l) => l.split('=')[0]);
    expect(names.filter((n) => !['PWD', 'SHLVL', '_'].includes(n!))).toEqual([
      'HOME',
      'LANG',
      'PATH',
      'PYTHONDONTWRITEBYTECODE',
      'TRELLIS_SKILL_DIR',
      'TRELLIS_SKILL_NAME',
      'TRELLIS_WORKSPACE',
    ]);
    const passed = (await run({ name: 'env' }, { pass_env: ['SECRET_TOKEN'] })) as { message: string };
    expect(passed.message.split('\n')).toContain('SECRET_TOKEN=hunter2');
  });

  it('turns a non-zero exit into TOOL_FAILED with the stderr tail', async () => {
    scriptSkill('fails', { 'run.sh': 'echo "partial" ; echo "line 1" >&2; echo "boom: missing key title" >&2; exit 3\n' });
    expect(await fail({ name: 'fails' })).toEqual({
      code: 'TOOL_FAILED',
      message: 'skill "fails" (script "run.sh") exited with code 3; stderr ends with:\nline 1\nboom: missing key title',
    });
  });

  it('kills a hanging script and its grandchildren at run_skill_timeout', async () => {
    const marker = `skill-hang-${process.pid}-${Date.now()}`;
    scriptSkill('hangs', { 'run.sh': `sh -c "sleep 30; echo ${marker}" &\nsleep 30\necho ${marker}\n` });
    const pending = fail({ name: 'hangs' }, { run_skill_timeout: 1 });
    await new Promise((r) => setTimeout(r, 400));
    // The grandchild is running while the skill hangs…
    expect(processesWithMarker(marker)).toHaveLength(1);
    expect(await pending).toEqual({
      code: 'TIMEOUT',
      message:
        'skill "hangs" (script "run.sh") did not finish within 1 s (run_skill_timeout) and was stopped with all its child processes; ask for less work or raise [runtime.tools.skills] run_skill_timeout',
    });
    // …and gone after the deadline.
    await new Promise((r) => setTimeout(r, 100));
    expect(processesWithMarker(marker)).toEqual([]);
  });

  it('kills grandchildren a script leaves behind when it exits normally', async () => {
    const marker = `skill-orphan-${process.pid}-${Date.now()}`;
    scriptSkill('orphans', { 'run.sh': `sh -c "sleep 30; echo ${marker}" > /dev/null 2>&1 &\necho $!\n` });
    // A bare number on stdout is JSON, so the value is the grandchild's pid (in the script's own
    // PID namespace when children are isolated, so it is looked for by its marker instead).
    const pid = (await run({ name: 'orphans' })) as number;
    expect(pid).toBeGreaterThan(1);
    await new Promise((r) => setTimeout(r, 100));
    expect(processesWithMarker(marker)).toEqual([]);
  });

  it('caps a flood of output and says so', async () => {
    scriptSkill('floods', { 'run.sh': 'head -c 5000000 /dev/zero | tr "\\0" x\n' });
    expect(await fail({ name: 'floods' }, { max_output_bytes: 4096 })).toEqual({
      code: 'OUTPUT_TOO_LARGE',
      message:
        'skill "floods" (script "run.sh") wrote more than 4096 bytes to stdout (max_output_bytes); the output was dropped. Ask for a smaller result or raise [runtime.tools.skills] max_output_bytes',
    });
  });

  it('stops at once when the call is aborted', async () => {
    scriptSkill('slow', { 'run.sh': 'sleep 30\n' });
    const controller = new AbortController();
    const pending = failureOf(() => run({ name: 'slow' }, {}, controller.signal));
    setTimeout(() => controller.abort(), 100);
    expect(await pending).toEqual({
      code: 'ABORTED',
      message: 'skill "slow" (script "run.sh") was stopped because the call was cancelled',
    });
  });

  it('reports an interpreter that cannot be started', async () => {
    scriptSkill('no-interp', { 'x.rb': 'puts 1' });
    expect(await fail({ name: 'no-interp' }, { interpreters: { '.rb': 'no-such-ruby-xyz' } })).toEqual({
      code: 'TOOL_FAILED',
      message:
        'skill "no-interp" (script "x.rb") could not be started: no-such-ruby-xyz failed with ENOENT; install no-such-ruby-xyz or set [runtime.tools.skills] interpreters for this file type',
    });
  });

  it('runs an executable without a known extension directly', async () => {
    writeSkill(box.workspaceRoot, 'direct', {
      frontMatter: 'name: direct\ndescription: d\nscripts: [tool]',
      files: { tool: { content: '#!/bin/sh\necho direct\n', mode: 0o755 } },
    });
    expect(await run({ name: 'direct' })).toEqual({ message: 'direct' });
  });
});

describe('run: refusals before anything starts', () => {
  it('validates the input against input_schema', async () => {
    scriptSkill(
      'typed',
      { 'run.sh': 'cat\n' },
      '\ninput_schema:\n  type: object\n  properties:\n    title: { type: string }\n    mode: { enum: [a, b] }\n  required: [title]\n  additionalProperties: false',
    );
    expect(await fail({ name: 'typed', input: { mode: 'c', extra: 1 } })).toEqual({
      code: 'INPUT_INVALID',
      message:
        'input for skill "typed" does not match its input_schema (see skill-source-local.read):\ninput: must have required property \'title\'\ninput: unknown property "extra"\ninput.mode: must be one of "a", "b"',
    });
    expect(await run({ name: 'typed', input: { title: 'ok' } })).toEqual({ title: 'ok' });
  });

  it('checks input_schema patterns on a linear-time engine: a catastrophic pattern gives its verdict at once', async () => {
    // With the backtracking RegExp, 31 a's and a "!" against ^(a+)+$ blocked the event loop for ~90 s.
    scriptSkill(
      'redos',
      { 'run.sh': 'cat\n' },
      '\ninput_schema:\n  type: object\n  properties:\n    text: { type: string, pattern: "^(a+)+$" }',
    );
    expect(await fail({ name: 'redos', input: { text: `${'a'.repeat(31)}!` } })).toEqual({
      code: 'INPUT_INVALID',
      message:
        'input for skill "redos" does not match its input_schema (see skill-source-local.read):\ninput.text: must match pattern "^(a+)+$"',
    });
    expect(await run({ name: 'redos', input: { text: 'a'.repeat(31) } })).toEqual({ text: 'a'.repeat(31) });
  });

  it('refuses to run a skill whose input_schema pattern re2 cannot run, and says why', async () => {
    scriptSkill(
      'backref',
      { 'run.sh': 'cat\n' },
      '\ninput_schema:\n  type: object\n  properties:\n    text: { type: string, pattern: "(a)\\\\1" }',
    );
    expect(await fail({ name: 'backref', input: { text: 'aa' } })).toEqual({
      code: 'MANIFEST_INVALID',
      message:
        'skill "backref" was rejected and cannot run: <base>/ws/.trellis/skills/backref/SKILL.md: front matter key `input_schema`: pattern "(a)\\\\1" cannot run on the linear-time engine: error parsing regexp: invalid escape sequence: `\\1` (at /properties/text/pattern); rewrite it in RE2 syntax, without backreferences or lookaround. Call skill-source-local.read for every reason.',
    });
  });

  it('names unknown skills and scripts, instructions-only skills and rejected skills precisely', async () => {
    scriptSkill('tooling', { 'a.sh': 'echo a\n' });
    writeSkill(box.workspaceRoot, 'notes', {});
    writeSkill(box.workspaceRoot, 'bad', { frontMatter: 'name: bad\ndescription: d\nscripts: [../x.sh]' });
    expect(await fail({ name: 'toolin' })).toEqual({
      code: 'NOT_FOUND',
      message: 'no skill named "toolin". Did you mean "tooling"? Call skill-source-local.list to see every skill.',
    });
    expect(await fail({ name: 'tooling', script: 'b.sh' })).toEqual({
      code: 'NOT_FOUND',
      message: 'skill "tooling" has no script "b.sh"; its scripts are "a.sh"',
    });
    expect(await fail({ name: 'notes' })).toEqual({
      code: 'INVALID_ARGUMENT',
      message: 'skill "notes" has no scripts: it is instructions only. Call skill-source-local.read and follow its instructions instead.',
    });
    expect(await fail({ name: 'bad' })).toEqual({
      code: 'PATH_ESCAPE',
      message:
        'skill "bad" was rejected and cannot run: <base>/ws/.trellis/skills/bad/SKILL.md: front matter key `scripts["../x.sh"]`: "../x.sh" leaves the skill folder <base>/ws/.trellis/skills/bad; scripts must live inside it. Call skill-source-local.read for every reason.',
    });
    expect(await fail({ name: 'tooling' }, { run_skill_timeout: -1 })).toEqual({
      code: 'CONFIG_INVALID',
      message:
        '[runtime.tools.skills] is invalid; fix runtime.toml:\nruntime.tools.skills.run_skill_timeout: Too small: expected number to be >0',
    });
  });
});
