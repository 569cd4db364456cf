import { chmodSync, chownSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { admitCandidate, discoverCandidates, isUnsafeFolderMode } from '../src/index.ts';
import type { AdmissionPolicy, ExternalCandidateFacts, StatFacts } from '../src/index.ts';
import { fileRoot, makeTree, manifestText, normalize, ONE_TOOL, PROCESS_RUNTIME } from './helpers.ts';
import type { TreeNode } from './helpers.ts';

const POLICY: AdmissionPolicy = {
  uid: 0,
  allow: [],
  bundledIds: new Map([
    ['builtin-tools', { required: true }],
    ['core-web', { required: false }],
  ]),
};

/** Builds the tree, discovers root `r`, admits each candidate; returns [folder, rejected?, reason codes, warning codes]. */
function admitTree(
  spec: Record<string, TreeNode>,
  options: { policy?: Partial<AdmissionPolicy>; prepare?: (base: string) => void; root?: string } = {},
) {
  const base = makeTree(spec);
  options.prepare?.(base);
  const { candidates } = discoverCandidates({ roots: [fileRoot(join(base, options.root ?? 'r'))], bundled: [] });
  const admitted = candidates.map((c) => admitCandidate(c, { ...POLICY, ...options.policy }));
  return { base, admitted, codes: admitted.map((a) => [a.id, a.rejected, a.reasons.map((r) => r.code), a.warnings.map((w) => w.code)]) };
}

const ok = (id: string) => manifestText({ id, tools: ONE_TOOL });

describe('admitCandidate on real trees', () => {
  it('admits a clean plugin and records every check with its result', () => {
    const { base, admitted } = admitTree({ 'r/good/plugin.toml': manifestText({ id: 'good', runtime: PROCESS_RUNTIME, tools: ONE_TOOL }) });
    expect(normalize(admitted[0]!.checks, base)).toEqual([
      {
        code: 'PATH_ESCAPE',
        title: 'inside its discovery root',
        result: 'pass',
        message: 'manifest and plugin folder resolve inside the root',
      },
      {
        code: 'UNSAFE_FILE',
        title: 'a regular, single-linked file of at most 256 KiB',
        result: 'pass',
        message: 'a regular file with one link, within the size limit',
      },
      {
        code: 'WORLD_WRITABLE',
        title: 'not writable by every user',
        result: 'pass',
        message: 'neither the manifest nor any folder up to the root is world-writable',
      },
      {
        code: 'UNSAFE_OWNER',
        title: 'owned by you or root',
        result: 'pass',
        message: 'the manifest and every folder up to the root belong to you or root',
      },
      { code: 'SYMLINK', title: 'no symlink on the way', result: 'pass', message: 'no symlink between the root and the manifest' },
      { code: 'MANIFEST_INVALID', title: 'valid plugin.toml', result: 'pass', message: 'valid TOML that matches the plugin.toml schema' },
      {
        code: 'RESERVED_ID',
        title: 'id not reserved by a required bundled plugin',
        result: 'pass',
        message: 'not the id of a required bundled plugin',
      },
      {
        code: 'BUNDLED_ID_WITHOUT_RUNTIME',
        title: 'a bundled id only with its own [runtime]',
        result: 'skip',
        message: 'not the id of a bundled plugin',
      },
      { code: 'SIDE_EFFECTS_NOT_ALLOWED', title: 'side effects allowed', result: 'pass', message: 'declares no side effects' },
      {
        code: 'PATH_ESCAPE',
        title: '[runtime] paths stay in the plugin folder',
        result: 'pass',
        message: 'relative command and args resolve inside the plugin folder',
      },
    ]);
    expect(admitted[0]!.rejected).toBe(false);
  });

  it('rejects a symlinked folder and a symlinked manifest that leave the root (PATH_ESCAPE), warns about links that stay inside', () => {
    const { base, admitted, codes } = admitTree({
      'outside/p/plugin.toml': ok('escaped-folder'),
      'outside/m.toml': ok('escaped-file'),
      'r/evil': { symlink: '../outside/p' },
      'r/f/plugin.toml': { symlink: '../../outside/m.toml' },
      'r/real/plugin.toml': ok('inside'),
      'r/alias': { symlink: 'real' },
      'r/inner/plugin.toml': { symlink: '../real2/x.toml' },
      'r/real2/x.toml': ok('inner-file'),
    });
    expect(codes).toEqual([
      ['escaped-folder', true, ['PATH_ESCAPE'], ['SYMLINK']],
      ['escaped-file', true, ['PATH_ESCAPE'], ['SYMLINK']],
      ['inner-file', false, [], ['SYMLINK']],
      // r/alias -> real is the same manifest as r/real: one candidate, found without a symlink.
      ['inside', false, [], []],
    ]);
    expect(normalize(admitted[3]!.facts, base)).toMatchObject({ aliases: ['<tmp>/r/alias/plugin.toml'] });
    expect(normalize(admitted[0]!.reasons[0]!.message, base)).toBe(
      '<tmp>/r/evil/plugin.toml: the plugin folder resolves to <tmp>/outside/p and the manifest resolves to <tmp>/outside/p/plugin.toml, outside the explicit root <tmp>/r; move the plugin into the root (a symlink may point only inside it) or add its real folder as a plugin path',
    );
    expect(normalize(admitted[2]!.warnings[0]!.message, base)).toBe(
      'followed symlink <tmp>/r/inner/plugin.toml; the plugin is what it points to now (<tmp>/r/real2). Replace the link with the folder itself to silence this',
    );
  });

  it('compares paths component-wise: /r/a does not contain /r/ab, a folder named ..foo is legal', () => {
    const { codes } = admitTree(
      {
        'r/a/..foo/plugin.toml': ok('dotdot-name'),
        'r/ab/p/plugin.toml': ok('sibling'),
        'r/a/sib': { symlink: '../ab/p' },
      },
      { root: 'r/a' },
    );
    expect(codes).toEqual([
      ['dotdot-name', false, [], []],
      ['sibling', true, ['PATH_ESCAPE'], ['SYMLINK']],
    ]);
  });

  it('rejects a hard-linked manifest (UNSAFE_FILE)', () => {
    const { base, admitted, codes } = admitTree({ 'r/other.toml': ok('linked'), 'r/p/plugin.toml': { hardlink: 'r/other.toml' } });
    expect(codes).toEqual([['linked', true, ['UNSAFE_FILE'], []]]);
    expect(normalize(admitted[0]!.reasons[0]!.message, base)).toBe(
      '<tmp>/r/p/plugin.toml has 2 hard links, so it can be changed through a path outside this folder; copy it (cp, not ln) so it has one link',
    );
  });

  it('rejects a world-writable manifest, plugin folder, folder in between, or root', () => {
    const { base, admitted, codes } = admitTree(
      {
        'r/file/plugin.toml': { text: ok('ww-file'), mode: 0o666 },
        'r/folder/plugin.toml': ok('ww-folder'),
        'r/parent/p/plugin.toml': ok('ww-parent'),
        'r2/p/plugin.toml': ok('ww-root'),
      },
      {
        prepare: (b) => {
          chmodSync(join(b, 'r/folder'), 0o777);
          chmodSync(join(b, 'r/parent'), 0o757);
        },
      },
    );
    expect(codes).toEqual([
      ['ww-file', true, ['WORLD_WRITABLE'], []],
      ['ww-folder', true, ['WORLD_WRITABLE'], []],
      ['ww-parent', true, ['WORLD_WRITABLE'], []],
    ]);
    expect(
      normalize(
        admitted.map((a) => a.reasons[0]!.message),
        base,
      ),
    ).toEqual([
      'any user can change the manifest <tmp>/r/file/plugin.toml (mode 666); run chmod o-w <tmp>/r/file/plugin.toml',
      'any user can change the plugin folder <tmp>/r/folder (mode 777); run chmod o-w <tmp>/r/folder',
      'any user can change the folder <tmp>/r/parent (mode 757); run chmod o-w <tmp>/r/parent',
    ]);
    const root = admitTree({ 'r/p/plugin.toml': ok('ww-root') }, { prepare: (b) => chmodSync(join(b, 'r'), 0o777) });
    expect(root.codes).toEqual([['ww-root', true, ['WORLD_WRITABLE'], []]]);
  });

  it('rejects a manifest link in a world-writable folder, though the file it points to is safe', () => {
    const { base, admitted, codes } = admitTree(
      { 'r/q/m.toml': ok('linked-manifest'), 'r/p/plugin.toml': { symlink: '../q/m.toml' } },
      { prepare: (b) => chmodSync(join(b, 'r/p'), 0o777) },
    );
    expect(codes).toEqual([['linked-manifest', true, ['WORLD_WRITABLE'], ['SYMLINK']]]);
    expect(normalize(admitted[0]!.reasons[0]!.message, base)).toBe(
      'any user can change the folder <tmp>/r/p (mode 777); run chmod o-w <tmp>/r/p',
    );
  });

  it('accepts a sticky world-writable folder owned by root, rejects one owned by another user', () => {
    const { codes } = admitTree(
      { 'r/shared/a/plugin.toml': ok('sticky-root'), 'r/other/b/plugin.toml': ok('sticky-foreign') },
      {
        prepare: (b) => {
          chmodSync(join(b, 'r/shared'), 0o1777);
          chmodSync(join(b, 'r/other'), 0o1777);
          // As root we can give the folder away; uid 65534 is `nobody`.
          chownSync(join(b, 'r/other'), 65534, 65534);
        },
      },
    );
    expect(codes).toEqual([
      ['sticky-foreign', true, ['WORLD_WRITABLE', 'UNSAFE_OWNER'], []],
      ['sticky-root', false, [], []],
    ]);
    // The rule itself, on stat facts: root-owned sticky is the only world-writable folder accepted.
    expect([
      isUnsafeFolderMode(0o41777, 0),
      isUnsafeFolderMode(0o41777, 1000),
      isUnsafeFolderMode(0o40777, 0),
      isUnsafeFolderMode(0o40755, 1000),
    ]).toEqual([false, true, true, false]);
  });

  it('rejects a manifest or folder owned by another user (UNSAFE_OWNER)', () => {
    const { base, admitted, codes } = admitTree(
      { 'r/mine/plugin.toml': ok('foreign-file'), 'r/theirs/plugin.toml': ok('foreign-folder') },
      {
        prepare: (b) => {
          chownSync(join(b, 'r/mine/plugin.toml'), 65534, 65534);
          chownSync(join(b, 'r/theirs'), 65534, 65534);
        },
      },
    );
    expect(codes).toEqual([
      ['foreign-file', true, ['UNSAFE_OWNER'], []],
      ['foreign-folder', true, ['UNSAFE_OWNER'], []],
    ]);
    expect(normalize(admitted[0]!.reasons[0]!.message, base)).toBe(
      'the manifest <tmp>/r/mine/plugin.toml (uid 65534) belongs to another user than you (uid 0) or root, who could change it; chown it to yourself or install the plugin in a folder you own',
    );
    // Seen from uid 1000, root-owned files are fine and files of 1000 are fine too.
    const asUser = admitTree({ 'r/p/plugin.toml': ok('as-user') }, { policy: { uid: 1000 } });
    expect(asUser.codes).toEqual([['as-user', false, [], []]]);
  });

  it('refuses FIFO, device, socket-like and oversize manifests with UNSAFE_FILE, using the folder name as id', () => {
    const { base, admitted, codes } = admitTree({
      'r/fifo/plugin.toml': { fifo: true },
      'r/zero/plugin.toml': { symlink: '/dev/zero' },
      'r/null/plugin.toml': { symlink: '/dev/null' },
      'r/big/plugin.toml': `id = "big"\n# ${'x'.repeat(256 * 1024)}\n`,
    });
    expect(codes).toEqual([
      ['big', true, ['UNSAFE_FILE'], []],
      ['fifo', true, ['UNSAFE_FILE'], []],
      // /dev/null and /dev/zero are outside the root, mode 666, and reached through a symlink.
      ['null', true, ['PATH_ESCAPE', 'UNSAFE_FILE', 'WORLD_WRITABLE'], ['SYMLINK']],
      ['zero', true, ['PATH_ESCAPE', 'UNSAFE_FILE', 'WORLD_WRITABLE'], ['SYMLINK']],
    ]);
    expect(normalize(admitted[1]!.reasons[0]!.message, base)).toBe(
      '<tmp>/r/fifo/plugin.toml was not read: it is a fifo, not a regular file; replace it with a regular file',
    );
    expect(admitted.map((a) => [a.kind, a.manifest])).toEqual([
      ['unknown', null],
      ['unknown', null],
      ['unknown', null],
      ['unknown', null],
    ]);
  });

  it('reports TOML and schema errors with line/column or key path (MANIFEST_INVALID)', () => {
    const { base, admitted } = admitTree({
      'r/syntax/plugin.toml': 'schema_version = 1\nid = "syntax"\nname = [\n',
      'r/dupe/plugin.toml': 'schema_version = 1\nid = "dupe"\nid = "again"\n',
      'r/kind/plugin.toml': manifestText({ id: 'kind', kind: 'gadget' }),
      'r/badid/plugin.toml': manifestText({ id: 'Bad_ID' }),
      'r/nested/plugin.toml': `x = ${'['.repeat(40)}${']'.repeat(40)}\n`,
      'r/dotted/plugin.toml': `${manifestText({ id: 'dotted' })}\n[[tools]]\nname = "t"\ndescription = "d"\n[tools.input_schema]\n${Array.from({ length: 40 }, (_, i) => `k${i}`).join('.')} = 1\n`,
      'r/toplevel/plugin.toml': `${Array.from({ length: 40 }, (_, i) => `k${i}`).join('.')} = 1\n`,
      'r/proto/plugin.toml': '__proto__ = { polluted = true }\n',
      'r/latin1/plugin.toml': { bytes: Buffer.from([0x69, 0x64, 0x20, 0x3d, 0x20, 0x22, 0xe9, 0x22, 0x0a]) },
    });
    expect(
      normalize(
        admitted.map((a) => [a.id, a.reasons.map((r) => `${r.code} ${r.message}`)]),
        base,
      ),
    ).toEqual([
      [
        'badid',
        [
          'MANIFEST_INVALID <tmp>/r/badid/plugin.toml: id: must be 1–64 lowercase letters, digits or dashes, starting and ending with a letter or digit',
        ],
      ],
      ['dotted', ['MANIFEST_INVALID <tmp>/r/dotted/plugin.toml: tools[0].input_schema: nests deeper than 32 levels; flatten it']],
      [
        'dupe',
        [
          'MANIFEST_INVALID <tmp>/r/dupe/plugin.toml: line 3, column 1: TOML syntax error: trying to redefine an already defined table or value',
        ],
      ],
      [
        'kind',
        [
          'MANIFEST_INVALID <tmp>/r/kind/plugin.toml: kind: must be one of "toolset", "provider", "connector", "skill-source", "bridge", "memory-slot", "context-engine", "workflow-adapter", "subagent-runtime"',
        ],
      ],
      ['latin1', ['MANIFEST_INVALID <tmp>/r/latin1/plugin.toml: the file is not valid UTF-8; save it as UTF-8']],
      [
        'nested',
        [
          'MANIFEST_INVALID <tmp>/r/nested/plugin.toml: line 1, column 37: TOML syntax error: document contains excessively nested structures. aborting.',
        ],
      ],
      ['proto', ['MANIFEST_INVALID <tmp>/r/proto/plugin.toml: line 1, column 1: TOML syntax error: document contains an unsafe property']],
      ['syntax', ['MANIFEST_INVALID <tmp>/r/syntax/plugin.toml: line 4, column 1: TOML syntax error: invalid value']],
      [
        'toplevel',
        [
          'MANIFEST_INVALID <tmp>/r/toplevel/plugin.toml: schema_version: must be one of 1; id: Invalid input: expected string, received undefined; name: Invalid input: expected string, received undefined; version: Invalid input: expected string, received undefined; kind: must be one of "toolset", "provider", "connector", "skill-source", "bridge", "memory-slot", "context-engine", "workflow-adapter", "subagent-runtime"; unknown key "k0"',
        ],
      ],
    ]);
    expect(({} as Record<string, unknown>).polluted).toBe(undefined);
  });

  it('reserves required bundled ids, and rejects a bundled id without its own [runtime]', () => {
    const { base, admitted, codes } = admitTree({
      'r/a/plugin.toml': ok('builtin-tools'),
      'r/b/plugin.toml': ok('core-web'),
      'r/c/plugin.toml': manifestText({ id: 'core-web', runtime: PROCESS_RUNTIME, tools: ONE_TOOL }),
    });
    expect(codes).toEqual([
      ['builtin-tools', true, ['RESERVED_ID'], []],
      ['core-web', true, ['BUNDLED_ID_WITHOUT_RUNTIME'], []],
      ['core-web', false, [], []],
    ]);
    expect(
      normalize(
        admitted.slice(0, 2).map((a) => a.reasons[0]!.message),
        base,
      ),
    ).toEqual([
      '<tmp>/r/a/plugin.toml: id "builtin-tools" belongs to a required bundled plugin and cannot be taken by an external one; choose another id',
      '<tmp>/r/b/plugin.toml: id "core-web" is a bundled plugin\'s id and this manifest has no [runtime]; it would shadow the bundled plugin with nothing to run. Add a [runtime] table to replace the bundled plugin, configure the bundled one with [plugins.entries.core-web] instead, or choose another id',
    ]);
  });

  it('rejects side effects unless [plugins] allow names the plugin', () => {
    const spec = {
      'r/a/plugin.toml': manifestText({ id: 'writer', side_effects: true, runtime: PROCESS_RUNTIME }),
      'r/b/plugin.toml': manifestText({
        id: 'tool-writer',
        runtime: PROCESS_RUNTIME,
        tools: [{ name: 'rm', description: 'x', side_effects: true }],
      }),
    };
    const denied = admitTree(spec);
    expect(denied.codes).toEqual([
      ['writer', true, ['SIDE_EFFECTS_NOT_ALLOWED'], []],
      ['tool-writer', true, ['SIDE_EFFECTS_NOT_ALLOWED'], []],
    ]);
    expect(normalize(denied.admitted[1]!.reasons[0]!.message, denied.base)).toBe(
      '<tmp>/r/b/plugin.toml: declares tools with side effects (rm) but "tool-writer" is not in [plugins] allow; add it to allow in runtime.toml if you trust it',
    );
    expect(admitTree(spec, { policy: { allow: ['writer', 'tool-writer'] } }).codes).toEqual([
      ['writer', false, [], []],
      ['tool-writer', false, [], []],
    ]);
  });

  it('rejects [runtime] command or args that leave the plugin folder; bare names, options and absolute paths are fine', () => {
    const rt = (command: string, args: string[]) =>
      manifestText({ id: `p${args.length}${command.length}`, runtime: { type: 'script', command, args }, tools: ONE_TOOL });
    const { base, admitted } = admitTree({
      'r/a/plugin.toml': rt('../bin/run', []),
      'r/b/plugin.toml': rt('python3', ['main.py', '-c', 'import x; print("../y")', '../../etc/passwd', '/usr/lib/x.py']),
      'r/c/plugin.toml': rt('./bin/run', ['lib/../main.py', '..', '--flag=../x']),
    });
    expect(
      normalize(
        admitted.map((a) => [a.rejected, a.reasons.map((r) => r.message)]),
        base,
      ),
    ).toEqual([
      [
        true,
        [
          '<tmp>/r/a/plugin.toml: runtime.command "../bin/run" leaves the plugin folder <tmp>/r/a; keep the plugin\'s files inside its folder or use an absolute path to an installed program',
        ],
      ],
      [
        true,
        [
          '<tmp>/r/b/plugin.toml: runtime.args[3] "../../etc/passwd" leaves the plugin folder <tmp>/r/b; keep the plugin\'s files inside its folder or use an absolute path to an installed program',
        ],
      ],
      [
        true,
        [
          '<tmp>/r/c/plugin.toml: runtime.args[1] ".." leaves the plugin folder <tmp>/r/c; keep the plugin\'s files inside its folder or use an absolute path to an installed program',
        ],
      ],
    ]);
  });

  it('warns that required = true is ignored for an external plugin', () => {
    const { codes } = admitTree({ 'r/a/plugin.toml': manifestText({ id: 'wannabe', required: true, runtime: PROCESS_RUNTIME }) });
    expect(codes).toEqual([['wannabe', false, [], ['REQUIRED_NOT_ALLOWED']]]);
  });
});

describe('admitCandidate on stat facts (what root cannot create on disk)', () => {
  const dir = (mode: number, uid = 0): StatFacts => ({
    type: 'directory',
    mode: 0o40000 | mode,
    uid,
    gid: uid,
    nlink: 2,
    size: 4096,
    dev: 1,
    ino: 2,
  });
  const file: StatFacts = { type: 'file', mode: 0o100644, uid: 1000, gid: 1000, nlink: 1, size: 10, dev: 1, ino: 3 };
  const facts = (over: Partial<ExternalCandidateFacts>): ExternalCandidateFacts => ({
    bundled: false,
    source: fileRoot('/r/a'),
    rootReal: '/r/a',
    manifestPath: '/r/a/p/plugin.toml',
    manifestReal: '/r/a/p/plugin.toml',
    pluginDir: '/r/a/p',
    pluginDirReal: '/r/a/p',
    folderName: 'p',
    manifestLstat: file,
    manifestStat: file,
    folders: [
      { path: '/r/a/p', stat: dir(0o755, 1000), role: 'plugin' },
      { path: '/r/a', stat: dir(0o755, 1000), role: 'root' },
    ],
    symlinks: [],
    aliases: [],
    bytes: Buffer.from(manifestText({ id: 'p', tools: ONE_TOOL })),
    readRefusal: null,
    ...over,
  });
  const policy: AdmissionPolicy = { ...POLICY, uid: 1000 };

  it('a non-root user admits their own plugin and rejects a sibling-prefix realpath', () => {
    expect(admitCandidate(facts({}), policy).rejected).toBe(false);
    const sibling = admitCandidate(facts({ manifestReal: '/r/ab/p/plugin.toml', pluginDirReal: '/r/ab/p' }), policy);
    expect(sibling.reasons.map((r) => r.code)).toEqual(['PATH_ESCAPE']);
  });

  it('an unreadable manifest (EACCES) is UNSAFE_FILE — as root every file is readable, so this uses facts', () => {
    const unreadable = admitCandidate(
      facts({ manifestStat: null, bytes: null, readRefusal: { kind: 'OPEN_FAILED', message: 'cannot open it (EACCES)' } }),
      policy,
    );
    expect(unreadable.reasons).toEqual([
      {
        code: 'UNSAFE_FILE',
        message: '/r/a/p/plugin.toml was not read: cannot open it (EACCES); make it readable by the user running trellis',
      },
    ]);
    expect(unreadable.checks.filter((c) => c.result === 'skip').map((c) => c.code)).toEqual([
      'MANIFEST_INVALID',
      'RESERVED_ID',
      'BUNDLED_ID_WITHOUT_RUNTIME',
      'SIDE_EFFECTS_NOT_ALLOWED',
      'PATH_ESCAPE',
    ]);
  });

  it('a sticky world-writable folder owned by the user (not root) is unsafe', () => {
    const sticky = admitCandidate(facts({ folders: [{ path: '/r/a/p', stat: dir(0o1777, 1000), role: 'plugin' }] }), policy);
    expect(sticky.reasons.map((r) => r.code)).toEqual(['WORLD_WRITABLE']);
    expect(sticky.reasons[0]!.message).toBe(
      'any user can change the plugin folder /r/a/p (mode 1777, sticky but not owned by root); run chmod o-w /r/a/p',
    );
  });
});
