// `trellis/mcp-server`: serve an assembly over MCP from your own host. A subpath of its own, so
// `import { assemble } from 'trellis'` does not load the MCP SDK.
export { createTrellisMcpServer, serveMcpStdio, serveMcpHttp, loadMcpSkills, isLoopbackHost } from '@trellis/mcp-server';
export type {
  McpServeHost,
  TrellisMcpServer,
  TrellisMcpServerOptions,
  McpHttpServing,
  McpStdioServing,
  ServeMcpHttpOptions,
  ServeMcpStdioOptions,
  LoadMcpSkillsOptions,
} from '@trellis/mcp-server';
