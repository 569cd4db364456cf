/**
 * Process-group helpers for the adapters. The one implementation lives with the launcher in
 * `@trellis/sdk` (`launchChild.ts`), so every child Trellis starts is tracked in one place.
 */
export { killGroup, trackGroup, untrackGroup, PRLIMIT_PATH } from '@trellis/sdk';
