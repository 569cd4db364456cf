import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { silentLogger, type HostServices, type ToolContext } from '@trellis/sdk';

export const TINY_SERVER = fileURLToPath(new URL('./fixtures/tinyServer.mjs', import.meta.url));
export const EVERYTHING_BIN = fileURLToPath(
  new URL('../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url),
);

/** A temp folder, removed by the returned function. */
export function makeTempDir(prefix = 'trellis-mcp-'): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** Whether a live process has `arg` among its arguments (a tag unique to one test). */
export function argAlive(arg: string): boolean {
  return execFileSync('ps', ['-eo', 'stat=,args='], { encoding: 'utf8' })
    .split('\n')
    .some((line) => !line.trim().startsWith('Z') && line.split(/\s+/).includes(arg));
}

/** Waits (polling) until `check` is true; false after `ms`. */
export async function waitFor(check: () => boolean, ms = 10_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return check();
}

/** A free TCP port on 127.0.0.1 (asked of the OS with port 0), for a server that takes its port from PORT. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

const host: HostServices = { plugins: () => [], explainPlugin: () => undefined, searchTools: () => [] };

/** A tool context for calling a tool source directly. */
export function toolContext(signal: AbortSignal, tool = 'mcp.test'): ToolContext {
  return { signal, logger: silentLogger, config: {}, workspace: { root: process.cwd() }, env: process.env, callId: 'test', tool, host };
}
