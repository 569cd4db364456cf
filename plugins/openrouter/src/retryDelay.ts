import { APIConnectionError, APIError } from 'openai';

/** The longest wait between tries; an endpoint that asks for more fails the request at once. */
export const MAX_RETRY_WAIT_MS = 10_000;

/**
 * How long to wait before trying `error`'s request again (the `attempt`-th retry, from 1), or
 * undefined when it would fail the same way: retried are connection errors and timeouts, 408, 409,
 * 429 and 5xx. The wait is what `retry-after-ms` or `Retry-After` asks, else 0.5 s doubling to 8 s.
 */
export function retryDelayMs(error: unknown, attempt: number): number | undefined {
  // Up to a quarter less, so clients that failed together do not all come back together.
  const backoff = Math.min(500 * 2 ** (attempt - 1), 8_000) * (1 - Math.random() * 0.25);
  if (error instanceof APIConnectionError) return backoff;
  if (!(error instanceof APIError)) return undefined;
  // A cancelled request (APIUserAbortError) and an error event mid-stream have no status.
  const status = error.status;
  if (status === undefined || !(status === 408 || status === 409 || status === 429 || status >= 500)) return undefined;
  return retryAfterMs(error.headers) ?? backoff;
}

function retryAfterMs(headers: Headers | undefined): number | undefined {
  const ms = toNumber(headers?.get('retry-after-ms'));
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers?.get('retry-after') ?? '';
  const seconds = toNumber(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  // Or an HTTP date.
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

const toNumber = (value: string | null | undefined): number => (value == null || value.trim() === '' ? Number.NaN : Number(value));
