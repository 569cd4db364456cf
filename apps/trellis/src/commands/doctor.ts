import { existsSync } from 'node:fs';
import { describeSecretIsolation } from '@trellis/sdk';
import { fileURLToPath } from 'node:url';
import type { Assembly } from '../assemble.ts';
import { BUNDLED_PLUGINS, TRELLIS_VERSION } from '../bundled.gen.ts';
import { EXIT } from '../errors.ts';
import { toJson, type CommandIO } from '../io.ts';
import type { CommandLine } from '../parseCommandLine.ts';
import { describeConfigSource } from '../describeConfigSource.ts';

interface Check {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
}

const STATES = ['enabled', 'disabled', 'unavailable', 'rejected', 'shadowed'] as const;

/** The tool doctor calls to prove the runtime works end to end; harmless by construction. */
export const DOCTOR_PROBE_TOOL = 'builtin-tools.echo';

/** `trellis doctor`: the config in use, the registry, the catalog, and one harmless tool call. */
export async function doctor(line: CommandLine, io: CommandIO, assembly: Assembly): Promise<number> {
  const checks: Check[] = [];
  const { snapshot, catalog } = assembly;

  checks.push({
    name: 'config',
    ok: true,
    detail: `${describeConfigSource(assembly.configSource.source, assembly.configSource.path)}; ${assembly.configWarnings.length} warning(s)`,
  });

  const counts = Object.fromEntries(STATES.map((s) => [s, snapshot.plugins.filter((p) => p.state === s).length])) as Record<(typeof STATES)[number], number>;
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

  // Whether children Trellis starts can read the host's secrets (docs/security-model.md).
  const isolation = await describeSecretIsolation();
  checks.push({ name: 'secrets', ok: isolation.mode !== 'required' || isolation.mechanism !== 'none', detail: isolation.detail });

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
  const c = assembly.config;
  io.out(`  profile ${c.plugins.profile}; allow [${c.plugins.allow.join(', ')}]; deny [${c.plugins.deny.join(', ')}]; tool timeout ${c.runtime.tool_timeout_seconds} s; max retries ${c.runtime.max_retries}; audit log ${c.runtime.audit_log || 'off'}\n\n`);
  io.out(`Registry (profile ${snapshot.profile}, hash ${snapshot.hash.slice(0, 12)}):\n`);
  io.out(`  ${STATES.map((s) => `${counts[s]} ${s}`).join(' · ')}\n`);
  for (const p of snapshot.plugins.filter((p) => p.state !== 'enabled')) {
    io.out(`  ${p.id} is ${p.state}${p.reasons[0] ? `: ${p.reasons[0].code}: ${p.reasons[0].message}` : ''}\n`);
  }
  io.out(`\nCatalog: ${offered.length} tools offered of ${known.length} known\n`);
  for (const [plugin, n] of Object.entries(countBy(offered.map((d) => d.plugin)))) io.out(`  ${plugin}: ${n}\n`);
  io.out(`\nChecks:\n`);
  for (const check of checks) io.out(`  ${check.ok ? '✓' : '✗'} ${check.name}: ${check.detail}\n`);
  if (warnings.length > 0) {
    io.out(`\nWarnings (${warnings.length}):\n`);
    for (const w of warnings) io.out(`  ${w.code}  ${w.message}\n`);
  }
  io.out(`\n${ok ? 'All checks passed.' : 'Some checks failed.'}\n`);
  return ok ? EXIT.OK : EXIT.FAILED;
}

function countBy(values: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}
