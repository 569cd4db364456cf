// The MCP benchmarks' server (bench/mcp and bench/mcp-bridge, through bench/mcpShared.ts): the
// official MCP SDK v2's minimal stdio server with one no-op tool, built the way its docs show for
// raw JSON Schemas (the low-level Server, no per-call validation). `noop` answers with its
// arguments as a text block and as structuredContent, the shape trellis serve gives
// `builtin-tools.echo`, so a caller can check each answer belongs to its call.
import { Server } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';

const server = new Server({ name: 'bench-noop', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler('tools/list', () => ({
  tools: [{ name: 'noop', description: 'Returns its input.', inputSchema: { type: 'object' } }],
}));
server.setRequestHandler('tools/call', (request) => {
  const args = request.params.arguments ?? {};
  return { content: [{ type: 'text', text: JSON.stringify(args) }], structuredContent: args };
});
await server.connect(new StdioServerTransport());
