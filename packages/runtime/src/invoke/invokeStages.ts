import { canonicalizeInput, resolveImplementation } from './canonicalizeInput.ts';
import type { Stage } from './CallContext.ts';
import { checkCapabilities } from './checkCapabilities.ts';
import { decidePolicy } from './decidePolicy.ts';
import { lookupTool, startDeadline } from './lookupTool.ts';
import { runAttempts } from './runAttempts.ts';
import { validateInput } from './validateInput.ts';

/**
 * The stages of a call, in order, run by `runStages`. Each ends the call with an outcome or lets
 * the next run; the last always ends it. A stage that needs no wait answers synchronously and is
 * not awaited, so a warm call pays one await per real wait only; a wait that many calls share (a
 * first load, a full plugin) parks the call as a record instead (`CallContext.park`).
 */
export const INVOKE_STAGES: readonly Stage[] = [
  lookupTool,
  startDeadline,
  validateInput,
  checkCapabilities,
  resolveImplementation,
  canonicalizeInput,
  decidePolicy,
  runAttempts,
];
