export { approvePins } from './approvePins.ts';
export type { ApprovePinsResult, ApprovedTool } from './approvePins.ts';
export { parseMcpServersJson, renderServersToml } from './importMcpServers.ts';
export type { ImportedServers } from './importMcpServers.ts';
export { resolveStateDir, pinFilePath, readPinFile } from './pinStore.ts';
export { writeFileAtomic } from './writeFileAtomic.ts';
