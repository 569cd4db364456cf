import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listSkillsTool } from '../src/listSkillsTool.ts';
import { runSkillTool } from '../src/runSkillTool.ts';
import { createSandbox, createToolContext, failureOf, normalize, writeSkill } from './helpers.ts';

let box: ReturnType<typeof createSandbox>;
beforeEach(() => {
  box = createSandbox();
});
afterEach(() => box.cleanup());

// A generous default: a worker's start-up on a loaded machine must never look like a timeout.
const settings = (extra: Record<string, unknown> = {}) => ({ in_process: ['js'], run_skill_timeout: 30, ...extra });
const run = (input: unknown, extra?: Record<string, unknown>, signal?: AbortSignal) =>
  runSkillTool.run(
    { name: 'js', input },
    createToolContext({ workspace: box.workspace, configHome: box.configHome, config: settings(extra), ...(signal ? { signal } : {}) }),
  );
const fail = async (input: unknown, extra?: Record<string, unknown>) => normalize(await failureOf(() => run(input, extra)), box.base);

/** A JavaScript skill in the user skill root: in_process trusts skills there (by location). */
function jsSkill(source: string, file = 'skill.mjs'): void {
  writeSkill(box.userRoot, 'js', { frontMatter: `name: js\ndescription: d\nscripts: [${file}]`, files: { [file]: source } });
}

/** Threads of this process, from /proc: a terminated worker's thread is gone. */
function threadCount(): number {
  return Number(/^Threads:\s+(\d+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]);
}

describe('run (in-process worker)', () => {
  it('imports the script in a worker and returns its run(input)', async () => {
    jsSkill(
      'import { isMainThread } from "node:worker_threads";\nexport async function run(input) { return { doubled: input.n * 2, isMainThread, env: process.env.TRELLIS_SKILL_NAME }; }\n',
    );
    expect(await run({ n: 21 })).toEqual({ doubled: 42, isMainThread: false, env: 'js' });
  });

  it('runs the same script in a subprocess when the skill is not in in_process', async () => {
    jsSkill(
      'import { isMainThread } from "node:worker_threads";\nexport function run() {}\nconsole.log(JSON.stringify({ isMainThread, pid: process.pid === Number(process.env.HOST_PID) }));\n',
    );
    expect(
      await runSkillTool.run(
        { name: 'js' },
        createToolContext({
          workspace: box.workspace,
          configHome: box.configHome,
          env: { HOST_PID: String(process.pid) },
          config: { pass_env: ['HOST_PID'] },
        }),
      ),
    ).toEqual({
      isMainThread: true,
      pid: false,
    });
  });

  it('terminates a worker that loops forever at the deadline', async () => {
    jsSkill('export function run() { for (;;) {} }\n');
    const before = threadCount();
    expect(await fail({}, { run_skill_timeout: 0.5 })).toEqual({
      code: 'TIMEOUT',
      message:
        'in-process skill "js" (script "skill.mjs") did not finish within 0.5 s (run_skill_timeout); its worker thread was terminated. Ask for less work or raise [runtime.tools.skills] run_skill_timeout',
    });
    expect(threadCount()).toBe(before);
  });

  it('turns a throw into TOOL_FAILED with the message and stderr', async () => {
    jsSkill('export function run(input) { console.error("checking", input.path); throw new Error(`no such report: ${input.path}`); }\n');
    const failure = await fail({ path: 'q3.csv' });
    expect(failure.code).toBe('TOOL_FAILED');
    expect(failure.message.split('\n').filter((l) => !l.trimStart().startsWith('at '))).toEqual([
      'in-process skill "js" (script "skill.mjs") threw: Error: no such report: q3.csv',
      'stderr ends with:',
      'checking q3.csv',
    ]);
  });

  it('reports process.exit, a missing run export, a syntax error and a result that is not JSON', async () => {
    jsSkill('export function run() { process.exit(7); }\n');
    expect(await fail({})).toEqual({
      code: 'TOOL_FAILED',
      message:
        'in-process skill "js" (script "skill.mjs") exited (code 7) before returning a result: it called process.exit, or the promise run returned never settled',
    });
    jsSkill('export const notRun = 1;\n');
    expect(await fail({})).toEqual({
      code: 'TOOL_FAILED',
      message:
        'in-process skill "js" (script "skill.mjs") does not export a function `run(input)`; add `export function run(input) { … }` to <base>/config/trellis/skills/js/skill.mjs',
    });
    jsSkill('export function run( {\n');
    expect((await fail({})).message.split('\n')[0]).toBe(
      'in-process skill "js" (script "skill.mjs") could not be loaded from <base>/config/trellis/skills/js/skill.mjs: SyntaxError: Unexpected end of input',
    );
    jsSkill('export function run() { return new Promise(() => {}); }\n');
    expect(await fail({})).toEqual({
      code: 'TOOL_FAILED',
      message:
        'in-process skill "js" (script "skill.mjs") exited (code 0) before returning a result: it called process.exit, or the promise run returned never settled',
    });
    jsSkill('export function run() { return { n: 1n }; }\n');
    expect(await fail({})).toEqual({
      code: 'OUTPUT_NOT_SERIALIZABLE',
      message:
        'in-process skill "js" (script "skill.mjs") returned a value that is not JSON (Do not know how to serialize a BigInt); return plain objects, arrays, strings, numbers and booleans',
    });
  });

  it('supports CommonJS skills and caps the result size', async () => {
    jsSkill('module.exports = { run: (input) => "x".repeat(input.n) };\n', 'skill.cjs');
    expect(await run({ n: 3 })).toBe('xxx');
    expect(await fail({ n: 5000 }, { max_output_bytes: 1024 })).toEqual({
      code: 'OUTPUT_TOO_LARGE',
      message:
        'in-process skill "js" (script "skill.cjs") returned 5002 bytes of JSON, more than max_output_bytes (1024); return less or raise [runtime.tools.skills] max_output_bytes',
    });
  });

  it('stops a worker that runs out of its heap limit', async () => {
    jsSkill('export function run() { const keep = []; for (;;) keep.push(new Array(100000).fill({ a: Math.random() })); }\n');
    expect(await fail({}, { worker_max_memory_mb: 16, run_skill_timeout: 20 })).toMatchObject({
      code: 'TOOL_FAILED',
      message: expect.stringMatching(
        /^in-process skill "js" \(script "skill.mjs"\) ran out of memory \(worker_max_memory_mb = 16\) and was stopped/,
      ),
    });
  });

  it('stops a worker when the call is aborted', async () => {
    jsSkill('export function run() { return new Promise(() => setInterval(() => {}, 1000)); }\n');
    const controller = new AbortController();
    const pending = failureOf(() => run({}, { run_skill_timeout: 30 }, controller.signal));
    setTimeout(() => controller.abort(), 100);
    expect(await pending).toEqual({
      code: 'ABORTED',
      message: 'in-process skill "js" (script "skill.mjs") was stopped because the call was cancelled',
    });
  });
});

describe('in_process trusts a location, not a name', () => {
  const imposter =
    'import { isMainThread } from "node:worker_threads";\nexport function run() { return { imposter: true, isMainThread }; }\nconsole.log(JSON.stringify({ imposter: true, isMainThread }));\n';

  it('refuses a workspace skill named like a trusted in_process skill; the trusted one still runs in its worker', async () => {
    jsSkill('import { isMainThread } from "node:worker_threads";\nexport function run() { return { trusted: true, isMainThread }; }\n');
    writeSkill(box.workspaceRoot, 'js', {
      frontMatter: 'name: js\ndescription: d\nscripts: [skill.mjs]',
      files: { 'skill.mjs': imposter },
    });
    expect(await run({})).toEqual({ trusted: true, isMainThread: false });
    const listed = normalize(
      await listSkillsTool.run({}, createToolContext({ workspace: box.workspace, configHome: box.configHome, config: settings() })),
      box.base,
    );
    expect(listed).toMatchObject({
      skills: [{ name: 'js', description: 'd' }],
      rejected: 1,
      refused: [
        {
          name: 'js',
          code: 'SKILL_NOT_TRUSTED',
          message:
            '<base>/ws/.trellis/skills/js is named "js", which [runtime.tools.skills] in_process trusts to run inside Trellis, but it is in the workspace skill root, which is not trusted; in_process trusts skills by location (your user skill root or a configured path), never by name. Move the skill there, trust this workspace, or remove the name from in_process',
        },
      ],
    });
  });

  it('runs a workspace in_process skill in its worker once the workspace is trusted, and only then', async () => {
    writeSkill(box.workspaceRoot, 'js', {
      frontMatter: 'name: js\ndescription: d\nscripts: [skill.mjs]',
      files: { 'skill.mjs': imposter },
    });
    const context = (trusted: boolean) =>
      createToolContext({ workspace: box.workspace, configHome: box.configHome, config: settings(), workspaceTrusted: trusted });
    expect(await runSkillTool.run({ name: 'js', input: {} }, context(true))).toEqual({ imposter: true, isMainThread: false });
    expect(await failureOf(() => runSkillTool.run({ name: 'js', input: {} }, context(false)))).toMatchObject({ code: 'SKILL_NOT_TRUSTED' });
  });

  it('never runs a workspace skill in the host because its name is listed', async () => {
    writeSkill(box.workspaceRoot, 'js', {
      frontMatter: 'name: js\ndescription: d\nscripts: [skill.mjs]',
      files: { 'skill.mjs': imposter },
    });
    const failure = await fail({});
    expect(failure).toMatchObject({ code: 'SKILL_NOT_TRUSTED' });
  });
});
