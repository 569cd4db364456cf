import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { NdjsonChannel } from '../../src/adapters/NdjsonChannel.ts';

/** A child's stdin that records each write the channel makes. */
function recordingInput(): { input: Writable; writes: string[] } {
  const writes: string[] = [];
  const input = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      writes.push(chunk.toString('utf8'));
      callback();
    },
  });
  return { input, writes };
}

function channel(input: Writable): NdjsonChannel {
  const made = new NdjsonChannel({ input, maxLineBytes: 1024, onWarning: () => undefined, onDesync: () => undefined });
  made.echoesIds = true;
  return made;
}

const limits = { deadlineAt: Infinity };

describe('NdjsonChannel writes', () => {
  it('sends the requests of one tick as one write, each on its own line, and answers each by id', async () => {
    const { input, writes } = recordingInput();
    const ndjson = channel(input);
    const replies = Array.from({ length: 16 }, (_, n) => ndjson.request({ type: 'call_tool', n }, limits));
    expect(writes).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toHaveLength(1);
    const lines = writes[0]!.split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual(
      Array.from({ length: 16 }, (_, n) => ({ id: n + 1, type: 'call_tool', n })),
    );
    // Answered out of order: each reply reaches its own request.
    for (let id = 16; id >= 1; id -= 1) ndjson.push(Buffer.from(`{"id":${id},"type":"call_tool_response","data":${id * 10}}\n`));
    const answered = await Promise.all(replies);
    expect(answered.map((reply) => (reply.kind === 'message' ? reply.message.data : reply.kind))).toEqual(
      Array.from({ length: 16 }, (_, n) => (n + 1) * 10),
    );
  });

  it('a request made in a later tick gets a write of its own', async () => {
    const { input, writes } = recordingInput();
    const ndjson = channel(input);
    void ndjson.request({ type: 'a' }, limits);
    await new Promise((resolve) => setImmediate(resolve));
    void ndjson.request({ type: 'b' }, limits);
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual(['{"id":1,"type":"a"}\n', '{"id":2,"type":"b"}\n']);
  });

  it('end() sends the requests still waiting for the tick before its own line, then ends the input', async () => {
    const { input, writes } = recordingInput();
    const ndjson = channel(input);
    void ndjson.request({ type: 'call_tool' }, limits);
    ndjson.end({ type: 'shutdown' });
    await new Promise((resolve) => input.once('finish', resolve));
    expect(writes.join('')).toBe('{"id":1,"type":"call_tool"}\n{"id":2,"type":"shutdown"}\n');
  });
});
