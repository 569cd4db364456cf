import { spawn } from 'node:child_process';
import { chmodSync, closeSync, constants, existsSync, mkdirSync, openSync, statSync, symlinkSync } from 'node:fs';
import type { Stats } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { discoverCandidates, toStatFacts } from '../src/index.ts';
import type { CandidateFacts, ExternalCandidateFacts } from '../src/index.ts';
import { descriptor, fileRoot, makeTree, manifestText, normalize } from './helpers.ts';
import { runProbeAsNobody } from '@trellis/test-support';

function externals(candidates: readonly CandidateFacts[]): ExternalCandidateFacts[] {
  return candidates.filter((c): c is ExternalCandidateFacts => !c.bundled);
}

function brief(c: ExternalCandidateFacts) {
  return {
    manifestPath: c.manifestPath,
    manifestReal: c.manifestReal,
    folderName: c.folderName,
    symlinks: c.symlinks,
    aliases: c.aliases,
    read: c.readRefusal?.kind ?? (c.bytes === null ? 'none' : `${c.bytes.length} bytes`),
    folders: c.folders.map((f) => `${f.role}:${f.path}`),
  };
}

describe('discoverCandidates', () => {
  it('walks hidden folders, skips node_modules/.git/*.disabled and anything deeper than 4 levels', () => {
    const base = makeTree({
      'r/a/plugin.toml': manifestText({ id: 'a' }),
      'r/.hidden/plugin.toml': manifestText({ id: 'hidden' }),
      'r/node_modules/n/plugin.toml': manifestText({ id: 'n' }),
      'r/.git/g/plugin.toml': manifestText({ id: 'g' }),
      'r/old.disabled/plugin.toml': manifestText({ id: 'old' }),
      'r/x/old.disabled/plugin.toml': manifestText({ id: 'old2' }),
      'r/1/2/3/4/plugin.toml': manifestText({ id: 'four' }),
      'r/1/2/3/4/5/plugin.toml': manifestText({ id: 'five' }),
    });
    const result = discoverCandidates({ roots: [fileRoot(join(base, 'r'))], bundled: [] });
    expect(externals(result.candidates).map((c) => normalize(c.manifestPath, base))).toEqual([
      '<tmp>/r/.hidden/plugin.toml',
      '<tmp>/r/1/2/3/4/plugin.toml',
      '<tmp>/r/a/plugin.toml',
    ]);
    expect(result.warnings).toEqual([]);
  });

  it('does not look inside a plugin folder: its fixtures and examples are not plugins', () => {
    const base = makeTree({
      'r/tool/plugin.toml': manifestText({ id: 'tool' }),
      'r/tool/test/fixtures/broken/plugin.toml': 'not = [valid',
      'r/tool/examples/plugin.toml': manifestText({ id: 'example' }),
      'r/group/inner/plugin.toml': manifestText({ id: 'inner' }),
      'solo/plugin.toml': manifestText({ id: 'solo' }),
      'solo/fixtures/x/plugin.toml': manifestText({ id: 'fixture' }),
    });
    const result = discoverCandidates({ roots: [fileRoot(join(base, 'r')), fileRoot(join(base, 'solo'))], bundled: [] });
    expect(externals(result.candidates).map((c) => normalize(c.manifestPath, base))).toEqual([
      '<tmp>/r/group/inner/plugin.toml',
      '<tmp>/r/tool/plugin.toml',
      // A root that holds a manifest is itself the plugin folder (`--plugin-path ./my-plugin`).
      '<tmp>/solo/plugin.toml',
    ]);
  });

  it('enters only folders: a dangling link or a link to a file is not walked, and a root given with a trailing slash gives the same paths', () => {
    const base = makeTree({
      'r/a/plugin.toml': manifestText({ id: 'a' }),
      'r/file.txt': 'not a folder',
      'r/to-file': { symlink: 'file.txt' },
      'r/dangling': { symlink: 'nowhere' },
      'r/to-folder': { symlink: 'a' },
    });
    for (const rootPath of [join(base, 'r'), `${join(base, 'r')}/`]) {
      const result = discoverCandidates({ roots: [fileRoot(rootPath)], bundled: [] });
      expect(externals(result.candidates).map((c) => normalize({ path: c.manifestPath, aliases: c.aliases }, base))).toEqual([
        { path: '<tmp>/r/a/plugin.toml', aliases: ['<tmp>/r/to-folder/plugin.toml'] },
      ]);
      expect(result.warnings).toEqual([]);
    }
  });

  it('skips a folder it may not read, reports a manifest in one it may list but not enter, and warns about a root it cannot read (run as an unprivileged user)', () => {
    const base = makeTree({
      'r/open/plugin.toml': manifestText({ id: 'open' }),
      'r/locked/inner/plugin.toml': manifestText({ id: 'inner' }),
      'r/listonly/plugin.toml': manifestText({ id: 'listonly' }),
      'shut/p/plugin.toml': manifestText({ id: 'shut' }),
    });
    for (const dir of [base, join(base, 'r'), join(base, 'r', 'open')]) chmodSync(dir, 0o755);
    chmodSync(join(base, 'r', 'open', 'plugin.toml'), 0o644);
    chmodSync(join(base, 'r', 'locked'), 0o700);
    // Listable (r) but not searchable (no x): its entries' names can be read, nothing else.
    chmodSync(join(base, 'r', 'listonly'), 0o744);
    chmodSync(join(base, 'shut'), 0o700);
    const packageDir = fileURLToPath(new URL('..', import.meta.url));
    const roots = [fileRoot(join(base, 'r')), fileRoot(join(base, 'shut'))];
    const script = `import { discoverCandidates } from '@trellis/registry';
const result = discoverCandidates({ roots: ${JSON.stringify(roots)}, bundled: [] });
process.stdout.write(JSON.stringify({ found: result.candidates.map((c) => [c.manifestPath, c.readRefusal?.message ?? 'read']), warnings: result.warnings }));`;
    // A self-contained bundle in a folder nobody can read, so the checkout itself may be private.
    const child = runProbeAsNobody(script, packageDir);
    expect(child.stderr).toBe('');
    expect(JSON.parse(child.stdout.split(base).join('<tmp>'))).toEqual({
      found: [
        ['<tmp>/r/listonly/plugin.toml', 'cannot stat it (EACCES): its folder cannot be searched by this user'],
        ['<tmp>/r/open/plugin.toml', 'read'],
      ],
      warnings: [
        {
          code: 'ROOT_MISSING',
          message:
            'plugin root <tmp>/shut (test explicit root) cannot be read (EACCES); make it readable and searchable (r and x) by the user running trellis, or remove it from the explicit roots',
        },
      ],
    });
  });

  it('walks links that fan out into loops once: 40 links to "." and to ".." cost one visit each', () => {
    const text = manifestText({ id: 'p' });
    // At the size limit, so reading it once per path would take gigabytes.
    const big = `${text}#${'x'.repeat(256 * 1024 - Buffer.byteLength(text) - 2)}\n`;
    const tree: Record<string, Parameters<typeof makeTree>[0][string]> = { 'r/g/p/plugin.toml': big };
    for (let i = 0; i < 40; i += 1) {
      tree[`r/dot${String(i).padStart(2, '0')}`] = { symlink: '.' };
      tree[`r/g/up${String(i).padStart(2, '0')}`] = { symlink: '..' };
      tree[`r/g/side${String(i).padStart(2, '0')}`] = { symlink: 'p' };
    }
    const base = makeTree(tree);
    const result = discoverCandidates({ roots: [fileRoot(join(base, 'r'))], bundled: [] });
    const found = externals(result.candidates);
    expect(found.map((c) => normalize({ path: c.manifestPath, read: c.bytes?.length, aliases: c.aliases }, base))).toEqual([
      // Links back to the root are not followed; of the 40 links into p, the first by name is.
      { path: '<tmp>/r/g/p/plugin.toml', read: 256 * 1024, aliases: ['<tmp>/r/g/side00/plugin.toml'] },
    ]);
  });

  it('says a manifest link that loops is a loop, not a missing target', () => {
    const base = makeTree({ 'r/self/plugin.toml': { symlink: 'plugin.toml' }, 'r/gone/plugin.toml': { symlink: 'nowhere' } });
    const found = externals(discoverCandidates({ roots: [fileRoot(join(base, 'r'))], bundled: [] }).candidates);
    expect(found.map((c) => normalize([c.manifestPath, c.readRefusal], base))).toEqual([
      ['<tmp>/r/gone/plugin.toml', { kind: 'DANGLING', message: 'the path is a symlink whose target does not exist' }],
      ['<tmp>/r/self/plugin.toml', { kind: 'DANGLING', message: 'the path is a symlink loop (following it leads back to itself)' }],
    ]);
  });

  it('folds paths to one dangling manifest link into one candidate', () => {
    const base = makeTree({ 'r/g/dang/plugin.toml': { symlink: 'nothing' }, 'r/g/loop': { symlink: '.' } });
    const found = externals(discoverCandidates({ roots: [fileRoot(join(base, 'r'))], bundled: [] }).candidates);
    expect(found.map((c) => normalize({ path: c.manifestPath, refusal: c.readRefusal?.kind, aliases: c.aliases }, base))).toEqual([
      { path: '<tmp>/r/g/dang/plugin.toml', refusal: 'DANGLING', aliases: ['<tmp>/r/g/loop/dang/plugin.toml'] },
    ]);
  });

  it("does not let a stray plugin.toml hide the plugins next to it: a folder, a link or another user's file", () => {
    const base = makeTree({
      'r/plugin.toml': { dir: true },
      'r/a/plugin.toml': manifestText({ id: 'a' }),
      's/plugin.toml': { text: manifestText({ id: 'planted' }), uid: 65534 },
      's/b/plugin.toml': manifestText({ id: 'b' }),
      't/plugin.toml': { symlink: '..' },
      't/c/plugin.toml': manifestText({ id: 'c' }),
    });
    const roots = ['r', 's', 't'].map((r) => fileRoot(join(base, r)));
    const found = externals(discoverCandidates({ roots, bundled: [] }).candidates);
    expect(found.map((c) => normalize([c.manifestPath, c.readRefusal?.kind ?? 'read'], base))).toEqual([
      ['<tmp>/r/a/plugin.toml', 'read'],
      ['<tmp>/r/plugin.toml', 'NOT_REGULAR'],
      ['<tmp>/s/b/plugin.toml', 'read'],
      ['<tmp>/s/plugin.toml', 'read'],
      ['<tmp>/t/c/plugin.toml', 'read'],
      ['<tmp>/t/plugin.toml', 'NOT_REGULAR'],
    ]);
  });

  it('reads a file that reads short before its end (procfs) to its end', () => {
    const base = makeTree({ 'r/m/plugin.toml': { symlink: '/proc/self/maps' } });
    const [c] = externals(discoverCandidates({ roots: [fileRoot(join(base, 'r'))], bundled: [] }).candidates);
    // The process's memory map is several pages long; procfs hands it out a page at a time.
    expect(c!.bytes!.length).toBeGreaterThan(4096);
    expect(c!.bytes![c!.bytes!.length - 1]).toBe(10);
  });

  it('records the folders from the plugin folder up to the root and the bytes', () => {
    const text = manifestText({ id: 'deep' });
    const base = makeTree({ 'r/group/deep/plugin.toml': text });
    const [c] = externals(discoverCandidates({ roots: [fileRoot(join(base, 'r'))], bundled: [] }).candidates);
    expect(normalize(brief(c!), base)).toEqual({
      manifestPath: '<tmp>/r/group/deep/plugin.toml',
      manifestReal: '<tmp>/r/group/deep/plugin.toml',
      folderName: 'deep',
      symlinks: [],
      aliases: [],
      read: `${Buffer.byteLength(text)} bytes`,
      folders: ['plugin:<tmp>/r/group/deep', 'between:<tmp>/r/group', 'root:<tmp>/r'],
    });
    expect(Buffer.from(c!.bytes!).toString()).toBe(text);
    expect(c!.manifestStat).toEqual(c!.manifestLstat);
    expect(c!.manifestStat!.type).toBe('file');
  });

  it('follows and reports a symlinked plugin folder and a symlinked manifest', () => {
    const base = makeTree({
      'store/real/plugin.toml': manifestText({ id: 'real' }),
      'store/file.toml': manifestText({ id: 'file' }),
      'r/linked': { symlink: '../store/real' },
      'r/f/plugin.toml': { symlink: '../../store/file.toml' },
    });
    const result = discoverCandidates({ roots: [fileRoot(join(base, 'r'))], bundled: [] });
    expect(normalize(externals(result.candidates).map(brief), base)).toEqual([
      {
        manifestPath: '<tmp>/r/f/plugin.toml',
        manifestReal: '<tmp>/store/file.toml',
        folderName: 'f',
        symlinks: ['<tmp>/r/f/plugin.toml'],
        aliases: [],
        read: expect.stringMatching(/bytes$/),
        // The folder holding the link is checked too: whoever can write to it can repoint it.
        folders: ['plugin:<tmp>/store', 'between:<tmp>/r/f'],
      },
      {
        manifestPath: '<tmp>/r/linked/plugin.toml',
        manifestReal: '<tmp>/store/real/plugin.toml',
        folderName: 'linked',
        symlinks: ['<tmp>/r/linked'],
        aliases: [],
        read: expect.stringMatching(/bytes$/),
        folders: ['plugin:<tmp>/store/real'],
      },
    ]);
    expect(externals(result.candidates)[0]!.manifestLstat!.type).toBe('symlink');
  });

  it('neither hangs nor duplicates on symlink loops; twins become aliases of one candidate', () => {
    const base = makeTree({
      'r/a/plugin.toml': manifestText({ id: 'a' }),
      'r/a/loop': { symlink: '..' },
      'r/b/self': { symlink: '.' },
      'r/twin': { symlink: 'a' },
    });
    symlinkSync(join(base, 'r'), join(base, 'r', 'b', 'up'));
    const result = discoverCandidates({ roots: [fileRoot(join(base, 'r'))], bundled: [] });
    const found = externals(result.candidates);
    expect(found.map((c) => normalize(brief(c), base))).toEqual([
      {
        manifestPath: '<tmp>/r/a/plugin.toml',
        manifestReal: '<tmp>/r/a/plugin.toml',
        folderName: 'a',
        symlinks: [],
        // One candidate, every other path to it an alias. The walk never enters a plugin folder
        // (so not a/loop), never follows a link back to the root (b/up), and follows a link into
        // a folder only once (b/self enters b, whose own self link is then not followed).
        aliases: ['<tmp>/r/twin/plugin.toml'],
        read: expect.stringMatching(/bytes$/),
        folders: ['plugin:<tmp>/r/a', 'root:<tmp>/r'],
      },
    ]);
  });

  it('refuses a FIFO named plugin.toml by its type without opening it (a waiting writer stays blocked)', async () => {
    const base = makeTree({ 'r/pipe/plugin.toml': { fifo: true } });
    const fifo = join(base, 'r/pipe/plugin.toml');
    const marker = join(base, 'opened');
    // A writer's open of a FIFO blocks until some reader opens it: the marker appears only if
    // discovery opened the FIFO, even for a moment.
    const writer = spawn('sh', ['-c', 'exec 3>"$1"; echo opened > "$2"', 'sh', fifo, marker], { stdio: 'ignore' });
    const exited = new Promise<void>((done) => writer.once('exit', () => done()));
    try {
      await new Promise((done) => setTimeout(done, 100));
      const result = discoverCandidates({ roots: [fileRoot(join(base, 'r'))], bundled: [] });
      const [c] = externals(result.candidates);
      expect(c!.readRefusal).toEqual({ kind: 'NOT_REGULAR', message: 'it is a fifo, not a regular file' });
      expect(c!.manifestStat).toEqual(c!.manifestLstat);
      await new Promise((done) => setTimeout(done, 300));
      expect(existsSync(marker)).toBe(false);
    } finally {
      // Release the writer (this open is the first reader), and check the probe itself works.
      closeSync(openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK));
      await exited;
    }
    expect(existsSync(marker)).toBe(true);
  });

  it('never opens a FIFO, a socket or a device, and never reads more than 256 KiB + 1', async () => {
    const base = makeTree({
      'r/fifo/plugin.toml': { fifo: true },
      'r/zero/plugin.toml': { symlink: '/dev/zero' },
      'r/null/plugin.toml': { symlink: '/dev/null' },
      'r/dir/plugin.toml': { dir: true },
      'r/big/plugin.toml': 'x'.repeat(256 * 1024 + 1),
      'r/limit/plugin.toml': `# ${'x'.repeat(256 * 1024 - 3)}\n`,
      'r/dangling/plugin.toml': { symlink: '../../nowhere.toml' },
      'r/sock/.keep': '',
    });
    const server = createServer();
    await new Promise<void>((done) => server.listen(join(base, 'r/sock/plugin.toml'), done));
    try {
      const result = discoverCandidates({ roots: [fileRoot(join(base, 'r'))], bundled: [] });
      expect(
        externals(result.candidates).map((c) => [
          normalize(c.manifestPath, base),
          c.readRefusal?.kind ?? null,
          c.readRefusal?.message ?? null,
          c.bytes?.length ?? null,
        ]),
      ).toEqual([
        ['<tmp>/r/big/plugin.toml', 'TOO_LARGE', 'it is 262145 bytes, more than the 262144-byte limit', null],
        ['<tmp>/r/dangling/plugin.toml', 'DANGLING', 'the path is a symlink whose target does not exist', null],
        ['<tmp>/r/dir/plugin.toml', 'NOT_REGULAR', 'it is a directory, not a regular file', null],
        ['<tmp>/r/fifo/plugin.toml', 'NOT_REGULAR', 'it is a fifo, not a regular file', null],
        ['<tmp>/r/limit/plugin.toml', null, null, 256 * 1024],
        ['<tmp>/r/null/plugin.toml', 'NOT_REGULAR', 'it is a char-device, not a regular file', null],
        ['<tmp>/r/sock/plugin.toml', 'NOT_REGULAR', 'it is a socket, not a regular file', null],
        ['<tmp>/r/zero/plugin.toml', 'NOT_REGULAR', 'it is a char-device, not a regular file', null],
      ]);
    } finally {
      await new Promise<void>((done) => server.close(() => done()));
    }
  });

  it('warns about missing explicit and env roots, stays silent about workspace and user roots', () => {
    const base = makeTree({ 'file.txt': 'not a folder' });
    const result = discoverCandidates({
      roots: [
        fileRoot(join(base, 'nope'), 'explicit'),
        fileRoot(join(base, 'file.txt'), 'env'),
        fileRoot(join(base, 'ws'), 'workspace'),
        fileRoot(join(base, 'user'), 'user'),
      ],
      bundled: [],
    });
    expect(normalize(result, base)).toEqual({
      candidates: [],
      warnings: [
        {
          code: 'ROOT_MISSING',
          message: 'plugin root <tmp>/nope (test explicit root) does not exist; create it or remove it from the explicit roots',
        },
        {
          code: 'ROOT_MISSING',
          message: 'plugin root <tmp>/file.txt (test env root) is not a folder; point it at a folder that holds plugin folders',
        },
      ],
    });
  });

  it('serves bundled candidates from descriptors, sorted by id, after the file roots', () => {
    const base = makeTree({ 'r/x/plugin.toml': manifestText({ id: 'x' }) });
    const result = discoverCandidates({
      roots: [fileRoot(join(base, 'r'))],
      bundled: [descriptor({ id: 'zeta' }), descriptor({ id: 'alpha' })],
    });
    expect(result.candidates.map((c) => (c.bundled ? `bundled:${c.descriptor.manifest.id}` : `file:${c.folderName}`))).toEqual([
      'file:x',
      'bundled:alpha',
      'bundled:zeta',
    ]);
  });

  it('accepts a manifest directly in the root (a --plugin-path pointing at one plugin folder)', () => {
    const base = makeTree({ 'solo/plugin.toml': manifestText({ id: 'solo' }) });
    const [c] = externals(discoverCandidates({ roots: [fileRoot(join(base, 'solo'))], bundled: [] }).candidates);
    expect(normalize([c!.folderName, c!.pluginDirReal, c!.folders.map((f) => `${f.role}:${f.path}`)], base)).toEqual([
      'solo',
      '<tmp>/solo',
      ['root:<tmp>/solo'],
    ]);
  });

  it('a root that is itself a symlink is walked through its realpath', () => {
    const base = makeTree({ 'real/p/plugin.toml': manifestText({ id: 'p' }), link: { symlink: 'real' } });
    mkdirSync(join(base, 'unused'));
    const [c] = externals(discoverCandidates({ roots: [fileRoot(join(base, 'link'))], bundled: [] }).candidates);
    expect(normalize([c!.rootReal, c!.manifestPath, c!.manifestReal, c!.symlinks], base)).toEqual([
      '<tmp>/real',
      '<tmp>/link/p/plugin.toml',
      '<tmp>/real/p/plugin.toml',
      [],
    ]);
  });
});

describe('toStatFacts', () => {
  it('keeps every number as stat gave it, small or past the small-integer range', () => {
    const real = statSync(process.cwd());
    expect(toStatFacts(real)).toEqual({
      type: 'directory',
      mode: real.mode,
      uid: real.uid,
      gid: real.gid,
      nlink: real.nlink,
      size: real.size,
      dev: real.dev,
      ino: real.ino,
    });
    // A uid of nobody on some systems and a file past 1 GiB: no int32 wrap-around.
    const big = Object.assign(Object.create(Object.getPrototypeOf(real) as object) as Stats, real, {
      uid: 4_294_967_294,
      gid: 2 ** 31,
      size: 5 * 2 ** 30,
    });
    expect(toStatFacts(big)).toMatchObject({ uid: 4_294_967_294, gid: 2 ** 31, size: 5 * 2 ** 30 });
  });
});
