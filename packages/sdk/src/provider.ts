import type { PluginContext } from './definePlugin.ts';

/** One tool call the model asked for. `name` is the model-API name the provider was given. */
export interface ProviderToolCall {
  /** The provider's id for the call; a tool result answers it by this id. */
  readonly id: string;
  readonly name: string;
  /** The arguments exactly as the model wrote them (JSON text, possibly invalid). */
  readonly arguments: string;
}

/** One message of a conversation, in the shape every chat-completions API shares. */
export type ChatMessage =
  | { readonly role: 'system'; readonly content: string }
  | { readonly role: 'user'; readonly content: string }
  | { readonly role: 'assistant'; readonly content: string; readonly toolCalls?: readonly ProviderToolCall[] }
  /** A tool's result (or its error, as text the model can act on), answering `toolCallId`. */
  | { readonly role: 'tool'; readonly toolCallId: string; readonly content: string };

/**
 * A tool offered to the model, in the OpenAI function-tool shape: what
 * `ResourceCatalog.render('openai')` returns, so hosts pass the catalog's rendering straight through.
 */
export interface ProviderTool {
  readonly type: 'function';
  readonly function: {
    readonly name: string;
    readonly description: string;
    readonly parameters: Readonly<Record<string, unknown>>;
  };
}

/** Tokens (and money, when the provider reports it) one model request used. */
export interface ProviderUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly totalTokens: number;
  /** In the provider's billing unit (USD for OpenRouter), when the provider reports it. */
  readonly cost?: number;
}

/** Why the model stopped. `tool_calls`: it wants the calls run and their results sent back. */
export type FinishReason = 'stop' | 'tool_calls' | 'length' | 'content_filter' | 'other';

/** What a provider's stream yields, in order: text and tool calls as they arrive, then usage, then one `finish`. */
export type ProviderEvent =
  | { readonly type: 'text'; readonly delta: string }
  /** A complete tool call (the provider assembles streamed fragments before yielding it). */
  | { readonly type: 'tool_call'; readonly call: ProviderToolCall }
  | { readonly type: 'usage'; readonly usage: ProviderUsage }
  | { readonly type: 'finish'; readonly reason: FinishReason };

/** One model request: the conversation so far and the tools on offer. */
export interface ProviderRequest {
  readonly messages: readonly ChatMessage[];
  readonly tools: readonly ProviderTool[];
  /** Aborting it ends the request; the stream then throws a `ProviderError` with code `ABORTED`. */
  readonly signal: AbortSignal;
}

/** A model behind an API. Instances are created by a provider plugin's `create`. */
export interface Provider {
  /** The model requests go to, for logs and `--json` output. */
  readonly model: string;
  /**
   * Streams one assistant turn. Expected failures (HTTP errors after retries, a mid-stream error
   * event, an abort) make the iterator throw a `ProviderError`.
   */
  stream(request: ProviderRequest): AsyncIterable<ProviderEvent>;
}

/** What a provider plugin exports as `definePlugin({ provider })`. */
export interface ProviderDefinition<Settings = unknown> {
  /** Builds the provider from the plugin's resolved settings and environment. Throw a `ProviderError` to refuse. */
  create(ctx: PluginContext<Settings>): Provider | Promise<Provider>;
}

/** A provider's failure, thrown by `Provider.stream`. */
export class ProviderError extends Error {
  /** A stable code from `ERROR_CODES` (`PROVIDER_*`, `ABORTED`). */
  readonly code: string;
  /** The HTTP status, when the failure came with one. */
  readonly status: number | undefined;
  /** True when the same request may succeed later (after the provider's own retries ran out). */
  readonly retryable: boolean;

  constructor(code: string, message: string, options: { status?: number; retryable?: boolean; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ProviderError';
    this.code = code;
    this.status = options.status;
    this.retryable = options.retryable ?? false;
  }
}

/** True for a `ProviderError`, including one from another copy of the sdk. */
export function isProviderError(value: unknown): value is ProviderError {
  return (
    value instanceof ProviderError ||
    (typeof value === 'object' &&
      value !== null &&
      (value as { name?: unknown }).name === 'ProviderError' &&
      typeof (value as { code?: unknown }).code === 'string')
  );
}
