import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, type Sandbox } from './cliHarness.ts';
import { pidsWorkingIn } from '@trellis/test-support';

/**
 * A process plugin for `trellis serve` tests, written into `<sandbox>/plugins/serve-fixture`:
 * - `structured` returns `{ answer: 42 }` (with an output schema);
 * - `fail` fails with `NOT_FOUND`;
 * - `slow` reports progress 1, 2, 3 of 3, then waits (20 s, or not at all with `quick: true`);
 * - `bump` writes `extra` and exits after replying, so the restarted child also reports `extra_tool`.
 * Each start appends its pid to `pids.txt` in the plugin folder.
 */
export const FIXTURE_SOURCE = String.raw`
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
appendFileSync('pids.txt', process.pid + '\n');
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
const tools = () => [
  { name: 'structured', description: 'Returns the answer.', inputSchema: { type: 'object', properties: {} },
    outputSchema: { type: 'object', properties: { answer: { type: 'integer' } }, required: ['answer'] } },
  { name: 'fail', description: 'Always fails.', inputSchema: { type: 'object', properties: {} } },
  { name: 'slow', description: 'Reports progress, then waits.', inputSchema: { type: 'object', properties: { quick: { type: 'boolean' } } } },
  { name: 'bump', description: 'Adds extra_tool on the next start.', inputSchema: { type: 'object', properties: {} } },
  ...(existsSync('extra') ? [{ name: 'extra_tool', description: 'Only after bump.', inputSchema: { type: 'object', properties: {} } }] : []),
];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function call(id, name, args) {
  if (name === 'structured') return { success: true, data: { answer: 42 } };
  if (name === 'fail') return { success: false, error: { code: 'NOT_FOUND', message: 'nothing here' } };
  if (name === 'slow') {
    for (const progress of [1, 2, 3]) { send({ id, type: 'progress', progress, total: 3, message: 'step ' + progress }); await sleep(100); }
    if (!args.quick) await sleep(20000);
    return { success: true, data: 'done' };
  }
  if (name === 'bump') { writeFileSync('extra', ''); setTimeout(() => process.exit(0), 50); return { success: true, data: 'bumped' }; }
  if (name === 'extra_tool') return { success: true, data: 'extra' };
  return { success: false, error: 'unknown tool ' + name };
}
createInterface({ input: process.stdin }).on('line', async (line) => {
  const req = JSON.parse(line);
  let reply;
  if (req.type === 'initialize') reply = { type: 'initialize_response', success: true };
  else if (req.type === 'get_tools') reply = { type: 'get_tools_response', tools: tools() };
  else if (req.type === 'health_check') reply = { type: 'health_check_response', healthy: true };
  else if (req.type === 'call_tool') reply = { type: 'call_tool_response', ...(await call(req.id, req.tool_name, req.arguments || {})) };
  else if (req.type === 'shutdown') { send({ id: req.id, type: 'shutdown_response', success: true }); process.exit(0); }
  else reply = { type: 'error', error: 'unknown request' };
  send({ ...reply, id: req.id });
}).on('close', () => process.exit(0));
`;

/** Writes the fixture plugin and a runtime.toml enabling it (plus an audit log); returns their paths. */
export function writeServeFixture(sandbox: Sandbox, serve = ''): { config: string; pluginDir: string; auditLog: string } {
  const root = join(sandbox.dir, 'plugins');
  const pluginDir = join(root, 'serve-fixture');
  mkdirSync(pluginDir, { recursive: true, mode: 0o755 });
  writeFileSync(join(pluginDir, 'fixture.mjs'), FIXTURE_SOURCE);
  writeFileSync(
    join(pluginDir, 'plugin.toml'),
    [
      'schema_version = 1',
      'id = "serve-fixture"',
      'name = "Serve fixture"',
      'version = "0.1.0"',
      'kind = "toolset"',
      'description = "Tools for trellis serve tests."',
      'side_effects = false',
      '',
      '[runtime]',
      'type = "process"',
      'command = "node"',
      'args = ["fixture.mjs"]',
      'timeout_seconds = 30',
      'restart_delay_seconds = 0',
      '',
    ].join('\n'),
  );
  const auditLog = join(sandbox.dir, 'audit.jsonl');
  const config = join(sandbox.dir, 'runtime.toml');
  writeFileSync(
    config,
    `[plugins]\nallow = ["serve-fixture"]\npaths = [${JSON.stringify(root)}]\n\n[runtime]\naudit_log = ${JSON.stringify(auditLog)}\n${serve}`,
  );
  return { config, pluginDir, auditLog };
}

/** The pids the fixture plugin's children had, in start order. */
export function fixturePids(pluginDir: string): number[] {
  try {
    return readFileSync(join(pluginDir, 'pids.txt'), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/**
 * The host's pids of the running fixture plugin (its launcher wrapper included). The pids in
 * pids.txt are the plugin's own namespace's (every child Trellis starts has a private /proc), so
 * these are found by command line: every process that mentions the plugin folder.
 */
export function fixtureHostPids(pluginDir: string): number[] {
  return pidsWorkingIn(pluginDir);
}

/** A running `trellis serve --http …`, with the URL it printed. */
export interface HttpServe {
  readonly url: string;
  readonly child: ChildProcessWithoutNullStreams;
  stderr(): string;
  stop(): Promise<number | null>;
}

/** Starts the built `trellis serve --http` with `args`, and waits for the URL on stderr. */
export async function startHttpServe(sandbox: Sandbox, args: readonly string[], env: Record<string, string> = {}): Promise<HttpServe> {
  const child = spawn(process.execPath, [CLI, 'serve', '--http', '--port', '0', ...args], {
    cwd: sandbox.workspace,
    env: { ...sandbox.env, ...env },
  });
  let stderr = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL within 30 s; stderr:\n${stderr}`)), 30_000);
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      const match = /at (http:\/\/\S+?),/.exec(stderr);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`trellis serve exited with ${code}; stderr:\n${stderr}`));
    });
  });
  return {
    url,
    child,
    stderr: () => stderr,
    stop: async () => {
      if (child.exitCode !== null) return child.exitCode;
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** Polls `condition` every 50 ms until it holds or `ms` pass. */
export async function waitFor(condition: () => boolean, ms = 15_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (condition()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return condition();
}
