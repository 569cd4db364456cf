import { z } from 'zod';
import { defineTool } from '@trellis/sdk';
import { echo } from './run/echo.ts';

/** Input of `builtin-tools.echo`: any JSON object. */
export const EchoInputSchema = z.record(z.string(), z.unknown()).describe('Any JSON object; it is returned exactly as given.');

/** `builtin-tools.echo`: returns its input unchanged (docs, tests and benchmarks use it). */
export const echoTool = defineTool({
  name: 'echo',
  description: 'Returns its input object unchanged. Useful to check that tool calling works end to end; it does nothing else.',
  input: EchoInputSchema,
  tags: ['debug', 'test'],
  examples: [{ description: 'Round-trip a small object', input: { message: 'hello', n: 1 } }],
  run: echo,
});
