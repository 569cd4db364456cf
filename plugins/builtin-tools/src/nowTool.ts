import { z } from 'zod';
import { defineTool } from '@trellis/sdk';
import { now } from './run/now.ts';

/** Input of `builtin-tools.now`. */
export const NowInputSchema = z
  .object({
    timezone: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe('IANA time zone name such as "Europe/Berlin", "America/New_York" or "UTC". Omit it to get the host\'s own time zone.'),
  })
  .strict();

/** What `now` receives, checked against `NowInputSchema`. */
export type NowInput = z.infer<typeof NowInputSchema>;

/** `builtin-tools.now`: the current time in a time zone. */
export const nowTool = defineTool({
  name: 'now',
  description:
    "Returns the current date and time as ISO 8601 with the UTC offset (e.g. 2026-11-22T04:14:58.123+01:00), plus the weekday and Unix milliseconds. Use it whenever you need today's date or the time; never guess it. Pass an IANA time zone to get local time elsewhere.",
  input: NowInputSchema,
  tags: ['time', 'clock', 'date'],
  examples: [
    { description: "The host's local time", input: {} },
    { description: 'The time in Tokyo', input: { timezone: 'Asia/Tokyo' } },
  ],
  run: now,
});
