import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI, createSandbox, type Sandbox } from './cliHarness.ts';
import { isAlive } from '@trellis/test-support';

// The exit-path fault set: whatever way the host ends, no plugin process and no grandchild of
// one is left behind. Each case reads the plugin's and the grandchild's pids from a file the
// plugin writes, ends the host, then checks the process table for both.
const INDEX = pathToFileURL(join(import.meta.dirname, '..', 'dist', 'index.js')).href;
let sandbox: Sandbox;
let root: string;
let pidFile: string;
let configFile: string;
const started: ChildProcess[] = [];

function writePlugin(stubborn: boolean): void {
  const dir = join(root, 'pidplug');
  mkdirSync(dir, { recursive: true });
  cpSync(join(import.meta.dirname, 'fixtures', 'pid-plugin.mjs'), join(dir, 'pid-plugin.mjs'));
  const args = JSON.stringify(['pid-plugin.mjs', pidFile, ...(stubborn ? ['stubborn'] : [])]);
  writeFileSync(
    join(dir, 'plugin.toml'),
    `schema_version = 1\nid = "pidplug"\nname = "Pid plugin"\nversion = "1.0.0"\nkind = "toolset"\ndescription = "Writes its pids and hangs."\n\n` +
      `[runtime]\ntype = "process"\ncommand = "node"\nargs = ${args}\ntimeout_seconds = 120\n\n` +
      `[[tools]]\nname = "hang"\ndescription = "Start a grandchild, write the pids, never answer."\ninput_schema = { type = "object" }\n`,
  );
}

beforeEach(() => {
  sandbox = createSandbox();
  root = join(sandbox.dir, 'plugins');
  pidFile = join(sandbox.dir, 'pids.json');
  configFile = join(sandbox.dir, 'runtime.toml');
  writeFileSync(configFile, `[plugins]\nallow = ["pidplug"]\npaths = [${JSON.stringify(root)}]\n`);
});
afterEach(() => {
  for (const child of started.splice(0)) child.kill('SIGKILL');
  sandbox.cleanup();
});

async function until(predicate: () => boolean, what: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, stderr })));
}

/**
 * The host's pids of the plugin and its grandchild, once the plugin wrote its pid file. The pids in
 * the file are its own namespace's (each child Trellis starts has a private /proc), so both are
 * found by command line: node running pid-plugin.mjs with the pid file, and node -e with it.
 */
function hostPids(): { plugin?: number; grandchild?: number } {
  const found: { plugin?: number; grandchild?: number } = {};
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (args[0] !== process.execPath || !args.includes(pidFile) || !isAlive(Number(entry))) continue;
      if (args[1] === '-e') found.grandchild = Number(entry);
      else if (args[1]?.endsWith('pid-plugin.mjs')) found.plugin = Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

async function pidsOnceRunning(): Promise<{ plugin: number; grandchild: number }> {
  await until(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').endsWith('}'), 'the plugin to write its pids');
  await until(
    () => hostPids().grandchild !== undefined && hostPids().plugin !== undefined,
    'the plugin and its grandchild in the process list',
  );
  const pids = hostPids() as { plugin: number; grandchild: number };
  expect([isAlive(pids.plugin), isAlive(pids.grandchild)]).toEqual([true, true]);
  return pids;
}

async function expectAllGone(pids: { plugin: number; grandchild: number }): Promise<void> {
  // Orphans are reparented and reaped; give that a moment, then demand both are gone.
  await until(() => !isAlive(pids.plugin) && !isAlive(pids.grandchild), 'the plugin and its grandchild to be gone', 15_000).catch(
    () => undefined,
  );
  expect({ plugin: isAlive(pids.plugin), grandchild: isAlive(pids.grandchild) }).toEqual({ plugin: false, grandchild: false });
}

function startCli(): ChildProcess {
  const child = spawn(process.execPath, [CLI, 'tools', 'call', 'pidplug.hang', '--args', '{}', '--config', configFile], {
    cwd: sandbox.workspace,
    env: sandbox.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  return child;
}

describe('the CLI, killed mid-call', () => {
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const) {
    it(`${signal}: exits ${code} and leaves no plugin process or grandchild`, async () => {
      writePlugin(false);
      const cli = startCli();
      const done = exited(cli);
      const pids = await pidsOnceRunning();
      cli.kill(signal);
      const result = await done;
      expect(result.code).toBe(code);
      await expectAllGone(pids);
    });
  }

  it('SIGTERM with a plugin that ignores end of input and SIGTERM: killed after the grace period', async () => {
    writePlugin(true);
    const cli = startCli();
    const done = exited(cli);
    const pids = await pidsOnceRunning();
    cli.kill('SIGTERM');
    expect((await done).code).toBe(143);
    await expectAllGone(pids);
  });
});

describe('an embedding host', () => {
  function startHost(body: string): ChildProcess {
    const file = join(sandbox.dir, 'host.mjs');
    writeFileSync(
      file,
      `import { assemble } from ${JSON.stringify(INDEX)};\n` +
        `const assembly = await assemble({ configPath: ${JSON.stringify(configFile)}, workspace: ${JSON.stringify(sandbox.workspace)}, home: ${JSON.stringify(sandbox.home)}, env: process.env });\n` +
        `void assembly.runtime.invoke({ name: 'pidplug.hang', input: {} });\n${body}\n`,
    );
    const child = spawn(process.execPath, [file], { cwd: sandbox.workspace, env: sandbox.env, stdio: ['ignore', 'pipe', 'pipe'] });
    started.push(child);
    return child;
  }

  it('SIGTERM handled with close(), as docs/embedding.md shows: nothing left, a stubborn plugin included', async () => {
    writePlugin(true);
    const host = startHost(
      "process.once('SIGTERM', () => void assembly.close().then(() => process.exit(143)));\nprocess.stdout.write('ready\\n');",
    );
    const done = exited(host);
    const pids = await pidsOnceRunning();
    host.kill('SIGTERM');
    expect((await done).code).toBe(143);
    await expectAllGone(pids);
  });

  it('SIGTERM handled with a bare process.exit: the exit safety net kills every group', async () => {
    writePlugin(true);
    const host = startHost("process.once('SIGTERM', () => process.exit(143));");
    const done = exited(host);
    const pids = await pidsOnceRunning();
    host.kill('SIGTERM');
    expect((await done).code).toBe(143);
    await expectAllGone(pids);
  });

  it('an uncaught error: the exit safety net kills every group', async () => {
    writePlugin(false);
    const host = startHost(
      `const { existsSync } = await import('node:fs');\n` +
        `const wait = setInterval(() => { if (!existsSync(${JSON.stringify(pidFile)})) return; clearInterval(wait); setTimeout(() => { throw new Error('host bug'); }, 300); }, 20);`,
    );
    const done = exited(host);
    const pids = await pidsOnceRunning();
    const result = await done;
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('host bug');
    await expectAllGone(pids);
  });
});
