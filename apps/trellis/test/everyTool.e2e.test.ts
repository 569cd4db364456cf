import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, trustWorkspace, runCli, runCliAsync, type Sandbox } from './cliHarness.ts';

// Every bundled tool, called through the built `trellis tools call`, with real files, a real
// program, a real Python, a real skill script and a real HTTP server on 127.0.0.1.
let sandbox: Sandbox;
let server: Server;
let baseUrl: string;

beforeAll(async () => {
  sandbox = createSandbox();
  const ws = sandbox.workspace;
  writeFileSync(join(ws, 'notes.txt'), 'alpha\nbeta\ngamma\n');
  writeFileSync(join(ws, 'sales.csv'), 'region,amount\nnorth,10\nsouth,5\nnorth,7\n');
  mkdirSync(join(ws, '.trellis', 'skills', 'greet'), { recursive: true });
  writeFileSync(
    join(ws, '.trellis', 'skills', 'greet', 'SKILL.md'),
    '---\nname: greet\ndescription: Greets someone by name.\nscripts:\n  - greet.mjs\ninput_schema:\n  type: object\n  properties:\n    who: { type: string }\n  required: [who]\n---\n\n# Greet\nSay hello.\n',
  );
  writeFileSync(
    join(ws, '.trellis', 'skills', 'greet', 'greet.mjs'),
    "let s = ''; process.stdin.on('data', (d) => (s += d)).on('end', () => { const { who } = JSON.parse(s); console.log(JSON.stringify({ greeting: `hello ${who}` })); });\n",
  );
  writeFileSync(
    join(ws, '.trellis', 'runtime.toml'),
    [
      '[plugins]',
      'allow = ["core-python"]',
      '[runtime.tools.fs]',
      'allow_write = true',
      '[runtime.tools.command]',
      'allow = ["echo"]',
      '[runtime.tools.web]',
      'private_hosts = ["127.0.0.1"]',
      '',
    ].join('\n'),
  );
  trustWorkspace(sandbox);
  server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<html><body><h1>Trellis</h1><p>grows <b>plugins</b></p></body></html>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  sandbox.cleanup();
});

async function call(name: string, args: unknown): Promise<unknown> {
  const result = await runCliAsync(sandbox, ['tools', 'call', name, '--args', JSON.stringify(args), '--json']);
  const outcome = JSON.parse(result.stdout) as { ok: boolean; value?: unknown; error?: { code: string; message: string } };
  if (!outcome.ok) throw new Error(`${name} failed: ${outcome.error?.code}: ${outcome.error?.message}`);
  expect(result.code).toBe(0);
  return outcome.value;
}

describe('trellis tools call, for every bundled tool', () => {
  const called = new Set<string>();
  // Tool results are checked field by field below; their shapes are each tool's own.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const check = async (name: string, args: unknown, expectValue: (value: any) => void) => {
    called.add(name);
    expectValue(await call(name, args));
  };

  it('builtin-tools', async () => {
    await check('builtin-tools.now', { timezone: 'UTC' }, (v) => expect(v.iso).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/));
    await check('builtin-tools.echo', { a: [1, 'two'] }, (v) => expect(v).toEqual({ a: [1, 'two'] }));
    await check('builtin-tools.search_tools', { query: 'csv table' }, (v) => expect(JSON.stringify(v)).toContain('core-table.'));
    await check('builtin-tools.list_plugins', {}, (v) =>
      expect(v.plugins.find((p: { id: string }) => p.id === 'core-python').state).toBe('enabled'),
    );
    await check('builtin-tools.explain_plugin', { id: 'telegram' }, (v) => expect(JSON.stringify(v)).toContain('NOT_IN_PROFILE'));
  });

  it('core-fs', async () => {
    await check('core-fs.read', { path: 'notes.txt', offset: 2, limit: 1 }, (v) => expect(JSON.stringify(v)).toContain('beta'));
    await check('core-fs.write', { path: 'out/new.txt', content: 'fresh\n', create_parents: true }, () =>
      expect(readFileSync(join(sandbox.workspace, 'out', 'new.txt'), 'utf8')).toBe('fresh\n'),
    );
    await check('core-fs.edit', { path: 'out/new.txt', old: 'fresh', new: 'edited' }, () =>
      expect(readFileSync(join(sandbox.workspace, 'out', 'new.txt'), 'utf8')).toBe('edited\n'),
    );
    await check('core-fs.list', {}, (v) => expect(JSON.stringify(v)).toContain('notes.txt'));
    await check('core-fs.glob', { pattern: '**/*.txt' }, (v) => expect(JSON.stringify(v)).toContain('out/new.txt'));
    await check('core-fs.stat', { path: 'notes.txt' }, (v) => expect(v.exists).toBe(true));
    await check('core-fs.search', { pattern: 'gamma' }, (v) => expect(JSON.stringify(v)).toContain('notes.txt'));
  }, 120_000); // seven CLI processes, two of them starting a worker of the tool pool: generous on a loaded machine

  it('core-command', async () => {
    await check('core-command.run', { program: 'echo', args: ['$(id)', ';', 'literal'] }, (v) => {
      expect(v.exitCode).toBe(0);
      expect(v.stdout).toBe('$(id) ; literal\n');
    });
  });

  it('core-table', async () => {
    await check('core-table.read', { path: 'sales.csv' }, (v) => expect(JSON.stringify(v)).toContain('south'));
    await check(
      'core-table.query',
      { path: 'sales.csv', group_by: ['region'], aggregates: [{ op: 'sum', column: 'amount', as: 'total' }], sort: [{ column: 'region' }] },
      (v) => expect(JSON.stringify(v)).toContain('17'),
    );
    await check('core-table.describe', { path: 'sales.csv' }, (v) => expect(JSON.stringify(v)).toContain('amount'));
  });

  it('core-web', async () => {
    await check('core-web.fetch', { url: baseUrl }, (v) => {
      expect(v.status).toBe(200);
      expect(v.text).toContain('Trellis');
    });
  });

  it('core-python', async () => {
    await check('core-python.run', { code: 'import sys; print(sum(int(x) for x in sys.stdin.read().split()))', stdin: '1 2 3' }, (v) => {
      expect(v.exit_code).toBe(0);
      expect(v.stdout).toBe('6\n');
    });
  });

  it('skill-source-local', async () => {
    await check('skill-source-local.list', {}, (v) => expect(JSON.stringify(v)).toContain('greet'));
    await check('skill-source-local.read', { name: 'greet' }, (v) => expect(JSON.stringify(v)).toContain('Say hello.'));
    await check('skill-source-local.run', { name: 'greet', input: { who: 'trellis' } }, (v) =>
      expect(v).toEqual({ greeting: 'hello trellis' }),
    );
  });

  it('left no offered tool uncalled', () => {
    const listed = JSON.parse(runCli(sandbox, ['tools', 'list', '--json']).stdout) as { tools: Array<{ name: string }> };
    expect(listed.tools.map((t) => t.name).filter((n) => !called.has(n))).toEqual([]);
  });
});
