import { isAbsolute, resolve } from 'node:path';
import type { CallToolResult, Client, Tool, Transport } from '@modelcontextprotocol/client';
import { ERROR_CODES, ToolError, type Logger } from '@trellis/sdk';
import { LifecycleMachine, STABLE_UPTIME_MS, canonicalJson } from '@trellis/sdk/internal';
import { GroupStdioTransport } from './GroupStdioTransport.ts';
import type { McpToolSnapshot } from './pinStore.ts';
import type { McpServerConfig } from './settings.ts';
import { withStandardHeaders } from './standardHeaders.ts';

/**
 * Where a server connection stands. `failed`: down, reconnecting with backoff; `disabled`: given up
 * past `max_restarts` until a reload revives it or its entry changes.
 */
export type ConnectionState = 'idle' | 'connecting' | 'connected' | 'failed' | 'disabled' | 'closed';

/** Options of {@link McpServerConnection}. */
export interface McpServerConnectionOptions {
  readonly config: McpServerConfig;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly workspaceRoot: string;
  readonly logger: Logger;
  /** First reconnect delay; doubles up to `maxBackoffMs`. Default 1000 ms. */
  readonly backoffMs?: number;
  readonly maxBackoffMs?: number;
  /** Reconnects after failures before the server is `disabled`. Default {@link DEFAULT_MAX_RESTARTS}. */
  readonly maxRestarts?: number;
  /** A session that stayed up this long resets the restart count. Default {@link STABLE_UPTIME_MS}. */
  readonly stableUptimeMs?: number;
}

/** What a holder of a connection hears from it (several generations of the bridge may hold one). */
export interface ConnectionSubscriber {
  /** The server's tools after every successful list (connect, `tools/list_changed`). */
  readonly onTools?: (tools: readonly McpToolSnapshot[]) => void;
  /** Whenever `state()` or `reason()` changes. */
  readonly onState?: () => void;
}

/** Reconnects a bridged server gets when neither its entry nor `[plugins.entries.mcp]` sets `max_restarts` (as process plugins). */
export const DEFAULT_MAX_RESTARTS = 3;

// The variables a stdio server inherits when its entry lists none, as the SDK's default environment.
const SAFE_ENV = ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'];

/** The whole environment of a stdio server: the safe set from the host, then its own `env`. */
export function stdioEnvironment(
  hostEnv: Readonly<Record<string, string | undefined>>,
  own: Readonly<Record<string, string>>,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of SAFE_ENV) {
    const value = hostEnv[key];
    // A value starting with "()" is an exported shell function: never passed on.
    if (value !== undefined && !value.startsWith('()')) env[key] = value;
  }
  return { ...env, ...own };
}

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127(?:\.\d{1,3}){3}$/.test(host);
}

/** Why a server entry cannot be used, or undefined. */
export function serverConfigProblem(config: McpServerConfig): string | undefined {
  const hasCommand = config.command !== undefined;
  const hasUrl = config.url !== undefined;
  if (hasCommand === hasUrl) {
    return hasCommand
      ? `server "${config.name}" sets both command and url; keep command (stdio) or url (Streamable HTTP)`
      : `server "${config.name}" sets neither command nor url; add command = "…" (stdio) or url = "https://…" (Streamable HTTP)`;
  }
  if (hasUrl) {
    let url: URL;
    try {
      url = new URL(config.url!);
    } catch {
      return `server "${config.name}": url ${JSON.stringify(config.url)} is not a URL`;
    }
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopback(url.hostname))) {
      return `server "${config.name}": url must use https (plain http only on a loopback address such as 127.0.0.1)`;
    }
  }
  return undefined;
}

function describeError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? `${error.message} (is the command installed and on PATH?)` : error.message;
  }
  return String(error);
}

const LOST_CODES = new Set(['NOT_CONNECTED', 'CONNECTION_CLOSED', 'SEND_FAILED', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);

/** True for errors that mean the connection is gone, not that the tool failed. */
function isConnectionLoss(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 4; e = (e as { cause?: unknown }).cause, depth += 1) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && LOST_CODES.has(code)) return true;
    if (/fetch failed|socket hang up/i.test(e.message)) return true;
  }
  return false;
}

/** A listed MCP tool reduced to its pinned, JSON-only parts. */
export function snapshotTool(tool: Tool): McpToolSnapshot {
  const annotations =
    tool.annotations === undefined ? undefined : (JSON.parse(JSON.stringify(tool.annotations)) as Record<string, unknown>);
  return {
    name: tool.name,
    description: tool.description ?? '',
    inputSchema: (tool.inputSchema ?? { type: 'object' }) as Record<string, unknown>,
    ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema as Record<string, unknown> } : {}),
    ...(tool.title !== undefined ? { title: tool.title } : {}),
    ...(annotations !== undefined ? { annotations } : {}),
  };
}

/**
 * One configured MCP server: connects through the official SDK client (stdio in a process group of
 * its own, or Streamable HTTP), lists its tools, follows `tools/list_changed`, and runs calls with
 * a deadline and cancellation. A failure (spawn error, death, timeout) is kept as the reason and
 * retried with exponential backoff; it never affects other servers.
 */
export class McpServerConnection {
  private client: Client | undefined;
  private transport: Transport | undefined;
  private connecting: Promise<void> | undefined;
  private status: ConnectionState = 'idle';
  private failure: string | undefined;
  private attempts = 0;
  private retryAt = 0;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private wanted = false;
  private readonly timeoutMs: number;
  private pingTimer: ReturnType<typeof setInterval> | undefined;
  private pinging = false;
  private connectedAt = 0;
  private listed: readonly McpToolSnapshot[] | undefined;
  private readonly subscribers = new Set<ConnectionSubscriber>();
  private readonly maxRestarts: number;
  /**
   * The server's lifecycle: `initializing` on the first connect, `active` while connected, `error`
   * when it died or failed, then `recovering` while Trellis reconnects with backoff, or `disabled`
   * once `max_restarts` reconnects in a row have failed (a session that stays up five minutes
   * resets the count, as for process plugins).
   */
  readonly life: LifecycleMachine;

  constructor(private readonly options: McpServerConnectionOptions) {
    this.timeoutMs = Math.round(options.config.timeout_seconds * 1000);
    this.maxRestarts = options.maxRestarts ?? DEFAULT_MAX_RESTARTS;
    this.life = new LifecycleMachine({ plugin: 'mcp', part: options.config.name, logger: options.logger, maxRestarts: this.maxRestarts });
  }

  /** Subscribes a holder; returns the function that unsubscribes it. */
  subscribe(subscriber: ConnectionSubscriber): () => void {
    this.subscribers.add(subscriber);
    return () => void this.subscribers.delete(subscriber);
  }

  /** The tools the server listed last (undefined until it answered once). */
  tools(): readonly McpToolSnapshot[] | undefined {
    return this.listed;
  }

  private notifyTools(tools: readonly McpToolSnapshot[]): void {
    this.listed = tools;
    for (const subscriber of [...this.subscribers]) subscriber.onTools?.(tools);
  }

  private notifyState(): void {
    for (const subscriber of [...this.subscribers]) subscriber.onState?.();
  }

  get name(): string {
    return this.options.config.name;
  }

  state(): ConnectionState {
    return this.status;
  }

  /** Why the server is not connected (after a failure), for messages. */
  reason(): string | undefined {
    return this.failure;
  }

  /** The pid of a stdio server's process (its process group id) while it runs. */
  pid(): number | undefined {
    return this.transport instanceof GroupStdioTransport ? this.transport.pid : undefined;
  }

  /** Connects (once at a time) and lists the tools; never rejects: a failure is kept in `reason()`. */
  connect(): Promise<void> {
    if (this.status === 'closed' || this.status === 'disabled') return Promise.resolve();
    if (this.status === 'connected') return Promise.resolve();
    this.wanted = true;
    this.connecting ??= this.attempt().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private isClosed(): boolean {
    return this.status === 'closed';
  }

  private setState(status: ConnectionState, failure?: string): void {
    this.status = status;
    this.failure = failure;
    if (status === 'connecting') this.life.moveTo(this.life.state === 'unloaded' ? 'initializing' : 'recovering');
    else if (status === 'connected') this.life.moveTo('active');
    else if (status === 'failed') {
      this.life.lastError = failure;
      this.life.moveTo('error');
    }
    this.notifyState();
  }

  /** Every `health_check_interval_seconds` while connected: MCP `ping`; no answer in time means the server is lost. */
  private startPing(client: Client): void {
    this.stopPing();
    const interval = this.options.config.health_check_interval_seconds * 1000;
    if (interval <= 0) return;
    this.pingTimer = setInterval(() => {
      if (this.pinging || this.client !== client || this.status !== 'connected') return;
      this.pinging = true;
      client
        .ping({ timeout: this.timeoutMs, signal: AbortSignal.timeout(this.timeoutMs) })
        .then(
          () => this.life.recordHealthCheck(true),
          (error: unknown) => {
            if (this.client !== client || this.status !== 'connected') return;
            const message = `did not answer ping within timeout_seconds = ${this.options.config.timeout_seconds} (${describeError(error)})`;
            this.life.recordHealthCheck(false, message);
            this.lost(message);
          },
        )
        .finally(() => {
          this.pinging = false;
        });
    }, interval);
    this.pingTimer.unref();
  }

  private stopPing(): void {
    if (this.pingTimer !== undefined) clearInterval(this.pingTimer);
    this.pingTimer = undefined;
  }

  private async attempt(): Promise<void> {
    if (this.retryTimer !== undefined) {
      clearTimeout(this.retryTimer);
      this.retryTimer = undefined;
    }
    const config = this.options.config;
    if (this.isClosed()) return;
    this.setState('connecting', this.failure);
    const { Client: ClientClass, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
    if (this.isClosed()) return;
    const client = new ClientClass(
      { name: 'trellis', version: '0.1.0' },
      {
        // Over HTTP, ask the server first (server/discover) and speak 2026-07-28 to a server that
        // answers; any other answer falls back to the 2025 initialize handshake. Not over stdio,
        // where a server that ignores the probe would cost a whole timeout before the fallback.
        ...(config.url !== undefined && config.command === undefined ? { versionNegotiation: { mode: 'auto' as const } } : {}),
        listChanged: {
          tools: {
            debounceMs: 100,
            onChanged: (error, tools) => {
              if (this.client !== client) return;
              if (error !== null || tools === null) {
                this.options.logger.warn(
                  `mcp server ${config.name}: refreshing its tools after tools/list_changed failed: ${describeError(error)}`,
                );
                return;
              }
              this.notifyTools(tools.map(snapshotTool));
            },
          },
        },
      },
    );
    let transport: Transport;
    if (config.command !== undefined) {
      const cwd =
        config.cwd === undefined
          ? this.options.workspaceRoot
          : isAbsolute(config.cwd)
            ? config.cwd
            : resolve(this.options.workspaceRoot, config.cwd);
      transport = new GroupStdioTransport({
        command: config.command,
        args: config.args,
        env: stdioEnvironment(this.options.env, config.env),
        cwd,
        onStderr: (line) => this.options.logger.debug(`mcp server ${config.name} (stderr): ${line}`),
      });
    } else {
      // The standard request headers (Mcp-Method, Mcp-Name; SEP-2243) on every POST, whatever the era.
      transport = new StreamableHTTPClientTransport(new URL(config.url!), {
        requestInit: { headers: { ...config.headers } },
        fetch: withStandardHeaders(),
      });
    }
    this.transport = transport;
    this.client = client;
    const deadline = AbortSignal.timeout(this.timeoutMs);
    try {
      await client.connect(transport, { timeout: this.timeoutMs, signal: deadline });
      // A server without the tools capability has none; asking anyway makes the SDK print to stdout.
      const listed =
        client.getServerCapabilities()?.tools === undefined
          ? { tools: [] }
          : await client.listTools(undefined, { timeout: this.timeoutMs, signal: deadline });
      if (this.client !== client) return; // closed meanwhile
      client.onclose = () => {
        if (this.client === client) this.lost('the connection closed (the server exited or hung up)');
      };
      this.attempts = 0;
      this.connectedAt = Date.now();
      this.setState('connected');
      this.startPing(client);
      this.notifyTools(listed.tools.map(snapshotTool));
    } catch (error) {
      if (this.client !== client) return;
      const timedOut = deadline.aborted;
      const message = timedOut
        ? `did not finish connecting and listing its tools within timeout_seconds = ${config.timeout_seconds}`
        : `failed to start: ${describeError(error)}`;
      await this.dropClient();
      this.fail(message);
    }
  }

  private fail(message: string): void {
    if (this.status === 'closed' || this.status === 'disabled') return;
    // A session that stayed up long enough was a success: the count of restarts starts over.
    if (this.connectedAt > 0 && Date.now() - this.connectedAt >= (this.options.stableUptimeMs ?? STABLE_UPTIME_MS)) this.life.restarts = 0;
    this.connectedAt = 0;
    if (this.wanted && this.life.restarts >= this.maxRestarts) {
      this.disable(message);
      return;
    }
    this.attempts += 1;
    const delay = Math.min((this.options.backoffMs ?? 1000) * 2 ** (this.attempts - 1), this.options.maxBackoffMs ?? 60_000);
    this.retryAt = Date.now() + delay;
    this.options.logger.warn(`mcp server ${this.name} ${message}; retrying in ${Math.round(delay / 1000)} s`);
    this.setState('failed', message);
    if (this.wanted) {
      // Reconnecting with backoff is recovering, from the moment the retry is set.
      this.life.restarts += 1;
      this.life.moveTo('recovering');
      this.retryTimer = setTimeout(() => {
        this.retryTimer = undefined;
        void this.connect();
      }, delay);
      this.retryTimer.unref();
    }
  }

  /** Gives up after `max_restarts` failed reconnects: no more tries until {@link revive}. */
  private disable(message: string): void {
    this.setState('failed', message);
    const reason = `${message}; gave up after ${this.life.restarts} reconnect(s) (max_restarts = ${this.maxRestarts}); fix the server, then change its [[plugins.entries.mcp.config.servers]] entry or reload the host (SIGHUP to trellis serve or run) to try again`;
    this.status = 'disabled';
    this.failure = reason;
    this.life.lastError = reason;
    this.life.moveTo('disabled');
    this.options.logger.error(`mcp server ${this.name} is disabled: ${reason}`);
    this.notifyState();
  }

  /** A fresh start for a `disabled` server (the host reloaded): the restart count starts over and it connects again. */
  revive(): void {
    if (this.status !== 'disabled') return;
    this.options.logger.info(`mcp server ${this.name}: reconnecting after a reload (it was disabled)`);
    this.life.restarts = 0;
    this.attempts = 0;
    this.retryAt = 0;
    this.status = 'idle';
    this.life.moveTo('unloaded');
    void this.connect();
  }

  private lost(message: string): void {
    void this.dropClient().then(() => this.fail(message));
  }

  private async dropClient(): Promise<void> {
    const client = this.client;
    const transport = this.transport;
    this.stopPing();
    this.client = undefined;
    this.transport = undefined;
    if (client !== undefined) client.onclose = undefined;
    try {
      await (client !== undefined ? client.close() : transport?.close());
    } catch {
      // already gone
    }
    // The client closes the transport; a stdio server's group is killed by it either way.
    if (transport !== undefined && client !== undefined) await transport.close().catch(() => undefined);
  }

  /** Runs one tool call under `signal` (the call's deadline and the caller's cancellation). */
  async call(tool: string, input: unknown, signal: AbortSignal, deadlineMs: number): Promise<CallToolResult> {
    if (this.status === 'disabled') {
      throw new ToolError(ERROR_CODES.PLUGIN_UNAVAILABLE, `mcp server ${this.name} is disabled: ${this.failure ?? 'it kept failing'}`, {
        retryable: false,
      });
    }
    if (this.status !== 'connected') {
      if (this.status === 'failed' && Date.now() < this.retryAt) {
        throw new ToolError(
          ERROR_CODES.MCP_SERVER_UNAVAILABLE,
          `mcp server ${this.name} ${this.failure ?? 'is down'}; retrying in ${Math.ceil((this.retryAt - Date.now()) / 1000)} s (see trellis plugins explain mcp)`,
          { retryable: false },
        );
      }
      await this.connect();
    }
    const client = this.client;
    if (this.status !== 'connected' || client === undefined) {
      throw new ToolError(ERROR_CODES.MCP_SERVER_UNAVAILABLE, `mcp server ${this.name} ${this.failure ?? 'is not connected'}`, {
        retryable: false,
      });
    }
    try {
      return (await client.callTool(
        { name: tool, arguments: (input ?? {}) as Record<string, unknown> },
        { signal, timeout: Math.max(1, deadlineMs) },
      )) as CallToolResult;
    } catch (error) {
      if (signal.aborted)
        throw new ToolError(ERROR_CODES.ABORTED, `mcp.${this.name}.${tool} was cancelled; the server was sent notifications/cancelled`);
      const message = describeError(error);
      if (/timed? ?out/i.test(message)) {
        throw new ToolError(
          ERROR_CODES.TIMEOUT,
          `mcp.${this.name}.${tool} did not answer in time; the server was sent notifications/cancelled`,
        );
      }
      if (this.client !== client || this.status !== 'connected') {
        throw new ToolError(ERROR_CODES.MCP_SERVER_UNAVAILABLE, `mcp server ${this.name} went away during the call: ${message}`);
      }
      // An HTTP server that went away shows only here (no process exits): reconnect with backoff.
      if (isConnectionLoss(error)) {
        this.lost(`the connection failed (${message})`);
        throw new ToolError(ERROR_CODES.MCP_SERVER_UNAVAILABLE, `mcp server ${this.name} went away during the call: ${message}`);
      }
      throw new ToolError(ERROR_CODES.TOOL_FAILED, `mcp.${this.name}.${tool} failed: ${message}`);
    }
  }

  /** Stops reconnecting and ends the server; resolves when its process group is gone. */
  async close(): Promise<void> {
    this.wanted = false;
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.status = 'closed';
    this.subscribers.clear();
    this.life.moveTo('unloaded');
    await this.dropClient();
  }
}

/**
 * Everything a server's connection is made from, as one string: two generations of the bridge
 * whose entries give the same key share one connection (one process, one MCP session); any
 * difference — a changed argument, variable, header, deadline or restart budget — makes a new one.
 * `include_tools`/`exclude_tools` only filter what is offered and are left out.
 */
export function connectionKey(options: Omit<McpServerConnectionOptions, 'logger'>): string {
  const { config } = options;
  const safeEnv: Record<string, string | undefined> = {};
  for (const key of SAFE_ENV) safeEnv[key] = options.env[key];
  return canonicalJson({
    name: config.name,
    command: config.command ?? null,
    args: config.args,
    env: config.env,
    cwd: config.cwd ?? null,
    url: config.url ?? null,
    headers: config.headers,
    timeout_seconds: config.timeout_seconds,
    health_check_interval_seconds: config.health_check_interval_seconds,
    hostEnv: safeEnv,
    workspaceRoot: options.workspaceRoot,
    backoffMs: options.backoffMs ?? null,
    maxBackoffMs: options.maxBackoffMs ?? null,
    maxRestarts: options.maxRestarts ?? DEFAULT_MAX_RESTARTS,
    stableUptimeMs: options.stableUptimeMs ?? null,
  });
}
