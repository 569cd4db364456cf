export { bundleForAnotherUser } from './bundleForAnotherUser.ts';
export { NOBODY, spawnAsNobody, runProbeAsNobody } from './asNobody.ts';
export type { AsNobodyOptions } from './asNobody.ts';
export { SECRET_HUNT, huntFoundSecret } from './secretHunt.ts';
export { childPidsMentioning, isAlive, livePids, pidsMentioning, pidsWorkingIn } from './hostProcesses.ts';
export { startRecordingProxy } from './recordingProxy.ts';
export type { RecordedRequest, RecordingProxy } from './recordingProxy.ts';
