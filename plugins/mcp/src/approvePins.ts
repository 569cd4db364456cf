import { ERROR_CODES } from '@trellis/sdk';
import {
  comparePin,
  fingerprintTool,
  pinFilePath,
  readPinFileStrict,
  writePinFile,
  type McpToolSnapshot,
  type PinChange,
} from './pinStore.ts';

/** One tool whose change was approved (or would be, with `dryRun`). */
export interface ApprovedTool {
  readonly tool: string;
  readonly changes: readonly PinChange[];
  readonly before: McpToolSnapshot;
  readonly after: McpToolSnapshot;
}

/** What `approvePins` did, or why it could not. */
export interface ApprovePinsResult {
  readonly approved: readonly ApprovedTool[];
  /** Changed tools still withheld (those not named when a tool was given). */
  readonly stillPending: readonly string[];
  readonly pinPath: string;
  readonly error?: { readonly code: string; readonly message: string };
}

/**
 * Approves the pending changes of a server's tools (all, or one): the tool as last seen becomes its
 * pin, so the bridge offers it again. Only changes the bridge recorded are approved; nothing is
 * fetched from the server here.
 */
export async function approvePins(options: {
  stateDir: string;
  server: string;
  tool?: string;
  dryRun?: boolean;
}): Promise<ApprovePinsResult> {
  const pinPath = pinFilePath(options.stateDir, options.server);
  const read = await readPinFileStrict(pinPath, options.server);
  if (read.value === undefined) {
    return {
      approved: [],
      stillPending: [],
      pinPath,
      error: read.problem ?? { code: ERROR_CODES.INTERNAL_ERROR, message: `cannot read ${pinPath}` },
    };
  }
  const file = read.value;
  const pendingNames = Object.keys(file.pending).sort();
  if (options.tool !== undefined && file.pending[options.tool] === undefined) {
    const known = file.tools[options.tool] !== undefined;
    return {
      approved: [],
      stillPending: pendingNames,
      pinPath,
      error: {
        code: ERROR_CODES.NOT_FOUND,
        message: known
          ? `mcp server ${options.server}: tool "${options.tool}" has no pending change (its pin matches what the server listed last)${pendingNames.length > 0 ? `; pending: ${pendingNames.join(', ')}` : ''}`
          : `mcp server ${options.server} has no tool "${options.tool}" in ${pinPath}${pendingNames.length > 0 ? `; pending: ${pendingNames.join(', ')}` : ''}`,
      },
    };
  }
  const chosen = options.tool !== undefined ? [options.tool] : pendingNames;
  const tools = { ...file.tools };
  const pending = { ...file.pending };
  const approved: ApprovedTool[] = [];
  for (const name of chosen) {
    const next = pending[name]!;
    const before = tools[name];
    approved.push({
      tool: name,
      changes: before === undefined ? [] : comparePin(before, fingerprintTool(next.tool)),
      before: before?.tool ?? next.tool,
      after: next.tool,
    });
    tools[name] = { ...next, pinnedAt: new Date().toISOString() };
    delete pending[name];
  }
  if (approved.length > 0 && options.dryRun !== true) {
    await writePinFile(pinPath, { version: 1, server: options.server, tools, pending });
  }
  return { approved, stillPending: Object.keys(pending).sort(), pinPath };
}
