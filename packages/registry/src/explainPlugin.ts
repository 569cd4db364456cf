import { closestNames, resolveHostEnvGrant } from '@trellis/sdk/internal';
import type { HostEnvGrant } from '@trellis/sdk/internal';
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
  /**
   * What the plugin receives from the host environment. `in-process`: a bundled plugin, which
   * runs inside Trellis; `granted`: an external plugin's children get `always` plus `granted`;
   * `none`: nothing runs (no manifest or no `[runtime]`).
   */
  readonly hostEnv:
    | { readonly kind: 'in-process'; readonly requires: readonly string[] }
    | ({ readonly kind: 'granted' } & HostEnvGrant)
    | { readonly kind: 'none' };
}

/** The part of the config `explain` reads: the grants of `[plugins.entries.<id>] pass_env`. */
export interface ExplainConfig {
  readonly plugins: { readonly entries: Readonly<Record<string, { readonly pass_env?: readonly string[] | undefined }>> };
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
export function explainPlugin(result: PluginRegistryResult, id: string, config?: ExplainConfig): PluginExplanation {
  const passEnv = config?.plugins.entries[id]?.pass_env ?? [];
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
      hostEnv: hostEnvOf(id, d.admitted.manifest ?? null, facts.bundled, passEnv),
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

function hostEnvOf(id: string, manifest: CandidateManifest, bundled: boolean, passEnv: readonly string[]): CandidateExplanation['hostEnv'] {
  if (manifest === null) return { kind: 'none' };
  if (bundled) return { kind: 'in-process', requires: manifest.requires_env };
  if (!manifest.runtime) return { kind: 'none' };
  return { kind: 'granted', ...resolveHostEnvGrant({ pluginId: id, manifest, passEnv }) };
}

type CandidateManifest = Parameters<typeof resolveHostEnvGrant>[0]['manifest'] | null;

function formatHostEnv(id: string, env: CandidateExplanation['hostEnv'], lines: string[]): void {
  if (env.kind === 'none') {
    lines.push('    from the host environment: nothing (nothing runs)');
    return;
  }
  if (env.kind === 'in-process') {
    lines.push(
      `    from the host environment: runs inside Trellis (bundled)${env.requires.length > 0 ? `; needs ${env.requires.join(', ')} (requires_env)` : ''}; its children get only what it passes them`,
    );
    return;
  }
  lines.push('    from the host environment:');
  lines.push(`      always, when set: ${env.always.join(', ')}`);
  for (const v of env.declared) {
    lines.push(
      v.granted
        ? `      ${v.name} (${v.declaredIn}): granted by [plugins.entries.${id}] pass_env`
        : `      ${v.name} (${v.declaredIn}): not granted; add it to [plugins.entries.${id}] pass_env to pass it`,
    );
  }
  if (env.declared.length === 0) lines.push('      nothing else: the manifest declares no variables (requires_env, env_from_host)');
  if (env.ignored.length > 0)
    lines.push(
      `      not passed: ${env.ignored.join(', ')} (in pass_env, but the manifest does not declare ${env.ignored.length === 1 ? 'it' : 'them'})`,
    );
  for (const problem of env.problems) lines.push(`      problem ENV_NOT_GRANTED: ${problem}`);
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
    if (c.pluginDir !== null && c.source.manifestPath !== null && !c.source.manifestPath.startsWith(c.pluginDir))
      lines.push(`    resolves to ${c.pluginDir}`);
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
    formatHostEnv(explanation.id, c.hostEnv, lines);
  });
  return `${lines.join('\n')}\n`;
}
