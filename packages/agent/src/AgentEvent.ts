import type { FinishReason, ProviderUsage } from '@trellis/sdk';

/** Tokens and cost of a whole turn, summed over its model requests. */
export interface TurnUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly totalTokens: number;
  /** Summed from the requests that reported one; absent when none did. */
  readonly cost?: number;
  /** Model requests made (one per step). */
  readonly requests: number;
}

/** One tool call of a turn, as `--json` and embedders see it. */
export interface ToolStep {
  /** Fully qualified tool name, or the name the model used when it matches no tool. */
  readonly tool: string;
  readonly ok: boolean;
  readonly durationMs: number;
  /** The step (model request, counting from 1) that asked for the call. */
  readonly step: number;
  /** The failure's code when `ok` is false. */
  readonly code?: string;
}

/** How a turn ended. */
export type TurnFinishReason = FinishReason | 'max_steps' | 'aborted' | 'error';

/** What a turn resolves to. A failed or cancelled turn is data, never a rejection. */
export interface TurnResult {
  /** The assistant's final text (what it wrote after its last tool call). */
  readonly reply: string;
  readonly finishReason: TurnFinishReason;
  readonly steps: readonly ToolStep[];
  readonly usage: TurnUsage;
  readonly model: string;
  /** Present when `finishReason` is `error` (the provider failed) or `aborted`. */
  readonly error?: { readonly code: string; readonly message: string };
}

/** What a turn streams, in order. Every `tool_started` is followed by its `tool_ended`. */
export type AgentEvent =
  | { readonly type: 'step_started'; readonly step: number }
  | { readonly type: 'text'; readonly delta: string }
  | {
      readonly type: 'tool_started';
      readonly callId: string;
      readonly tool: string;
      /** The arguments as parsed from the model's JSON (the raw text when it is not JSON). */
      readonly args: unknown;
    }
  | {
      readonly type: 'tool_ended';
      readonly callId: string;
      readonly tool: string;
      readonly ok: boolean;
      readonly durationMs: number;
      readonly code?: string;
      readonly message?: string;
    }
  /** Large catalogs: the model searched and these tools were added to what it sees. */
  | { readonly type: 'tools_loaded'; readonly tools: readonly string[] }
  | { readonly type: 'usage'; readonly usage: ProviderUsage; readonly total: TurnUsage }
  | { readonly type: 'turn_ended'; readonly result: TurnResult };
