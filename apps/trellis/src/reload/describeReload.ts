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
      return `reload (${result.trigger}): generation ${result.generation} serves (${parts.join('; ')}) in ${took}`;
    }
    case 'unchanged':
      return `reload (${result.trigger}): nothing changed; generation ${result.generation} keeps serving`;
    case 'rejected':
      return `reload (${result.trigger}) rejected; generation ${result.generation} keeps serving. Fix and save again:\n${result.errors
        .map((error) => `  ${error.code}  ${error.message}`)
        .join('\n')}`;
  }
}
