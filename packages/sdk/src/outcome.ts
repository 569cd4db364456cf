import type { ErrorCode } from './errorCodes.ts';

/** Why a tool call failed, in words a model can act on. */
export interface ToolFailure {
  /** A stable code from `ERROR_CODES`, or a plugin's own SCREAMING_SNAKE code. */
  readonly code: ErrorCode | (string & {});
  readonly message: string;
  /** True when the same call may succeed if tried again. */
  readonly retryable: boolean;
}

/** The result of every tool call. `ToolRuntime.invoke` always resolves to one of these. */
export type ToolOutcome<T = unknown> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: ToolFailure };

/** A successful outcome. */
export function okOutcome<T>(value: T): ToolOutcome<T> {
  return { ok: true, value };
}

/** A failed outcome. */
export function failOutcome(code: ToolFailure['code'], message: string, retryable = false): ToolOutcome<never> {
  return { ok: false, error: { code, message, retryable } };
}

/**
 * Thrown by a tool to report an expected failure with a precise code. Anything else a tool
 * throws becomes `TOOL_THREW`.
 */
export class ToolError extends Error {
  readonly code: ToolFailure['code'];
  readonly retryable: boolean;

  constructor(code: ToolFailure['code'], message: string, options: { retryable?: boolean; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ToolError';
    this.code = code;
    this.retryable = options.retryable ?? false;
  }
}

/** True for a `ToolError`, including one from another copy of the sdk. */
export function isToolError(value: unknown): value is ToolError {
  return (
    value instanceof ToolError ||
    (typeof value === 'object' &&
      value !== null &&
      (value as { name?: unknown }).name === 'ToolError' &&
      typeof (value as { code?: unknown }).code === 'string')
  );
}
