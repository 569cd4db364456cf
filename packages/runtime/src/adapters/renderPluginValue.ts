import { failOutcome, isHostReservedCode } from '@trellis/sdk';
import { nestsDeeperThan } from '@trellis/sdk/internal';
import type { ToolOutcome } from '@trellis/sdk';

/** A plugin's error value nesting deeper than this is refused rather than written into a message (64 levels). */
export const MAX_RENDERED_DEPTH = 64;
/** Characters of a plugin value shown in a diagnostic (a log line, a "got …" in a message). */
export const PREVIEW_CHARS = 120;

/** The JSON text of a plugin-supplied value, or why it cannot be put into a message. */
export type RenderedValue = { readonly ok: true; readonly text: string } | { readonly ok: false; readonly problem: string };

/**
 * The whole JSON text of a value a plugin sent (its `error`), for the message the caller sees.
 * Never throws: a value nesting deeper than `MAX_RENDERED_DEPTH` levels (which would overflow
 * `JSON.stringify`'s stack inside a stream listener) or one `JSON.stringify` refuses comes back
 * as a `problem` phrased to follow "the value", e.g. "nests deeper than 64 levels".
 */
export function renderPluginValue(value: unknown): RenderedValue {
  try {
    if (nestsDeeperThan(value, MAX_RENDERED_DEPTH)) return { ok: false, problem: `nests deeper than ${MAX_RENDERED_DEPTH} levels` };
    return { ok: true, text: JSON.stringify(value) ?? String(value) };
  } catch (error) {
    return { ok: false, problem: `cannot be written as JSON (${error instanceof Error ? error.message : String(error)})` };
  }
}

function scalarJson(value: unknown, maxChars: number): string {
  if (typeof value === 'string') return JSON.stringify(value.length > maxChars ? value.slice(0, maxChars) : value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return JSON.stringify(value);
  return typeof value === 'bigint' ? String(value) : 'null';
}

interface Frame {
  readonly container: readonly unknown[] | Readonly<Record<string, unknown>>;
  /** The object's keys; undefined for an array. */
  readonly keys: readonly string[] | undefined;
  index: number;
}

/**
 * The first `maxChars` characters of a plugin value's JSON text, then `…` if there is more: for
 * diagnostics about a reply of any size or depth. Written iteratively and only as far as shown,
 * so it never throws and costs the same for a 10 MiB or a 100 000-level reply. Meant for values
 * from `JSON.parse` (`toJSON` is not called).
 */
export function previewPluginValue(value: unknown, maxChars = PREVIEW_CHARS): string {
  try {
    let out = '';
    const stack: Frame[] = [];
    let next: unknown = value;
    let hasNext = true;
    while (out.length <= maxChars) {
      if (hasNext) {
        hasNext = false;
        if (Array.isArray(next)) {
          out += '[';
          stack.push({ container: next, keys: undefined, index: 0 });
        } else if (typeof next === 'object' && next !== null) {
          out += '{';
          stack.push({ container: next as Record<string, unknown>, keys: Object.keys(next), index: 0 });
        } else {
          out += scalarJson(next, maxChars);
        }
        continue;
      }
      const top = stack.at(-1);
      if (top === undefined) break;
      const size = top.keys ? top.keys.length : (top.container as readonly unknown[]).length;
      if (top.index >= size) {
        out += top.keys ? '}' : ']';
        stack.pop();
        continue;
      }
      if (top.index > 0) out += ',';
      if (top.keys) {
        const key = top.keys[top.index]!;
        out += `${scalarJson(key, maxChars)}:`;
        next = (top.container as Readonly<Record<string, unknown>>)[key];
      } else {
        next = (top.container as readonly unknown[])[top.index];
      }
      top.index += 1;
      hasNext = true;
    }
    return out.length > maxChars ? `${out.slice(0, maxChars)}…` : out;
  } catch {
    return '(a value that cannot be shown)';
  }
}

/** A plugin's reported `error` as message text: a string as it is, anything else as JSON (see `renderPluginValue`). */
export function renderPluginError(error: unknown): RenderedValue {
  return typeof error === 'string' ? { ok: true, text: error } : renderPluginValue(error ?? 'no message');
}

/**
 * The outcome of a call the plugin reported as failed: `code` with `<name> failed: <its error>`,
 * or PROTOCOL_ERROR (`<valueLead> <problem>; answer with …`) when its error value cannot be
 * written into a message. Shared by the process and HTTP adapters.
 */
export function pluginFailure(options: {
  code: string;
  error: unknown;
  name: string;
  valueLead: string;
  retryable?: boolean;
}): ToolOutcome {
  const text = renderPluginError(options.error);
  if (text.ok && isHostReservedCode(options.code)) {
    // A plugin may not speak for the host: its POLICY_DENIED or TIMEOUT is its own failure.
    return failOutcome(
      'PLUGIN_ERROR',
      `${options.name} failed with code ${options.code}, which only the host may report, so it is shown as PLUGIN_ERROR: ${text.text}`,
      options.retryable ?? false,
    );
  }
  if (text.ok) return failOutcome(options.code, `${options.name} failed: ${text.text}`, options.retryable ?? false);
  return failOutcome('PROTOCOL_ERROR', `${options.valueLead} ${text.problem}; answer with a string or a {"code","message"} object`);
}
