import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { APIError, OpenAI } from 'openai';
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
  type ProviderToolCall,
  type ProviderUsage,
} from '@trellis/sdk';
import { checkApiKey } from './checkApiKey.ts';
import { createRedactor } from './createRedactor.ts';
import { MAX_RETRY_WAIT_MS, retryDelayMs } from './retryDelay.ts';
import type { OpenRouterSettings } from './settings.ts';
import { ToolCallAssembler } from './ToolCallAssembler.ts';
import { notAStreamError, stalledError, toProviderError, waitTooLongError, type ErrorContext } from './toProviderError.ts';

/** Options of {@link createOpenRouterProvider}. */
export interface CreateOpenRouterProviderOptions {
  readonly settings: OpenRouterSettings;
  /** Refused (`PROVIDER_UNAVAILABLE`) when an HTTP header cannot carry it. */
  readonly apiKey: string;
  /** A fetch to use instead of the global one (tests, proxies). */
  readonly fetch?: typeof fetch;
}

/** A provider for any OpenAI-compatible chat-completions endpoint, OpenRouter by default. */
export function createOpenRouterProvider(options: CreateOpenRouterProviderOptions): Provider {
  const { settings } = options;
  checkApiKey(options.apiKey);
  const client = new OpenAI({
    apiKey: options.apiKey,
    baseURL: settings.base_url,
    // The client's timeout ends at the response headers; streamTurn bounds each wait for a chunk after them.
    timeout: Math.ceil(settings.timeout_seconds * 1000),
    // streamTurn retries: the client would sleep as long as Retry-After says, deaf to the turn's signal.
    maxRetries: 0,
    defaultHeaders: {
      'HTTP-Referer': settings.app_url,
      'X-OpenRouter-Title': settings.app_name,
      'X-Title': settings.app_name,
      ...settings.headers,
    },
    logLevel: 'off',
    ...(options.fetch !== undefined ? { fetch: options.fetch } : {}),
  });
  const redact = createRedactor(options.apiKey);
  return {
    model: settings.model,
    stream: (request) => streamTurn({ client, settings, redact }, request),
  };
}

interface StreamContext {
  readonly client: OpenAI;
  readonly settings: OpenRouterSettings;
  readonly redact: (text: string) => string;
}

async function* streamTurn(context: StreamContext, request: ProviderRequest): AsyncGenerator<ProviderEvent> {
  const { settings } = context;
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
  const errorContext: ErrorContext = { settings, signal: request.signal, redact: context.redact };
  // A controller per request, linked to the turn's signal and unlinked at the end: the client never
  // removes the listener it adds to the signal it is given, and a long turn would pile them up.
  // On this signal they are one per try (and one retry wait), which max_retries bounds.
  const controller = new AbortController();
  setMaxListeners(settings.max_retries + 2, controller.signal);
  const cancel = () => controller.abort();
  request.signal.addEventListener('abort', cancel, { once: true });
  if (request.signal.aborted) cancel();
  // Armed only while waiting on the endpoint, not while the consumer handles what was yielded.
  let idle: ReturnType<typeof setTimeout> | undefined;
  let stalled = false;
  const awaitChunk = () => {
    idle = setTimeout(() => {
      stalled = true;
      controller.abort();
    }, settings.timeout_seconds * 1000);
  };
  const calls = new ToolCallAssembler(settings.base_url);
  let finish: FinishReason | undefined;
  let usage: ProviderUsage | undefined;
  let sawText = false;
  let toolCalls: ProviderToolCall[];
  try {
    const { data: stream, response } = await openStream(context, body, controller.signal);
    awaitChunk();
    for await (const chunk of stream) {
      // A chunk that brings nothing (`{"choices":[]}`) is a keep-alive in effect: the deadline runs on.
      if (!isProgress(chunk)) continue;
      clearTimeout(idle);
      if (typeof chunk.usage === 'object' && chunk.usage !== null) usage = toUsage(chunk.usage);
      const choice = chunk.choices?.[0];
      const delta = choice?.delta;
      if (typeof delta?.content === 'string' && delta.content.length > 0) {
        sawText = true;
        yield { type: 'text', delta: delta.content };
      }
      if (Array.isArray(delta?.tool_calls)) for (const fragment of delta.tool_calls) calls.add(fragment);
      if (typeof choice?.finish_reason === 'string') finish = toFinishReason(choice.finish_reason);
      awaitChunk();
    }
    // The client ends a stream quietly when its signal aborts; a cancelled or stalled turn must not look finished.
    if (request.signal.aborted) throw new ProviderError(ERROR_CODES.ABORTED, 'the model request was cancelled');
    if (stalled) throw stalledError(settings);
    if (finish === undefined && !sawText && !calls.started) throw notAStreamError(settings, response);
    toolCalls = calls.calls();
  } catch (error) {
    throw toProviderError(stalled ? stalledError(settings) : error, errorContext);
  } finally {
    clearTimeout(idle);
    request.signal.removeEventListener('abort', cancel);
  }
  for (const call of toolCalls) yield { type: 'tool_call', call };
  if (usage !== undefined) yield { type: 'usage', usage };
  yield { type: 'finish', reason: finish ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop') };
}

/**
 * Sends the request and returns the response once its headers are in, trying again what may succeed
 * later (up to `max_retries`); every wait is at most `MAX_RETRY_WAIT_MS` and ends when `signal` aborts.
 */
async function openStream(context: StreamContext, body: ChatCompletionCreateParamsStreaming, signal: AbortSignal) {
  for (let retry = 1; ; retry += 1) {
    try {
      return await context.client.chat.completions.create(body, { signal }).withResponse();
    } catch (error) {
      const waitMs = retry > context.settings.max_retries ? undefined : retryDelayMs(error, retry);
      if (waitMs === undefined) throw error;
      if (waitMs > MAX_RETRY_WAIT_MS && error instanceof APIError) {
        throw waitTooLongError(error, { waitMs, settings: context.settings, redact: context.redact });
      }
      await sleep(waitMs, undefined, { signal });
    }
  }
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

/**
 * Whether a chunk moves the answer on: text (the reasoning of a thinking model included), a tool-call
 * fragment, a finish reason or usage. Only such a chunk restarts the `timeout_seconds` deadline.
 */
function isProgress(chunk: ChatCompletionChunk | null | undefined): chunk is ChatCompletionChunk {
  if (typeof chunk !== 'object' || chunk === null) return false;
  if (typeof chunk.usage === 'object' && chunk.usage !== null) return true;
  const choice = chunk.choices?.[0];
  // OpenRouter streams reasoning as `reasoning`; vLLM, llama.cpp and DeepSeek as `reasoning_content`.
  const delta = choice?.delta as (ChatCompletionChunk.Choice.Delta & { reasoning?: unknown; reasoning_content?: unknown }) | undefined;
  const hasText = (value: unknown) => typeof value === 'string' && value.length > 0;
  return (
    hasText(delta?.content) ||
    hasText(delta?.reasoning) ||
    hasText(delta?.reasoning_content) ||
    (Array.isArray(delta?.tool_calls) && delta.tool_calls.length > 0) ||
    typeof choice?.finish_reason === 'string'
  );
}

function toUsage(usage: NonNullable<ChatCompletionChunk['usage']>): ProviderUsage {
  const inputTokens = toCount(usage.prompt_tokens) ?? 0;
  const outputTokens = toCount(usage.completion_tokens) ?? 0;
  // OpenRouter adds `cost` (credits, i.e. USD) to the usage object.
  const cost = toCount((usage as { cost?: unknown }).cost);
  return {
    inputTokens,
    outputTokens,
    totalTokens: toCount(usage.total_tokens) ?? inputTokens + outputTokens,
    ...(cost !== undefined ? { cost } : {}),
  };
}

/** A usage figure the endpoint sent, when it is one: a finite number, not negative. */
function toCount(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

function toFinishReason(reason: string): FinishReason {
  return reason === 'stop' || reason === 'tool_calls' || reason === 'length' || reason === 'content_filter' ? reason : 'other';
}
