import { cpSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { CLI, createSandbox, type Sandbox } from '../cliHarness.ts';
import { waitFor } from '../serveFixture.ts';
import { isAlive, pidsMentioning } from '@trellis/test-support';

const PLUGIN_SCRIPT = join(import.meta.dirname, '..', 'fixtures', 'reload-plugin.mjs');
let sandbox: Sandbox;
let client: Client | undefined;

beforeEach(() => {
  sandbox = createSandbox();
});
afterEach(async () => {
  await client?.close().catch(() => {});
  client = undefined;
  sandbox.cleanup();
});

function writePlugin(root: string, id: string): void {
  const folder = join(root, id);
  mkdirSync(folder, { recursive: true });
  cpSync(PLUGIN_SCRIPT, join(folder, 'reload-plugin.mjs'));
  writeFileSync(
    join(folder, 'plugin.toml'),
    `schema_version = 1\nid = "${id}"\nname = "${id}"\nversion = "1.0.0"\nkind = "toolset"\ndescription = "Reload test plugin."\n\n` +
      `[runtime]\ntype = "process"\ncommand = "node"\nargs = ["reload-plugin.mjs", ${JSON.stringify(`${sandbox.dir}/${id}`)}, "manifest"]\ntimeout_seconds = 60\n\n` +
      `[[tools]]\nname = "where"\ndescription = "Says which child answered."\ninput_schema = { type = "object" }\n`,
  );
}

function writeConfig(path: string, text: string): void {
  writeFileSync(`${path}.tmp`, text);
  renameSync(`${path}.tmp`, path);
}

it(
  'trellis serve follows its config: list_changed on an edit, SIGHUP reloads, a bad edit keeps serving',
  { timeout: 120_000 },
  async () => {
    const root = join(sandbox.dir, 'plugins');
    // Missing at start, in a folder nobody watches: only SIGHUP can see it appear.
    const later = join(sandbox.dir, 'elsewhere', 'later-plugins');
    writePlugin(root, 'alpha');
    writePlugin(root, 'beta');
    const config = join(sandbox.dir, 'runtime.toml');
    const configText = (allow: string) => `[plugins]\nallow = [${allow}]\npaths = [${JSON.stringify(root)}, ${JSON.stringify(later)}]\n`;
    writeConfig(config, configText('"alpha"'));

    client = new Client({ name: 'reload-e2e', version: '1.0.0' });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'serve', '--config', config],
      cwd: sandbox.workspace,
      env: sandbox.env,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    let changed = 0;
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      changed += 1;
    });
    const logged: Array<{ level: string; data: unknown }> = [];
    client.setNotificationHandler('notifications/message', (notification) => {
      logged.push({ level: notification.params.level, data: notification.params.data });
    });
    await client.connect(transport);
    const names = async () =>
      (await client!.listTools()).tools
        .map((t) => t.title ?? t.name)
        .filter((n) => !n.includes('builtin') && !n.startsWith('core-') && !n.startsWith('skill'));

    expect(await names()).toEqual(['alpha.where']);
    const first = await client.callTool({ name: 'alpha__where', arguments: {} });
    expect(first.structuredContent ?? JSON.parse((first.content as Array<{ text: string }>)[0]!.text)).toMatchObject({ count: 1 });
    const alphaPids = pidsMentioning(`${sandbox.dir}/alpha\0`);
    expect(alphaPids.length).toBeGreaterThan(0);

    // An edit: beta is enabled; clients hear list_changed and alpha keeps its child.
    writeConfig(config, configText('"alpha", "beta"'));
    expect(await waitFor(() => changed === 1)).toBe(true);
    expect(await names()).toEqual(['alpha.where', 'beta.where']);
    const second = await client.callTool({ name: 'alpha__where', arguments: {} });
    expect(JSON.parse((second.content as Array<{ text: string }>)[0]!.text)).toMatchObject({ count: 2 });
    expect(pidsMentioning(`${sandbox.dir}/alpha\0`)).toEqual(alphaPids);

    // A bad edit: rejected, reported on stderr, and the server keeps serving generation 2.
    writeConfig(config, '[plugins\n');
    expect(await waitFor(() => stderr.includes('rejected; generation 2 keeps serving'))).toBe(true);
    expect(stderr).toContain('TOML_SYNTAX');
    // Connected clients are told too, as an MCP log message.
    expect(await waitFor(() => logged.some((m) => m.level === 'error'))).toBe(true);
    expect(String(logged.find((m) => m.level === 'error')?.data)).toMatch(/rejected; generation 2 keeps serving[\s\S]*TOML_SYNTAX/);
    expect((await client.callTool({ name: 'beta__where', arguments: {} })).isError).not.toBe(true);

    // Fix it while adding a root the watcher cannot see yet; SIGHUP picks it up.
    writeConfig(config, configText('"alpha", "beta", "gamma"'));
    expect(await waitFor(() => stderr.includes('generation 3 serves'))).toBe(true);
    writePlugin(later, 'gamma');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await names()).toEqual(['alpha.where', 'beta.where']);
    const before = changed;
    process.kill(transport.pid!, 'SIGHUP');
    expect(await waitFor(() => changed > before)).toBe(true);
    expect(stderr).toMatch(/reload \(signal\): generation 4 serves \(started gamma/);
    expect(await names()).toEqual(['alpha.where', 'beta.where', 'gamma.where']);
    expect(isAlive(transport.pid!)).toBe(true);

    const serverPid = transport.pid!;
    await client.close();
    client = undefined;
    expect(await waitFor(() => !isAlive(serverPid))).toBe(true);
    expect(await waitFor(() => pidsMentioning(sandbox.dir).length === 0)).toBe(true);
  },
);
