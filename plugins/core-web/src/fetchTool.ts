import { z } from 'zod';
import { defineTool } from '@trellis/sdk';
import type { ToolDefinition } from '@trellis/sdk';
import { checkUrl } from './checkUrl.ts';
import { fetchUrl, systemResolveHost } from './fetchUrl.ts';
import type { ResolveHost } from './fetchUrl.ts';
import { renderBody } from './renderBody.ts';
import type { WebSettings } from './WebSettingsSchema.ts';

/** Input of `core-web.fetch`. */
export const FetchInputSchema = z
  .object({
    url: z
      .string()
      .min(1)
      .max(8192)
      .regex(/^[Hh][Tt][Tt][Pp][Ss]?:\/\//, 'an absolute http:// or https:// URL')
      .describe(
        'Absolute http:// or https:// URL of a public web page or API. Private, loopback and cloud-metadata addresses are refused.',
      ),
    format: z
      .enum(['text', 'markdown'])
      .optional()
      .describe(
        'How HTML pages come back: "text" (default) is plain readable text with links as [url]; "markdown" keeps headings, links, lists, emphasis and code blocks. Ignored for non-HTML responses.',
      ),
  })
  .strict();

/** Input of `core-web.fetch`. */
export type FetchInput = z.infer<typeof FetchInputSchema>;

/** What `core-web.fetch` returns. */
export interface FetchResult {
  /** HTTP status of the final response (4xx and 5xx are returned too, with their body). */
  readonly status: number;
  /** The URL after redirects. */
  readonly final_url: string;
  readonly content_type: string | null;
  /** The body as text: HTML converted, JSON pretty-printed, other text as is, binary summarized. */
  readonly text: string;
  /** True when the body exceeded max_bytes or the text exceeded max_text_chars and was cut. */
  readonly truncated: boolean;
  /** URLs that redirected to the next one, in order; empty when there was no redirect. */
  readonly redirects: readonly string[];
}

/**
 * Where to cut `text` so it holds at most `maxChars` characters as JSON sends them: a control
 * character (other than tab, newline, carriage return) goes out as a six-character `\u0000` escape
 * and counts six. Without this, 200 000 NUL bytes of a "text/plain" body became 1.2 MB of JSON and
 * failed the whole call with OUTPUT_TOO_LARGE instead of being cut like any other long body.
 */
export function textCut(text: string, maxChars: number): number {
  if (text.length * 6 <= maxChars) return text.length;
  let budget = maxChars;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    budget -= code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d ? 6 : 1;
    if (budget < 0) return i;
  }
  return text.length;
}

/** Options for `createFetchTool`. */
export interface CreateFetchToolOptions {
  /** How host names are resolved; tests inject one. Default: the system resolver. */
  readonly resolveHost?: ResolveHost;
  /** Trusted CA certificates (PEM) replacing Node's bundled ones; for tests and private PKI. */
  readonly tlsCa?: string;
}

/** Builds `core-web.fetch`. The plugin uses the default; tests inject a resolver. */
export function createFetchTool(options: CreateFetchToolOptions = {}): ToolDefinition<FetchInput, FetchResult, WebSettings> {
  const resolveHost = options.resolveHost ?? systemResolveHost;
  return defineTool<FetchInput, FetchResult, WebSettings>({
    name: 'fetch',
    description:
      'Fetch one http(s) URL with GET and return its content as text: HTML pages become readable text (or Markdown), ' +
      'JSON is pretty-printed, other text is returned as is, and binary files (images, PDFs, archives) are only ' +
      'summarized by type and size. Use it to read a web page or call a public JSON API whose URL you know. ' +
      'Follows up to 5 redirects. Limits: only public internet addresses (private, loopback, link-local and ' +
      'cloud-metadata targets are refused), a time limit (default 20 s) and a size limit (default 2 MiB of body, ' +
      '200 000 characters of text; longer content is cut and "truncated" is true). No cookies, no JavaScript, no POST.',
    input: FetchInputSchema,
    contract: {
      sideEffects: false,
      idempotent: true,
      capabilities: ['net.outbound'],
      sandbox: 'no-isolation',
      // timeout_seconds (at most 300) governs; this is only the runtime's backstop.
      deadlineMs: 305_000,
      maxRetries: 1,
      // HTML to text grows with the page (400 000 nested <div> took 88 s): off the host thread, killed at the deadline.
      isolation: 'worker',
    },
    tags: ['web', 'http', 'fetch', 'url'],
    examples: [
      { description: 'Read a web page as text', input: { url: 'https://example.com/' } },
      { description: 'Read a page keeping its structure', input: { url: 'https://example.com/docs', format: 'markdown' } },
    ],
    canonicalize(input, ctx) {
      const url = checkUrl(input.url, ctx.config);
      return { input: { ...input, url: url.href }, summary: { url: url.href, host: url.host, format: input.format ?? 'text' } };
    },
    async run(input, ctx) {
      const settings = ctx.config;
      const response = await fetchUrl({ url: input.url, settings, resolveHost, signal: ctx.signal, tlsCa: options.tlsCa });
      const rendered =
        response.unsupportedEncoding === undefined
          ? renderBody({
              bytes: response.body,
              contentType: response.contentType,
              truncated: response.truncated,
              format: input.format ?? 'text',
              declaredLength: response.declaredLength,
              baseUrl: response.finalUrl,
            })
          : { text: `[content encoded with "${response.unsupportedEncoding}", which core-web cannot decode; not shown.]` };
      const end = textCut(rendered.text, settings.max_text_chars);
      return {
        status: response.status,
        final_url: response.finalUrl,
        content_type: response.contentType ?? null,
        text: end < rendered.text.length ? rendered.text.slice(0, end) : rendered.text,
        truncated: response.truncated || end < rendered.text.length,
        redirects: response.chain.slice(0, -1),
      };
    },
  });
}

/** `core-web.fetch` with the system resolver. */
export const fetchTool = createFetchTool();
