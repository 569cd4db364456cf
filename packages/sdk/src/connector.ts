import type { PluginContext } from './definePlugin.ts';

/** A message a connector received from its channel. */
export interface InboundMessage {
  /** The conversation it belongs to (a Telegram chat id, a Slack channel…); history is kept per conversation. */
  readonly conversationId: string;
  /** Who wrote it, for logs. */
  readonly senderId?: string;
  readonly text: string;
}

/** What the host streams back while it answers an inbound message. */
export type ReplyEvent =
  | { readonly type: 'text'; readonly delta: string }
  | { readonly type: 'tool_started'; readonly tool: string }
  | { readonly type: 'tool_ended'; readonly tool: string; readonly ok: boolean; readonly durationMs: number }
  /** The last event: the whole reply, or `error` when the turn failed (the message is for logs, not users). */
  | { readonly type: 'done'; readonly reply: string; readonly error?: { readonly code: string; readonly message: string } };

/**
 * What the host lends a connector. A connector never imports the agent: it hands each message to
 * `handle` and relays what comes back.
 */
export interface ConnectorHost {
  /**
   * Answers one message: runs a turn in the message's conversation and streams the reply. Turns of
   * one conversation run one at a time, in the order `handle` was called. Never throws; a failure
   * ends the stream with a `done` event carrying `error`.
   */
  handle(message: InboundMessage, options?: { readonly signal?: AbortSignal }): AsyncIterable<ReplyEvent>;
  /** Forgets a conversation's history (a user's `/reset`). */
  reset(conversationId: string): void;
}

/** A running connector: started once by `trellis run`, stopped once on SIGINT/SIGTERM. */
export interface Connector {
  /** Starts receiving (polling, a socket…). Resolves once it is receiving; rejects when it cannot start. */
  start(host: ConnectorHost): Promise<void>;
  /**
   * Stops taking new messages and resolves when every message it already took has been answered.
   * The host aborts the turns it is running when its grace period ends, so this never waits forever.
   */
  stop(): Promise<void>;
}

/** What a connector plugin exports as `definePlugin({ connector })`. */
export interface ConnectorDefinition<Settings = unknown> {
  /** Builds the connector from the plugin's resolved settings and environment. */
  create(ctx: PluginContext<Settings>): Connector | Promise<Connector>;
}
