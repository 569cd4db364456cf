import { ERROR_CODES, isToolError, type ToolFailure } from '@trellis/sdk';

const CODE_PATTERN = /^[A-Z][A-Z0-9_]*$/;
const MAX_DESCRIBED = 200;

/**
 * Turns whatever a tool threw (or a promise rejected with) into a failure a model can read.
 * A `ToolError` keeps its code (`TOOL_FAILED` when the code is not SCREAMING_SNAKE) and
 * `retryable`; any other `Error` and any non-Error value becomes `TOOL_THREW`.
 */
export function failureFromThrown(thrown: unknown, tool: string): ToolFailure {
  if (isToolError(thrown)) {
    const code = typeof thrown.code === 'string' && CODE_PATTERN.test(thrown.code) ? thrown.code : ERROR_CODES.TOOL_FAILED;
    return { code, message: String(thrown.message), retryable: thrown.retryable === true };
  }
  if (thrown instanceof Error) {
    return {
      code: ERROR_CODES.TOOL_THREW,
      message: `${tool} threw ${thrown.name}: ${thrown.message} (a bug in the tool; a tool reports failures with ToolError)`,
      retryable: false,
    };
  }
  return {
    code: ERROR_CODES.TOOL_THREW,
    message: `${tool} threw a non-Error value: ${describeValue(thrown)} (a bug in the tool; a tool reports failures with ToolError)`,
    retryable: false,
  };
}

/** A short, readable rendering of any value, for messages. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'undefined':
      return 'undefined';
    case 'string':
      return clip(JSON.stringify(value));
    case 'number':
    case 'boolean':
      return String(value);
    case 'bigint':
      return `${value}n`;
    case 'symbol':
      return value.toString();
    case 'function':
      return `a function${value.name ? ` (${value.name})` : ''}`;
    default: {
      try {
        const json = JSON.stringify(value);
        if (json !== undefined) return clip(json);
      } catch {
        // a cycle or a BigInt inside: fall back to the tag
      }
      return Object.prototype.toString.call(value);
    }
  }
}

function clip(text: string): string {
  return text.length > MAX_DESCRIBED ? `${text.slice(0, MAX_DESCRIBED)}…` : text;
}
