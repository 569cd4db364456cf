import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { isToolError, silentLogger, type ToolContext } from '@trellis/sdk';

/** A fresh temp folder (realpath'd) with a workspace and a user config home inside; `cleanup` removes it. */
export function createSandbox(): {
  base: string;
  workspace: string;
  configHome: string;
  workspaceRoot: string;
  userRoot: string;
  cleanup(): void;
} {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'trellis-skills-')));
  const workspace = join(base, 'ws');
  const configHome = join(base, 'config');
  mkdirSync(join(workspace, '.trellis', 'skills'), { recursive: true });
  mkdirSync(join(configHome, 'trellis', 'skills'), { recursive: true });
  return {
    base,
    workspace,
    configHome,
    workspaceRoot: join(workspace, '.trellis', 'skills'),
    userRoot: join(configHome, 'trellis', 'skills'),
    cleanup: () => rmSync(base, { recursive: true, force: true }),
  };
}

/** Writes `<root>/<folder>/SKILL.md` and any extra files (with modes). */
export function writeSkill(
  root: string,
  folder: string,
  skill: { frontMatter?: string; body?: string; raw?: string; files?: Record<string, string | { content: string; mode: number }> },
): string {
  const dir = join(root, folder);
  mkdirSync(dir, { recursive: true });
  const text =
    skill.raw ??
    `---\n${skill.frontMatter ?? `name: ${folder}\ndescription: The ${folder} skill.`}\n---\n${skill.body ?? `# ${folder}\n\nDo the thing.\n`}`;
  writeFileSync(join(dir, 'SKILL.md'), text);
  for (const [rel, file] of Object.entries(skill.files ?? {})) {
    const path = join(dir, rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, typeof file === 'string' ? file : file.content);
    if (typeof file !== 'string') chmodSync(path, file.mode);
  }
  return dir;
}

/** A ToolContext as the runtime would build it, for calling a tool's `run` directly. */
export function createToolContext(options: {
  workspace: string;
  configHome: string;
  config?: Record<string, unknown>;
  signal?: AbortSignal;
  env?: Record<string, string>;
  /** Whether the user trusted the workspace (`trellis trust`). Default: not said, i.e. untrusted. */
  workspaceTrusted?: boolean;
}): ToolContext<unknown> {
  return {
    signal: options.signal ?? new AbortController().signal,
    logger: silentLogger,
    config: options.config ?? {},
    workspace: { root: options.workspace, ...(options.workspaceTrusted !== undefined ? { trusted: options.workspaceTrusted } : {}) },
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/root',
      XDG_CONFIG_HOME: options.configHome,
      ...options.env,
    },
    callId: 'test-call',
    tool: 'skill-source-local.test',
    host: {
      plugins: () => [],
      explainPlugin: () => undefined,
      searchTools: () => [],
    },
  };
}

/** Runs `fn` and returns its ToolError as plain data, or fails the test when it does not throw one. */
export async function failureOf(fn: () => unknown): Promise<{ code: string; message: string }> {
  try {
    await fn();
  } catch (error) {
    if (isToolError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected a ToolError, but the call succeeded');
}

/** Processes whose command line contains `marker` (not counting ps itself). */
export function processesWithMarker(marker: string): string[] {
  const out = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
  return out.split('\n').filter((line) => line.includes(marker) && !line.includes('ps -eo'));
}

/** Replaces every occurrence of `base` in a JSON-able value with `<base>`, for stable snapshots. */
export function normalize<T>(value: T, base: string): T {
  return JSON.parse(JSON.stringify(value).split(base).join('<base>')) as T;
}
