// html-to-text ships no type declarations; this covers the part core-web uses.
declare module 'html-to-text' {
  export interface HtmlToTextOptions {
    readonly wordwrap?: number | false | null;
    readonly baseElements?: { readonly selectors?: readonly string[]; readonly returnDomByDefault?: boolean };
    readonly selectors?: ReadonlyArray<{ readonly selector: string; readonly format?: string; readonly options?: Record<string, unknown> }>;
    readonly formatters?: Record<
      string,
      (elem: HtmlElement, walk: HtmlWalk, builder: HtmlBuilder, formatOptions: Record<string, unknown>) => void
    >;
    readonly limits?: Record<string, unknown>;
  }
  export interface HtmlElement {
    readonly name?: string;
    readonly attribs?: Record<string, string>;
    readonly children?: readonly HtmlElement[];
  }
  export type HtmlWalk = (nodes: readonly HtmlElement[] | undefined, builder: HtmlBuilder) => void;
  export interface HtmlBuilder {
    readonly metadata?: { readonly baseUrl?: string };
    addInline(text: string, options?: { noWordTransform?: boolean }): void;
    addLiteral(text: string): void;
    openBlock(options?: { leadingLineBreaks?: number; isPre?: boolean }): void;
    closeBlock(options?: { trailingLineBreaks?: number }): void;
    pushWordTransform(transform: (word: string) => string): void;
    popWordTransform(): void;
  }
  export function convert(html: string, options?: HtmlToTextOptions): string;
  export function compile(options?: HtmlToTextOptions): (html: string, metadata?: { baseUrl?: string }) => string;
}
