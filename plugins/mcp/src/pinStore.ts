import { lstat, open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ERROR_CODES } from '@trellis/sdk';
import { formatMode, hashJson, isWorldWritable } from '@trellis/sdk/internal';
import { writeFileAtomic } from './writeFileAtomic.ts';

/** A tool as a server listed it, reduced to what is pinned and what the catalog needs. */
export interface McpToolSnapshot {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
  readonly outputSchema?: Readonly<Record<string, unknown>>;
  readonly title?: string;
  readonly annotations?: Readonly<Record<string, unknown>>;
}

/** The hashes of one tool's pinned parts. */
export interface PinParts {
  readonly description: string;
  readonly inputSchema: string;
  readonly outputSchema: string | null;
}

/** One pinned tool: its hash, the hashes of its parts (to name what changed), and the tool itself (the listing cache). */
export interface PinnedTool {
  readonly hash: string;
  readonly parts: PinParts;
  readonly tool: McpToolSnapshot;
  readonly pinnedAt: string;
}

/** `<state>/mcp-pins/<server>.json`. `pending` holds changed tools as last seen, for `trellis mcp approve`. */
export interface PinFile {
  readonly version: 1;
  readonly server: string;
  readonly tools: Readonly<Record<string, PinnedTool>>;
  readonly pending: Readonly<Record<string, PinnedTool>>;
}

/** What changed between a pin and a tool, in words for a message. */
export type PinChange = 'description' | 'input schema' | 'output schema';

/** A problem with a pin file; the tools of its server are withheld until it is fixed. */
export interface PinProblem {
  readonly code: string;
  readonly message: string;
}

const MAX_PIN_FILE_BYTES = 16 * 1024 * 1024;

/** `$XDG_STATE_HOME/trellis` (default `~/.local/state/trellis`). */
export function resolveStateDir(env: Readonly<Record<string, string | undefined>>, home?: string): string {
  const xdg = env.XDG_STATE_HOME;
  if (xdg !== undefined && xdg.startsWith('/')) return join(xdg, 'trellis');
  const base = home ?? env.HOME ?? '/';
  return join(base, '.local', 'state', 'trellis');
}

/** The pin file of one server. */
export function pinFilePath(stateDir: string, server: string): string {
  return join(stateDir, 'mcp-pins', `${server}.json`);
}

/** The hash of a tool and of each pinned part: name, description, input and output schema. */
export function fingerprintTool(tool: McpToolSnapshot): { hash: string; parts: PinParts } {
  const parts: PinParts = {
    description: hashJson(tool.description),
    inputSchema: hashJson(tool.inputSchema),
    outputSchema: tool.outputSchema === undefined ? null : hashJson(tool.outputSchema),
  };
  return { hash: hashJson({ name: tool.name, ...parts }), parts };
}

/** A pin for a tool seen now. */
export function pinTool(tool: McpToolSnapshot, now = new Date()): PinnedTool {
  const { hash, parts } = fingerprintTool(tool);
  return { hash, parts, tool, pinnedAt: now.toISOString() };
}

/** What differs between a pin and a tool's current fingerprint; empty when they match. */
export function comparePin(pinned: PinnedTool, current: { hash: string; parts: PinParts }): PinChange[] {
  if (pinned.hash === current.hash) return [];
  const changes: PinChange[] = [];
  if (pinned.parts.description !== current.parts.description) changes.push('description');
  if (pinned.parts.inputSchema !== current.parts.inputSchema) changes.push('input schema');
  if (pinned.parts.outputSchema !== current.parts.outputSchema) changes.push('output schema');
  // A hash that differs with equal parts can only be a pin file edited by hand: say the schema changed.
  return changes.length > 0 ? changes : ['input schema'];
}

/** An empty pin file for a server. */
export function emptyPinFile(server: string): PinFile {
  return { version: 1, server, tools: {}, pending: {} };
}

function uid(): number | undefined {
  return typeof process.getuid === 'function' ? process.getuid() : undefined;
}

/**
 * Checks a pin file or its folder like a config file: a real file or folder (no symlink), owned by
 * the current user or root, not writable by others. Undefined when it is fine or missing.
 */
async function checkPath(path: string, kind: 'file' | 'folder'): Promise<PinProblem | undefined> {
  let stat;
  try {
    stat = await lstat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return {
      code: ERROR_CODES.UNSAFE_FILE,
      message: `MCP pin ${kind} ${path} cannot be read (${(error as Error).message}); fix its permissions`,
    };
  }
  const isRight = kind === 'file' ? stat.isFile() : stat.isDirectory();
  if (!isRight || stat.isSymbolicLink()) {
    return {
      code: ERROR_CODES.UNSAFE_FILE,
      message: `MCP pin ${kind} ${path} is not a plain ${kind} (a symlink or another type); remove it, and Trellis re-pins on the next start`,
    };
  }
  if (kind === 'file' && stat.nlink > 1) {
    return {
      code: ERROR_CODES.UNSAFE_FILE,
      message: `MCP pin file ${path} has ${stat.nlink} hard links; remove it, and Trellis re-pins on the next start`,
    };
  }
  const me = uid();
  if (me !== undefined && stat.uid !== me && stat.uid !== 0) {
    return {
      code: ERROR_CODES.UNSAFE_OWNER,
      message: `MCP pin ${kind} ${path} is owned by uid ${stat.uid}, not by you (uid ${me}) or root; remove it or chown it to yourself`,
    };
  }
  if (isWorldWritable(stat.mode) || (stat.mode & 0o020) !== 0) {
    return {
      code: ERROR_CODES.WORLD_WRITABLE,
      message: `MCP pin ${kind} ${path} is writable by others (mode ${formatMode(stat.mode)}); run chmod go-w ${path}`,
    };
  }
  return undefined;
}

/** Reads a server's pin file; a missing file is an empty one. Never throws. */
export async function readPinFile(path: string, server: string): Promise<{ value?: PinFile; problem?: PinProblem }> {
  const dir = join(path, '..');
  const problem = (await checkPath(dir, 'folder')) ?? (await checkPath(path, 'file'));
  if (problem !== undefined) return { problem };
  let text: string;
  try {
    const handle = await open(path, 'r');
    try {
      const { size } = await handle.stat();
      if (size > MAX_PIN_FILE_BYTES) {
        return {
          problem: {
            code: ERROR_CODES.UNSAFE_FILE,
            message: `MCP pin file ${path} is ${size} bytes, over the ${MAX_PIN_FILE_BYTES}-byte limit; remove it, and Trellis re-pins on the next start`,
          },
        };
      }
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { value: emptyPinFile(server) };
    return {
      problem: {
        code: ERROR_CODES.UNSAFE_FILE,
        message: `MCP pin file ${path} cannot be read (${(error as Error).message}); fix its permissions`,
      },
    };
  }
  try {
    const parsed = JSON.parse(text) as Partial<PinFile>;
    if (
      parsed === null ||
      typeof parsed !== 'object' ||
      parsed.version !== 1 ||
      typeof parsed.tools !== 'object' ||
      parsed.tools === null
    ) {
      throw new Error('not a version 1 pin file');
    }
    return { value: { version: 1, server, tools: parsed.tools, pending: parsed.pending ?? {} } };
  } catch (error) {
    return {
      problem: {
        code: ERROR_CODES.CONFIG_INVALID,
        message: `MCP pin file ${path} is damaged (${(error as Error).message}); remove it, and Trellis re-pins this server's tools on the next start`,
      },
    };
  }
}

/** Writes a pin file atomically (a private temp file, fsync, rename), mode 0600 in a 0700 folder. */
export async function writePinFile(path: string, value: PinFile): Promise<void> {
  await writeFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600, folderMode: 0o700 });
}

/** Reads a pin file that must exist (for `trellis mcp approve`). */
export async function readPinFileStrict(path: string, server: string): Promise<{ value?: PinFile; problem?: PinProblem }> {
  try {
    await readFile(path, { flag: 'r' }).then(() => undefined);
  } catch {
    return {
      problem: {
        code: ERROR_CODES.NOT_FOUND,
        message: `no MCP pins for server "${server}" at ${path}; run a command that lists its tools first (e.g. trellis tools list --profile full)`,
      },
    };
  }
  return readPinFile(path, server);
}
