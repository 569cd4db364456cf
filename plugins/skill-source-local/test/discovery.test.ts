import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, linkSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listSkillsTool } from '../src/listSkillsTool.ts';
import { readSkillTool } from '../src/readSkillTool.ts';
import { createSandbox, createToolContext, failureOf, normalize, writeSkill } from './helpers.ts';

let box: ReturnType<typeof createSandbox>;
beforeEach(() => {
  box = createSandbox();
});
afterEach(() => box.cleanup());

const ctx = (config: Record<string, unknown> = {}) => createToolContext({ workspace: box.workspace, configHome: box.configHome, config });
const list = async (config?: Record<string, unknown>) => normalize(await listSkillsTool.run({}, ctx(config)), box.base);
const read = async (name: string, config?: Record<string, unknown>) => normalize(await readSkillTool.run({ name }, ctx(config)), box.base);

describe('list and read', () => {
  it('lists name and description only, sorted, across the workspace, user and configured roots', async () => {
    writeSkill(box.workspaceRoot, 'zeta', {});
    writeSkill(box.userRoot, 'alpha', { frontMatter: 'name: alpha\ndescription: "First: a user skill."' });
    mkdirSync(join(box.base, 'extra', 'gamma'), { recursive: true });
    writeSkill(join(box.base, 'extra'), 'gamma', {});
    writeFileSync(join(box.workspaceRoot, 'README.md'), 'not a skill');
    mkdirSync(join(box.workspaceRoot, 'no-skill-md'));
    expect(await list({ paths: ['../extra'] })).toEqual({
      skills: [
        { name: 'alpha', description: 'First: a user skill.' },
        { name: 'gamma', description: 'The gamma skill.' },
        { name: 'zeta', description: 'The zeta skill.' },
      ],
      rejected: 0,
    });
  });

  it('reads the body, the file list, scripts and input schema', async () => {
    writeSkill(box.userRoot, 'report', {
      frontMatter:
        'name: report\ndescription: Make a report.\nscripts:\n  main: run.py\n  helper: lib/help.mjs\ninput_schema:\n  type: object\n  required: [title]',
      body: '# Report\n\nCall run with a title.\n',
      files: { 'run.py': 'print(1)\n', 'lib/help.mjs': 'export function run() {}\n', 'templates/a.md': 'a', '.hidden': 'x' },
    });
    expect(await read('report', { in_process: ['report'] })).toEqual({
      name: 'report',
      state: 'admitted',
      description: 'Make a report.',
      source: 'user',
      dir: '<base>/config/trellis/skills/report',
      body: '# Report\n\nCall run with a title.\n',
      files: ['SKILL.md', 'run.py', 'lib/help.mjs', 'templates/a.md'],
      filesTruncated: false,
      scripts: [
        { name: 'main', path: 'run.py', runs: 'subprocess' },
        { name: 'helper', path: 'lib/help.mjs', runs: 'worker' },
      ],
      input_schema: { type: 'object', required: ['title'] },
      warnings: [],
      others: [],
    });
  });

  it('answers an unknown name with NOT_FOUND and the nearest names', async () => {
    writeSkill(box.workspaceRoot, 'pdf-report', {});
    writeSkill(box.workspaceRoot, 'word-count', {});
    expect(await failureOf(() => readSkillTool.run({ name: 'pdf-reprot' }, ctx()))).toEqual({
      code: 'NOT_FOUND',
      message: 'no skill named "pdf-reprot". Did you mean "pdf-report"? Call skill-source-local.list to see every skill.',
    });
    rmSync(box.workspaceRoot, { recursive: true });
    expect((await failureOf(() => readSkillTool.run({ name: 'x' }, ctx()))).message).toBe(
      'no skill named "x": no skills are installed. A skill is a folder with a SKILL.md in <workspace>/.trellis/skills or ~/.config/trellis/skills',
    );
  });

  it('lets the first root win a name clash and reports the shadowed one', async () => {
    writeSkill(box.workspaceRoot, 'dup', { frontMatter: 'name: dup\ndescription: workspace copy' });
    writeSkill(box.userRoot, 'dup-folder', { frontMatter: 'name: dup\ndescription: user copy' });
    expect(await list()).toEqual({ skills: [{ name: 'dup', description: 'workspace copy' }], rejected: 0 });
    expect(await read('dup')).toMatchObject({
      description: 'workspace copy',
      others: [
        {
          state: 'shadowed',
          source: 'user',
          dir: '<base>/config/trellis/skills/dup-folder',
          reasons: [
            {
              code: 'SHADOWED',
              message:
                '<base>/config/trellis/skills/dup-folder is shadowed by <base>/ws/.trellis/skills/dup (workspace root), which has the same name and comes first',
            },
          ],
        },
      ],
    });
  });

  it('rejects two skills with one name in the same root', async () => {
    writeSkill(box.workspaceRoot, 'a', { frontMatter: 'name: same\ndescription: one' });
    writeSkill(box.workspaceRoot, 'b', { frontMatter: 'name: same\ndescription: two' });
    expect(await list()).toEqual({
      skills: [],
      rejected: 2,
      refused: [0, 1].map(() => ({
        name: 'same',
        code: 'AMBIGUOUS_ID',
        message: '2 skills in one root are named "same" (<base>/ws/.trellis/skills/a, <base>/ws/.trellis/skills/b); rename all but one',
      })),
      hint: '2 skill folders were rejected (same); call skill-source-local.read with the name to see why',
    });
    const reason = {
      code: 'AMBIGUOUS_ID',
      message: '2 skills in one root are named "same" (<base>/ws/.trellis/skills/a, <base>/ws/.trellis/skills/b); rename all but one',
    };
    expect(await read('same')).toEqual({
      name: 'same',
      state: 'rejected',
      source: 'workspace',
      dir: '<base>/ws/.trellis/skills/a',
      reasons: [reason],
      warnings: [],
      others: [{ state: 'rejected', source: 'workspace', dir: '<base>/ws/.trellis/skills/b', reasons: [reason] }],
    });
  });

  it('warns about a configured root that does not exist', async () => {
    expect(await list({ paths: ['/nonexistent-skill-root-xyz'] })).toEqual({
      skills: [],
      rejected: 0,
      warnings: [
        {
          code: 'ROOT_MISSING',
          message:
            'skill root /nonexistent-skill-root-xyz (from [runtime.tools.skills] paths) does not exist; create it or remove it from paths',
        },
      ],
    });
  });

  it('reports bad front matter with the file and key, under the folder name', async () => {
    writeSkill(box.workspaceRoot, 'broken', { frontMatter: 'name: broken' });
    expect(await list()).toEqual({
      skills: [],
      rejected: 1,
      refused: [
        {
          name: 'broken',
          code: 'MANIFEST_INVALID',
          message:
            '<base>/ws/.trellis/skills/broken/SKILL.md: front matter key `description`: is required: one line saying what the skill does and when to use it',
        },
      ],
      hint: '1 skill folder was rejected (broken); call skill-source-local.read with the name to see why',
    });
    expect(await read('broken')).toEqual({
      name: 'broken',
      state: 'rejected',
      source: 'workspace',
      dir: '<base>/ws/.trellis/skills/broken',
      reasons: [
        {
          code: 'MANIFEST_INVALID',
          message:
            '<base>/ws/.trellis/skills/broken/SKILL.md: front matter key `description`: is required: one line saying what the skill does and when to use it',
        },
      ],
      warnings: [],
      others: [],
    });
  });

  it('rejects an input_schema that does not compile, and a script with no interpreter', async () => {
    writeSkill(box.workspaceRoot, 'schema', { frontMatter: 'name: schema\ndescription: d\ninput_schema:\n  type: nonsense' });
    writeSkill(box.workspaceRoot, 'ruby', { frontMatter: 'name: ruby\ndescription: d\nscripts: [x.rb]', files: { 'x.rb': 'puts 1' } });
    expect(await read('schema')).toMatchObject({
      state: 'rejected',
      reasons: [
        {
          code: 'MANIFEST_INVALID',
          message: expect.stringMatching(
            /^<base>\/ws\/\.trellis\/skills\/schema\/SKILL\.md: front matter key `input_schema`: is not a usable JSON Schema: schema is invalid: data\/type must be equal to one of the allowed values/,
          ),
        },
      ],
    });
    expect(await read('ruby')).toMatchObject({
      state: 'rejected',
      reasons: [
        {
          code: 'MANIFEST_INVALID',
          message:
            '<base>/ws/.trellis/skills/ruby/SKILL.md: front matter key `scripts["x.rb"]`: no interpreter for "x.rb"; name one in [runtime.tools.skills] interpreters (e.g. { ".rb" = "ruby" }) or make the file executable with a #! line',
        },
      ],
    });
    // An interpreter from settings admits it.
    expect(await read('ruby', { interpreters: { '.rb': 'ruby' } })).toMatchObject({
      state: 'admitted',
      scripts: [{ name: 'x.rb', path: 'x.rb', runs: 'subprocess' }],
    });
  });
  it('rejects an input_schema pattern re2 cannot run, naming the file, the pattern and where it is', async () => {
    writeSkill(box.workspaceRoot, 'backref', {
      frontMatter:
        'name: backref\ndescription: d\ninput_schema:\n  type: object\n  properties:\n    text: { type: string, pattern: "^(a)\\\\1$" }',
    });
    writeSkill(box.workspaceRoot, 'lookahead', {
      frontMatter: 'name: lookahead\ndescription: d\ninput_schema:\n  type: object\n  patternProperties:\n    "^(?!x)": { type: string }',
    });
    expect(await read('backref')).toMatchObject({
      state: 'rejected',
      reasons: [
        {
          code: 'MANIFEST_INVALID',
          message:
            '<base>/ws/.trellis/skills/backref/SKILL.md: front matter key `input_schema`: pattern "^(a)\\\\1$" cannot run on the linear-time engine: error parsing regexp: invalid escape sequence: `\\1` (at /properties/text/pattern); rewrite it in RE2 syntax, without backreferences or lookaround',
        },
      ],
    });
    expect(await read('lookahead')).toMatchObject({
      state: 'rejected',
      reasons: [
        {
          code: 'MANIFEST_INVALID',
          message:
            '<base>/ws/.trellis/skills/lookahead/SKILL.md: front matter key `input_schema`: pattern "^(?!x)" cannot run on the linear-time engine: error parsing regexp: invalid or unsupported Perl syntax: `(?!` (at /patternProperties/^(?!x)); rewrite it in RE2 syntax, without backreferences or lookaround',
        },
      ],
    });
  });

  it('rejects an input_schema nested deeper than 32 levels and admits one at 32', async () => {
    const nested = (levels: number) => `${'{ type: array, items: '.repeat(levels)}{ type: string }${' }'.repeat(levels)}`;
    writeSkill(box.workspaceRoot, 'deep', { frontMatter: `name: deep\ndescription: d\ninput_schema: ${nested(33)}` });
    writeSkill(box.workspaceRoot, 'just-fits', { frontMatter: `name: just-fits\ndescription: d\ninput_schema: ${nested(32)}` });
    expect(await read('deep')).toMatchObject({
      state: 'rejected',
      reasons: [
        {
          code: 'MANIFEST_INVALID',
          message: `<base>/ws/.trellis/skills/deep/SKILL.md: front matter key \`input_schema\`: nests deeper than 32 levels (at ${'/items'.repeat(33)}); flatten it`,
        },
      ],
    });
    expect(await read('just-fits')).toMatchObject({ state: 'admitted' });
  });
});

describe('admission', () => {
  it('rejects a SKILL.md symlinked out of the root (PATH_ESCAPE) and warns about one inside', async () => {
    writeFileSync(join(box.base, 'outside.md'), '---\nname: evil\ndescription: d\n---\n');
    mkdirSync(join(box.workspaceRoot, 'evil'));
    symlinkSync(join(box.base, 'outside.md'), join(box.workspaceRoot, 'evil', 'SKILL.md'));
    writeSkill(box.workspaceRoot, 'real', {});
    mkdirSync(join(box.workspaceRoot, 'alias'));
    symlinkSync(join(box.workspaceRoot, 'real', 'SKILL.md'), join(box.workspaceRoot, 'alias', 'SKILL.md'));
    expect(await read('evil')).toMatchObject({
      state: 'rejected',
      reasons: [
        {
          code: 'PATH_ESCAPE',
          message:
            '<base>/ws/.trellis/skills/evil/SKILL.md resolves to <base>/outside.md, outside its skill root <base>/ws/.trellis/skills; copy the file into the skill folder',
        },
      ],
      warnings: [{ code: 'SYMLINK', message: '<base>/ws/.trellis/skills/evil/SKILL.md is a symbolic link to <base>/outside.md' }],
    });
    // `alias` is a second admitted skill named `real` in the same root: ambiguous, both rejected.
    expect((await list()).rejected).toBe(3);
  });

  it('rejects a skill folder symlinked out of the root', async () => {
    writeSkill(box.base, 'elsewhere', {});
    symlinkSync(join(box.base, 'elsewhere'), join(box.workspaceRoot, 'elsewhere'));
    expect(await read('elsewhere')).toMatchObject({
      state: 'rejected',
      reasons: [
        {
          code: 'PATH_ESCAPE',
          message:
            '<base>/ws/.trellis/skills/elsewhere resolves to <base>/elsewhere, outside its skill root <base>/ws/.trellis/skills; move the skill into the root',
        },
      ],
    });
  });

  it('rejects scripts that leave the skill folder, by path or by symlink', async () => {
    writeFileSync(join(box.workspaceRoot, 'x.sh'), 'echo hi\n');
    writeSkill(box.workspaceRoot, 'dotdot', { frontMatter: 'name: dotdot\ndescription: d\nscripts: [../x.sh]' });
    writeSkill(box.workspaceRoot, 'linked', { frontMatter: 'name: linked\ndescription: d\nscripts:\n  main: run.sh' });
    symlinkSync(join(box.workspaceRoot, 'x.sh'), join(box.workspaceRoot, 'linked', 'run.sh'));
    writeSkill(box.workspaceRoot, 'missing', { frontMatter: 'name: missing\ndescription: d\nscripts: [nope.py]' });
    const reasons = async (name: string) => ((await read(name)) as { reasons: unknown }).reasons;
    expect(await reasons('dotdot')).toEqual([
      {
        code: 'PATH_ESCAPE',
        message:
          '<base>/ws/.trellis/skills/dotdot/SKILL.md: front matter key `scripts["../x.sh"]`: "../x.sh" leaves the skill folder <base>/ws/.trellis/skills/dotdot; scripts must live inside it',
      },
    ]);
    expect(await reasons('linked')).toEqual([
      {
        code: 'PATH_ESCAPE',
        message:
          '<base>/ws/.trellis/skills/linked/SKILL.md: front matter key `scripts.main`: <base>/ws/.trellis/skills/linked/run.sh resolves to <base>/ws/.trellis/skills/x.sh, outside the skill folder <base>/ws/.trellis/skills/linked; copy the script into the skill folder',
      },
    ]);
    expect(await reasons('missing')).toEqual([
      {
        code: 'NOT_FOUND',
        message:
          '<base>/ws/.trellis/skills/missing/SKILL.md: front matter key `scripts["nope.py"]`: <base>/ws/.trellis/skills/missing/nope.py does not exist; add the file or fix the path',
      },
    ]);
  });

  it('rejects a FIFO script without opening it, and a world-writable folder between a script and its skill', async () => {
    const dir = writeSkill(box.workspaceRoot, 'pipe', { frontMatter: 'name: pipe\ndescription: d\nscripts: [p.sh]' });
    execFileSync('mkfifo', [join(dir, 'p.sh')]);
    const nested = writeSkill(box.workspaceRoot, 'nested', {
      frontMatter: 'name: nested\ndescription: d\nscripts: [bin/x.sh]',
      files: { 'bin/x.sh': 'echo\n' },
    });
    chmodSync(join(nested, 'bin'), 0o777);
    expect(((await read('pipe')) as { reasons: unknown }).reasons).toEqual([
      {
        code: 'UNSAFE_FILE',
        message:
          '<base>/ws/.trellis/skills/pipe/SKILL.md: front matter key `scripts["p.sh"]`: <base>/ws/.trellis/skills/pipe/p.sh is a FIFO (named pipe), not a regular file; replace it with a regular file',
      },
    ]);
    expect(((await read('nested')) as { reasons: unknown }).reasons).toEqual([
      {
        code: 'WORLD_WRITABLE',
        message:
          '<base>/ws/.trellis/skills/nested/SKILL.md: front matter key `scripts["bin/x.sh"]`: <base>/ws/.trellis/skills/nested/bin is writable by every user (mode 777): anyone could change this skill; run `chmod o-w <base>/ws/.trellis/skills/nested/bin`',
      },
    ]);
  });

  it('rejects a world-writable skill folder, SKILL.md or script', async () => {
    chmodSync(writeSkill(box.workspaceRoot, 'open-dir', {}), 0o777);
    chmodSync(join(writeSkill(box.workspaceRoot, 'open-file', {}), 'SKILL.md'), 0o666);
    writeSkill(box.workspaceRoot, 'open-script', {
      frontMatter: 'name: open-script\ndescription: d\nscripts: [s.sh]',
      files: { 's.sh': { content: 'echo\n', mode: 0o646 } },
    });
    const reasons = async (name: string) => ((await read(name)) as { reasons: unknown }).reasons;
    expect(await reasons('open-dir')).toEqual([
      {
        code: 'WORLD_WRITABLE',
        message:
          '<base>/ws/.trellis/skills/open-dir is writable by every user (mode 777): anyone could change this skill; run `chmod o-w <base>/ws/.trellis/skills/open-dir`',
      },
    ]);
    expect(await reasons('open-file')).toEqual([
      {
        code: 'WORLD_WRITABLE',
        message:
          '<base>/ws/.trellis/skills/open-file/SKILL.md is writable by every user (mode 666); run `chmod o-w <base>/ws/.trellis/skills/open-file/SKILL.md`',
      },
    ]);
    expect(await reasons('open-script')).toEqual([
      {
        code: 'WORLD_WRITABLE',
        message:
          '<base>/ws/.trellis/skills/open-script/SKILL.md: front matter key `scripts["s.sh"]`: <base>/ws/.trellis/skills/open-script/s.sh is writable by every user (mode 646); run `chmod o-w <base>/ws/.trellis/skills/open-script/s.sh`',
      },
    ]);
  });

  it('rejects every skill under a world-writable root, unless it is sticky and root-owned', async () => {
    writeSkill(box.workspaceRoot, 'inside', {});
    chmodSync(box.workspaceRoot, 0o777);
    expect(await list()).toMatchObject({ skills: [], rejected: 1 });
    chmodSync(box.workspaceRoot, 0o1777); // root-owned (tests run as root) and sticky, like /tmp
    expect(await list()).toEqual({ skills: [{ name: 'inside', description: 'The inside skill.' }], rejected: 0 });
  });

  it.runIf(process.getuid?.() === 0)('rejects a SKILL.md or skill folder owned by another user', async () => {
    chownSync(join(writeSkill(box.workspaceRoot, 'foreign', {}), 'SKILL.md'), 65534, 65534);
    chownSync(writeSkill(box.workspaceRoot, 'foreign-dir', {}), 65534, 65534);
    expect(await read('foreign')).toMatchObject({
      state: 'rejected',
      reasons: [
        {
          code: 'UNSAFE_OWNER',
          message:
            '<base>/ws/.trellis/skills/foreign/SKILL.md is owned by uid 65534, not by the current user (uid 0) or root; `chown` it to yourself if you trust it',
        },
      ],
    });
    expect(await read('foreign-dir')).toMatchObject({ state: 'rejected', reasons: [{ code: 'UNSAFE_OWNER' }] });
  });

  it('rejects a FIFO SKILL.md without blocking, a hard-linked one and an oversized one', async () => {
    mkdirSync(join(box.workspaceRoot, 'fifo'));
    execFileSync('mkfifo', [join(box.workspaceRoot, 'fifo', 'SKILL.md')]);
    const hard = writeSkill(box.workspaceRoot, 'hard', {});
    linkSync(join(hard, 'SKILL.md'), join(box.base, 'second-link.md'));
    writeSkill(box.workspaceRoot, 'huge', { body: 'x'.repeat(300 * 1024) });
    expect(await read('fifo')).toMatchObject({
      state: 'rejected',
      reasons: [
        {
          code: 'UNSAFE_FILE',
          message: '<base>/ws/.trellis/skills/fifo/SKILL.md is a FIFO (named pipe), not a regular file; replace it with a regular file',
        },
      ],
    });
    expect(await read('hard')).toMatchObject({
      reasons: [
        { code: 'UNSAFE_FILE', message: '<base>/ws/.trellis/skills/hard/SKILL.md has 2 hard links; copy it so it is a file of its own' },
      ],
    });
    expect(await read('huge')).toMatchObject({
      reasons: [
        {
          code: 'UNSAFE_FILE',
          message: expect.stringMatching(
            /^<base>\/ws\/\.trellis\/skills\/huge\/SKILL\.md is \d+ bytes, more than the 262144-byte limit for SKILL\.md/,
          ),
        },
      ],
    });
  });
});

describe('one skill, one verdict', () => {
  it('refuses a SKILL.md whose front matter is an alias bomb alone; list, read and run keep working for the rest', async () => {
    const levels = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(96 + i);
      const name = String.fromCharCode(97 + i);
      levels.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(',')}]`);
    }
    writeSkill(box.workspaceRoot, 'bomb', { frontMatter: `name: bomb\ndescription: boom\n${levels.join('\n')}` });
    writeSkill(box.workspaceRoot, 'fine', {
      frontMatter: 'name: fine\ndescription: Still here.\nscripts: [run.sh]',
      files: { 'run.sh': 'echo \'{"ran":true}\'\n' },
    });
    const listed = (await list()) as { skills: unknown; rejected: number; refused: Array<{ name: string; code: string; message: string }> };
    expect(listed.skills).toEqual([{ name: 'fine', description: 'Still here.' }]);
    expect(listed.rejected).toBe(1);
    expect(listed.refused).toEqual([
      {
        name: 'bomb',
        code: 'MANIFEST_INVALID',
        message:
          '<base>/ws/.trellis/skills/bomb/SKILL.md: front matter expands YAML aliases (*name) more than 50 times, as an alias bomb does; write the values out instead of repeating anchors',
      },
    ]);
    expect(((await read('fine')) as { state: string }).state).toBe('admitted');
    const { runSkillTool } = await import('../src/runSkillTool.ts');
    expect(await runSkillTool.run({ name: 'fine' }, ctx())).toEqual({ ran: true });
  });
});
