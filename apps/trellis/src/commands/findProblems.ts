import { ERROR_CODES } from '@trellis/sdk';
import type { Assembly } from '../assemble.ts';

/** One thing `doctor` and `config check` count against an all-clear. */
export interface Problem {
  /** `config-key` (an ignored key), `workspace-config` (an untrusted workspace's file), `plugin-rejected`, `plugin-quarantined`, `plugin-check`. */
  readonly kind: 'config-key' | 'workspace-config' | 'plugin-rejected' | 'plugin-quarantined' | 'plugin-check';
  readonly code: string;
  /** Names the file, key or plugin, and what fixes it. */
  readonly message: string;
}

/**
 * What is wrong though the host still starts: config keys that are ignored (unknown keys, an
 * allow/deny/entry naming no plugin, an untrusted workspace's whole file), plugins rejected at
 * admission, plugins quarantined by a bad settings patch (`CONFIG_INVALID`). Each makes `doctor`
 * and `config check` exit 1.
 */
export function findProblems(assembly: Pick<Assembly, 'configWarnings' | 'snapshot'>): Problem[] {
  const problems: Problem[] = [];
  for (const w of assembly.configWarnings) {
    if (w.code === ERROR_CODES.UNKNOWN_KEY) problems.push({ kind: 'config-key', code: w.code, message: w.message });
    else if (w.code === ERROR_CODES.WORKSPACE_UNTRUSTED) problems.push({ kind: 'workspace-config', code: w.code, message: w.message });
  }
  for (const w of assembly.snapshot.warnings) {
    if (w.code === ERROR_CODES.UNKNOWN_KEY) problems.push({ kind: 'config-key', code: w.code, message: w.message });
  }
  for (const p of assembly.snapshot.plugins) {
    const head = p.reasons[0];
    if (p.state === 'rejected')
      problems.push({
        kind: 'plugin-rejected',
        code: head?.code ?? 'REJECTED',
        message: `${p.id} (${p.source.manifestPath ?? 'bundled'}) is rejected: ${head?.message ?? 'no reason given'}`,
      });
    else if (p.state === 'disabled' && head?.code === ERROR_CODES.CONFIG_INVALID) {
      problems.push({ kind: 'plugin-quarantined', code: head.code, message: `${p.id} is quarantined: ${head.message}` });
    }
  }
  return problems;
}

/** "3 problems: 1 ignored config key, 2 rejected plugins". */
export function summarizeProblems(problems: readonly Problem[]): string {
  const labels: Record<Problem['kind'], [string, string]> = {
    'config-key': ['ignored config key', 'ignored config keys'],
    'workspace-config': ['ignored workspace config', 'ignored workspace configs'],
    'plugin-rejected': ['rejected plugin', 'rejected plugins'],
    'plugin-quarantined': ['quarantined plugin', 'quarantined plugins'],
    'plugin-check': ['failed plugin check', 'failed plugin checks'],
  };
  const counts = new Map<Problem['kind'], number>();
  for (const p of problems) counts.set(p.kind, (counts.get(p.kind) ?? 0) + 1);
  const parts = [...counts].map(([kind, n]) => `${n} ${labels[kind][n === 1 ? 0 : 1]}`);
  return `${problems.length} problem${problems.length === 1 ? '' : 's'}: ${parts.join(', ')}`;
}
