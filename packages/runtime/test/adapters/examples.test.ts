import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RuntimeConfigSchema } from '@trellis/config';
import { buildPluginRegistrySnapshot, prepareRegistry } from '@trellis/registry';
import { parseManifest, parseProfiles } from '@trellis/registry/parse';
import type { PluginManifest } from '@trellis/sdk';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { PluginImplementation } from '../../src/PluginImplementation.ts';
import { createExternalImplementation } from '../../src/adapters/createExternalImplementation.ts';
import { callOf } from './helpers.ts';

beforeAll(() => prepareRegistry());

const EXAMPLES = realpathSync(join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..', 'examples'));
const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function load(id: string): PluginManifest {
  const parsed = parseManifest(readFileSync(join(EXAMPLES, id, 'plugin.toml')));
  expect(parsed.errors).toEqual([]);
  return parsed.manifest!;
}

function track(impl: PluginImplementation): PluginImplementation {
  cleanups.push(() => impl.dispose());
  return impl;
}

describe('examples/', () => {
  it('every example manifest is valid against the plugin.toml schema', () => {
    expect(['git-helper', 'word-count', 'http-notes', 'conformance-tools'].map((id) => [load(id).id, load(id).runtime?.type])).toEqual([
      ['git-helper', 'process'],
      ['word-count', 'script'],
      ['http-notes', 'http'],
      ['conformance-tools', 'process'],
    ]);
  });

  it('the registry admits them from a discovery root: enabled when allowed, http-notes unavailable without its token', () => {
    const config = RuntimeConfigSchema.parse({ plugins: { allow: ['git-helper', 'word-count', 'http-notes'] } });
    const profiles = parseProfiles('[minimal]\ndescription = "x"\n').value;
    const { snapshot } = buildPluginRegistrySnapshot({
      config,
      roots: [{ root: 'explicit', priority: 0, path: EXAMPLES, origin: 'test', warnIfMissing: true }],
      bundled: [],
      profiles,
      env: { PATH: process.env.PATH },
    });
    expect(snapshot.plugins.map((p) => [p.id, p.state, p.reasons[0]?.code])).toEqual([
      ['conformance-tools', 'disabled', 'NOT_IN_PROFILE'],
      ['git-helper', 'enabled', 'ALLOWED'],
      ['http-notes', 'unavailable', 'MISSING_ENV'],
      ['word-count', 'enabled', 'ALLOWED'],
    ]);
  });

  it('git-helper (process, Python) reports status and diff of a repository', async () => {
    const repo = mkdtempSync(join(tmpdir(), 'trellis-git-'));
    cleanups.push(() => rmSync(repo, { recursive: true, force: true }));
    const git = (...args: string[]) =>
      execFileSync('git', ['-C', repo, '-c', 'user.email=t@example.com', '-c', 'user.name=T', ...args], { stdio: 'pipe' });
    git('init', '-q', '-b', 'main');
    writeFileSync(join(repo, 'a.txt'), 'hello\n');
    git('add', 'a.txt');
    git('commit', '-q', '-m', 'first');
    writeFileSync(join(repo, 'a.txt'), 'bye\n');

    const impl = track(
      createExternalImplementation(
        { id: 'git-helper', manifest: load('git-helper'), pluginDir: join(EXAMPLES, 'git-helper') },
        { overrides: { config: { repo } }, env: process.env },
      ),
    );
    await impl.start();
    expect(impl.state()).toBe('active');
    expect(impl.discoveredTools?.()?.map((t) => t.name)).toEqual(['status', 'diff']);
    expect(await impl.call(callOf('status', { short: true }, 20_000))).toEqual({
      ok: true,
      value: { branch: 'main', output: ' M a.txt\n' },
    });
    const diff = await impl.call(callOf('diff', { path: 'a.txt' }, 20_000));
    expect(diff.ok).toBe(true);
    const changed = (diff as { value: { diff: string } }).value.diff.split('\n').filter((l) => /^[-+][^-+]/.test(l));
    expect(changed).toEqual(['-hello', '+bye']);
    expect(await impl.call(callOf('diff', { path: 'not-changed.txt' }, 20_000))).toEqual({ ok: true, value: { diff: '' } });
  });

  it('word-count (script, Python) returns JSON or plain text', async () => {
    const impl = track(
      createExternalImplementation(
        { id: 'word-count', manifest: load('word-count'), pluginDir: join(EXAMPLES, 'word-count') },
        { env: process.env },
      ),
    );
    expect(await impl.call(callOf('count', { text: 'one two three\nfour' }, 20_000))).toEqual({
      ok: true,
      value: { words: 4, lines: 2, characters: 18 },
    });
    expect(await impl.call(callOf('summary', { text: 'a b' }, 20_000))).toEqual({
      ok: true,
      value: { message: '2 words, 1 lines, 3 characters' },
    });
    const bad = await impl.call(callOf('count', { text: 5 }, 20_000));
    expect(bad).toEqual({
      ok: false,
      error: {
        code: 'TOOL_FAILED',
        message: 'word-count.count exited with code 2: word-count: arguments.text must be a string',
        retryable: false,
      },
    });
  });

  it('http-notes (HTTP, Node) serves add, list and get behind a bearer token', async () => {
    const server: ChildProcess = spawn(process.execPath, [join(EXAMPLES, 'http-notes', 'server.mjs')], {
      env: { PATH: process.env.PATH, NOTES_PORT: '0', NOTES_TOKEN: 'letmein' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          server.once('exit', () => resolve());
          server.kill('SIGTERM');
        }),
    );
    const url = await new Promise<string>((resolve) => {
      server.stdout!.setEncoding('utf8');
      server.stdout!.on('data', (text: string) => {
        const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(text);
        if (match) resolve(match[1]!);
      });
    });
    const manifest = load('http-notes');
    const runtime = manifest.runtime!;
    const withPort: PluginManifest = { ...manifest, runtime: { ...runtime, endpoint: url } as typeof runtime };
    const entry = { id: 'http-notes', manifest: withPort, pluginDir: join(EXAMPLES, 'http-notes') };
    const impl = track(
      createExternalImplementation(entry, {
        env: { NOTES_TOKEN: 'letmein' },
        overrides: { config: { max_notes: 1 }, pass_env: ['NOTES_TOKEN'] },
      }),
    );
    expect(await impl.call(callOf('add', { title: 'first', text: 'hello' }))).toEqual({ ok: true, value: { id: 1 } });
    expect(await impl.call(callOf('add', { title: 'second', text: 'no room' }))).toEqual({
      ok: false,
      error: { code: 'TOO_LARGE', message: 'http-notes.add failed: the notebook is full (max_notes = 1)', retryable: false },
    });
    expect(await impl.call(callOf('list'))).toEqual({ ok: true, value: { notes: [{ id: 1, title: 'first' }] } });
    expect(await impl.call(callOf('get', { id: 1 }))).toEqual({ ok: true, value: { id: 1, title: 'first', text: 'hello' } });
    expect(impl.discoveredTools?.()?.map((t) => [t.name, t.contract.sideEffects])).toEqual([
      ['add', true],
      ['list', false],
      ['get', false],
    ]);

    const wrong = track(createExternalImplementation(entry, { env: { NOTES_TOKEN: 'guess' }, overrides: { pass_env: ['NOTES_TOKEN'] } }));
    expect(await wrong.call(callOf('list'))).toEqual({
      ok: false,
      notDispatched: true,
      error: {
        code: 'HTTP_ERROR',
        message: 'plugin http-notes: POST /initialize answered 401: missing or wrong bearer token',
        retryable: false,
      },
    });
  });

  it('a manifest without [runtime] gets a disabled implementation that says why', async () => {
    const manifest = { ...load('word-count'), runtime: undefined } as PluginManifest;
    const impl = createExternalImplementation({ id: 'word-count', manifest, pluginDir: join(EXAMPLES, 'word-count') });
    expect(impl.state()).toBe('disabled');
    expect(await impl.call(callOf('count'))).toEqual({
      ok: false,
      notDispatched: true,
      error: {
        code: 'NO_IMPLEMENTATION',
        message: 'plugin word-count has no [runtime] table in plugin.toml; add one with type = "process", "script" or "http"',
        retryable: false,
      },
    });
  });
});
