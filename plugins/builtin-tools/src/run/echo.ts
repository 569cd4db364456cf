/** `builtin-tools.echo`: its input, unchanged. */
export function echo(input: Record<string, unknown>): Record<string, unknown> {
  return input;
}
