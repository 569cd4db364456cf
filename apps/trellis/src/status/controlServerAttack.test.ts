import { chmodSync, existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { HostStatus } from './HostStatus.ts';
import { askHost, listRunningHosts } from './listRunningHosts.ts';
import { startControlServer } from './startControlServer.ts';

// A client of the control socket must not be able to hold a connection (and the memory of its
// half request) for as long as it likes by trickling bytes: the idle timeout alone never fires
// while a byte arrives every second. Only the host's own user can connect (the folder is 700),
// but "nothing a client sends can stop the host" includes a buggy script of that user.

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const STATUS: HostStatus = {
  pid: process.pid,
  command: 'serve',
  startedAt: '2026-01-01T00:00:00.000Z',
  version: '0',
  workspace: '/w',
  profile: 'full',
  plugins: [],
};

it('disconnects a client that trickles a request byte by byte, and keeps answering others', { timeout: 60_000 }, async () => {
  const base = mkdtempSync(join(tmpdir(), 'trellis-ctl-attack-'));
  chmodSync(base, 0o700);
  cleanups.push(() => rmSync(base, { recursive: true, force: true }));
  const server = await startControlServer({ dir: join(base, 'trellis'), status: () => STATUS, warn: () => {} });
  expect(server).toBeDefined();
  cleanups.push(() => server!.close());

  const socket = connect(server!.path);
  socket.on('error', () => {});
  let answer = '';
  socket.setEncoding('utf8').on('data', (d: string) => (answer += d));
  const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now())));
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  const openedAt = Date.now();
  const trickle = setInterval(() => socket.writable && socket.write(' '), 500);
  cleanups.push(() => clearInterval(trickle));

  // Others are served meanwhile.
  expect(await askHost(server!.path)).toMatchObject({ kind: 'status' });

  const result = await Promise.race([closed, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 30_000))]);
  expect(result, 'the trickling client was never disconnected').toBeDefined();
  // The request deadline is 5 s from connecting; the bound here is generous for a loaded machine.
  expect(result! - openedAt).toBeLessThan(25_000);
  expect(answer).toContain('CONTROL_REQUEST_INVALID');
});

it('lets go of a client that keeps sending after its request was refused, half-open or not', { timeout: 60_000 }, async () => {
  const base = mkdtempSync(join(tmpdir(), 'trellis-ctl-attack-'));
  chmodSync(base, 0o700);
  cleanups.push(() => rmSync(base, { recursive: true, force: true }));
  const server = await startControlServer({ dir: join(base, 'trellis'), status: () => STATUS, warn: () => {} });
  cleanups.push(() => server!.close());

  // allowHalfOpen: the client does not end its side when the host ends its own.
  const socket = connect({ path: server!.path, allowHalfOpen: true });
  socket.on('error', () => {});
  let answer = '';
  socket.setEncoding('utf8').on('data', (d: string) => (answer += d));
  const closed = new Promise<boolean>((resolve) => socket.on('close', () => resolve(true)));
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  const chunk = 'x'.repeat(16 * 1024);
  const flood = setInterval(() => socket.writable && socket.write(chunk), 100);
  cleanups.push(() => clearInterval(flood));
  const result = await Promise.race([closed, new Promise<false>((resolve) => setTimeout(() => resolve(false), 30_000))]);
  expect(result, 'the host kept reading from a refused client').toBe(true);
  expect(answer).toContain('larger than');
});

it('never removes the socket of a live host whose pid it cannot see (another PID namespace)', { timeout: 60_000 }, async () => {
  // `trellis status` run in a container sharing the folder, or by any child of a Trellis host
  // (each runs in its own PID namespace, with HOME, so the state-folder fallback matches), sees
  // no process with the host's pid. Its socket still answers: it is not stale.
  const base = mkdtempSync(join(tmpdir(), 'trellis-ctl-attack-'));
  chmodSync(base, 0o700);
  cleanups.push(() => rmSync(base, { recursive: true, force: true }));
  const dir = join(base, 'trellis');
  const server = await startControlServer({ dir, status: () => STATUS, warn: () => {} });
  cleanups.push(() => server!.close());
  let invisible = 4_194_000;
  while (existsSync(`/proc/${invisible}`)) invisible += 1;
  const moved = join(dir, `${invisible}.sock`);
  renameSync(server!.path, moved);

  const found = await listRunningHosts(dir);
  expect(found.stale).toEqual([]);
  expect(existsSync(moved)).toBe(true);
  expect(found.hosts.map((h) => h.pid)).toEqual([process.pid]);
});
