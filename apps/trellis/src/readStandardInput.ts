import { UsageError } from './errors.ts';

/** All of the process's standard input as UTF-8; a `UsageError` past `maxBytes`. */
export async function readStandardInput(maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += buffer.byteLength;
    if (size > maxBytes) {
      process.stdin.destroy();
      throw new UsageError(`--args -: standard input is over the ${maxBytes}-byte limit`);
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
