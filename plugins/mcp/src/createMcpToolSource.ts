import type { CallToolResult } from '@modelcontextprotocol/client';
import {
  ERROR_CODES,
  ToolError,
  type DynamicToolSpec,
  type LifecycleTransition,
  type Logger,
  type PartLifecycleReport,
  type ToolContext,
  type ToolSource,
  type ToolSourceReason,
  type ToolSourceStartOptions,
} from '@trellis/sdk';
import { compileToolGlob } from '@trellis/sdk/internal';
import { McpServerConnection, serverConfigProblem } from './McpServerConnection.ts';
import {
  comparePin,
  emptyPinFile,
  fingerprintTool,
  pinFilePath,
  pinTool,
  readPinFile,
  resolveStateDir,
  writePinFile,
  type McpToolSnapshot,
  type PinChange,
  type PinFile,
  type PinParts,
  type PinProblem,
} from './pinStore.ts';
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
}

interface ServerEntry {
  readonly config: McpServerConfig;
  readonly problem?: string;
  readonly connection?: McpServerConnection;
  readonly pinPath: string;
  readonly include: ReadonlyArray<(name: string) => boolean>;
  readonly exclude: ReadonlyArray<(name: string) => boolean>;
  pins: PinFile;
  pinProblem?: PinProblem;
  pinsRead?: Promise<void>;
  /** The tools as the server listed them last in this process; undefined until it answered. */
  live?: readonly McpToolSnapshot[];
  /** `live` by name, with each tool's fingerprint (hashed once per list, not per call). */
  liveByName?: ReadonlyMap<string, { tool: McpToolSnapshot; fingerprint: { hash: string; parts: PinParts } }>;
  writing: Promise<void>;
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

function describeChanges(changes: readonly PinChange[]): string {
  if (changes.length === 1) return `its ${changes[0]} changed`;
  return `its ${changes.slice(0, -1).join(', ')} and ${changes[changes.length - 1]} changed`;
}

class McpToolSource implements ToolSource {
  private readonly servers = new Map<string, ServerEntry>();
  private readonly duplicates: string[] = [];
  private readonly listeners = new Set<() => void>();
  private readonly lifecycleListeners = new Set<(transition: LifecycleTransition) => void>();
  private closed = false;

  constructor(private readonly options: McpToolSourceOptions) {
    const stateDir = options.stateDir ?? resolveStateDir(options.env);
    for (const config of options.settings.servers) {
      if (config.enabled === false) continue;
      if (this.servers.has(config.name)) {
        this.duplicates.push(config.name);
        continue;
      }
      const problem = serverConfigProblem(config);
      const entry: ServerEntry = {
        config,
        ...(problem !== undefined ? { problem } : {}),
        pinPath: pinFilePath(stateDir, config.name),
        include: config.include_tools.map(compileToolGlob),
        exclude: config.exclude_tools.map(compileToolGlob),
        pins: emptyPinFile(config.name),
        writing: Promise.resolve(),
      };
      if (problem === undefined) {
        (entry as { connection?: McpServerConnection }).connection = new McpServerConnection({
          config,
          env: options.env,
          workspaceRoot: options.workspaceRoot,
          logger: options.logger,
          ...(options.backoffMs !== undefined ? { backoffMs: options.backoffMs } : {}),
          onTools: (tools) => this.receive(entry, tools),
          onState: () => this.emit(),
        });
        entry.connection!.life.onTransition((transition) => {
          for (const listener of [...this.lifecycleListeners]) listener(transition);
        });
      }
      this.servers.set(config.name, entry);
    }
  }

  private readPins(entry: ServerEntry): Promise<void> {
    entry.pinsRead ??= readPinFile(entry.pinPath, entry.config.name).then((read) => {
      if (read.problem !== undefined) entry.pinProblem = read.problem;
      else if (read.value !== undefined) entry.pins = read.value;
    });
    return entry.pinsRead;
  }

  async start(options: ToolSourceStartOptions = {}): Promise<void> {
    const entries = [...this.servers.values()];
    await Promise.all(entries.map((entry) => this.readPins(entry)));
    const refresh = options.mode === 'refresh';
    await Promise.all(
      entries
        .filter((entry) => entry.connection !== undefined && entry.pinProblem === undefined)
        .filter((entry) => refresh || Object.keys(entry.pins.tools).length === 0)
        .map((entry) => entry.connection!.connect()),
    );
    // The first list is pinned before start resolves, so a host that exits right away keeps it.
    await Promise.all(entries.map((entry) => entry.receiving));
    await Promise.all(entries.map((entry) => entry.writing));
    this.emit();
  }

  /** Pins first-seen tools, records changed ones as pending, and keeps the list. */
  private receive(entry: ServerEntry, tools: readonly McpToolSnapshot[]): void {
    entry.receiving = this.readPins(entry).then(() => {
      if (this.closed) return;
      entry.live = tools;
      entry.liveByName = new Map(tools.map((tool) => [tool.name, { tool, fingerprint: fingerprintTool(tool) }]));
      if (entry.pinProblem !== undefined) {
        this.emit();
        return;
      }
      const pinned = { ...entry.pins.tools };
      const pending = { ...entry.pins.pending };
      let dirty = false;
      for (const tool of tools) {
        const current = entry.liveByName.get(tool.name)?.fingerprint ?? fingerprintTool(tool);
        const pin = pinned[tool.name];
        if (pin === undefined) {
          pinned[tool.name] = pinTool(tool);
          dirty = true;
          continue;
        }
        if (comparePin(pin, current).length === 0) {
          if (pending[tool.name] !== undefined) {
            delete pending[tool.name];
            dirty = true;
          }
        } else if (pending[tool.name]?.hash !== current.hash) {
          pending[tool.name] = pinTool(tool);
          dirty = true;
          this.options.logger.warn(
            `mcp.${entry.config.name}.${tool.name} is withheld: ${describeChanges(comparePin(pin, current))} since it was pinned; run trellis mcp approve ${entry.config.name} ${tool.name}`,
          );
        }
      }
      if (dirty) {
        entry.pins = { version: 1, server: entry.config.name, tools: pinned, pending };
        const snapshot = entry.pins;
        entry.writing = entry.writing
          .then(() => writePinFile(entry.pinPath, snapshot))
          .catch((error: unknown) => {
            this.options.logger.error(
              `mcp server ${entry.config.name}: cannot write its pin file ${entry.pinPath}: ${error instanceof Error ? error.message : String(error)}`,
            );
          });
      }
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
    if (entry.pinProblem !== undefined) return { code: entry.pinProblem.code, message: `${name} is withheld: ${entry.pinProblem.message}` };
    const connection = entry.connection;
    if (connection !== undefined && connection.state() === 'failed') {
      return {
        code: ERROR_CODES.MCP_SERVER_UNAVAILABLE,
        message: `${name} is unavailable: mcp server ${entry.config.name} ${connection.reason() ?? 'is down'}; Trellis reconnects with backoff`,
      };
    }
    const pin = entry.pins.tools[tool.name];
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
      const tools = entry.live ?? Object.values(entry.pins.tools).map((pin) => pin.tool);
      for (const tool of tools) {
        if (!this.offeredByFilter(entry, tool.name)) continue;
        const reason = this.withheld(entry, tool);
        // A changed tool is listed as it was approved: its new text is the server's unreviewed word.
        const shown = reason?.code === ERROR_CODES.TOOL_CHANGED ? (entry.pins.tools[tool.name]?.tool ?? tool) : tool;
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
    // A tool known only from the pin cache is checked against the live server before it runs.
    if (connection.state() !== 'connected') {
      await this.readPins(entry);
      await connection.connect();
      await this.readPins(entry);
      await entry.receiving;
    }
    if (entry.pinProblem !== undefined) throw new ToolError(entry.pinProblem.code, `${name} is withheld: ${entry.pinProblem.message}`);
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
      else if (entry.pinProblem !== undefined) out.push(entry.pinProblem);
      else if (entry.connection?.state() === 'failed') {
        out.push({
          code: ERROR_CODES.MCP_SERVER_UNAVAILABLE,
          message: `mcp server ${entry.config.name} ${entry.connection.reason() ?? 'is down'}`,
        });
      }
      const pending = Object.keys(entry.pins.pending);
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
    this.lifecycleListeners.add(listener);
    return () => this.lifecycleListeners.delete(listener);
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

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    this.lifecycleListeners.clear();
    await Promise.allSettled([...this.servers.values()].map((entry) => entry.connection?.close()));
    await Promise.allSettled([...this.servers.values()].map((entry) => entry.writing));
  }
}

/** The mcp plugin's tool source: every configured server's tools as `mcp.<server>.<tool>`, pinned. */
export function createMcpToolSource(
  options: McpToolSourceOptions,
): ToolSource & { pids(): Record<string, number>; health(): readonly PartLifecycleReport[] } {
  return new McpToolSource(options);
}
