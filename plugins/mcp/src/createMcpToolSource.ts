import type { CallToolResult } from '@modelcontextprotocol/client';
import {
  ERROR_CODES,
  ToolError,
  type DynamicToolSpec,
  type KeepAliveLease,
  type KeepAliveStore,
  type LifecycleTransition,
  type Logger,
  type PartLifecycleReport,
  type ToolContext,
  type ToolSource,
  type ToolSourceReason,
  type ToolSourceStartOptions,
} from '@trellis/sdk';
import { Listeners, compileToolGlob, createKeepAliveHost } from '@trellis/sdk/internal';
import { McpServerConnection, connectionKey, serverConfigProblem, type McpServerConnectionOptions } from './McpServerConnection.ts';
import { comparePin, fingerprintTool, pinFilePath, resolveStateDir, type McpToolSnapshot, type PinParts } from './pinStore.ts';
import { ServerPins, describeChanges } from './ServerPins.ts';
import type { McpServerConfig, McpSettings } from './settings.ts';

/** Options of {@link createMcpToolSource}. */
export interface McpToolSourceOptions {
  readonly settings: McpSettings;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly workspaceRoot: string;
  readonly logger: Logger;
  /** Where pins live; default `$XDG_STATE_HOME/trellis` (`~/.local/state/trellis`). */
  readonly stateDir?: string;
  /** First reconnect delay (doubles up to a minute). Default 1000 ms. */
  readonly backoffMs?: number;
  /**
   * Where server connections and pins are kept (the host's `PluginContext.keepAlive`): a live host
   * hands the next generation's bridge the connections of the servers whose entry did not change.
   * Default: a store of this source's own (everything closes with it).
   */
  readonly keepAlive?: KeepAliveStore;
  /** `[plugins.entries.mcp] max_restarts`: each server's reconnect budget unless its entry sets `max_restarts`. Default 3. */
  readonly maxRestarts?: number;
  /** A session up this long resets a server's restart count. Default five minutes (tests shorten it). */
  readonly stableUptimeMs?: number;
}

interface ServerEntry {
  readonly config: McpServerConfig;
  readonly problem?: string;
  readonly connection?: McpServerConnection;
  readonly include: ReadonlyArray<(name: string) => boolean>;
  readonly exclude: ReadonlyArray<(name: string) => boolean>;
  /** The server's pins, shared by every holder of its pin file. */
  readonly pins?: ServerPins;
  /** The tools as the server listed them last; undefined until it answered. */
  live?: readonly McpToolSnapshot[];
  /** `live` by name, with each tool's fingerprint (hashed once per list, not per call). */
  liveByName?: ReadonlyMap<string, { tool: McpToolSnapshot; fingerprint: { hash: string; parts: PinParts } }>;
  /** The last list being compared with the pins. */
  receiving?: Promise<void>;
}

/** How a bridged tool's own name splits: `<server>.<tool>`; the tool part may hold dots itself. */
function splitOwnName(own: string): { server: string; tool: string } | undefined {
  const dot = own.indexOf('.');
  if (dot <= 0 || dot === own.length - 1) return undefined;
  return { server: own.slice(0, dot), tool: own.slice(dot + 1) };
}

const MAX_ERROR_TEXT = 2000;

/** The value a bridged call returns: structured content, else the text, else the content blocks. */
export function valueOfResult(result: CallToolResult, name: string): unknown {
  const content = Array.isArray(result.content) ? result.content : [];
  if (result.isError === true) {
    const text = content
      .map((block) => (block.type === 'text' ? block.text : `[${block.type}]`))
      .join('\n')
      .slice(0, MAX_ERROR_TEXT);
    throw new ToolError(ERROR_CODES.TOOL_FAILED, `${name} reported an error: ${text || '(no message)'}`);
  }
  if (result.structuredContent !== undefined) return result.structuredContent;
  if (content.every((block) => block.type === 'text')) return content.map((block) => (block as { text: string }).text).join('\n');
  return { content };
}

/** Why a tool of a disabled server is not run, and how to bring the server back. */
function disabledMessage(name: string, server: string, connection: McpServerConnection): string {
  return `${name} is unavailable: mcp server ${server} is disabled: ${connection.reason() ?? 'it kept failing'}`;
}

class McpToolSource implements ToolSource {
  private readonly servers = new Map<string, ServerEntry>();
  private readonly duplicates: string[] = [];
  private readonly listeners = new Set<() => void>();
  private readonly lifecycleListeners = new Listeners<LifecycleTransition>((error) =>
    this.options.logger.error(`mcp: a lifecycle listener threw: ${error instanceof Error ? error.message : String(error)}`),
  );
  /** Holds on kept connections and pins, and subscriptions to them: given up on close. */
  private readonly leases: Array<KeepAliveLease<unknown>> = [];
  private readonly unsubscribers: Array<() => void> = [];
  private closed = false;

  constructor(private readonly options: McpToolSourceOptions) {
    const stateDir = options.stateDir ?? resolveStateDir(options.env);
    const keepAlive =
      options.keepAlive ??
      createKeepAliveHost((error) => options.logger.error(`mcp: ${error instanceof Error ? error.message : String(error)}`)).forPlugin(
        'mcp',
      );
    for (const config of options.settings.servers) {
      if (config.enabled === false) continue;
      if (this.servers.has(config.name)) {
        this.duplicates.push(config.name);
        continue;
      }
      const problem = serverConfigProblem(config);
      const base = {
        config,
        include: config.include_tools.map(compileToolGlob),
        exclude: config.exclude_tools.map(compileToolGlob),
      };
      if (problem !== undefined) {
        this.servers.set(config.name, { ...base, problem });
        continue;
      }
      const pinPath = pinFilePath(stateDir, config.name);
      const pins = this.hold(
        keepAlive.acquire(
          `pins\u0000${pinPath}`,
          () => new ServerPins(config.name, pinPath, options.logger),
          (kept) => kept.written(),
        ),
      );
      const maxRestarts = config.max_restarts ?? options.maxRestarts;
      const connectionOptions: McpServerConnectionOptions = {
        config,
        env: options.env,
        workspaceRoot: options.workspaceRoot,
        logger: options.logger,
        ...(options.backoffMs !== undefined ? { backoffMs: options.backoffMs } : {}),
        ...(options.stableUptimeMs !== undefined ? { stableUptimeMs: options.stableUptimeMs } : {}),
        ...(maxRestarts !== undefined ? { maxRestarts } : {}),
      };
      // An entry that did not change since the last generation gets that generation's connection:
      // the same process, the same MCP session.
      const connection = this.hold(
        keepAlive.acquire(
          `server\u0000${connectionKey(connectionOptions)}`,
          () => new McpServerConnection(connectionOptions),
          (kept) => kept.close(),
        ),
      );
      const entry: ServerEntry = { ...base, pins, connection };
      this.unsubscribers.push(
        connection.subscribe({ onTools: (tools) => this.receive(entry, tools), onState: () => this.emit() }),
        connection.life.onTransition((transition) => this.lifecycleListeners.emit(transition)),
      );
      this.servers.set(config.name, entry);
      const known = connection.tools();
      if (known !== undefined) this.receive(entry, known);
    }
    // A reload gives servers that were given up (disabled past max_restarts) a fresh start.
    this.unsubscribers.push(
      keepAlive.onReload(() => {
        for (const entry of this.servers.values()) entry.connection?.revive();
      }),
    );
  }

  private hold<T>(lease: KeepAliveLease<T>): T {
    this.leases.push(lease as KeepAliveLease<unknown>);
    return lease.value;
  }

  private readPins(entry: ServerEntry): Promise<void> {
    return entry.pins?.read() ?? Promise.resolve();
  }

  async start(options: ToolSourceStartOptions = {}): Promise<void> {
    const entries = [...this.servers.values()];
    await Promise.all(entries.map((entry) => this.readPins(entry)));
    const refresh = options.mode === 'refresh';
    await Promise.all(
      entries
        .filter((entry) => entry.connection !== undefined && entry.pins?.problem === undefined)
        .filter((entry) => refresh || Object.keys(entry.pins?.pins.tools ?? {}).length === 0)
        .map((entry) => entry.connection!.connect()),
    );
    // The first list is pinned before start resolves, so a host that exits right away keeps it.
    await Promise.all(entries.map((entry) => entry.receiving));
    await Promise.all(entries.map((entry) => entry.pins?.written()));
    this.emit();
  }

  /** Keeps the list, pins first-seen tools and records changed ones as pending. */
  private receive(entry: ServerEntry, tools: readonly McpToolSnapshot[]): void {
    entry.receiving = this.readPins(entry).then(() => {
      if (this.closed) return;
      entry.live = tools;
      entry.liveByName = new Map(tools.map((tool) => [tool.name, { tool, fingerprint: fingerprintTool(tool) }]));
      entry.pins?.record(tools, entry.liveByName);
      this.emit();
    });
  }

  private emit(): void {
    if (this.closed) return;
    for (const listener of this.listeners) listener();
  }

  private offeredByFilter(entry: ServerEntry, tool: string): boolean {
    return entry.include.some((matches) => matches(tool)) && !entry.exclude.some((matches) => matches(tool));
  }

  /** Why one of a server's tools is withheld now, or undefined when it may be called. */
  private withheld(entry: ServerEntry, tool: McpToolSnapshot): ToolSourceReason | undefined {
    const name = `mcp.${entry.config.name}.${tool.name}`;
    const pinProblem = entry.pins?.problem;
    if (pinProblem !== undefined) return { code: pinProblem.code, message: `${name} is withheld: ${pinProblem.message}` };
    const connection = entry.connection;
    if (connection !== undefined && connection.state() === 'disabled') {
      return { code: ERROR_CODES.PLUGIN_UNAVAILABLE, message: disabledMessage(name, entry.config.name, connection) };
    }
    if (connection !== undefined && connection.state() === 'failed') {
      return {
        code: ERROR_CODES.MCP_SERVER_UNAVAILABLE,
        message: `${name} is unavailable: mcp server ${entry.config.name} ${connection.reason() ?? 'is down'}; Trellis reconnects with backoff`,
      };
    }
    const pin = entry.pins?.pins.tools[tool.name];
    if (pin === undefined) return undefined;
    const live = entry.liveByName?.get(tool.name);
    const changes = comparePin(pin, live?.tool === tool ? live.fingerprint : fingerprintTool(tool));
    if (changes.length === 0) return undefined;
    return {
      code: ERROR_CODES.TOOL_CHANGED,
      message: `${name} is withheld: ${describeChanges(changes)} since it was pinned on ${pin.pinnedAt.slice(0, 10)}; review it (trellis mcp approve ${entry.config.name} ${tool.name} shows the change), then approve it`,
    };
  }

  list(): readonly DynamicToolSpec[] {
    const specs: DynamicToolSpec[] = [];
    for (const entry of this.servers.values()) {
      if (entry.problem !== undefined) continue;
      const tools = entry.live ?? Object.values(entry.pins?.pins.tools ?? {}).map((pin) => pin.tool);
      for (const tool of tools) {
        if (!this.offeredByFilter(entry, tool.name)) continue;
        const reason = this.withheld(entry, tool);
        // A changed tool is listed as it was approved: its new text is the server's unreviewed word.
        const shown = reason?.code === ERROR_CODES.TOOL_CHANGED ? (entry.pins?.pins.tools[tool.name]?.tool ?? tool) : tool;
        const annotations = { ...(shown.annotations ?? {}), ...(shown.title !== undefined ? { title: shown.title } : {}) };
        specs.push({
          name: `${entry.config.name}.${shown.name}`,
          description: shown.description,
          inputSchema: shown.inputSchema,
          ...(shown.outputSchema !== undefined ? { outputSchema: shown.outputSchema } : {}),
          tags: ['mcp', entry.config.name],
          contract: {
            sideEffects: true,
            idempotent: false,
            maxRetries: 0,
            deadlineMs: Math.round(entry.config.timeout_seconds * 1000),
          },
          ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
          ...(reason !== undefined ? { unavailable: reason } : {}),
        });
      }
    }
    return specs;
  }

  async call(own: string, input: unknown, ctx: ToolContext): Promise<unknown> {
    const name = `mcp.${own}`;
    const split = splitOwnName(own);
    const entry = split === undefined ? undefined : this.servers.get(split.server);
    if (split === undefined || entry === undefined) {
      throw new ToolError(
        ERROR_CODES.TOOL_NOT_FOUND,
        `${name}: no configured MCP server has this tool; check [[plugins.entries.mcp.config.servers]]`,
      );
    }
    if (entry.problem !== undefined || entry.connection === undefined) {
      throw new ToolError(ERROR_CODES.MCP_SERVER_INVALID, `${name}: ${entry.problem ?? 'the server entry is unusable'}`);
    }
    if (!this.offeredByFilter(entry, split.tool)) {
      throw new ToolError(
        ERROR_CODES.TOOL_NOT_FOUND,
        `${name} is excluded by include_tools/exclude_tools of server "${entry.config.name}"`,
      );
    }
    const connection = entry.connection;
    if (connection.state() === 'disabled') {
      throw new ToolError(ERROR_CODES.PLUGIN_UNAVAILABLE, disabledMessage(name, entry.config.name, connection));
    }
    // A tool known only from the pin cache is checked against the live server before it runs.
    if (connection.state() !== 'connected') {
      await this.readPins(entry);
      await connection.connect();
      await this.readPins(entry);
      await entry.receiving;
    }
    const pinProblem = entry.pins?.problem;
    if (pinProblem !== undefined) throw new ToolError(pinProblem.code, `${name} is withheld: ${pinProblem.message}`);
    if (connection.state() === 'disabled') {
      throw new ToolError(ERROR_CODES.PLUGIN_UNAVAILABLE, disabledMessage(name, entry.config.name, connection));
    }
    if (connection.state() !== 'connected') {
      throw new ToolError(
        ERROR_CODES.MCP_SERVER_UNAVAILABLE,
        `${name} is unavailable: mcp server ${entry.config.name} ${connection.reason() ?? 'is not connected'}`,
      );
    }
    const live = entry.liveByName?.get(split.tool)?.tool;
    if (live === undefined) {
      throw new ToolError(
        ERROR_CODES.TOOL_NOT_FOUND,
        `${name}: mcp server ${entry.config.name} does not list a tool "${split.tool}" (any more)`,
      );
    }
    const reason = this.withheld(entry, live);
    if (reason !== undefined) throw new ToolError(reason.code, reason.message);
    const result = await connection.call(split.tool, input, ctx.signal, Math.round(entry.config.timeout_seconds * 1000));
    return valueOfResult(result, name);
  }

  onChanged(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  problems(): readonly ToolSourceReason[] {
    const out: ToolSourceReason[] = this.duplicates.map((name) => ({
      code: ERROR_CODES.MCP_SERVER_INVALID,
      message: `server name "${name}" appears more than once in [[plugins.entries.mcp.config.servers]]; the first is used, rename the others`,
    }));
    for (const entry of this.servers.values()) {
      if (entry.problem !== undefined) out.push({ code: ERROR_CODES.MCP_SERVER_INVALID, message: entry.problem });
      else if (entry.pins?.problem !== undefined) out.push(entry.pins.problem);
      else if (entry.connection?.state() === 'disabled') {
        out.push({
          code: ERROR_CODES.PLUGIN_UNAVAILABLE,
          message: `mcp server ${entry.config.name} is disabled: ${entry.connection.reason() ?? 'it kept failing'}`,
        });
      } else if (entry.connection?.state() === 'failed') {
        out.push({
          code: ERROR_CODES.MCP_SERVER_UNAVAILABLE,
          message: `mcp server ${entry.config.name} ${entry.connection.reason() ?? 'is down'}`,
        });
      }
      const pending = Object.keys(entry.pins?.pins.pending ?? {});
      if (pending.length > 0) {
        out.push({
          code: ERROR_CODES.TOOL_CHANGED,
          message: `mcp server ${entry.config.name}: ${pending.join(', ')} changed since pinned and ${pending.length === 1 ? 'is' : 'are'} withheld; review with trellis mcp approve ${entry.config.name}`,
        });
      }
    }
    return out;
  }

  /** Each configured server's lifecycle; an unusable entry is `disabled` with its problem. */
  health(): readonly PartLifecycleReport[] {
    return [...this.servers.values()].map((entry) =>
      entry.connection === undefined
        ? { name: entry.config.name, state: 'disabled', lastError: entry.problem ?? 'the server entry is unusable', restarts: 0 }
        : { name: entry.config.name, ...entry.connection.life.report() },
    );
  }

  onLifecycleChange(listener: (transition: LifecycleTransition) => void): () => void {
    return this.lifecycleListeners.add(listener);
  }

  /** The pid of each running stdio server, by server name (for tests and `doctor`). */
  pids(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [name, entry] of this.servers) {
      const pid = entry.connection?.pid();
      if (pid !== undefined) out[name] = pid;
    }
    return out;
  }

  /**
   * Gives up this source's holds: a server no other generation holds is closed (its process group
   * ended), one still held keeps running; resolves when what this source closed is gone.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    this.lifecycleListeners.clear();
    for (const unsubscribe of this.unsubscribers.splice(0)) unsubscribe();
    await Promise.allSettled(this.leases.splice(0).map((lease) => lease.release()));
  }
}

/** The mcp plugin's tool source: every configured server's tools as `mcp.<server>.<tool>`, pinned. */
export function createMcpToolSource(
  options: McpToolSourceOptions,
): ToolSource & { pids(): Record<string, number>; health(): readonly PartLifecycleReport[] } {
  return new McpToolSource(options);
}
