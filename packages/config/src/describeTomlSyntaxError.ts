/**
 * Better words for TOML syntax errors a person makes by hand, where the parser's own message
 * points elsewhere: `[plugins` (no `]`) is "illegal character in key" to smol-toml. Returns
 * undefined when the line holds no such mistake, to keep the parser's message.
 */
export function describeTomlSyntaxError(text: string, line: number | undefined): string | undefined {
  if (line === undefined) return undefined;
  const source = (text.split(/\r?\n/)[line - 1] ?? '').replace(/#.*$/, '').trim();
  const header = /^(\[\[?)\s*([^\]]*?)\s*(\]?\]?)$/.exec(source);
  if (header === null) return undefined;
  const [, open, name, close] = header as unknown as [string, string, string, string];
  const array = open === '[[';
  const wanted = array ? ']]' : ']';
  if (close === wanted || name === '' || /["'=]/.test(name)) return undefined;
  const fixed = `${open}${name}${wanted}`;
  return `the ${array ? 'array-of-tables' : 'table'} header "${source}" is not closed; end it with "${wanted}": ${fixed}`;
}
