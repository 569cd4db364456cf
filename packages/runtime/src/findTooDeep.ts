import { nestsDeeperThan } from '@trellis/sdk/internal';

/** Deepest nesting of objects and arrays a tool call's arguments may have. */
export const MAX_INPUT_DEPTH = 256;

/** Path segments shown before `…` in the message. */
const SHOWN_SEGMENTS = 8;

interface Frame {
  readonly value: object;
  readonly keys: readonly string[] | undefined;
  next: number;
}

/**
 * Where `input` nests objects and arrays more than `maxDepth` levels deep, as a `path: message`
 * line; undefined when it does not. The walk is a loop, not recursion: validators (ajv's
 * `uniqueItems`, `enum`), `structuredClone` and `JSON.stringify` recurse and throw RangeError on a
 * 100,000-level argument, so the runtime refuses such input here, before any of them sees it.
 * A cycle counts as too deep.
 */
export function findTooDeep(input: unknown, maxDepth: number = MAX_INPUT_DEPTH): string | undefined {
  // Every call passes here: the common, shallow input is cleared by the shared bounded walk, which
  // allocates nothing; only input that is too deep (or cyclic) pays for the walk that finds the path.
  if (input === null || typeof input !== 'object' || !nestsDeeperThan(input, maxDepth)) return undefined;
  const frames: Frame[] = [frameOf(input)];
  while (frames.length > 0) {
    const frame = frames[frames.length - 1] as Frame;
    const keys = frame.keys;
    const length = keys === undefined ? (frame.value as unknown[]).length : keys.length;
    if (frame.next >= length) {
      frames.pop();
      continue;
    }
    const index = frame.next++;
    const child = keys === undefined ? (frame.value as unknown[])[index] : (frame.value as Record<string, unknown>)[keys[index] as string];
    if (child === null || typeof child !== 'object') continue;
    if (frames.length >= maxDepth) {
      return `${pathOf(frames)}: nests objects and arrays more than ${maxDepth} levels deep; send flatter arguments`;
    }
    frames.push(frameOf(child));
  }
  return undefined;
}

function frameOf(value: object): Frame {
  return { value, keys: Array.isArray(value) ? undefined : Object.keys(value), next: 0 };
}

// A JSON pointer like ajv's instancePath, cut after a few segments.
function pathOf(frames: readonly Frame[]): string {
  const segments = frames.slice(0, SHOWN_SEGMENTS).map((frame) => {
    const index = frame.next - 1;
    const segment = frame.keys === undefined ? String(index) : (frame.keys[index] as string);
    return `/${segment.replaceAll('~', '~0').replaceAll('/', '~1')}`;
  });
  return `${segments.join('')}${frames.length > SHOWN_SEGMENTS ? '/…' : ''}`;
}
