import { definePlugin } from '@trellis/sdk';
import { createMcpToolSource } from './createMcpToolSource.ts';
import { McpSettingsSchema, type McpSettings } from './settings.ts';

/**
 * The mcp bridge: every server in `[[plugins.entries.mcp.config.servers]]` is reached through the
 * official MCP client, and its tools appear as `mcp.<server>.<tool>`, pinned on first sight.
 */
export const plugin = definePlugin<McpSettings>({
  manifest: { id: 'mcp' },
  settings: { key: 'mcp', schema: McpSettingsSchema },
  tools: [],
  // The host validated the settings against their JSON Schema; parsing again fills each server's defaults.
  toolSource: (ctx) =>
    createMcpToolSource({
      settings: McpSettingsSchema.parse(ctx.config),
      env: ctx.env,
      workspaceRoot: ctx.workspace.root,
      logger: ctx.logger,
      // Servers whose entry did not change keep their connection across a live host's reloads.
      ...(ctx.keepAlive !== undefined ? { keepAlive: ctx.keepAlive } : {}),
      ...(ctx.maxRestarts !== undefined ? { maxRestarts: ctx.maxRestarts } : {}),
    }),
});

export { createMcpToolSource, valueOfResult } from './createMcpToolSource.ts';
export type { McpToolSourceOptions } from './createMcpToolSource.ts';
export { McpSettingsSchema, McpServerConfigSchema } from './settings.ts';
export type { McpSettings, McpServerConfig } from './settings.ts';
export { stdioEnvironment } from './McpServerConnection.ts';
export { GroupStdioTransport } from './GroupStdioTransport.ts';
export type { GroupStdioTransportOptions } from './GroupStdioTransport.ts';
