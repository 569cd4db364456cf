import { ERROR_CODES, ToolError } from '@trellis/sdk';
import type { NowInput } from '../nowTool.ts';

/** Output of `builtin-tools.now`. */
export interface NowOutput {
  /** ISO 8601 local time with milliseconds and offset, e.g. `2026-11-22T04:14:58.123+01:00`. */
  readonly iso: string;
  readonly timezone: string;
  /** Offset from UTC as `+HH:MM` / `-HH:MM`. */
  readonly utcOffset: string;
  readonly weekday: string;
  /** Milliseconds since the Unix epoch. */
  readonly unixMs: number;
}

/**
 * Throws a `ToolError` naming the argument unless `zone` is a time zone this host's Intl knows.
 * Returns the name as given: ICU would rename some zones to older aliases (Asia/Kolkata → Asia/Calcutta).
 */
function checkTimeZone(zone: string): string {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return zone;
  } catch {
    throw new ToolError(
      ERROR_CODES.INVALID_ARGUMENT,
      `timezone: "${zone}" is not an IANA time zone this host knows. Use a name such as "UTC", "Europe/Berlin", "America/New_York" or "Asia/Kolkata", or omit timezone for the host's own zone.`,
    );
  }
}

/** The wall-clock time of `date` in `timeZone`, as ISO 8601 with offset. */
export function formatInTimeZone(date: Date, timeZone: string): NowOutput {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    weekday: 'long',
    timeZoneName: 'longOffset',
  }).formatToParts(date);
  const get = (type: Intl.DateTimeFormatPartTypes): string => parts.find((p) => p.type === type)?.value ?? '';
  // `longOffset` renders as "GMT+05:30", or plain "GMT" for a zero offset.
  const offsetText = get('timeZoneName').replace(/^GMT/, '');
  const utcOffset = offsetText === '' ? '+00:00' : offsetText;
  const millis = String(date.getUTCMilliseconds()).padStart(3, '0');
  const year = get('year').padStart(4, '0');
  const iso = `${year}-${get('month')}-${get('day')}T${get('hour')}:${get('minute')}:${get('second')}.${millis}${utcOffset}`;
  return { iso, timezone: timeZone, utcOffset, weekday: get('weekday'), unixMs: date.getTime() };
}

/** `builtin-tools.now`: the current time in `input.timezone`, else the host's own zone. */
export function now(input: NowInput): NowOutput {
  const zone = input.timezone === undefined ? new Intl.DateTimeFormat().resolvedOptions().timeZone : checkTimeZone(input.timezone);
  return formatInTimeZone(new Date(), zone);
}
