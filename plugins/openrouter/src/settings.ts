import { z } from 'zod';

/** OpenRouter's OpenAI-compatible endpoint, the default `base_url`. */
export const OPENROUTER_BASE_URL = 'https://openrouter.ai/api/v1';

/**
 * `[plugins.entries.openrouter.config]` (or `[runtime.tools.openrouter]`). Every key has a default,
 * so an empty table works once `OPENROUTER_API_KEY` is set.
 */
export const OpenRouterSettingsSchema = z
  .object({
    /** Any OpenAI-compatible chat-completions endpoint: OpenRouter, a local llama.cpp / vLLM / Ollama server… */
    base_url: z
      .string()
      .max(2048)
      .regex(/^https?:\/\/[^\s/?#]+\S*$/, 'must be an http:// or https:// URL')
      .default(OPENROUTER_BASE_URL),
    /** The model id as the endpoint knows it. */
    model: z.string().min(1).max(256).default('openrouter/auto'),
    /** Sampling temperature; the endpoint's default when absent. */
    temperature: z.number().min(0).max(2).optional(),
    /** Longest answer per model request, in tokens; the endpoint's default when absent. */
    max_tokens: z.number().int().positive().max(1_000_000).optional(),
    /** Extra HTTP headers on every request; they override the attribution headers. */
    headers: z
      .record(
        z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/),
        // A line break would fail every request with an error that prints the value, which may be a secret.
        z
          .string()
          .max(4096)
          .refine((value) => !/\p{Cc}/u.test(value), 'must not contain line breaks or control characters'),
      )
      .default({}),
    /**
     * The longest silence of the endpoint, in seconds: before the response headers (each try), then
     * between two chunks of the streamed answer. A request that waits longer fails.
     */
    timeout_seconds: z.number().positive().max(3600).default(120),
    /**
     * Extra tries after 408, 409, 429 and 5xx answers or connection errors and timeouts, before the answer
     * starts; waits what Retry-After asks up to 10 s (more fails at once), else 0.5 s doubling to 8 s.
     * 402 is never retried.
     */
    max_retries: z.number().int().min(0).max(10).default(2),
    /** Sent as `HTTP-Referer`, OpenRouter's app attribution. */
    app_url: z.string().min(1).max(2048).default('https://github.com/trellis'),
    /** Sent as `X-OpenRouter-Title` (and the older `X-Title`), OpenRouter's app attribution. */
    app_name: z.string().min(1).max(256).default('Trellis'),
  })
  .strict();

/** The openrouter plugin's resolved settings. */
export type OpenRouterSettings = z.infer<typeof OpenRouterSettingsSchema>;
