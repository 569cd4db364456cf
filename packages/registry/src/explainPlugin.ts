import { closestNames } from '@trellis/sdk';
import type { PluginRegistryResult } from './buildPluginRegistrySnapshot.ts';
import type { AdmissionCheck, CandidateSource, DecisionStep, PluginState, Reason } from './types.ts';

/** One candidate for an id, as `trellis plugins explain` shows it. */
export interface CandidateExplanation {
  readonly source: CandidateSource;
  readonly state: PluginState;
  readonly reasons: readonly Reason[];
  readonly warnings: readonly Reason[];
  /** Realpath of the plugin folder (external only). */
  readonly pluginDir: string | null;
  /** Other paths that lead to the same manifest through symlinks. */
  readonly aliases: readonly string[];
  /** Every admission check with its result; empty for bundled plugins. */
  readonly checks: readonly AdmissionCheck[];
  /** The decision, step by step. */
  readonly trace: readonly DecisionStep[];
}

/** Everything the registry knows about one id. */
export interface PluginExplanation {
  readonly id: string;
  /** Candidates in snapshot order: the one that counts first. Empty when nothing has this id. */
  readonly candidates: readonly CandidateExplanation[];
  /** Ids that look like the one asked for, when no candidate matched. */
  readonly suggestions: readonly string[];
}

/** Collects every candidate for `id` across roots with its admission checks and decision trace. */
export function explainPlugin(result: PluginRegistryResult, id: string): PluginExplanation {
  const candidates: CandidateExplanation[] = [];
  for (const d of result.trace) {
    if (d.admitted.id !== id) continue;
    const facts = d.admitted.facts;
    candidates.push({
      source: { root: facts.source.root, priority: facts.source.priority, manifestPath: facts.bundled ? null : facts.manifestPath },
      state: d.state,
      reasons: d.reasons,
      warnings: d.warnings,
      pluginDir: facts.bundled ? null : facts.pluginDirReal,
      aliases: facts.bundled ? [] : facts.aliases,
      checks: d.admitted.checks,
      trace: d.trace,
    });
  }
  const suggestions =
    candidates.length > 0
      ? []
      : closestNames(
          id,
          result.trace.map((d) => d.admitted.id),
          { containment: true, maxDistance: () => 2 },
        ).sort();
  return { id, candidates, suggestions };
}

const MARK: Record<AdmissionCheck['result'], string> = { pass: 'ok  ', fail: 'FAIL', warn: 'warn', skip: 'skip' };

/** Renders an explanation as plain text for a terminal. */
export function formatExplanation(explanation: PluginExplanation): string {
  const lines: string[] = [];
  if (explanation.candidates.length === 0) {
    lines.push(`No plugin candidate has the id "${explanation.id}".`);
    if (explanation.suggestions.length > 0) lines.push(`Did you mean: ${explanation.suggestions.join(', ')}?`);
    else lines.push('Run `trellis plugins list` to see every id, or check that the plugin folder is inside a discovery root.');
    return `${lines.join('\n')}\n`;
  }
  lines.push(`${explanation.id}: ${explanation.candidates.length} candidate${explanation.candidates.length > 1 ? 's' : ''}`);
  explanation.candidates.forEach((c, i) => {
    lines.push('');
    const where = c.source.manifestPath ?? 'compiled in';
    lines.push(`[${i + 1}] ${c.state.toUpperCase()} — ${c.source.root} root (priority ${c.source.priority}): ${where}`);
    if (c.pluginDir !== null && c.source.manifestPath !== null && !c.source.manifestPath.startsWith(c.pluginDir)) lines.push(`    resolves to ${c.pluginDir}`);
    for (const alias of c.aliases) lines.push(`    also reached as ${alias}`);
    for (const r of c.reasons) lines.push(`    reason  ${r.code}: ${r.message}`);
    for (const w of c.warnings) lines.push(`    warning ${w.code}: ${w.message}`);
    if (c.checks.length > 0) {
      lines.push('    admission checks:');
      for (const k of c.checks) lines.push(`      ${MARK[k.result]} ${k.title} (${k.code}): ${k.message}`);
    } else {
      lines.push('    admission checks: none (bundled plugins are checked at build time)');
    }
    lines.push('    decision:');
    c.trace.forEach((s, n) => lines.push(`      ${n + 1}. ${s.step}: ${s.message}`));
  });
  return `${lines.join('\n')}\n`;
}
