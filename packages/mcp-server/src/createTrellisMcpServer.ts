import { McpServer, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { CallToolResult, McpRequestContext, McpServerFactory, ServerContext, Tool } from '@modelcontextprotocol/server';
import type { SkillsExtension } from '@modelcontextprotocol/server/ext/skills';
import type { ResourceCatalog } from '@trellis/catalog';
import type { ToolRuntime } from '@trellis/runtime';
import type { Logger, ToolProgress } from '@trellis/sdk';
import { createMcpToolTable, type McpToolNaming, type McpToolTable } from './McpToolTable.ts';
import { httpRequestSignal } from './httpRequestSignal.ts';
import { renderMcpTool } from './renderMcpTool.ts';
import { toCallToolResult } from './toCallToolResult.ts';

/** What the MCP server serves: a catalog (read on every request, so it may change) and a runtime. */
export interface McpServeHost {
  /** The catalog in effect now. */
  catalog(): ResourceCatalog;
  readonly runtime: Pick<ToolRuntime, 'invoke'>;
  /** Subscribes to catalog replacements; `tools/list_changed` is sent when the served list really changed. */
  onCatalogChange?(listener: () => void): () => void;
}

/** Options of {@link createTrellisMcpServer}. */
export interface TrellisMcpServerOptions {
  readonly host: McpServeHost;
  /** `serverInfo.version`. */
  readonly version: string;
  /** `serverInfo.name`; default `trellis`. */
  readonly name?: string;
  /**
   * How tool names appear; default `qualified` (see `createMcpToolTable`). A function is asked
   * whenever the tool list is made, so a host whose config reloads can switch it: clients then get
   * `tools/list_changed` at the next catalog change.
   */
  readonly naming?: McpToolNaming | (() => McpToolNaming);
  /** Tools per `tools/list` page; default 100. */
  readonly pageSize?: number;
  /** Plugin ids whose tools get `openWorldHint: true` (bridges to other servers); a function is asked at every listing. */
  readonly openWorldPlugins?: Iterable<string> | (() => Iterable<string>);
  /** Skills served through the SEP-2640 skills extension (`SkillsExtension.load(...)` or a `SkillCatalog`). */
  readonly skills?: SkillsExtension;
  /** `instructions` sent at initialization. */
  readonly instructions?: string;
  readonly logger?: Logger;
}

/** An MCP server over a Trellis host: a factory for the SDK's serving entries, and its change signal. */
export interface TrellisMcpServer {
  /** Builds one SDK server instance (one per stdio connection, one per HTTP request). */
  readonly factory: McpServerFactory;
  /** Called whenever the served tool list changed; returns a function that unsubscribes. */
  onToolsChanged(listener: () => void): () => void;
  /** The served tool list now (what `tools/list` pages through). */
  tools(era?: 'legacy' | 'modern'): Tool[];
  /**
   * Resolves once no `tools/call` is running. A stdio server waits for it when the client closes
   * stdin, so the calls it had already sent still get their answers before the transport closes.
   */
  idle(): Promise<void>;
  /** Stops following the host's catalog changes. */
  close(): void;
  /**
   * Sends an MCP log notification (`notifications/message`, logger `trellis`) to every connected
   * stdio client, e.g. a live reload's result; clients filter by level with `logging/setLevel`.
   */
  log(level: 'info' | 'warning' | 'error', data: string): void;
}

const PROGRESS_TOKEN = 'progressToken';

/**
 * Serves an assembly's catalog and runtime over MCP with the SDK's low-level `Server` (raw JSON
 * Schemas, own paging): `tools/list` pages through the offered tools in catalog order; `tools/call`
 * runs `runtime.invoke` with the request's abort signal and forwards progress; failures are
 * `isError` results. Works with `serveStdio` and `createMcpHandler` alike.
 */
export function createTrellisMcpServer(options: TrellisMcpServerOptions): TrellisMcpServer {
  const { host } = options;
  const namingNow = (): McpToolNaming => (typeof options.naming === 'function' ? options.naming() : options.naming) ?? 'qualified';
  const pageSize = options.pageSize ?? 100;
  if (!Number.isInteger(pageSize) || pageSize < 1) throw new RangeError(`pageSize must be a whole number above 0; got ${pageSize}`);
  const openWorldNow = (): ReadonlySet<string> =>
    new Set(typeof options.openWorldPlugins === 'function' ? options.openWorldPlugins() : (options.openWorldPlugins ?? []));
  const logger = options.logger;
  const live = new Set<McpServer>();
  const listeners = new Set<() => void>();

  let table: { catalog: ResourceCatalog; naming: McpToolNaming; table: McpToolTable } | undefined;
  const currentTable = (): McpToolTable => {
    const catalog = host.catalog();
    const naming = namingNow();
    if (table === undefined || table.catalog !== catalog || table.naming !== naming)
      table = { catalog, naming, table: createMcpToolTable(catalog, naming) };
    return table.table;
  };
  let fingerprint = currentTable().fingerprint;

  const onCatalogChange = (): void => {
    const next = currentTable().fingerprint;
    if (next === fingerprint) return;
    fingerprint = next;
    for (const server of live) {
      server.sendToolListChanged();
    }
    for (const listener of [...listeners]) {
      try {
        listener();
      } catch (error) {
        logger?.warn('a tools-changed listener failed', { error: error instanceof Error ? error.message : String(error) });
      }
    }
  };
  const unsubscribe = host.onCatalogChange?.(onCatalogChange);

  const render = (era: 'legacy' | 'modern'): Tool[] => {
    const openWorldPlugins = openWorldNow();
    return currentTable().entries.map((entry) => renderMcpTool(entry, { era, openWorldPlugins }));
  };

  const listTools = (cursor: string | undefined, era: 'legacy' | 'modern') => {
    const current = currentTable();
    let start = 0;
    if (cursor !== undefined) {
      const decoded = decodeCursor(cursor);
      if (decoded === undefined)
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `tools/list: the cursor ${JSON.stringify(cursor.slice(0, 80))} was not issued by this server; list again without a cursor`,
        );
      if (decoded.list !== hashText(current.fingerprint)) {
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          'tools/list: the tool list changed since this cursor was issued; list again without a cursor',
        );
      }
      start = decoded.offset;
    }
    const openWorldPlugins = openWorldNow();
    const page = current.entries.slice(start, start + pageSize).map((entry) => renderMcpTool(entry, { era, openWorldPlugins }));
    const end = start + page.length;
    return {
      tools: page,
      ...(end < current.entries.length ? { nextCursor: encodeCursor({ list: hashText(current.fingerprint), offset: end }) } : {}),
    };
  };

  // Calls running now, and who waits for there to be none.
  let running = 0;
  const idleWaiters: Array<() => void> = [];
  const callTool = async (
    params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> },
    ctx: ServerContext,
    server: McpServer,
  ): Promise<CallToolResult> => {
    running += 1;
    try {
      return await runToolCall(params, ctx, server);
    } finally {
      running -= 1;
      if (running === 0) for (const wake of idleWaiters.splice(0)) wake();
    }
  };
  const runToolCall = async (
    params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> },
    ctx: ServerContext,
    server: McpServer,
  ): Promise<CallToolResult> => {
    const descriptor = currentTable().resolve(params.name);
    if (descriptor === undefined) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Unknown tool: ${JSON.stringify(params.name)}; tools/list shows the tools this server offers`,
      );
    }
    const token = (ctx.mcpReq._meta as Record<string, unknown> | undefined)?.[PROGRESS_TOKEN] ?? params._meta?.[PROGRESS_TOKEN];
    let onProgress: ((update: ToolProgress) => void) | undefined;
    if (typeof token === 'string' || typeof token === 'number') {
      let last = -Infinity;
      onProgress = (update) => {
        // MCP requires progress to grow; a report that does not is dropped.
        if (!(update.progress > last)) return;
        last = update.progress;
        void ctx.mcpReq
          .notify({
            method: 'notifications/progress',
            params: {
              progressToken: token,
              progress: update.progress,
              ...(update.total !== undefined ? { total: update.total } : {}),
              ...(update.message !== undefined ? { message: update.message } : {}),
            },
          })
          .catch(() => {
            // the client went away; the call's signal tells the tool
          });
      };
    }
    // Over HTTP the request's own signal too: the SDK's misses a client that left after a keep-alive.
    const requestSignal = httpRequestSignal.getStore();
    const signal = requestSignal === undefined ? ctx.mcpReq.signal : AbortSignal.any([ctx.mcpReq.signal, requestSignal]);
    const outcome = await host.runtime.invoke(
      { name: descriptor.name, input: params.arguments ?? {} },
      { signal, ...(onProgress !== undefined ? { onProgress } : {}) },
    );
    const result = toCallToolResult(outcome);
    if (result.structuredContent === undefined && !result.isError) return result;
    return server.server.projectCallToolResult(result, result.isError ? undefined : descriptor.outputSchema);
  };

  const factory: McpServerFactory = (context: McpRequestContext) => {
    const mcp = new McpServer(
      { name: options.name ?? 'trellis', version: options.version, title: 'Trellis' },
      {
        capabilities: { tools: { listChanged: true }, logging: {} },
        ...(options.instructions !== undefined ? { instructions: options.instructions } : {}),
      },
    );
    const era = context.era;
    mcp.server.setRequestHandler('tools/list', (request) => listTools(request.params?.cursor, era));
    mcp.server.setRequestHandler('tools/call', (request, ctx) => callTool(request.params, ctx, mcp));
    options.skills?.attach(mcp);
    // Connection instances (stdio) are told about changes directly. HTTP instances serve one
    // request each and are not kept: 2026-07-28 clients hear of changes through the handler's
    // subscriptions/listen bus (onToolsChanged), stateless 2025-era HTTP has no stream for them.
    if (context.requestInfo === undefined) {
      live.add(mcp);
      const previous = mcp.server.onclose;
      mcp.server.onclose = () => {
        live.delete(mcp);
        previous?.();
      };
    }
    return mcp;
  };

  return {
    factory,
    onToolsChanged(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    log(level, data) {
      for (const server of live) {
        server.sendLoggingMessage({ level, logger: 'trellis', data }).catch((error: unknown) => {
          logger?.warn('a log notification could not be sent', { error: error instanceof Error ? error.message : String(error) });
        });
      }
    },
    tools: (era = 'modern') => render(era),
    idle: () => (running === 0 ? Promise.resolve() : new Promise<void>((resolve) => idleWaiters.push(resolve))),
    close() {
      unsubscribe?.();
      live.clear();
      listeners.clear();
    },
  };
}

interface Cursor {
  readonly list: string;
  readonly offset: number;
}

function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify([cursor.list, cursor.offset]), 'utf8').toString('base64url');
}

function decodeCursor(text: string): Cursor | undefined {
  if (text.length > 200) return undefined;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (!Array.isArray(parsed) || parsed.length !== 2) return undefined;
    const [list, offset] = parsed as [unknown, unknown];
    if (typeof list !== 'string' || typeof offset !== 'number' || !Number.isInteger(offset) || offset < 0) return undefined;
    return { list, offset };
  } catch {
    return undefined;
  }
}

/** A short, stable digest of a text (FNV-1a, 32 bits); only compares tool lists, never secrets. */
function hashText(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(36);
}
