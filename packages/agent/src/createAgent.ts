import { decodePlainModelToolName, type ResourceCatalog, type ToolDescriptor } from '@trellis/catalog';
import type { ToolRuntime } from '@trellis/runtime';
import {
  ERROR_CODES,
  isProviderError,
  silentLogger,
  type ChatMessage,
  type FinishReason,
  type Logger,
  type Provider,
  type ProviderTool,
  type ProviderToolCall,
  type ToolOutcome,
} from '@trellis/sdk';
import type { AgentEvent, ToolStep, TurnFinishReason, TurnResult, TurnUsage } from './AgentEvent.ts';
import { EventChannel } from './EventChannel.ts';
import {
  DEFAULT_PINNED_TOOLS,
  DEFAULT_TOOL_BUDGET,
  FIND_TOOLS_NAME,
  fitsBudget,
  pinnedDescriptors,
  type ToolBudget,
} from './toolBudget.ts';

/** Options of {@link createAgent}. */
export interface AgentOptions {
  /**
   * The model provider; a function is read once at the start of every turn, so a host can swap
   * providers (a live reload) while turns already running finish on the one they started with.
   */
  readonly provider: Provider | (() => Provider);
  /** The tools; read on every step, so a getter may hand out a newer catalog. */
  readonly catalog: ResourceCatalog | (() => ResourceCatalog);
  readonly runtime: ToolRuntime;
  /** The system prompt at the head of every conversation; none when absent. */
  readonly system?: string;
  /** Most model requests in one turn; the turn ends with `max_steps` when reached. Default 16. */
  readonly maxSteps?: number;
  /** Longest tool result (or error) fed back to the model, in characters; longer ones are cut with a note. Default 16,000. */
  readonly maxToolOutputChars?: number;
  /** Most messages a session keeps between turns (oldest whole turns go first). Default 200. */
  readonly historyLimit?: number;
  /** When the offered tools exceed it, large-catalog mode: see `docs/agent.md`. */
  readonly toolBudget?: Partial<ToolBudget>;
  /** Tool globs shown from the start in large-catalog mode. Default `["builtin-tools.*"]`. */
  readonly pinnedTools?: readonly string[];
  readonly logger?: Logger;
}

/** A conversation with the model: its history, and the tools it loaded in large-catalog mode. */
export interface AgentSession {
  /**
   * Starts a turn for `prompt` (after any turn still running in this session). Iterate the turn
   * for its events; `result` resolves when it ends, never rejects.
   */
  run(prompt: string, options?: { readonly signal?: AbortSignal }): AgentTurn;
  /** Forgets the history and the loaded tools. */
  reset(): void;
  /** The conversation so far (system prompt excluded). */
  history(): readonly ChatMessage[];
  /** Fully qualified names of the tools the model sees now, and whether large-catalog mode is on. */
  visibleTools(): { readonly tools: readonly string[]; readonly largeCatalog: boolean };
}

/** A running turn: an event stream plus its result. */
export interface AgentTurn extends AsyncIterable<AgentEvent> {
  readonly result: Promise<TurnResult>;
  /** Cancels the whole turn: the model request and every tool call in flight. */
  cancel(): void;
}

/** The agent: a provider's model driving the catalog's tools through the runtime. */
export interface Agent {
  /** The model of the provider a turn starting now would use. */
  readonly model: string;
  session(): AgentSession;
}

interface LoopConfig {
  readonly provider: () => Provider;
  readonly catalog: () => ResourceCatalog;
  readonly runtime: ToolRuntime;
  readonly system: string | undefined;
  readonly maxSteps: number;
  readonly maxToolOutputChars: number;
  readonly historyLimit: number;
  readonly budget: ToolBudget;
  readonly pinned: readonly string[];
  readonly logger: Logger;
}

const FIND_TOOLS_TOOL: ProviderTool = {
  type: 'function',
  function: {
    name: FIND_TOOLS_NAME,
    description:
      'Search the tool catalog and load matching tools so you can call them in your next step. Use it whenever the tools you see do not cover the task. Returns the loaded tools with their descriptions.',
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, maxLength: 200, description: 'What the tool should do, in a few words' },
        limit: { type: 'integer', minimum: 1, maximum: 10, description: 'How many tools to load (default 5)' },
      },
      required: ['query'],
      additionalProperties: false,
    },
  },
};

/** Builds an agent. Cheap: nothing is sent until a session runs a turn. */
export function createAgent(options: AgentOptions): Agent {
  const { catalog, provider } = options;
  const config: LoopConfig = {
    provider: typeof provider === 'function' ? provider : () => provider,
    catalog: typeof catalog === 'function' ? catalog : () => catalog,
    runtime: options.runtime,
    system: options.system,
    maxSteps: positive(options.maxSteps, 16, 'maxSteps'),
    maxToolOutputChars: positive(options.maxToolOutputChars, 16_000, 'maxToolOutputChars'),
    historyLimit: positive(options.historyLimit, 200, 'historyLimit'),
    budget: { ...DEFAULT_TOOL_BUDGET, ...options.toolBudget },
    pinned: options.pinnedTools ?? DEFAULT_PINNED_TOOLS,
    logger: options.logger ?? silentLogger,
  };
  return {
    get model() {
      return config.provider().model;
    },
    session: () => new Session(config),
  };
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`createAgent: ${name} must be a positive integer, got ${value}`);
  return value;
}

class Session implements AgentSession {
  private messages: ChatMessage[] = [];
  /** Tools the model loaded through find_tools, oldest first. */
  private loaded: string[] = [];
  private tail: Promise<unknown> = Promise.resolve();
  private rendered: { catalog: ResourceCatalog; key: string; tools: ProviderTool[]; names: string[]; large: boolean } | undefined;

  constructor(private readonly config: LoopConfig) {}

  history(): readonly ChatMessage[] {
    return this.messages;
  }

  reset(): void {
    this.messages = [];
    this.loaded = [];
    this.rendered = undefined;
  }

  visibleTools(): { tools: readonly string[]; largeCatalog: boolean } {
    const view = this.view();
    return { tools: view.names, largeCatalog: view.large };
  }

  run(prompt: string, options: { readonly signal?: AbortSignal } = {}): AgentTurn {
    const channel = new EventChannel<AgentEvent>();
    const controller = new AbortController();
    const outer = options.signal;
    const onAbort = () => controller.abort(outer?.reason);
    if (outer?.aborted) controller.abort(outer.reason);
    else outer?.addEventListener('abort', onAbort, { once: true });
    const result = this.tail
      .then(() => this.turn(prompt, controller.signal, channel))
      .finally(() => {
        outer?.removeEventListener('abort', onAbort);
        channel.close();
      });
    this.tail = result.catch(() => undefined);
    return {
      result,
      cancel: () => controller.abort(),
      [Symbol.asyncIterator]: () => channel[Symbol.asyncIterator](),
    };
  }

  /** The tools the model sees now, rendered once per catalog and loaded set. */
  private view(): { tools: ProviderTool[]; names: string[]; large: boolean } {
    const catalog = this.config.catalog();
    const key = this.loaded.join('\n');
    if (this.rendered !== undefined && this.rendered.catalog === catalog && this.rendered.key === key) return this.rendered;
    const offered = catalog.offered();
    let descriptors: readonly ToolDescriptor[];
    let large = false;
    if (fitsBudget(offered, this.config.budget)) descriptors = offered;
    else {
      large = true;
      const shown = pinnedDescriptors(catalog, this.config.pinned, this.config.budget);
      const names = new Set(shown.map((d) => d.name));
      for (const name of this.loaded) {
        const d = catalog.get(name);
        if (d !== undefined && !names.has(name) && catalog.lookup(name).status === 'offered') {
          shown.push(d);
          names.add(name);
        }
      }
      descriptors = shown;
    }
    const tools = catalog.render('openai', descriptors) as ProviderTool[];
    if (large) tools.push(FIND_TOOLS_TOOL);
    this.rendered = { catalog, key, tools, names: descriptors.map((d) => d.name), large };
    return this.rendered;
  }

  private async turn(prompt: string, signal: AbortSignal, channel: EventChannel<AgentEvent>): Promise<TurnResult> {
    const { maxSteps } = this.config;
    // Read once: every step of this turn talks to the provider it started with.
    const provider = this.config.provider();
    const before = this.messages.length;
    const loadedBefore = this.loaded.length;
    const steps: ToolStep[] = [];
    let usage: TurnUsage = { inputTokens: 0, outputTokens: 0, totalTokens: 0, requests: 0 };
    this.messages.push({ role: 'user', content: prompt });
    const finish = (finishReason: TurnFinishReason, reply: string, error?: { code: string; message: string }): TurnResult => {
      if (error !== undefined) {
        // A failed or cancelled turn leaves no trace: a half-answered tool call would break the next request.
        this.messages.length = before;
        this.loaded.length = Math.min(this.loaded.length, loadedBefore);
      } else this.trimHistory();
      const result: TurnResult = { reply, finishReason, steps, usage, model: provider.model, ...(error !== undefined ? { error } : {}) };
      channel.push({ type: 'turn_ended', result });
      return result;
    };

    for (let step = 1; ; step++) {
      if (signal.aborted) return finish('aborted', '', { code: ERROR_CODES.ABORTED, message: 'the turn was cancelled' });
      if (step > maxSteps) {
        return finish('max_steps', lastText(this.messages, before));
      }
      channel.push({ type: 'step_started', step });
      const view = this.view();
      let text = '';
      const calls: ProviderToolCall[] = [];
      let reason: FinishReason = 'stop';
      try {
        const messages =
          this.config.system === undefined ? this.messages : [{ role: 'system' as const, content: this.config.system }, ...this.messages];
        for await (const event of provider.stream({ messages, tools: view.tools, signal })) {
          switch (event.type) {
            case 'text':
              text += event.delta;
              channel.push(event);
              break;
            case 'tool_call':
              calls.push(event.call);
              break;
            case 'usage': {
              const u = event.usage;
              const cost = u.cost === undefined ? usage.cost : (usage.cost ?? 0) + u.cost;
              usage = {
                inputTokens: usage.inputTokens + u.inputTokens,
                outputTokens: usage.outputTokens + u.outputTokens,
                totalTokens: usage.totalTokens + u.totalTokens,
                requests: usage.requests,
                ...(cost !== undefined ? { cost } : {}),
              };
              channel.push({ type: 'usage', usage: u, total: { ...usage, requests: usage.requests + 1 } });
              break;
            }
            case 'finish':
              reason = event.reason;
              break;
          }
        }
      } catch (error) {
        usage = { ...usage, requests: usage.requests + 1 };
        if (signal.aborted) return finish('aborted', '', { code: ERROR_CODES.ABORTED, message: 'the turn was cancelled' });
        if (isProviderError(error)) return finish('error', '', { code: error.code, message: error.message });
        const message = error instanceof Error ? error.message : String(error);
        return finish('error', '', { code: ERROR_CODES.PROVIDER_FAILED, message: `the provider failed: ${message}` });
      }
      usage = { ...usage, requests: usage.requests + 1 };
      this.messages.push(calls.length > 0 ? { role: 'assistant', content: text, toolCalls: calls } : { role: 'assistant', content: text });
      if (calls.length === 0) return finish(reason === 'tool_calls' ? 'stop' : reason, text);

      // Every call of the step runs at once; results go back in the order the model asked.
      const results = await Promise.all(calls.map((call) => this.runCall(call, step, signal, channel)));
      steps.push(...results.map((r) => r.step));
      if (signal.aborted) return finish('aborted', '', { code: ERROR_CODES.ABORTED, message: 'the turn was cancelled' });
      for (const [index, call] of calls.entries())
        this.messages.push({ role: 'tool', toolCallId: call.id, content: results[index]!.content });
    }
  }

  private async runCall(
    call: ProviderToolCall,
    step: number,
    signal: AbortSignal,
    channel: EventChannel<AgentEvent>,
  ): Promise<{ content: string; step: ToolStep }> {
    const catalog = this.config.catalog();
    const isFind = call.name === FIND_TOOLS_NAME && this.view().large;
    const tool = isFind ? FIND_TOOLS_NAME : (catalog.fromModelToolName(call.name) ?? decodePlainModelToolName(call.name) ?? call.name);
    let args: unknown;
    let parseError: string | undefined;
    try {
      args = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
    } catch (error) {
      args = call.arguments;
      parseError = error instanceof Error ? error.message : String(error);
    }
    channel.push({ type: 'tool_started', callId: call.id, tool, args });
    const started = performance.now();
    let outcome: ToolOutcome;
    if (parseError !== undefined) {
      outcome = {
        ok: false,
        error: {
          code: ERROR_CODES.INPUT_INVALID,
          message: `the arguments are not valid JSON (${parseError}); send a JSON object matching the tool's schema`,
          retryable: false,
        },
      };
    } else if (isFind) {
      outcome = this.findTools(args, channel);
    } else {
      outcome = await this.config.runtime.invoke({ name: tool, input: args, callId: call.id }, { signal });
    }
    const durationMs = Math.round((performance.now() - started) * 1000) / 1000;
    const failure = outcome.ok ? undefined : outcome.error;
    const record: ToolStep = { tool, ok: outcome.ok, durationMs, step, ...(failure ? { code: failure.code } : {}) };
    channel.push({
      type: 'tool_ended',
      callId: call.id,
      tool,
      ok: outcome.ok,
      durationMs,
      ...(failure ? { code: failure.code, message: failure.message } : {}),
    });
    const text = outcome.ok
      ? typeof outcome.value === 'string'
        ? outcome.value
        : (JSON.stringify(outcome.value) ?? 'null')
      : JSON.stringify({ error: { code: failure!.code, message: failure!.message } });
    return { content: capText(text, this.config.maxToolOutputChars), step: record };
  }

  /** The large-catalog search tool: loads the best matches so the next step can call them. */
  private findTools(args: unknown, channel: EventChannel<AgentEvent>): ToolOutcome {
    const input = args as { query?: unknown; limit?: unknown } | null;
    const query = typeof input?.query === 'string' ? input.query.trim() : '';
    const limit = typeof input?.limit === 'number' && Number.isInteger(input.limit) ? Math.min(Math.max(input.limit, 1), 10) : 5;
    if (query === '')
      return { ok: false, error: { code: ERROR_CODES.INPUT_INVALID, message: 'query: a non-empty string is required', retryable: false } };
    const catalog = this.config.catalog();
    const hits = catalog.search(query, { limit });
    const fresh = hits.map((h) => h.name).filter((name) => !this.loaded.includes(name));
    this.loaded.push(...fresh);
    // Keep what was loaded within half the budget: the oldest loads go first.
    const room = Math.max(1, Math.floor(this.config.budget.maxTools / 2) - 1);
    if (this.loaded.length > room) this.loaded.splice(0, this.loaded.length - room);
    if (fresh.length > 0) channel.push({ type: 'tools_loaded', tools: fresh });
    return {
      ok: true,
      value: {
        loaded: hits.map((h) => ({ name: catalog.toModelToolName(h.name) ?? h.name, tool: h.name, description: h.description })),
        ...(hits.length === 0 ? { note: 'no tool matches; try other words' } : { note: 'these tools can be called from your next step' }),
      },
    };
  }

  /** Keeps the last `historyLimit` messages, cutting only before a user message so no tool result loses its call. */
  private trimHistory(): void {
    const limit = this.config.historyLimit;
    if (this.messages.length <= limit) return;
    let cut = this.messages.length - limit;
    while (cut < this.messages.length && this.messages[cut]!.role !== 'user') cut++;
    // A single turn longer than the limit is kept whole (from its user message) rather than broken.
    if (cut >= this.messages.length) {
      cut = this.messages.length - 1;
      while (cut > 0 && this.messages[cut]!.role !== 'user') cut--;
    }
    this.messages.splice(0, cut);
  }
}

function lastText(messages: readonly ChatMessage[], from: number): string {
  for (let i = messages.length - 1; i >= from; i--) {
    const m = messages[i]!;
    if (m.role === 'assistant' && m.content !== '') return m.content;
  }
  return '';
}

/** Cuts `text` to `max` characters, saying how much was left out. */
export function capText(text: string, max: number): string {
  if (text.length <= max) return text;
  const note = `\n…[cut: ${text.length - max} more characters; ask for less, e.g. a smaller range or limit]`;
  return text.slice(0, Math.max(0, max - note.length)) + note;
}
