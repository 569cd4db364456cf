import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ERROR_CODES } from '@trellis/sdk';
import { startLiveHost, type LiveHost, type LiveToolOutcome, type ReloadResult } from '../../src/reload/startLiveHost.ts';
import { createReloadSandbox, nextReload, waitFor, type ReloadSandbox } from './reloadFixture.ts';
import { pidsMentioning } from '@trellis/test-support';

const ADD_SERVER = fileURLToPath(new URL('../fixtures/mcpAddServer.mjs', import.meta.url));
const CALLS = 1000;
const CHANGES = 20;

let sandbox: ReloadSandbox;
let host: LiveHost | undefined;
let http: Server;
let endpoint: string;

beforeEach(async () => {
  sandbox = createReloadSandbox('reload-load');
  http = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      response.setHeader('content-type', 'application/json');
      if (request.url === '/initialize') response.end('{"success":true}');
      else if (request.url === '/tools/ping')
        setTimeout(() => response.end(JSON.stringify({ success: true, data: { pong: true } })), Math.random() * 50);
      else {
        response.statusCode = 404;
        response.end('{}');
      }
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const web = join(sandbox.root, 'web');
  mkdirSync(web);
  writeFileSync(
    join(web, 'plugin.toml'),
    `schema_version = 1\nid = "web"\nname = "web"\nversion = "1.0.0"\nkind = "toolset"\ndescription = "HTTP plugin."\n\n[runtime]\ntype = "http"\nendpoint = "${endpoint}"\ntimeout_seconds = 30\n\n[[tools]]\nname = "ping"\ndescription = "Pong."\ninput_schema = { type = "object" }\n`,
  );
});
afterEach(async () => {
  await host?.close();
  host = undefined;
  await new Promise<void>((resolve) => http.close(() => resolve()));
  sandbox.cleanup();
});

/** The config for one step of the change sequence. */
interface Step {
  beta: boolean;
  web: boolean;
  colour: string;
  mcpVersion: number;
  broken: boolean;
}
function configFor(step: Step): string {
  if (step.broken) return '[plugins\nallow = ';
  return [
    '[plugins]',
    `allow = ["alpha", "gamma", "web"${step.beta ? ', "beta"' : ''}]`,
    `deny = [${step.web ? '' : '"web"'}]`,
    `paths = [${JSON.stringify(sandbox.root)}]`,
    '',
    '[plugins.entries.alpha]',
    `config = { colour = "${step.colour}" }`,
    '',
    '[plugins.entries.mcp]',
    'enabled = true',
    '',
    '[[plugins.entries.mcp.config.servers]]',
    'name = "add"',
    `command = ${JSON.stringify(process.execPath)}`,
    `args = [${JSON.stringify(ADD_SERVER)}, ${JSON.stringify(sandbox.dir)}, "v${step.mcpVersion}"]`,
    '',
  ].join('\n');
}

const TOOLS: Record<string, { name: string; input: unknown }> = {
  'builtin-tools': { name: 'builtin-tools.echo', input: { text: 'hi' } },
  alpha: { name: 'alpha.where', input: { ms: 20 } },
  beta: { name: 'beta.where', input: { ms: 20 } },
  gamma: { name: 'gamma.where', input: { ms: 20 } },
  web: { name: 'web.ping', input: {} },
  mcp: { name: 'mcp.add.add', input: { a: 2, b: 3 } },
};

interface CallRecord {
  readonly plugin: string;
  readonly startGeneration: number;
  endGeneration: number;
  outcome?: LiveToolOutcome;
}

it(
  `${CALLS} calls across in-process, process, HTTP and bridged plugins while the config changes ${CHANGES} times`,
  { timeout: 300_000 },
  async () => {
    sandbox.writePlugin('alpha');
    sandbox.writePlugin('beta');
    let step: Step = { beta: true, web: true, colour: 'c0', mcpVersion: 0, broken: false };
    sandbox.writeConfig(configFor(step));
    const live = (host = await startLiveHost({ configPath: sandbox.config, workspace: sandbox.dir, home: sandbox.home, env: sandbox.env }));

    const enabledIn = new Map<number, ReadonlySet<string>>();
    const enabledNow = (): ReadonlySet<string> => new Set(live.snapshot.plugins.filter((p) => p.state === 'enabled').map((p) => p.id));
    enabledIn.set(live.generation, enabledNow());
    const results: ReloadResult[] = [];
    live.onReload((result) => {
      results.push(result);
      if (result.status === 'applied') enabledIn.set(result.generation, enabledNow());
    });

    const records: CallRecord[] = [];
    const pending: Array<Promise<void>> = [];
    let gammaCallable = false;
    const fire = (count: number): void => {
      const plugins = Object.keys(TOOLS).filter((id) => id !== 'gamma' || gammaCallable);
      for (let i = 0; i < count; i += 1) {
        const plugin = plugins[(records.length + i) % plugins.length]!;
        const record: CallRecord = { plugin, startGeneration: live.generation, endGeneration: 0 };
        records.push(record);
        const tool = TOOLS[plugin]!;
        pending.push(
          live.invoke({ name: tool.name, input: tool.input }).then((outcome) => {
            record.outcome = outcome;
            record.endGeneration = live.generation;
          }),
        );
      }
    };

    // Each change: calls go out, the file changes under them, the watcher reloads.
    const changes: Array<{ apply: () => void; expect: ReloadResult['status'] }> = [];
    const edit = (patch: Partial<Step>) => ({
      apply: () => {
        step = { ...step, ...patch };
        sandbox.writeConfig(configFor(step));
      },
      expect: patch.broken === true ? ('rejected' as const) : ('applied' as const),
    });
    for (let round = 0; round < 2; round += 1) {
      changes.push(
        edit({ beta: false }),
        edit({ beta: true }),
        edit({ colour: `c${round + 1}` }),
        { apply: () => sandbox.writePlugin('gamma'), expect: 'applied' },
        {
          apply: () => {
            gammaCallable = false;
            sandbox.removePlugin('gamma');
          },
          expect: 'applied',
        },
        edit({ broken: true }),
        edit({ broken: false, colour: `fixed${round}` }),
        edit({ mcpVersion: round + 1 }),
        edit({ web: false }),
        edit({ web: true }),
      );
    }
    expect(changes).toHaveLength(CHANGES);

    const perWave = CALLS / CHANGES;
    for (const change of changes) {
      fire(perWave / 2);
      // A burst's trailing events can end in a no-op reload (`unchanged`): wait for the real one.
      const reloaded = nextReload(live, (r) => r.status !== 'unchanged');
      change.apply();
      fire(perWave / 2);
      const result = await Promise.race([
        reloaded,
        timeout(60_000, () => `no reload after change ${changes.indexOf(change) + 1}; results so far: ${JSON.stringify(results)}`),
      ]);
      expect(result.status, JSON.stringify(result)).toBe(change.expect);
      gammaCallable = live.snapshot.plugins.some((p) => p.id === 'gamma' && p.state === 'enabled');
    }
    await Promise.all(pending);

    // Zero lost calls: every one has an outcome.
    expect(records).toHaveLength(CALLS);
    expect(records.filter((r) => r.outcome === undefined)).toEqual([]);
    // Generations consistent with when each call started and ended.
    const inconsistent = records.filter((r) => r.outcome!.generation < r.startGeneration || r.outcome!.generation > r.endGeneration);
    expect(inconsistent).toEqual([]);
    // Served only by a generation where the plugin was enabled; refused only where it was not.
    const wrong = records.filter((r) => {
      const enabled = enabledIn.get(r.outcome!.generation)?.has(r.plugin) === true;
      if (r.outcome!.ok) return !enabled;
      const code = r.outcome!.error.code;
      return enabled || (code !== ERROR_CODES.TOOL_NOT_FOUND && code !== ERROR_CODES.TOOL_UNAVAILABLE);
    });
    expect(wrong.map((r) => ({ plugin: r.plugin, generation: r.outcome!.generation, outcome: r.outcome }))).toEqual([]);
    const served = records.filter((r) => r.outcome!.ok).length;
    expect(served).toBeGreaterThan(CALLS * 0.8);
    expect(results.filter((r) => r.status === 'applied')).toHaveLength(18);
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(2);
    expect(live.generation).toBe(19);

    await live.close();
    host = undefined;
    expect(await waitFor(() => pidsMentioning(sandbox.dir).length === 0, 30_000)).toBe(true);
  },
);

function timeout(ms: number, describe: () => string): Promise<never> {
  return new Promise((_, reject) => setTimeout(() => reject(new Error(describe())), ms).unref());
}
