import { assemble } from '../assemble.ts';
import { describeConfigSource } from '../describeConfigSource.ts';
import { EXIT } from '../errors.ts';
import { toJson, type CommandIO } from '../io.ts';
import { loadConfig, resolveHostPaths } from '../loadConfig.ts';
import type { CommandLine } from '../parseCommandLine.ts';
import { describeTrust } from './describeTrust.ts';
import { findProblems, summarizeProblems, type Problem } from './findProblems.ts';

/**
 * `trellis config check`: every error and warning of every config layer; exit 2 on errors (the
 * config cannot be used). Then the registry is decided on it (nothing is started) and every key
 * that is ignored, plugin rejected or plugin quarantined is counted: exit 1 when there is any.
 */
export async function configCheck(line: CommandLine, io: CommandIO, env: Readonly<Record<string, string | undefined>>): Promise<number> {
  const paths = resolveHostPaths({ workspace: line.flags.workspace, env });
  // The same lookup and loading as every other command; the built-in default was checked by the build.
  const result = await loadConfig({ configPath: line.flags.config, env, ...paths });
  const ok = result.errors.length === 0;
  let problems: Problem[] = [];
  if (ok) {
    const assembly = await assemble({
      ...(line.flags.config !== undefined ? { configPath: line.flags.config } : {}),
      workspace: paths.workspace,
      home: paths.home,
      ...(line.flags.profile !== undefined ? { profile: line.flags.profile } : {}),
      pluginPaths: line.flags.pluginPaths,
      env,
      discoverExternalTools: false,
    });
    try {
      problems = findProblems(assembly);
    } finally {
      await assembly.dispose();
    }
  }
  const trust = result.workspaceTrust;
  const layers = (result.layers ?? []).map((l) => ({
    source: l.source,
    path: l.path ?? null,
    applied: l.applied,
    ...(l.reason !== undefined ? { reason: l.reason } : {}),
  }));
  const code = !ok ? EXIT.USAGE : problems.length > 0 ? EXIT.FAILED : EXIT.OK;
  if (line.flags.json) {
    io.out(
      toJson({
        ok: code === EXIT.OK,
        source: result.source,
        path: result.path ?? null,
        layers,
        workspace: { path: trust.real, trusted: trust.trusted, by: trust.by ?? null },
        errors: result.errors.map(({ code: c, message }) => ({ code: c, message })),
        warnings: result.warnings.map(({ code: c, message }) => ({ code: c, message })),
        problems,
      }),
    );
    return code;
  }
  io.out(`Config: ${describeConfigSource(result.source, result.path)}\n`);
  for (const l of layers)
    if (l.source !== 'embedded')
      io.out(`  layer ${l.source}: ${l.path} (${l.applied ? 'applied' : `not applied: ${l.reason?.code ?? 'skipped'}`})\n`);
  io.out(`${describeTrust(trust)}\n`);
  for (const problem of result.errors) io.out(`  error   ${problem.code}  ${problem.message}\n`);
  for (const problem of result.warnings) io.out(`  warning ${problem.code}  ${problem.message}\n`);
  const shown = new Set(result.warnings.map((w) => w.message));
  for (const problem of problems) if (!shown.has(problem.message)) io.out(`  problem ${problem.code}  ${problem.message}\n`);
  const w = result.warnings.length;
  const warnings = `${w} warning${w === 1 ? '' : 's'}`;
  if (!ok) io.out(`${result.errors.length} error${result.errors.length === 1 ? '' : 's'}, ${warnings}\n`);
  else if (problems.length > 0)
    io.out(`${summarizeProblems(problems)}; ${warnings}. Fix them as each line says, then run \`trellis config check\` again.\n`);
  else io.out(`OK: ${warnings}\n`);
  return code;
}
