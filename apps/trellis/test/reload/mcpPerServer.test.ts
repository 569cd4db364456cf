import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '@trellis/sdk';
import { pidsMentioning } from '@trellis/test-support';
import { startLiveHost, type LiveHost, type LiveToolOutcome } from '../../src/reload/startLiveHost.ts';
import { createReloadSandbox, waitFor, type ReloadSandbox } from './reloadFixture.ts';

// Per-server reconnect (issue 17): a reload that changes one bridged server's entry reconnects that
// server only; the others keep their process and MCP session. Real servers (the official SDK over
// stdio), a real live host; every assertion is on pids and sessions, none on timings.

const SERVER = fileURLToPath(new URL('../fixtures/mcpSessionServer.mjs', import.meta.url));

let sandbox: ReloadSandbox;
let host: LiveHost | undefined;

beforeEach(() => {
  sandbox = createReloadSandbox('mcp-reconnect');
});
afterEach(async () => {
  await host?.close();
  host = undefined;
  // No server outlives the host.
  expect(await waitFor(() => pidsMentioning(sandbox.dir).length === 0, 10_000)).toBe(true);
  sandbox.cleanup();
});

interface Server {
  readonly name: string;
  /** The server's tag (its argument): a changed tag is a changed entry. */
  readonly tag: string;
}

function config(servers: readonly Server[], entry = ''): string {
  let text = `[plugins.entries.mcp]\nenabled = true\n${entry}\n`;
  for (const server of servers) {
    text +=
      `\n[[plugins.entries.mcp.config.servers]]\nname = "${server.name}"\ncommand = ${JSON.stringify(process.execPath)}\n` +
      `args = [${JSON.stringify(SERVER)}, ${JSON.stringify(join(sandbox.dir, server.tag))}]\n`;
  }
  return text;
}

async function start(): Promise<LiveHost> {
  host = await startLiveHost({ configPath: sandbox.config, workspace: sandbox.dir, home: sandbox.home, env: sandbox.env, watch: false });
  return host;
}

/** The host's processes of the server started with `tag` (its launcher and the server itself). */
const pidsOf = (tag: string): number[] => pidsMentioning(`${join(sandbox.dir, tag)}\0`);

interface WhoAmI {
  session: string;
  calls: number;
  tag: string;
}

function answer(outcome: LiveToolOutcome): WhoAmI & { generation: number } {
  expect(outcome, JSON.stringify(outcome)).toMatchObject({ ok: true });
  const who = JSON.parse((outcome as { value: string }).value) as WhoAmI;
  return { ...who, generation: outcome.generation };
}

async function whoami(live: LiveHost, server: string, ms?: number): Promise<WhoAmI & { generation: number }> {
  return answer(await live.invoke({ name: `mcp.${server}.whoami`, input: ms === undefined ? {} : { ms } }));
}

/** Calls until the server answers (its tools come back to the catalog just after it reconnects). */
async function whoamiEventually(live: LiveHost, server: string): Promise<WhoAmI & { generation: number }> {
  const end = Date.now() + 30_000;
  let last = await live.invoke({ name: `mcp.${server}.whoami`, input: {} });
  while (!last.ok && Date.now() < end) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    last = await live.invoke({ name: `mcp.${server}.whoami`, input: {} });
  }
  return answer(last);
}

function part(live: LiveHost, name: string) {
  return live.assembly
    .status()
    .plugins.find((plugin) => plugin.id === 'mcp')
    ?.lifecycle?.parts?.find((p) => p.name === name);
}

describe('live reload of the mcp bridge, per server', () => {
  it(
    'a changed server reconnects; an unchanged one keeps its process and session; a call on the old generation ends on the old connection',
    { timeout: 90_000 },
    async () => {
      sandbox.writeConfig(
        config([
          { name: 'steady', tag: 'steady-1' },
          { name: 'edited', tag: 'edited-1' },
        ]),
      );
      const live = await start();
      const steady = await whoami(live, 'steady');
      const edited = await whoami(live, 'edited');
      expect([steady.calls, steady.generation, edited.calls]).toEqual([1, 1, 1]);
      const steadyPids = pidsOf('steady-1');
      expect(steadyPids.length).toBeGreaterThan(0);
      expect(pidsOf('edited-1').length).toBeGreaterThan(0);

      // Started on generation 1, still running (on the server) while the reload swaps `edited`.
      const inFlight = live.invoke({ name: 'mcp.edited.whoami', input: { ms: 1500 } });
      sandbox.writeConfig(
        config([
          { name: 'steady', tag: 'steady-1' },
          { name: 'edited', tag: 'edited-2' },
        ]),
      );
      expect(await live.reload()).toMatchObject({ status: 'applied', generation: 2, changes: { changed: ['mcp'] } });

      expect(answer(await inFlight)).toEqual({ ...edited, calls: 2, generation: 1 });
      // The unchanged server: the same process and the same session (its call count goes on).
      expect(await whoami(live, 'steady')).toEqual({ ...steady, calls: 2, generation: 2 });
      // The changed one: a new process with the new argument; the old one ends once generation 1 drained.
      const reconnected = await whoami(live, 'edited');
      expect(reconnected).toMatchObject({ calls: 1, generation: 2, tag: join(sandbox.dir, 'edited-2') });
      expect(reconnected.session).not.toBe(edited.session);
      expect(pidsOf('edited-2').length).toBeGreaterThan(0);
      expect(await waitFor(() => pidsOf('edited-1').length === 0)).toBe(true);
      expect(pidsOf('steady-1')).toEqual(steadyPids);
    },
  );

  it('a removed server closes, an added one connects, the others keep their sessions', { timeout: 90_000 }, async () => {
    sandbox.writeConfig(
      config([
        { name: 'kept', tag: 'kept' },
        { name: 'gone', tag: 'gone' },
      ]),
    );
    const live = await start();
    const kept = await whoami(live, 'kept');
    await whoami(live, 'gone');
    const keptPids = pidsOf('kept');
    expect(pidsOf('gone').length).toBeGreaterThan(0);

    sandbox.writeConfig(
      config([
        { name: 'kept', tag: 'kept' },
        { name: 'new', tag: 'new' },
      ]),
    );
    expect(await live.reload()).toMatchObject({ status: 'applied', changes: { changed: ['mcp'] } });
    expect(await waitFor(() => pidsOf('gone').length === 0)).toBe(true);
    expect(await live.invoke({ name: 'mcp.gone.whoami', input: {} })).toMatchObject({
      ok: false,
      error: { code: ERROR_CODES.TOOL_NOT_FOUND },
      generation: 2,
    });
    expect(await whoami(live, 'new')).toMatchObject({ calls: 1, generation: 2, tag: join(sandbox.dir, 'new') });
    expect(await whoami(live, 'kept')).toEqual({ ...kept, calls: 2, generation: 2 });
    expect(pidsOf('kept')).toEqual(keptPids);
    expect(
      live.catalog
        .offered()
        .map((tool) => tool.name)
        .filter((name) => name.startsWith('mcp.'))
        .sort(),
    ).toEqual(['mcp.kept.crash', 'mcp.kept.whoami', 'mcp.new.crash', 'mcp.new.whoami']);
  });

  it(
    'a server that keeps crashing is disabled past max_restarts; a reload brings it back, and so does a fixed entry',
    { timeout: 120_000 },
    async () => {
      const crashFile = (tag: string) => join(sandbox.dir, `${tag}.crash`);
      sandbox.writeConfig(
        config(
          [
            { name: 'other', tag: 'other' },
            { name: 'flaky', tag: 'flaky-1' },
          ],
          'max_restarts = 1',
        ),
      );
      const live = await start();
      const other = await whoami(live, 'other');
      const first = await whoami(live, 'flaky');
      const otherPids = pidsOf('other');
      expect(pidsOf('flaky-1').length).toBeGreaterThan(0);

      // From now on every start of flaky-1 exits at once; the running one is made to crash.
      writeFileSync(crashFile('flaky-1'), '');
      await live.invoke({ name: 'mcp.flaky.crash', input: {} });
      expect(await waitFor(() => part(live, 'flaky')?.state === 'disabled', 30_000)).toBe(true);
      expect(await waitFor(() => pidsOf('flaky-1').length === 0)).toBe(true);
      const disabled = part(live, 'flaky')!;
      expect(disabled).toMatchObject({ state: 'disabled', restarts: 1, maxRestarts: 1 });
      expect(disabled.lastError).toMatch(
        /; gave up after 1 reconnect\(s\) \(max_restarts = 1\); fix the server, then change its \[\[plugins\.entries\.mcp\.config\.servers\]\] entry or reload the host \(SIGHUP to trellis serve or run\) to try again$/,
      );
      const problems = live.assembly.status().plugins.find((plugin) => plugin.id === 'mcp')?.problems;
      expect(problems).toEqual([{ code: ERROR_CODES.PLUGIN_UNAVAILABLE, message: `mcp server flaky is disabled: ${disabled.lastError}` }]);
      // Its tools are withheld with the reason; the other server is untouched.
      expect(await live.invoke({ name: 'mcp.flaky.whoami', input: {} })).toEqual({
        ok: false,
        error: {
          code: ERROR_CODES.TOOL_UNAVAILABLE,
          message: `mcp.flaky.whoami is unavailable: mcp server flaky is disabled: ${disabled.lastError} (PLUGIN_UNAVAILABLE)`,
          retryable: false,
        },
        generation: 1,
      });
      expect(await whoami(live, 'other')).toEqual({ ...other, calls: 2, generation: 1 });

      // The cause is gone; a reload (SIGHUP) with the same config gives the server a fresh start.
      rmSync(crashFile('flaky-1'));
      expect(await live.reload('signal')).toMatchObject({ status: 'unchanged' });
      const revived = await whoamiEventually(live, 'flaky');
      expect(revived.session).not.toBe(first.session);
      expect(part(live, 'flaky')).toMatchObject({ state: 'active', restarts: 0 });

      // Broken again, then the entry is fixed (a new argument): the new entry connects at once.
      writeFileSync(crashFile('flaky-1'), '');
      await live.invoke({ name: 'mcp.flaky.crash', input: {} });
      expect(await waitFor(() => part(live, 'flaky')?.state === 'disabled', 30_000)).toBe(true);
      sandbox.writeConfig(
        config(
          [
            { name: 'other', tag: 'other' },
            { name: 'flaky', tag: 'flaky-2' },
          ],
          'max_restarts = 1',
        ),
      );
      expect(await live.reload()).toMatchObject({ status: 'applied', changes: { changed: ['mcp'] } });
      expect(await whoamiEventually(live, 'flaky')).toMatchObject({ calls: 1, tag: join(sandbox.dir, 'flaky-2') });
      expect(await whoami(live, 'other')).toMatchObject({ session: other.session, calls: 3 });
      expect(pidsOf('other')).toEqual(otherPids);
    },
  );
});
