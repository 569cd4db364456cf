import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { ERROR_CODES, ProviderError } from '@trellis/sdk';
import { MAX_RETRY_WAIT_MS } from './retryDelay.ts';
import type { OpenRouterSettings } from './settings.ts';

/** What {@link toProviderError} needs besides the error. */
export interface ErrorContext {
  readonly settings: OpenRouterSettings;
  /** The turn's signal: once aborted, any failure is `ABORTED`. */
  readonly signal: AbortSignal;
  /** Blanks secrets out of text (see `createRedactor`). */
  readonly redact: (text: string) => string;
}

/**
 * Maps what the openai client throws to a `ProviderError` that says what happened and what to do,
 * with the key and any bearer token blanked out. An HTTP error keeps no `cause`: the response it
 * holds may echo the key.
 */
export function toProviderError(error: unknown, context: ErrorContext): ProviderError {
  const mapped = mapError(error, context);
  const message = context.redact(mapped.message);
  if (message === mapped.message) return mapped;
  return new ProviderError(mapped.code, message, { status: mapped.status, retryable: mapped.retryable });
}

function mapError(error: unknown, { settings, signal, redact }: ErrorContext): ProviderError {
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
    const detail = describeBody(error, redact);
    if (status === undefined) {
      return new ProviderError(ERROR_CODES.PROVIDER_FAILED, `${where} reported an error mid-stream: ${detail}`, { retryable: true });
    }
    if (status === 401 || status === 403) {
      return new ProviderError(
        ERROR_CODES.PROVIDER_AUTH,
        `${where} refused the API key (HTTP ${status}: ${detail}); check OPENROUTER_API_KEY`,
        {
          status,
        },
      );
    }
    if (status === 402) {
      return new ProviderError(
        ERROR_CODES.PROVIDER_PAYMENT_REQUIRED,
        `${where} needs payment (HTTP 402: ${detail}); add credits to the account or pick a cheaper or free model`,
        { status },
      );
    }
    if (status === 429) {
      return new ProviderError(
        ERROR_CODES.PROVIDER_RATE_LIMITED,
        `${where} is rate-limiting (HTTP 429: ${detail}) after ${settings.max_retries} retries; wait and try again, or raise max_retries`,
        { status, retryable: true },
      );
    }
    return new ProviderError(
      ERROR_CODES.PROVIDER_FAILED,
      `${where} answered HTTP ${status}: ${detail}${status >= 500 || status === 408 ? ` (after ${settings.max_retries} retries)` : ''}`,
      { status, retryable: status >= 500 || status === 408 },
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

/**
 * The error text of an HTTP error answer, on one line and short: redacted before it is cut to 300
 * characters (a cut key would slip through), but only its first 8 KiB, so a huge body costs no more.
 */
export function describeBody(error: APIError, redact: (text: string) => string): string {
  const inner = error.error as { message?: unknown } | undefined;
  const text = typeof inner?.message === 'string' ? inner.message : error.message;
  return redact(text.slice(0, 8192)).replace(/\s+/g, ' ').slice(0, 300);
}

/** The stream went quiet for longer than `timeout_seconds` after its headers. */
export function stalledError(settings: OpenRouterSettings): ProviderError {
  return new ProviderError(
    ERROR_CODES.PROVIDER_FAILED,
    `${settings.base_url} stopped sending its answer for longer than timeout_seconds = ${settings.timeout_seconds}; raise [plugins.entries.openrouter.config] timeout_seconds if the model is that slow, or check the endpoint`,
    { retryable: true },
  );
}

/** The endpoint asked (`Retry-After`) to wait `waitMs` before the next try, longer than `MAX_RETRY_WAIT_MS`. */
export function waitTooLongError(error: APIError, options: { waitMs: number } & Omit<ErrorContext, 'signal'>): ProviderError {
  const status = error.status;
  return new ProviderError(
    status === 429 ? ERROR_CODES.PROVIDER_RATE_LIMITED : ERROR_CODES.PROVIDER_FAILED,
    `${options.settings.base_url} ${status === 429 ? 'is rate-limiting' : 'answered'} (HTTP ${status}: ${describeBody(error, options.redact)}) and asks to wait ${Math.ceil(options.waitMs / 1000)} s before the next try (Retry-After), longer than the ${MAX_RETRY_WAIT_MS / 1000} s Trellis waits; try again later`,
    { status, retryable: true },
  );
}

/** A 200 whose body held no chat-completions answer: an HTML page, a JSON completion, an empty stream. */
export function notAStreamError(settings: OpenRouterSettings, response: Response): ProviderError {
  return new ProviderError(
    ERROR_CODES.PROVIDER_PROTOCOL,
    `${settings.base_url} did not answer as an OpenAI-compatible chat-completions stream (HTTP ${response.status}, content-type ${response.headers.get('content-type') ?? 'none'}, no choice and no finish_reason); check [plugins.entries.openrouter.config] base_url: it should be the endpoint's /v1 URL`,
    { status: response.status },
  );
}
