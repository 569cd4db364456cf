import { ERROR_CODES, silentLogger, type ConnectorHost, type InboundMessage, type Logger, type ReplyEvent } from '@trellis/sdk';
import type { TurnFinishReason } from './AgentEvent.ts';
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
  /** Messages waiting for their conversation's running turn to end. */
  waiting(): number;
  /**
   * Starts no more turns (the start of a shutdown): messages still waiting for their conversation's
   * running turn, and every later `handle`, end at once with `done` and `ABORTED`, logged as not
   * answered. Turns already running go on.
   */
  close(): void;
  /** Cancels every running turn (the end of a grace period). */
  cancelAll(): void;
  /** Resolves when no turn is running or waiting. */
  idle(): Promise<void>;
}

/** What a reply gets appended when its turn ended at a limit rather than where the model chose to stop. */
const LIMIT_NOTES: Partial<Record<TurnFinishReason, string>> = {
  max_steps: '(I stopped before finishing: this answer reached the limit on steps. Ask me to continue.)',
  length: '(This answer was cut off at the length limit. Ask me to continue.)',
};

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
  /** Per conversation, settles when its last handled message is done: the next one starts after it. */
  const tails = new Map<string, Promise<void>>();
  /** Wakes each message waiting for its turn (on close, it then ends without starting). */
  const waiters = new Set<() => void>();
  let closed = false;
  let idleWaiters: Array<() => void> = [];

  const sessionFor = (id: string): AgentSession => {
    let session = sessions.get(id);
    if (session !== undefined) sessions.delete(id);
    else session = agent.session();
    sessions.set(id, session); // most recently used last
    if (sessions.size > max) sessions.delete(sessions.keys().next().value as string);
    return session;
  };

  const waitForTurn = (previous: Promise<void>, signal: AbortSignal | undefined): Promise<void> =>
    new Promise<void>((resolve) => {
      const wake = () => {
        waiters.delete(wake);
        signal?.removeEventListener('abort', wake);
        resolve();
      };
      waiters.add(wake);
      signal?.addEventListener('abort', wake, { once: true });
      void previous.then(wake);
    });

  const settle = () => {
    if (inFlight.size > 0 || waiters.size > 0) return;
    const waiting = idleWaiters;
    idleWaiters = [];
    for (const wake of waiting) wake();
  };

  return {
    async *handle(message: InboundMessage, handleOptions = {}): AsyncIterable<ReplyEvent> {
      const { conversationId } = message;
      const { signal } = handleOptions;
      const previous = tails.get(conversationId);
      let done!: () => void;
      const mine = new Promise<void>((resolve) => (done = resolve));
      tails.set(conversationId, mine);
      try {
        // Queued here rather than in the session, so a turn that has not started is known, and never starts once closed.
        if (previous !== undefined && !closed && signal?.aborted !== true) await waitForTurn(previous, signal);
        if (closed) {
          logger.info('not answered: the host is closing, so the turn did not start', { conversation: conversationId });
          yield { type: 'done', reply: '', error: { code: ERROR_CODES.ABORTED, message: 'not answered: the host is closing' } };
          return;
        }
        if (signal?.aborted === true) {
          yield { type: 'done', reply: '', error: { code: ERROR_CODES.ABORTED, message: 'the turn was cancelled before it started' } };
          return;
        }
        const turn = sessionFor(conversationId).run(message.text, signal ? { signal } : {});
        inFlight.add(turn);
        try {
          for await (const event of turn) {
            if (event.type === 'text') yield { type: 'text', delta: event.delta };
            else if (event.type === 'tool_started') yield { type: 'tool_started', tool: event.tool };
            else if (event.type === 'tool_ended')
              yield { type: 'tool_ended', tool: event.tool, ok: event.ok, durationMs: event.durationMs };
          }
          const result = await turn.result;
          if (result.error !== undefined) {
            logger.warn('turn failed', { conversation: conversationId, code: result.error.code, message: result.error.message });
            yield { type: 'done', reply: result.reply, error: result.error };
            return;
          }
          // The event has no finish reason (@trellis/sdk's ReplyEvent), so a limit is said in the reply itself.
          const note = LIMIT_NOTES[result.finishReason];
          if (note !== undefined)
            logger.info('turn stopped at a limit; the reply says so', { conversation: conversationId, finishReason: result.finishReason });
          yield {
            type: 'done',
            reply: note === undefined ? result.reply : [result.reply.trimEnd(), note].filter((s) => s !== '').join('\n\n'),
          };
        } finally {
          inFlight.delete(turn);
        }
      } finally {
        done();
        if (tails.get(conversationId) === mine) tails.delete(conversationId);
        settle();
      }
    },
    reset(conversationId) {
      sessions.get(conversationId)?.reset();
    },
    running: () => inFlight.size,
    waiting: () => waiters.size,
    close() {
      closed = true;
      for (const wake of [...waiters]) wake();
    },
    cancelAll() {
      for (const turn of inFlight) turn.cancel();
    },
    idle() {
      if (inFlight.size === 0 && waiters.size === 0) return Promise.resolve();
      return new Promise<void>((resolve) => idleWaiters.push(resolve));
    },
  };
}
