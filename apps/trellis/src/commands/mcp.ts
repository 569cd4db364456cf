import { lstat, readFile } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { EXIT, FailedError, UsageError } from '../errors.ts';
import { toJson, type CommandIO } from '../io.ts';
import { resolveHostPaths } from '../loadConfig.ts';
import type { CommandLine } from '../parseCommandLine.ts';

type Env = Readonly<Record<string, string | undefined>>;

const MAX_IMPORT_BYTES = 1024 * 1024;

/** `trellis mcp import <file>` and `trellis mcp approve <server> [tool]`. */
export async function mcpCommand(line: CommandLine, io: CommandIO, env: Env): Promise<number> {
  return line.command[1] === 'import' ? mcpImport(line, io, env) : mcpApprove(line, io, env);
}

/** The user's runtime.toml: `--config` when given, else `$XDG_CONFIG_HOME/trellis/runtime.toml` (`~/.config/...`). */
function userConfigPath(line: CommandLine, env: Env, home: string): string {
  if (line.flags.config !== undefined) return resolve(line.flags.config);
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg !== undefined && xdg !== '' && isAbsolute(xdg) ? xdg : join(home, '.config');
  return join(base, 'trellis', 'runtime.toml');
}

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new FailedError(`cannot read ${path}: ${(error as Error).message}`);
  }
}

/** Writes a file atomically, keeping the mode of the file it replaces (0600 for a new one). */
async function writeAtomic(path: string, text: string): Promise<void> {
  let mode = 0o600;
  try {
    const stat = await lstat(path);
    if (!stat.isFile())
      throw new FailedError(`${path} is not a regular file (a symlink or another type); write the servers into the file it should be`);
    mode = stat.mode & 0o777;
  } catch (error) {
    if (error instanceof FailedError) throw error;
  }
  const { writeFileAtomic } = await import('@trellis/plugin-mcp/admin');
  await writeFileAtomic(path, text, { mode, folderMode: 0o700 });
}

async function mcpImport(line: CommandLine, io: CommandIO, env: Env): Promise<number> {
  const file = resolve(line.args[0]!);
  const { home } = resolveHostPaths({ workspace: line.flags.workspace, env });
  const { parseMcpServersJson, renderServersToml } = await import('@trellis/plugin-mcp/admin');
  const { parse } = await import('smol-toml');
  const source = await readOptional(file);
  if (source === undefined)
    throw new UsageError(
      `${file} does not exist; give the path of an MCP client config (e.g. ~/.config/Claude/claude_desktop_config.json, .mcp.json, .cursor/mcp.json)`,
    );
  if (source.length > MAX_IMPORT_BYTES) throw new FailedError(`${file} is over ${MAX_IMPORT_BYTES} bytes; it is not an MCP client config`);
  const imported = parseMcpServersJson(source, file);
  if (imported.error !== undefined) throw new FailedError(imported.error.message);

  const target = userConfigPath(line, env, home);
  const current = (await readOptional(target)) ?? '';
  let document: Record<string, unknown>;
  try {
    document = parse(current) as Record<string, unknown>;
  } catch (error) {
    throw new FailedError(
      `${target} is not valid TOML (${(error as Error).message.split('\n', 1)[0]}); fix it (trellis config check), then import again`,
    );
  }
  const entries = ((document.plugins as Record<string, unknown> | undefined)?.entries ?? {}) as Record<string, unknown>;
  const mcpEntry = entries.mcp as Record<string, unknown> | undefined;
  const existing = new Set(
    (((mcpEntry?.config as Record<string, unknown> | undefined)?.servers ?? []) as Array<{ name?: unknown }>).map((s) => String(s?.name)),
  );
  const warnings = [...imported.warnings];
  const fresh = imported.servers.filter((server) => {
    if (!existing.has(server.name)) return true;
    warnings.push({
      code: 'CONFIG_INVALID',
      message: `${target} already has a server named "${server.name}"; kept it, skipped the imported one (remove it first to replace it)`,
    });
    return false;
  });
  for (const server of fresh) {
    const text = JSON.stringify(server);
    for (const match of text.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)) {
      const name = match[1]!;
      if (env[name] === undefined)
        warnings.push({
          code: 'ENV_VAR_MISSING',
          message: `server "${server.name}" uses \${${name}}, which is not set now; set it before running trellis, or the config will not load`,
        });
    }
  }

  let appended = '';
  if (fresh.length > 0) {
    // A config that never mentions the bridge gets it switched on; an explicit choice is left alone.
    if (mcpEntry === undefined) appended += `\n[plugins.entries.mcp]\nenabled = true\n`;
    appended += renderServersToml(fresh, file);
    const next = `${current}${current === '' || current.endsWith('\n') ? '' : '\n'}${appended}`;
    try {
      parse(next);
    } catch (error) {
      throw new FailedError(
        `the servers cannot be appended to ${target} (${(error as Error).message.split('\n', 1)[0]}); it may define plugins.entries.mcp.config.servers inline. Add them by hand:\n${appended}`,
      );
    }
    await writeAtomic(target, next);
  }
  const enabledNote =
    mcpEntry !== undefined && mcpEntry.enabled !== true
      ? ' The mcp plugin is on only in profile full or with [plugins.entries.mcp] enabled = true.'
      : '';
  if (line.flags.json) {
    io.out(toJson({ config: target, imported: fresh.map((s) => s.name), warnings }));
  } else {
    for (const w of warnings) io.err(`warning: ${w.message}\n`);
    io.out(
      fresh.length === 0
        ? `Nothing imported into ${target}.\n`
        : `Imported ${fresh.length} server${fresh.length === 1 ? '' : 's'} into ${target}: ${fresh.map((s) => s.name).join(', ')}.${enabledNote}\nTheir tools are pinned the first time Trellis lists them (trellis tools list).\n`,
    );
  }
  return EXIT.OK;
}

function short(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(value ?? null);
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
}

async function mcpApprove(line: CommandLine, io: CommandIO, env: Env): Promise<number> {
  const [server, tool] = line.args;
  const { home } = resolveHostPaths({ workspace: line.flags.workspace, env });
  const { approvePins, resolveStateDir } = await import('@trellis/plugin-mcp/admin');
  const request = { stateDir: resolveStateDir(env, home), server: server!, ...(tool !== undefined ? { tool } : {}) };
  // The change is shown first; on a terminal the user confirms it, elsewhere the command is the approval.
  const preview = await approvePins({ ...request, dryRun: true });
  if (preview.error !== undefined) {
    if (line.flags.json) {
      io.out(toJson(preview));
      return EXIT.FAILED;
    }
    throw new FailedError(`${preview.error.code}: ${preview.error.message}`);
  }
  if (preview.approved.length === 0) {
    if (line.flags.json) io.out(toJson(preview));
    else io.out(`mcp server ${server}: no changed tools are waiting for approval (${preview.pinPath}).\n`);
    return EXIT.OK;
  }
  if (!line.flags.json) {
    for (const approved of preview.approved) {
      io.out(`mcp.${server}.${approved.tool}: ${approved.changes.join(', ') || 'new pin'} changed.\n`);
      if (approved.changes.includes('description'))
        io.out(`  description was: ${short(approved.before.description)}\n  description now: ${short(approved.after.description)}\n`);
      if (approved.changes.includes('input schema'))
        io.out(`  input schema was: ${short(approved.before.inputSchema)}\n  input schema now: ${short(approved.after.inputSchema)}\n`);
      if (approved.changes.includes('output schema'))
        io.out(`  output schema was: ${short(approved.before.outputSchema)}\n  output schema now: ${short(approved.after.outputSchema)}\n`);
    }
    if (io.interactive && io.ask !== undefined) {
      const answer = await io.ask(`Approve ${preview.approved.length === 1 ? 'this change' : 'these changes'}? [y/N] `);
      if (!/^y(es)?$/i.test(answer.trim())) {
        io.out('Nothing approved.\n');
        return EXIT.FAILED;
      }
    }
  }
  const result = await approvePins(request);
  if (line.flags.json) {
    io.out(toJson(result));
    return result.error === undefined ? EXIT.OK : EXIT.FAILED;
  }
  io.out(`Approved: ${result.approved.map((a) => `mcp.${server}.${a.tool}`).join(', ')}.\n`);
  if (result.stillPending.length > 0) io.out(`Still withheld: ${result.stillPending.join(', ')}.\n`);
  return EXIT.OK;
}
