import { ERROR_CODES, ProviderError, type ProviderToolCall } from '@trellis/sdk';

/** One streamed tool-call fragment, as loosely as endpoints send it. */
export interface ToolCallFragment {
  readonly index?: unknown;
  readonly id?: unknown;
  readonly function?: { readonly name?: unknown; readonly arguments?: unknown } | null;
}

interface PartialCall {
  id: string;
  name: string;
  arguments: string;
}

/**
 * Assembles a response's streamed tool-call fragments into whole calls, in the order they started.
 * A fragment belongs to the call at its `index`; one without an index, to the call with its `id`,
 * else to the latest call. A new id at a taken index starts a new call (some servers give every
 * call index 0). Two calls with one id are refused: their results could not be told apart.
 */
export class ToolCallAssembler {
  readonly #calls: PartialCall[] = [];
  readonly #byIndex = new Map<number, PartialCall>();
  readonly #byId = new Map<string, PartialCall>();

  /** `where` (the base URL) names the endpoint in errors. */
  constructor(private readonly where: string) {}

  /** True once any fragment arrived. */
  get started(): boolean {
    return this.#calls.length > 0;
  }

  /** Adds one fragment; anything but an object counts as an empty one. */
  add(value: unknown): void {
    const fragment: ToolCallFragment = typeof value === 'object' && value !== null ? value : {};
    const index = typeof fragment.index === 'number' && Number.isInteger(fragment.index) ? fragment.index : undefined;
    const id = typeof fragment.id === 'string' && fragment.id !== '' ? fragment.id : undefined;
    const call = this.#callFor(index, id);
    if (id !== undefined && call.id === '') {
      if (this.#byId.has(id)) throw this.#broken(`streamed two tool calls with the id ${JSON.stringify(id)}`);
      call.id = id;
      this.#byId.set(id, call);
    }
    if (typeof fragment.function?.name === 'string') call.name += fragment.function.name;
    if (typeof fragment.function?.arguments === 'string') call.arguments += fragment.function.arguments;
  }

  /** The whole calls; throws when one has no name. */
  calls(): ProviderToolCall[] {
    return this.#calls.map((call, position) => {
      if (call.name === '') throw this.#broken(`streamed tool call #${position} without a function name`);
      return { id: call.id || `call_${position}`, name: call.name, arguments: call.arguments };
    });
  }

  #callFor(index: number | undefined, id: string | undefined): PartialCall {
    if (index !== undefined) {
      const current = this.#byIndex.get(index);
      if (current !== undefined && (id === undefined || current.id === '' || current.id === id)) return current;
      return this.#start(index);
    }
    if (id !== undefined) return this.#byId.get(id) ?? this.#start(undefined);
    const latest = this.#calls.at(-1);
    if (latest === undefined) throw this.#broken('streamed a tool-call fragment with neither an index nor an id before any tool call');
    return latest;
  }

  #start(index: number | undefined): PartialCall {
    const call: PartialCall = { id: '', name: '', arguments: '' };
    this.#calls.push(call);
    if (index !== undefined) this.#byIndex.set(index, call);
    return call;
  }

  #broken(what: string): ProviderError {
    return new ProviderError(ERROR_CODES.PROVIDER_PROTOCOL, `${this.where} ${what}; the model or endpoint is broken, try another model`);
  }
}
