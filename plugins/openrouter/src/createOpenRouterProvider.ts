import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError, OpenAI } from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import {
  ERROR_CODES,
  ProviderError,
  type ChatMessage,
  type FinishReason,
  type Provider,
  type ProviderEvent,
  type ProviderRequest,
  type ProviderUsage,
} from '@trellis/sdk';
import type { OpenRouterSettings } from './settings.ts';

/** Options of {@link createOpenRouterProvider}. */
export interface CreateOpenRouterProviderOptions {
  readonly settings: OpenRouterSettings;
  readonly apiKey: string;
  /** A fetch to use instead of the global one (tests, proxies). */
  readonly fetch?: typeof fetch;
}

/** A provider for any OpenAI-compatible chat-completions endpoint, OpenRouter by default. */
export function createOpenRouterProvider(options: CreateOpenRouterProviderOptions): Provider {
  const { settings } = options;
  const client = new OpenAI({
    apiKey: options.apiKey,
    baseURL: settings.base_url,
    timeout: settings.timeout_seconds * 1000,
    maxRetries: settings.max_retries,
    defaultHeaders: {
      'HTTP-Referer': settings.app_url,
      'X-OpenRouter-Title': settings.app_name,
      'X-Title': settings.app_name,
      ...settings.headers,
    },
    logLevel: 'off',
    ...(options.fetch !== undefined ? { fetch: options.fetch } : {}),
  });
  return {
    model: settings.model,
    stream: (request) => streamTurn(client, settings, request),
  };
}

async function* streamTurn(client: OpenAI, settings: OpenRouterSettings, request: ProviderRequest): AsyncGenerator<ProviderEvent> {
  const body: ChatCompletionCreateParamsStreaming = {
    model: settings.model,
    messages: request.messages.map(toOpenAiMessage),
    stream: true,
    stream_options: { include_usage: true },
    ...(request.tools.length > 0
      ? { tools: request.tools as ChatCompletionCreateParamsStreaming['tools'], parallel_tool_calls: true }
      : {}),
    ...(settings.temperature !== undefined ? { temperature: settings.temperature } : {}),
    ...(settings.max_tokens !== undefined ? { max_tokens: settings.max_tokens } : {}),
  };
  // Tool calls arrive as fragments keyed by index; each is complete once the choice finishes.
  const calls = new Map<number, { id: string; name: string; arguments: string }>();
  let finish: FinishReason | undefined;
  let usage: ProviderUsage | undefined;
  try {
    const stream = await client.chat.completions.create(body, { signal: request.signal });
    for await (const chunk of stream) {
      if (chunk.usage) usage = toUsage(chunk.usage);
      const choice = chunk.choices?.[0];
      if (choice === undefined) continue;
      const delta = choice.delta;
      if (typeof delta?.content === 'string' && delta.content.length > 0) yield { type: 'text', delta: delta.content };
      for (const fragment of delta?.tool_calls ?? []) {
        const current = calls.get(fragment.index) ?? { id: '', name: '', arguments: '' };
        if (fragment.id) current.id = fragment.id;
        if (fragment.function?.name) current.name += fragment.function.name;
        if (fragment.function?.arguments) current.arguments += fragment.function.arguments;
        calls.set(fragment.index, current);
      }
      if (choice.finish_reason) finish = toFinishReason(choice.finish_reason);
    }
  } catch (error) {
    throw toProviderError(error, settings, request.signal);
  }
  // The client ends a stream quietly when its signal aborts; a cancelled turn must not look finished.
  if (request.signal.aborted) throw new ProviderError(ERROR_CODES.ABORTED, 'the model request was cancelled');
  const ordered = [...calls.entries()].sort((a, b) => a[0] - b[0]);
  for (const [index, call] of ordered) {
    if (call.name === '') {
      throw new ProviderError(
        ERROR_CODES.PROVIDER_PROTOCOL,
        `${settings.base_url} streamed tool call #${index} without a function name; the model or endpoint is broken, try another model`,
      );
    }
    yield { type: 'tool_call', call: { id: call.id || `call_${index}`, name: call.name, arguments: call.arguments } };
  }
  if (usage !== undefined) yield { type: 'usage', usage };
  yield { type: 'finish', reason: finish ?? (ordered.length > 0 ? 'tool_calls' : 'stop') };
}

function toOpenAiMessage(message: ChatMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
    case 'user':
      return { role: message.role, content: message.content };
    case 'assistant':
      return message.toolCalls !== undefined && message.toolCalls.length > 0
        ? {
            role: 'assistant',
            content: message.content === '' ? null : message.content,
            tool_calls: message.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
          }
        : { role: 'assistant', content: message.content };
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  }
}

function toUsage(usage: NonNullable<ChatCompletionChunk['usage']>): ProviderUsage {
  // OpenRouter adds `cost` (credits, i.e. USD) to the usage object.
  const cost = (usage as { cost?: unknown }).cost;
  return {
    inputTokens: usage.prompt_tokens ?? 0,
    outputTokens: usage.completion_tokens ?? 0,
    totalTokens: usage.total_tokens ?? (usage.prompt_tokens ?? 0) + (usage.completion_tokens ?? 0),
    ...(typeof cost === 'number' && Number.isFinite(cost) ? { cost } : {}),
  };
}

function toFinishReason(reason: string): FinishReason {
  return reason === 'stop' || reason === 'tool_calls' || reason === 'length' || reason === 'content_filter' ? reason : 'other';
}

function describeBody(error: APIError): string {
  const inner = error.error as { message?: unknown } | undefined;
  const text = typeof inner?.message === 'string' ? inner.message : error.message;
  return text.replace(/\s+/g, ' ').slice(0, 300);
}

/** Maps what the openai client throws to a `ProviderError` that says what happened and what to do. */
function toProviderError(error: unknown, settings: OpenRouterSettings, signal: AbortSignal): ProviderError {
  const where = settings.base_url;
  if (error instanceof ProviderError) return error;
  if (error instanceof APIUserAbortError || signal.aborted)
    return new ProviderError(ERROR_CODES.ABORTED, 'the model request was cancelled');
  if (error instanceof APIConnectionTimeoutError) {
    return new ProviderError(
      ERROR_CODES.PROVIDER_FAILED,
      `${where} did not answer within timeout_seconds = ${settings.timeout_seconds} (after ${settings.max_retries} retries); raise [plugins.entries.openrouter.config] timeout_seconds or check the endpoint`,
      { retryable: true, cause: error },
    );
  }
  if (error instanceof APIConnectionError) {
    return new ProviderError(
      ERROR_CODES.PROVIDER_FAILED,
      `cannot reach ${where} (after ${settings.max_retries} retries): ${error.message}; check [plugins.entries.openrouter.config] base_url and the network`,
      { retryable: true, cause: error },
    );
  }
  if (error instanceof APIError) {
    const status = error.status;
    const detail = describeBody(error);
    if (status === undefined) {
      return new ProviderError(ERROR_CODES.PROVIDER_FAILED, `${where} reported an error mid-stream: ${detail}`, {
        retryable: true,
        cause: error,
      });
    }
    if (status === 401 || status === 403) {
      return new ProviderError(
        ERROR_CODES.PROVIDER_AUTH,
        `${where} refused the API key (HTTP ${status}: ${detail}); check OPENROUTER_API_KEY`,
        { status, cause: error },
      );
    }
    if (status === 402) {
      return new ProviderError(
        ERROR_CODES.PROVIDER_PAYMENT_REQUIRED,
        `${where} needs payment (HTTP 402: ${detail}); add credits to the account or pick a cheaper or free model`,
        { status, cause: error },
      );
    }
    if (status === 429) {
      return new ProviderError(
        ERROR_CODES.PROVIDER_RATE_LIMITED,
        `${where} is rate-limiting (HTTP 429: ${detail}) after ${settings.max_retries} retries; wait and try again, or raise max_retries`,
        { status, retryable: true, cause: error },
      );
    }
    return new ProviderError(
      ERROR_CODES.PROVIDER_FAILED,
      `${where} answered HTTP ${status}: ${detail}${status >= 500 || status === 408 ? ` (after ${settings.max_retries} retries)` : ''}`,
      { status, retryable: status >= 500 || status === 408, cause: error },
    );
  }
  if (error instanceof SyntaxError) {
    return new ProviderError(
      ERROR_CODES.PROVIDER_PROTOCOL,
      `${where} streamed something that is not JSON (${error.message}); is base_url an OpenAI-compatible /v1 endpoint?`,
      { cause: error },
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  return new ProviderError(ERROR_CODES.PROVIDER_FAILED, `the request to ${where} failed: ${message}`, { cause: error });
}
