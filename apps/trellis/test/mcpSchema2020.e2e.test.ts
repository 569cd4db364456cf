import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI, createSandbox, runCli, type Sandbox } from './cliHarness.ts';

// A bridged tool whose input schema is JSON Schema 2020-12 with `$defs`, a `$ref` into them, an
// `$anchor`, composition, conditionals and `additionalProperties: false` (the conformance suite's
// json-schema-2020-12-preservation fixture): what the model sees is the schema as the server sent
// it, and arguments are validated against it with the 2020-12 dialect.
const SERVER = fileURLToPath(new URL('./fixtures/mcpSchemaServer.mjs', import.meta.url));
const SCHEMA = JSON.parse(readFileSync(new URL('./fixtures/mcpSchema2020.json', import.meta.url), 'utf8')) as Record<string, unknown>;

let sandbox: Sandbox;
let config: string;
beforeEach(() => {
  sandbox = createSandbox();
  sandbox.env.XDG_STATE_HOME = join(sandbox.home, '.local', 'state');
  config = join(sandbox.workspace, 'runtime.toml');
  writeFileSync(
    config,
    `[plugins.entries.mcp]\nenabled = true\n\n[[plugins.entries.mcp.config.servers]]\nname = "schema"\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(SERVER)}, ${JSON.stringify(sandbox.dir)}]\n`,
  );
});
afterEach(() => sandbox.cleanup());

function call(args: unknown): { ok: boolean; value?: unknown; error?: { code: string; message: string } } {
  const result = runCli(sandbox, ['tools', 'call', 'mcp.schema.book', '--args', JSON.stringify(args), '--json', '--config', config]);
  return JSON.parse(result.stdout) as { ok: boolean; value?: unknown; error?: { code: string; message: string } };
}

describe('a bridged JSON Schema 2020-12 input schema', () => {
  it('arrives intact in describe, list, every rendering, and trellis serve', async () => {
    const described = runCli(sandbox, ['tools', 'describe', 'mcp.schema.book', '--json', '--config', config]);
    expect(described.code).toBe(0);
    const descriptor = JSON.parse(described.stdout) as { inputSchema: Record<string, unknown> };
    expect(descriptor.inputSchema).toEqual(SCHEMA);
    // Not dereferenced: the $ref stays a $ref, the definitions stay in $defs.
    expect((descriptor.inputSchema.properties as Record<string, unknown>).address).toEqual({ $ref: '#/$defs/address' });

    const listed = JSON.parse(runCli(sandbox, ['tools', 'list', '--json', '--config', config]).stdout) as {
      tools: Array<{ name: string; inputSchema?: unknown }>;
    };
    expect(listed.tools.find((tool) => tool.name === 'mcp.schema.book')?.inputSchema).toEqual(SCHEMA);

    const rendered = (format: string): string => runCli(sandbox, ['tools', 'list', '--format', format, '--config', config]).stdout;
    const openai = JSON.parse(rendered('openai')) as Array<{ function: { description: string; parameters: unknown } }>;
    expect(openai.find((tool) => tool.function.description === 'Books a visit.')?.function.parameters).toEqual(SCHEMA);
    const anthropic = JSON.parse(rendered('anthropic')) as Array<{ description: string; input_schema: unknown }>;
    expect(anthropic.find((tool) => tool.description === 'Books a visit.')?.input_schema).toEqual(SCHEMA);
    const mcp = JSON.parse(rendered('mcp')) as Array<{ description: string; inputSchema: unknown }>;
    expect(mcp.find((tool) => tool.description === 'Books a visit.')?.inputSchema).toEqual(SCHEMA);

    // trellis serve offers the bridged tool to its own MCP clients with the same schema.
    const client = new Client({ name: 'schema-e2e', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, 'serve', '--config', config],
        cwd: sandbox.workspace,
        env: sandbox.env,
        stderr: 'ignore',
      }),
    );
    try {
      const served = (await client.listTools()).tools.find((tool) => tool.description === 'Books a visit.');
      expect(served?.inputSchema).toEqual(SCHEMA);
      const booked = await client.callTool({
        name: served!.name,
        arguments: { name: 'Ada', contactMethod: 'email', email: 'ada@example.com' },
      });
      expect(booked.isError).not.toBe(true);
      expect(booked.structuredContent).toEqual({ received: { name: 'Ada', contactMethod: 'email', email: 'ada@example.com' } });
      const refused = await client.callTool({ name: served!.name, arguments: { name: 'Ada', email: 'a@b.c', nickname: 'A' } });
      expect(refused.isError).toBe(true);
      expect(JSON.stringify(refused.content)).toContain("must NOT have additional property 'nickname'");
    } finally {
      await client.close();
    }
  }, 120_000);

  it('validates arguments against it with the 2020-12 dialect, $ref into $defs included', () => {
    expect(call({ name: 'Ada', contactMethod: 'phone', phone: '555', address: { city: 'Oslo' } })).toEqual({
      ok: true,
      value: { received: { name: 'Ada', contactMethod: 'phone', phone: '555', address: { city: 'Oslo' } } },
    });
    // additionalProperties: false
    const extra = call({ name: 'Ada', email: 'a@b.c', nickname: 'A' });
    expect(extra.error?.code).toBe('INPUT_INVALID');
    expect(extra.error?.message).toContain("(root): must NOT have additional property 'nickname'");
    // The $ref into $defs is followed: address needs its city.
    const noCity = call({ name: 'Ada', email: 'a@b.c', address: { street: 'Main' } });
    expect(noCity.error?.code).toBe('INPUT_INVALID');
    expect(noCity.error?.message).toContain("/address: must have required property 'city'");
    // if/then/else: contactMethod "phone" needs a phone.
    const noPhone = call({ name: 'Ada', contactMethod: 'phone', email: 'a@b.c' });
    expect(noPhone.error?.code).toBe('INPUT_INVALID');
    expect(noPhone.error?.message).toContain("must have required property 'phone'");
    // allOf/anyOf: a phone or an email.
    const neither = call({ name: 'Ada' });
    expect(neither.error?.code).toBe('INPUT_INVALID');
  }, 120_000);
});
