import { mkdtempSync, openSync, closeSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createFdWriter } from './fdWriter.ts';

function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(code), { code });
}

function collectingStream(): { stream: Writable; text: () => string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(Buffer.from(chunk));
      done();
    },
  });
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

describe('createFdWriter', () => {
  it('writes every byte of UTF-8 text to a real file descriptor', () => {
    const dir = mkdtempSync(join(tmpdir(), 'trellis-fdwriter-'));
    try {
      const file = join(dir, 'out.txt');
      const fd = openSync(file, 'w');
      const write = createFdWriter(fd, () => {
        throw new Error('the stream is never needed for a file');
      });
      write('héllo ✓\n');
      write('');
      write('second line\n');
      closeSync(fd);
      expect(readFileSync(file, 'utf8')).toBe('héllo ✓\nsecond line\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('continues after partial writes until the whole text is out', () => {
    const written: number[] = [];
    const write = createFdWriter(
      7,
      () => collectingStream().stream,
      (fd, buffer, offset) => {
        expect(fd).toBe(7);
        const n = Math.min(3, buffer.length - offset);
        for (let i = 0; i < n; i++) written.push(buffer[offset + i]!);
        return n;
      },
    );
    write('abcdefgh');
    expect(Buffer.from(written).toString()).toBe('abcdefgh');
  });

  it('hands the rest to the stream on EAGAIN, and keeps using it so the order holds', () => {
    const sink = collectingStream();
    let direct = '';
    let calls = 0;
    const write = createFdWriter(
      1,
      () => sink.stream,
      (_fd, buffer, offset) => {
        calls++;
        if (calls === 1) {
          direct += Buffer.from(buffer.subarray(offset, offset + 4)).toString();
          return 4;
        }
        throw errno('EAGAIN');
      },
    );
    write('0123456789');
    write('tail');
    expect(direct).toBe('0123');
    expect(sink.text()).toBe('456789tail');
    expect(calls).toBe(2);
  });

  it.each(['EPIPE', 'EIO'])('stops quietly when the reader has gone (%s: a closed pipe, a terminal that hung up)', (code) => {
    let calls = 0;
    const write = createFdWriter(
      1,
      () => collectingStream().stream,
      () => {
        calls++;
        throw errno(code);
      },
    );
    expect(() => write('lost')).not.toThrow();
    write('also lost');
    expect(calls).toBe(1);
  });

  it('rethrows any other write error', () => {
    const write = createFdWriter(
      1,
      () => collectingStream().stream,
      () => {
        throw errno('EBADF');
      },
    );
    expect(() => write('x')).toThrow('EBADF');
  });
});
