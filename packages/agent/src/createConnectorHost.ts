import { silentLogger, type ConnectorHost, type InboundMessage, type Logger, type ReplyEvent } from '@trellis/sdk';
import type { Agent, AgentSession } from './createAgent.ts';

/** Options of {@link createConnectorHost}. */
export interface ConnectorHostOptions {
  readonly agent: Agent;
  /** Conversations kept at once; the least recently used is forgotten beyond it. Default 1,000. */
  readonly maxConversations?: number;
  readonly logger?: Logger;
}

/** A `ConnectorHost` plus what the host that owns it needs at shutdown. */
export interface ManagedConnectorHost extends ConnectorHost {
  /** Turns running now. */
  running(): number;
  /** Cancels every running turn (the end of a grace period). */
  cancelAll(): void;
  /** Resolves when no turn is running. */
  idle(): Promise<void>;
}

/**
 * What a connector gets from the host: one agent session per conversation (turns of one
 * conversation run in order, history bounded by the agent), the reply as a stream of events.
 */
export function createConnectorHost(options: ConnectorHostOptions): ManagedConnectorHost {
  const { agent } = options;
  const logger = options.logger ?? silentLogger;
  const max = options.maxConversations ?? 1000;
  const sessions = new Map<string, AgentSession>();
  const inFlight = new Set<{ cancel(): void; result: Promise<unknown> }>();
  let idleWaiters: Array<() => void> = [];

  const sessionFor = (id: string): AgentSession => {
    let session = sessions.get(id);
    if (session !== undefined) sessions.delete(id);
    else session = agent.session();
    sessions.set(id, session); // most recently used last
    if (sessions.size > max) sessions.delete(sessions.keys().next().value as string);
    return session;
  };

  return {
    async *handle(message: InboundMessage, handleOptions = {}): AsyncIterable<ReplyEvent> {
      const turn = sessionFor(message.conversationId).run(message.text, handleOptions.signal ? { signal: handleOptions.signal } : {});
      inFlight.add(turn);
      try {
        for await (const event of turn) {
          if (event.type === 'text') yield { type: 'text', delta: event.delta };
          else if (event.type === 'tool_started') yield { type: 'tool_started', tool: event.tool };
          else if (event.type === 'tool_ended') yield { type: 'tool_ended', tool: event.tool, ok: event.ok, durationMs: event.durationMs };
        }
        const result = await turn.result;
        if (result.error !== undefined) {
          logger.warn('turn failed', { conversation: message.conversationId, code: result.error.code, message: result.error.message });
        }
        yield { type: 'done', reply: result.reply, ...(result.error !== undefined ? { error: result.error } : {}) };
      } finally {
        inFlight.delete(turn);
        if (inFlight.size === 0) {
          const waiters = idleWaiters;
          idleWaiters = [];
          for (const wake of waiters) wake();
        }
      }
    },
    reset(conversationId) {
      sessions.get(conversationId)?.reset();
    },
    running: () => inFlight.size,
    cancelAll() {
      for (const turn of inFlight) turn.cancel();
    },
    idle() {
      if (inFlight.size === 0) return Promise.resolve();
      return new Promise<void>((resolve) => idleWaiters.push(resolve));
    },
  };
}
