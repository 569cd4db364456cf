import { existsSync } from 'node:fs';
import { describeSecretIsolation } from '@trellis/sdk/internal';
import { fileURLToPath } from 'node:url';
import type { Assembly } from '../assemble.ts';
import { BUNDLED_PLUGINS, TRELLIS_VERSION } from '../bundled.gen.ts';
import { EXIT } from '../errors.ts';
import { toJson, type CommandIO } from '../io.ts';
import type { CommandLine } from '../parseCommandLine.ts';
import { describeConfigSource } from '../describeConfigSource.ts';
import { describeTrust } from './describeTrust.ts';
import { asReloadResult } from '../reload/describeReload.ts';
import { resolveControlDir } from '../status/controlDir.ts';
import { listRunningHosts } from '../status/listRunningHosts.ts';
import { findProblems, summarizeProblems, type Problem } from './findProblems.ts';

/** How long doctor waits for one external plugin's start and handshake. */
export const DOCTOR_PLUGIN_DEADLINE_MS = 10_000;

export interface Check {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
}

const STATES = ['enabled', 'disabled', 'unavailable', 'rejected', 'shadowed'] as const;

/** The tool doctor calls to prove the runtime works end to end; harmless by construction. */
export const DOCTOR_PROBE_TOOL = 'builtin-tools.echo';

/** `trellis doctor`: the config in use, the registry, the catalog, and one harmless tool call. */
export async function doctor(
  line: CommandLine,
  io: CommandIO,
  assembly: Assembly,
  env: Readonly<Record<string, string | undefined>>,
): Promise<number> {
  const checks: Check[] = [];
  const { snapshot, catalog } = assembly;

  checks.push({
    name: 'config',
    ok: true,
    detail: `${describeConfigSource(assembly.configSource.source, assembly.configSource.path)}; ${assembly.configWarnings.length} warning(s)`,
  });
  const trust = assembly.workspaceTrust;
  checks.push({ name: 'workspace trust', ok: true, detail: describeTrust(trust) });

  const counts = Object.fromEntries(STATES.map((s) => [s, snapshot.plugins.filter((p) => p.state === s).length])) as Record<
    (typeof STATES)[number],
    number
  >;
  const required = snapshot.plugins.filter((p) => p.manifest?.required === true && p.bundled);
  const requiredDown = required.filter((p) => p.state !== 'enabled');
  checks.push({
    name: 'registry',
    ok: requiredDown.length === 0,
    detail:
      requiredDown.length === 0
        ? `profile ${snapshot.profile}: ${STATES.map((s) => `${counts[s]} ${s}`).join(', ')}`
        : `required plugin(s) not enabled: ${requiredDown.map((p) => p.id).join(', ')}`,
  });

  const offered = catalog.offered();
  const known = catalog.availability();
  checks.push({ name: 'catalog', ok: offered.length > 0, detail: `${offered.length} tools offered of ${known.length} known` });

  // A worker thread imports a bundled plugin by this URL (isolation = "worker"); an install that
  // lost files under dist/plugins/ would only show when such a tool is first called.
  const missingModules = BUNDLED_PLUGINS.filter((d) => d.moduleUrl === undefined || !existsSync(fileURLToPath(d.moduleUrl)));
  checks.push({
    name: 'bundled modules',
    ok: missingModules.length === 0,
    detail:
      missingModules.length === 0
        ? `${BUNDLED_PLUGINS.length} plugin modules present`
        : `missing: ${missingModules.map((d) => `${d.manifest.id} (${d.moduleUrl ?? 'no module URL'})`).join(', ')}; reinstall or rebuild trellis`,
  });

  // A plugin that runs but has a part down (an MCP server) says so here.
  for (const p of snapshot.plugins) {
    const problems = p.state === 'enabled' ? (assembly.lifecycle(p.id)?.problems ?? []) : [];
    if (problems.length > 0)
      checks.push({
        name: `plugin ${p.id}`,
        ok: false,
        detail: problems.map((problem) => `${problem.code}: ${problem.message}`).join('; '),
      });
  }
  // Whether children Trellis starts can read the host's secrets (docs/security-model.md).
  const isolation = await describeSecretIsolation();
  checks.push({ name: 'secrets', ok: isolation.mode !== 'required' || isolation.mechanism !== 'none', detail: isolation.detail });

  // A running serve/run of this workspace whose last reload was rejected still serves an older config.
  checks.push(...(await runningHostChecks(env, assembly.workspace)));

  const probeInput = { probe: 'trellis doctor' };
  const started = performance.now();
  const outcome = await assembly.runtime.invoke({ name: DOCTOR_PROBE_TOOL, input: probeInput, callId: 'doctor-probe' });
  const ms = performance.now() - started;
  const probeOk = outcome.ok && JSON.stringify(outcome.value) === JSON.stringify(probeInput);
  checks.push({
    name: 'runtime',
    ok: probeOk,
    detail: outcome.ok
      ? `${DOCTOR_PROBE_TOOL} answered in ${ms.toFixed(1)} ms${probeOk ? '' : ' with an unexpected value'}`
      : `${DOCTOR_PROBE_TOOL} failed: ${outcome.error.code}: ${outcome.error.message}`,
  });

  // Every enabled external plugin is started under a short deadline: spawn and handshake for
  // process plugins, initialize and GET /tools for HTTP ones (script plugins run per call).
  const pluginChecks = await checkExternalPlugins(assembly);
  for (const c of pluginChecks) checks.push(c.check);
  const problems: Problem[] = [...findProblems(assembly), ...pluginChecks.flatMap((c) => (c.problem ? [c.problem] : []))];
  if (problems.length > 0) checks.push({ name: 'problems', ok: false, detail: summarizeProblems(problems) });

  const warnings = [
    ...assembly.configWarnings.map((w) => ({ code: w.code, message: w.message })),
    ...snapshot.warnings,
    ...snapshot.plugins.flatMap((p) => p.warnings.map((w) => ({ code: w.code, message: `${p.id}: ${w.message}` }))),
    ...catalog.warnings,
  ];
  const ok = checks.every((c) => c.ok);

  if (line.flags.json) {
    io.out(
      toJson({
        ok,
        version: TRELLIS_VERSION,
        node: process.version,
        workspace: assembly.workspace,
        workspaceTrust: { path: trust.real, trusted: trust.trusted, by: trust.by ?? null },
        problems,
        config: { source: assembly.configSource.source, path: assembly.configSource.path ?? null },
        checks,
        registry: { profile: snapshot.profile, hash: snapshot.hash, counts },
        catalog: { offered: offered.length, known: known.length, byPlugin: countBy(offered.map((d) => d.plugin)) },
        warnings,
      }),
    );
    return ok ? EXIT.OK : EXIT.FAILED;
  }

  io.out(`Trellis ${TRELLIS_VERSION} · Node ${process.version} · workspace ${assembly.workspace}\n\n`);
  io.out(`Config in use: ${describeConfigSource(assembly.configSource.source, assembly.configSource.path)}\n`);
  for (const l of assembly.configLayers) {
    if (l.source !== 'embedded')
      io.out(`  layer ${l.source}: ${l.path} (${l.applied ? 'applied' : `not applied: ${l.reason?.code ?? 'skipped'}`})\n`);
  }
  io.out(`${describeTrust(trust)}\n`);
  const c = assembly.config;
  io.out(
    `  profile ${c.plugins.profile}; allow [${c.plugins.allow.join(', ')}]; deny [${c.plugins.deny.join(', ')}]; tool timeout ${c.runtime.tool_timeout_seconds} s; max retries ${c.runtime.max_retries}; audit log ${c.runtime.audit_log || 'off'}\n\n`,
  );
  io.out(`Registry (profile ${snapshot.profile}, hash ${snapshot.hash.slice(0, 12)}):\n`);
  io.out(`  ${STATES.map((s) => `${counts[s]} ${s}`).join(' · ')}\n`);
  for (const p of snapshot.plugins.filter((p) => p.state !== 'enabled')) {
    io.out(`  ${p.id} is ${p.state}${p.reasons[0] ? `: ${p.reasons[0].code}: ${p.reasons[0].message}` : ''}\n`);
  }
  io.out(`\nCatalog: ${offered.length} tools offered of ${known.length} known\n`);
  for (const [plugin, n] of Object.entries(countBy(offered.map((d) => d.plugin)))) io.out(`  ${plugin}: ${n}\n`);
  io.out(`\nChecks:\n`);
  for (const check of checks) io.out(`  ${formatCheck(check)}\n`);
  if (warnings.length > 0) {
    io.out(`\nWarnings (${warnings.length}):\n`);
    for (const w of warnings) io.out(`  ${w.code}  ${w.message}\n`);
  }
  if (problems.length > 0) {
    io.out(`\nProblems (${problems.length}):\n`);
    for (const p of problems) io.out(`  ${p.code}  ${p.message}\n`);
  }
  io.out(`\n${ok ? 'All checks passed.' : `Some checks failed${problems.length > 0 ? ` (${summarizeProblems(problems)})` : ''}.`}\n`);
  return ok ? EXIT.OK : EXIT.FAILED;
}

/** One check as doctor prints it: `✓ name: detail`, or `✗` when it failed. */
export function formatCheck(check: Check): string {
  return `${check.ok ? '✓' : '✗'} ${check.name}: ${check.detail}`;
}

/**
 * One check per running `trellis serve`/`trellis run` of this user in `workspace` (asked over its
 * control socket, as `trellis status` does): failed when its last reload was rejected, since it
 * then keeps serving the last config that worked, not the files on disk. None when none runs.
 */
export async function runningHostChecks(env: Readonly<Record<string, string | undefined>>, workspace: string): Promise<Check[]> {
  const found = await listRunningHosts(resolveControlDir(env));
  return found.hosts
    .filter((host) => host.workspace === workspace)
    .map((host) => {
      const name = `running trellis ${host.command} ${host.pid}`;
      const reload = asReloadResult(host.lastReload);
      if (reload?.status === 'rejected') {
        const errors = reload.errors.map((e) => `${e.code}: ${e.message}`).join('; ');
        return {
          name,
          ok: false,
          detail: `keeps serving generation ${reload.generation}: its last reload (${reload.trigger}, ${reload.at}) was rejected: ${errors}. Fix it and save again: the host applies it`,
        };
      }
      // Applied, but part of the edit was left out (a host of an older Trellis answers without the list).
      if (reload?.status === 'applied' && (reload.notApplied ?? []).length > 0) {
        const errors = reload.notApplied.map((e) => `${e.code}: ${e.message}`).join('; ');
        return {
          name,
          ok: false,
          detail: `serves generation ${reload.generation}, but its last reload (${reload.trigger}, ${reload.at}) left out: ${errors}. Fix it and save again: the host applies it`,
        };
      }
      const last = reload === undefined ? '' : `; last reload ${reload.status} at ${reload.at}`;
      return { name, ok: true, detail: `${host.generation === undefined ? 'serving' : `serves generation ${host.generation}`}${last}` };
    });
}

function countBy(values: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}

/** Starts each enabled external plugin under {@link DOCTOR_PLUGIN_DEADLINE_MS} and reports how it went. */
async function checkExternalPlugins(assembly: Assembly): Promise<Array<{ check: Check; problem?: Problem }>> {
  const external = assembly.snapshot.plugins.filter((p) => p.state === 'enabled' && !p.bundled);
  return Promise.all(
    external.map(async (p) => {
      const type = p.manifest?.runtime?.type ?? 'none';
      const name = `plugin ${p.id}`;
      if (type === 'script') return { check: { name, ok: true, detail: 'script plugin: started per call, nothing to hand-shake' } };
      const deadline = AbortSignal.timeout(DOCTOR_PLUGIN_DEADLINE_MS);
      const started = performance.now();
      let timer: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([
        assembly.startPlugin(p.id, deadline).then(
          () => false,
          () => false,
        ),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(true), DOCTOR_PLUGIN_DEADLINE_MS + 1_000);
        }),
      ]);
      clearTimeout(timer);
      const life = assembly.lifecycle(p.id);
      if (!timedOut && life?.state === 'active') {
        const health = await checkHealth(assembly, p.id);
        if (health === undefined || health.healthy) {
          const healthText = health === undefined ? '' : ' and its health check';
          return {
            check: {
              name,
              ok: true,
              detail: `${type} plugin started and answered its handshake${healthText} in ${(performance.now() - started).toFixed(0)} ms`,
            },
          };
        }
        const message = `${p.id} (${type}, ${p.source.manifestPath}) started but failed its health check: ${health.message ?? 'unhealthy'}. Check the plugin's own logs (runtime.debug_log); \`trellis plugins explain ${p.id}\` shows where it comes from`;
        return {
          check: { name, ok: false, detail: message },
          problem: { kind: 'plugin-check' as const, code: 'PLUGIN_CHECK_FAILED', message },
        };
      }
      const why = timedOut
        ? `no answer within ${DOCTOR_PLUGIN_DEADLINE_MS / 1000} s`
        : `${life?.state ?? 'unknown'}${life?.lastError ? `: ${life.lastError}` : ''}`;
      const message = `${p.id} (${type}, ${p.source.manifestPath}) did not start: ${why}. Check its [runtime] in the manifest${type === 'http' ? ' and that its server is running' : ''}; \`trellis plugins explain ${p.id}\` shows where it comes from`;
      return {
        check: { name, ok: false, detail: message },
        problem: { kind: 'plugin-check' as const, code: 'PLUGIN_CHECK_FAILED', message },
      };
    }),
  );
}

/** One health check under its own short deadline; a deadline that passes is a failed check. */
async function checkHealth(assembly: Assembly, id: string): Promise<{ healthy: boolean; message?: string } | undefined> {
  const deadline = AbortSignal.timeout(DOCTOR_PLUGIN_DEADLINE_MS);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<{ healthy: boolean; message: string }>((resolve) => {
    timer = setTimeout(
      () => resolve({ healthy: false, message: `no answer within ${DOCTOR_PLUGIN_DEADLINE_MS / 1000} s` }),
      DOCTOR_PLUGIN_DEADLINE_MS + 1_000,
    );
  });
  try {
    return await Promise.race([
      assembly
        .checkPluginHealth(id, deadline)
        .catch((error: unknown) => ({ healthy: false, message: error instanceof Error ? error.message : String(error) })),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
