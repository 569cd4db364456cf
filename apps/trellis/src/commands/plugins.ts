import { formatExplanation } from '@trellis/registry';
import type { Assembly } from '../assemble.ts';
import { EXIT, FailedError, UsageError } from '../errors.ts';
import { formatTable, toJson, type CommandIO } from '../io.ts';
import type { CommandLine } from '../parseCommandLine.ts';
import { describeTrust } from './describeTrust.ts';

const STATES = ['enabled', 'disabled', 'unavailable', 'rejected', 'shadowed'];

/** `trellis plugins list [--state S] [--json]`. */
export function pluginsList(line: CommandLine, io: CommandIO, assembly: Assembly): number {
  const state = line.options.state;
  if (state !== undefined && !STATES.includes(state)) {
    throw new UsageError(`--state must be one of ${STATES.join(', ')}; got "${state}"`);
  }
  const plugins = assembly.snapshot.plugins.filter((p) => state === undefined || p.state === state);
  if (line.flags.json) {
    io.out(
      toJson({
        profile: assembly.snapshot.profile,
        hash: assembly.snapshot.hash,
        plugins: plugins.map((p) => {
          const lifecycle = p.state === 'enabled' && !p.bundled ? assembly.lifecycle(p.id) : undefined;
          return {
            id: p.id,
            kind: p.kind,
            state: p.state,
            source: p.source,
            reasons: p.reasons,
            warnings: p.warnings,
            ...(lifecycle ? { lifecycle: lifecycle.state, ...(lifecycle.lastError ? { lastError: lifecycle.lastError } : {}) } : {}),
          };
        }),
        warnings: assembly.snapshot.warnings,
        workspace: { path: assembly.workspaceTrust.real, trusted: assembly.workspaceTrust.trusted, by: assembly.workspaceTrust.by ?? null },
      }),
    );
    return EXIT.OK;
  }
  const rows = plugins.map((p) => {
    const lifecycle = p.state === 'enabled' && !p.bundled ? assembly.lifecycle(p.id)?.state : undefined;
    return [
      p.id,
      p.kind,
      p.source.root,
      lifecycle ? `${p.state} (${lifecycle})` : p.state,
      p.reasons[0] ? `${p.reasons[0].code}: ${p.reasons[0].message}` : '',
    ];
  });
  io.out(`Profile ${assembly.snapshot.profile} · ${plugins.length} plugin${plugins.length === 1 ? '' : 's'}\n\n`);
  io.out(formatTable(['ID', 'KIND', 'ROOT', 'STATE', 'REASON'], rows));
  const untrusted = plugins.filter((p) => p.reasons[0]?.code === 'WORKSPACE_UNTRUSTED').length;
  if (untrusted > 0)
    io.out(
      `\n${untrusted} plugin${untrusted === 1 ? '' : 's'} from the workspace ${untrusted === 1 ? 'is' : 'are'} off because it is not trusted. ${describeTrust(assembly.workspaceTrust)}\n`,
    );
  const warnings = [
    ...assembly.snapshot.warnings,
    ...plugins.flatMap((p) => p.warnings.map((w) => ({ ...w, message: `${p.id}: ${w.message}` }))),
  ];
  if (warnings.length > 0) {
    io.out(`\nWarnings:\n`);
    for (const w of warnings) io.out(`  ${w.code}  ${w.message}\n`);
  }
  return EXIT.OK;
}

/** `trellis plugins explain <id> [--json]`: every candidate, every admission check, the decision trace. */
export function pluginsExplain(line: CommandLine, io: CommandIO, assembly: Assembly): number {
  const id = line.args[0]!;
  const explanation = assembly.explain(id);
  const trust = assembly.workspaceTrust;
  // Problems of a running plugin's parts (an MCP server down, a changed tool withheld).
  const problems = assembly.lifecycle(id)?.problems ?? [];
  if (line.flags.json) {
    const workspace = { path: trust.real, trusted: trust.trusted, by: trust.by ?? null };
    io.out(toJson(problems.length > 0 ? { ...explanation, problems, workspace } : { ...explanation, workspace }));
  } else {
    io.out(formatExplanation(explanation));
    if (!formatExplanation(explanation).endsWith('\n')) io.out('\n');
    if (problems.length > 0) {
      io.out(`\nWhile running:\n`);
      for (const problem of problems) io.out(`  ${problem.code}  ${problem.message}\n`);
    }
    io.out(`\n${describeTrust(trust)}\n`);
  }
  if (explanation.candidates.length === 0) throw new FailedError(`no plugin has the id "${id}"`);
  return EXIT.OK;
}
