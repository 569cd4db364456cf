import { writeSync } from 'node:fs';

/**
 * A writer for the CLI's stdout or stderr that writes synchronously to the file descriptor.
 *
 * Why not `process.stdout.write`: creating the process streams loads Node's stream machinery (about
 * twenty modules, several ms of every `trellis` start), and a command's output is complete before
 * it returns anyway. Two cases still need care:
 * - a non-blocking descriptor that is full (`EAGAIN`, e.g. a pipe its reader set non-blocking):
 *   the rest, and everything after it, goes through the stream, which waits for the reader;
 * - a reader that went away (`EPIPE`, e.g. `trellis tools list | head -1`; `EIO`, a terminal that
 *   hung up): output stops quietly, as it does for other Unix tools, instead of failing the
 *   command. A hang-up's SIGHUP decides what the command does next (a live host serves on).
 */
export function createFdWriter(
  fd: number,
  stream: () => NodeJS.WritableStream,
  write: (fd: number, buffer: Uint8Array, offset: number) => number = (f, b, o) => writeSync(f, b, o),
): (text: string) => void {
  let fallback: NodeJS.WritableStream | undefined;
  let closed = false;
  return (text) => {
    if (closed || text === '') return;
    if (fallback !== undefined) {
      fallback.write(text);
      return;
    }
    const bytes = Buffer.from(text, 'utf8');
    let offset = 0;
    while (offset < bytes.length) {
      try {
        offset += write(fd, bytes, offset);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EAGAIN') {
          fallback = stream();
          fallback.write(bytes.subarray(offset));
          return;
        }
        if (code === 'EPIPE' || code === 'EIO') {
          closed = true;
          return;
        }
        throw error;
      }
    }
  };
}
