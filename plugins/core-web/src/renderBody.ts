// html-to-text ships no types; the reference makes every program that compiles this file (the app too) see ours.
// eslint-disable-next-line @typescript-eslint/triple-slash-reference
/// <reference path="./html-to-text.d.ts" />
import { compile } from 'html-to-text';
import type { HtmlBuilder, HtmlElement, HtmlToTextOptions, HtmlWalk } from 'html-to-text';

/** How to render HTML: plain readable text, or Markdown (headings, links, lists, emphasis, code). */
export type TextFormat = 'text' | 'markdown';

const SKIPPED = [
  'script',
  'style',
  'noscript',
  'template',
  'svg',
  'canvas',
  'iframe',
  'object',
  'embed',
  'head',
  'button',
  'select',
  'input',
  'form',
];

const common: HtmlToTextOptions = {
  wordwrap: false,
  limits: { maxInputLength: 64 * 1024 * 1024, maxDepth: 200 },
};

/** A link target made absolute against the page URL; null for in-page, script and unparsable links. */
function linkTarget(elem: HtmlElement, builder: HtmlBuilder): string | null {
  const href = elem.attribs?.href?.trim() ?? '';
  if (href === '' || href.startsWith('#')) return null;
  try {
    const url = new URL(href, builder.metadata?.baseUrl);
    return url.protocol === 'javascript:' || url.protocol === 'data:' ? null : url.href;
  } catch {
    return null;
  }
}

const toText = compile({
  ...common,
  formatters: {
    textLink(elem, walk, builder) {
      const target = linkTarget(elem, builder);
      walk(elem.children, builder);
      if (target !== null) builder.addInline(` [${target}]`, { noWordTransform: true });
    },
  },
  selectors: [
    ...SKIPPED.map((selector) => ({ selector, format: 'skip' })),
    { selector: 'a', format: 'textLink' },
    { selector: 'img', format: 'skip' },
    ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: { uppercase: false } })),
    { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false, maxColumnWidth: 40 } },
  ],
});

function surround(prefix: string, suffix: string) {
  return (elem: HtmlElement, walk: HtmlWalk, builder: HtmlBuilder) => {
    builder.addLiteral(prefix);
    walk(elem.children, builder);
    builder.addLiteral(suffix);
  };
}

const toMarkdown = compile({
  ...common,
  formatters: {
    mdHeading(elem, walk, builder) {
      const level = Number((elem.name ?? 'h1').slice(1)) || 1;
      builder.openBlock({ leadingLineBreaks: 2 });
      builder.addLiteral(`${'#'.repeat(level)} `);
      walk(elem.children, builder);
      builder.closeBlock({ trailingLineBreaks: 2 });
    },
    mdLink(elem, walk, builder) {
      const target = linkTarget(elem, builder);
      if (target === null) {
        walk(elem.children, builder);
        return;
      }
      builder.addLiteral('[');
      walk(elem.children, builder);
      builder.addLiteral(`](${target})`);
    },
    mdStrong: surround('**', '**'),
    mdEmphasis: surround('_', '_'),
    mdCode: surround('`', '`'),
    mdPre(elem, walk, builder) {
      builder.openBlock({ leadingLineBreaks: 2 });
      builder.addLiteral('```');
      builder.closeBlock({ trailingLineBreaks: 1 });
      builder.openBlock({ leadingLineBreaks: 1, isPre: true });
      walk(elem.children, builder);
      builder.closeBlock({ trailingLineBreaks: 1 });
      builder.openBlock({ leadingLineBreaks: 1 });
      builder.addLiteral('```');
      builder.closeBlock({ trailingLineBreaks: 2 });
    },
  },
  selectors: [
    ...SKIPPED.map((selector) => ({ selector, format: 'skip' })),
    ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, format: 'mdHeading' })),
    { selector: 'a', format: 'mdLink' },
    { selector: 'img', format: 'skip' },
    { selector: 'strong', format: 'mdStrong' },
    { selector: 'b', format: 'mdStrong' },
    { selector: 'em', format: 'mdEmphasis' },
    { selector: 'i', format: 'mdEmphasis' },
    { selector: 'code', format: 'mdCode' },
    { selector: 'pre', format: 'mdPre' },
    { selector: 'ul', options: { itemPrefix: '- ' } },
    { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false, maxColumnWidth: 40 } },
    { selector: 'hr', options: { length: 3 } },
  ],
});

/** The media type (lower-cased, no parameters) and charset of a Content-Type header. */
export function parseContentType(header: string | undefined): { mediaType: string; charset: string | undefined } {
  const [type = '', ...params] = (header ?? '').split(';');
  let charset: string | undefined;
  for (const param of params) {
    const [key, value] = param.split('=').map((s) => s.trim());
    if (key?.toLowerCase() === 'charset' && value) charset = value.replace(/^"|"$/g, '');
  }
  return { mediaType: type.trim().toLowerCase(), charset };
}

function decode(bytes: Buffer, charset: string | undefined): string {
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(bytes);
  } catch {
    // An unknown charset label: UTF-8 is the best guess on today's web.
    return new TextDecoder('utf-8').decode(bytes);
  }
}

function isHtml(mediaType: string): boolean {
  return mediaType === 'text/html' || mediaType === 'application/xhtml+xml';
}

function isJson(mediaType: string): boolean {
  return mediaType === 'application/json' || mediaType.endsWith('+json') || mediaType === 'text/json';
}

function isTextual(mediaType: string): boolean {
  return (
    mediaType.startsWith('text/') ||
    mediaType.endsWith('+xml') ||
    [
      'application/xml',
      'application/javascript',
      'application/x-javascript',
      'application/ecmascript',
      'application/x-ndjson',
      'application/yaml',
      'application/x-yaml',
      'application/toml',
      'application/csv',
    ].includes(mediaType)
  );
}

/** True when the body looks like text although the server did not say so (no NUL in the first 1 KiB, valid UTF-8). */
function looksLikeText(bytes: Buffer): boolean {
  const head = bytes.subarray(0, 1024);
  if (head.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head.subarray(0, Math.max(0, head.length - 4)));
    return true;
  } catch {
    return false;
  }
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/**
 * Turns a response body into text for a model: HTML into readable text or Markdown, JSON
 * pretty-printed, other text as is, anything else summarized by type and size (never dumped).
 */
export function renderBody(options: {
  bytes: Buffer;
  contentType: string | undefined;
  truncated: boolean;
  format: TextFormat;
  /** From Content-Length, when the server sent one. */
  declaredLength: number | undefined;
  /** The page's URL, against which relative links are resolved. */
  baseUrl: string;
}): { text: string; kind: 'html' | 'json' | 'text' | 'binary' } {
  const { bytes, truncated, format } = options;
  const { mediaType, charset } = parseContentType(options.contentType);
  if (isHtml(mediaType) || (mediaType === '' && /^\s*<(!doctype html|html)/i.test(bytes.subarray(0, 256).toString('latin1')))) {
    const html = decode(bytes, charset);
    return {
      text: (format === 'markdown' ? toMarkdown(html, { baseUrl: options.baseUrl }) : toText(html, { baseUrl: options.baseUrl })).trim(),
      kind: 'html',
    };
  }
  if (isJson(mediaType)) {
    const raw = decode(bytes, charset);
    if (!truncated) {
      try {
        return { text: JSON.stringify(JSON.parse(raw), null, 2), kind: 'json' };
      } catch {
        // Not valid JSON after all: show it as it came.
      }
    }
    return { text: raw, kind: 'json' };
  }
  if (isTextual(mediaType) || (mediaType === '' && looksLikeText(bytes))) {
    return { text: decode(bytes, charset), kind: 'text' };
  }
  const size = options.declaredLength ?? bytes.length;
  const sizeText = truncated && options.declaredLength === undefined ? `more than ${formatBytes(bytes.length)}` : formatBytes(size);
  return {
    text: `[binary content not shown: ${mediaType === '' ? 'no content type' : mediaType}, ${sizeText}. core-web returns text only; use another tool to handle this file type.]`,
    kind: 'binary',
  };
}
