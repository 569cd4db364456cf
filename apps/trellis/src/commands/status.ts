import { EXIT } from '../errors.ts';
import { asReloadResult, describeReload } from '../reload/describeReload.ts';
import { formatTable, toJson, type CommandIO } from '../io.ts';
import type { CommandLine } from '../parseCommandLine.ts';
import { resolveControlDir } from '../status/controlDir.ts';
import type { HostStatus } from '../status/HostStatus.ts';
import { listRunningHosts, type RunningHosts } from '../status/listRunningHosts.ts';
import type { PluginStatus } from '../status/pluginStatus.ts';

function lifecycleCells(lifecycle: NonNullable<PluginStatus['lifecycle']>): string[] {
  const check = lifecycle.lastHealthCheck;
  return [
    lifecycle.state,
    lifecycle.since ?? '',
    lifecycle.maxRestarts === undefined ? String(lifecycle.restarts) : `${lifecycle.restarts}/${lifecycle.maxRestarts}`,
    check === undefined ? '' : `${check.healthy ? 'ok' : 'failed'} ${check.at}`,
    lifecycle.lastError ?? '',
  ];
}

/** The rows of one host's plugins: every plugin with `all`, else the enabled ones; parts (MCP servers) indented below. */
function pluginRows(host: HostStatus, all: boolean): string[][] {
  const rows: string[][] = [];
  for (const plugin of host.plugins) {
    if (!all && plugin.state !== 'enabled') continue;
    const lifecycle = plugin.lifecycle;
    rows.push(
      lifecycle === undefined
        ? [
            plugin.id,
            plugin.kind,
            plugin.runs,
            plugin.state,
            '',
            '',
            '',
            plugin.reason ? `${plugin.reason.code}: ${plugin.reason.message}` : '',
          ]
        : [plugin.id, plugin.kind, plugin.runs, ...lifecycleCells(lifecycle)],
    );
    for (const part of lifecycle?.parts ?? []) rows.push([`  ${plugin.id}/${part.name}`, '', '', ...lifecycleCells(part)]);
  }
  return rows;
}

function describeHost(host: HostStatus): string {
  const generation = host.generation === undefined ? '' : ` · generation ${host.generation}`;
  const reload = asReloadResult(host.lastReload);
  // A rejected reload's errors are why the host still serves an older config: they are shown here too.
  const last = reload === undefined ? '' : `Last reload, at ${reload.at}: ${describeReload(reload)}\n`;
  return `Host ${host.pid} (trellis ${host.command}) · started ${host.startedAt} · workspace ${host.workspace} · profile ${host.profile}${generation}\n${last}`;
}

function writeLeftovers(io: CommandIO, found: RunningHosts): void {
  for (const s of found.stale)
    io.err(`trellis: ${s.removed ? 'removed a stale' : 'could not remove the stale'} control socket ${s.path}: ${s.reason}\n`);
  for (const u of found.unreachable) io.err(`trellis: host ${u.pid} did not answer on ${u.path}: ${u.message}\n`);
  if (found.problem !== undefined) io.err(`trellis: cannot look for running hosts: ${found.problem}\n`);
}

function writeHosts(io: CommandIO, found: RunningHosts, all: boolean): void {
  const header = ['ID', 'KIND', 'RUNS', 'STATE', 'SINCE', 'RESTARTS', 'LAST HEALTH CHECK', 'LAST ERROR'];
  found.hosts.forEach((host, index) => {
    if (index > 0) io.out('\n');
    io.out(describeHost(host));
    io.out(formatTable(header, pluginRows(host, all)));
  });
}

function jsonOf(found: RunningHosts): string {
  return toJson({
    dir: found.dir,
    hosts: found.hosts,
    stale: found.stale,
    unreachable: found.unreachable,
    ...(found.problem ? { problem: found.problem } : {}),
  });
}

/**
 * `trellis status [--json]`: every running `trellis serve`/`trellis run` of this user, asked over
 * its control socket: pid, command, start time, and each enabled plugin's lifecycle. Stale sockets
 * are removed and reported on stderr. Exit 0 when at least one host answered, 1 when none runs.
 */
export async function status(line: CommandLine, io: CommandIO, env: Readonly<Record<string, string | undefined>>): Promise<number> {
  const found = await listRunningHosts(resolveControlDir(env));
  if (line.flags.json) io.out(jsonOf(found));
  else {
    writeLeftovers(io, found);
    if (found.hosts.length === 0) io.out(`No running Trellis host (trellis serve, trellis run) of yours; looked in ${found.dir}\n`);
    else writeHosts(io, found, false);
  }
  return found.hosts.length > 0 ? EXIT.OK : EXIT.FAILED;
}

/** `trellis plugins list --running [--json]`: every plugin as the running host(s) see it, lifecycle included. */
export async function pluginsListRunning(
  line: CommandLine,
  io: CommandIO,
  env: Readonly<Record<string, string | undefined>>,
): Promise<number> {
  const found = await listRunningHosts(resolveControlDir(env));
  if (line.flags.json) {
    io.out(toJson({ hosts: found.hosts.map((h) => ({ pid: h.pid, command: h.command, plugins: h.plugins })) }));
  } else {
    writeLeftovers(io, found);
    if (found.hosts.length === 0)
      io.out(`No running Trellis host of yours; looked in ${found.dir}. Without --running, plugins list shows this configuration.\n`);
    else writeHosts(io, found, true);
  }
  return found.hosts.length > 0 ? EXIT.OK : EXIT.FAILED;
}
