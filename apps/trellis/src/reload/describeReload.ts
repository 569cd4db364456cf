import type { ReloadResult } from './startLiveHost.ts';

/** One line (more for errors) saying what a reload did, for logs. */
export function describeReload(result: ReloadResult): string {
  const took = `${Math.round(result.durationMs)} ms`;
  switch (result.status) {
    case 'applied': {
      const { added, removed, changed, unchanged } = result.changes;
      const parts = [
        added.length > 0 ? `started ${added.join(', ')}` : '',
        removed.length > 0 ? `stopped ${removed.join(', ')}` : '',
        changed.length > 0 ? `restarted ${changed.join(', ')}` : '',
        `${unchanged.length} kept running`,
      ].filter((part) => part !== '');
      // Warnings (a plugin still starting) follow, one line each, then what was left out.
      const warnings = result.warnings.map((w) => `\n  ${w.code}  ${w.message}`).join('');
      // A host of an older Trellis may answer without the list.
      const left = result.notApplied ?? [];
      const notApplied =
        left.length === 0 ? '' : `\n  not applied; fix and save again:${left.map((e) => `\n  ${e.code}  ${e.message}`).join('')}`;
      return `reload (${result.trigger}): generation ${result.generation} serves (${parts.join('; ')}) in ${took}${warnings}${notApplied}`;
    }
    case 'unchanged':
      return `reload (${result.trigger}): nothing changed; generation ${result.generation} keeps serving`;
    case 'rejected':
      return `reload (${result.trigger}) rejected; generation ${result.generation} keeps serving. Fix and save again:\n${result.errors
        .map((error) => `  ${error.code}  ${error.message}`)
        .join('\n')}`;
  }
}

const isString = (value: unknown): value is string => typeof value === 'string';
const isStringList = (value: unknown): value is string[] => Array.isArray(value) && value.every(isString);
const isProblemList = (value: unknown): boolean =>
  Array.isArray(value) &&
  value.every(
    (e) =>
      typeof e === 'object' &&
      e !== null &&
      isString((e as Record<string, unknown>).code) &&
      isString((e as Record<string, unknown>).message),
  );

/**
 * A reload result read back from a running host's status answer (`trellis status`, `doctor`): plain
 * JSON from another process, perhaps another version of Trellis, so its shape is checked before
 * anything describes it. `undefined` for anything that is not a whole result.
 */
export function asReloadResult(value: unknown): ReloadResult | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const r = value as Record<string, unknown>;
  if (!isString(r.trigger) || !isString(r.at) || typeof r.generation !== 'number' || typeof r.durationMs !== 'number') return undefined;
  switch (r.status) {
    case 'applied': {
      const changes = r.changes as Record<string, unknown> | null | undefined;
      if (typeof changes !== 'object' || changes === null) return undefined;
      if (!['added', 'removed', 'changed', 'unchanged'].every((key) => isStringList(changes[key]))) return undefined;
      const listed = Array.isArray(r.warnings) && (r.notApplied === undefined || isProblemList(r.notApplied));
      return listed && typeof r.previous === 'number' ? (value as ReloadResult) : undefined;
    }
    case 'unchanged':
      return value as ReloadResult;
    case 'rejected':
      return isProblemList(r.errors) ? (value as ReloadResult) : undefined;
    default:
      return undefined;
  }
}
