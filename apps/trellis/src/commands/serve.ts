import { randomBytes } from 'node:crypto';
import { bearerTokenProblem } from '@trellis/config';
import { createTrellisMcpServer, isLoopbackHost, loadMcpSkills, serveMcpHttp, serveMcpStdio } from '@trellis/mcp-server';
import type { McpHttpServing, TrellisMcpServer } from '@trellis/mcp-server';
import type { Assembly } from '../assemble.ts';
import { TRELLIS_VERSION } from '../bundled.gen.ts';
import { EXIT, UsageError } from '../errors.ts';
import type { CommandIO } from '../io.ts';
import type { CommandLine } from '../parseCommandLine.ts';
import { openHostControl } from '../status/openHostControl.ts';
import { describeReload } from '../reload/describeReload.ts';
import { SHUTDOWN_LIMIT_MS } from '../shutdown.ts';
import type { LiveHost } from '../reload/startLiveHost.ts';

const SKILLS_PLUGIN = 'skill-source-local';

/**
 * `trellis serve`: the assembly as an MCP server on stdin/stdout until stdin closes.
 * `trellis serve --http [--host H] [--port N] [--no-auth]`: Streamable HTTP at `http://H:N/mcp`
 * until SIGINT/SIGTERM, behind a bearer token. Everything but protocol goes to stderr.
 */
export async function serve(
  line: CommandLine,
  io: CommandIO,
  assembly: Assembly,
  env: Readonly<Record<string, string | undefined>>,
  live?: Pick<LiveHost, 'onReload' | 'status'>,
): Promise<number> {
  const http = line.options.http ?? false;
  if (!http && (line.options.host !== undefined || line.options.port !== undefined || line.options.noAuth !== undefined)) {
    throw new UsageError('--host, --port and --no-auth go with --http (plain `trellis serve` speaks stdio)');
  }
  const host = line.options.host ?? '127.0.0.1';
  const port = parsePort(line.options.port);
  const noAuth = line.options.noAuth ?? false;
  if (noAuth && !isLoopbackHost(host)) {
    throw new UsageError(
      `--no-auth is refused on ${host}: anyone who can reach that address could run your tools. Bind a loopback address (--host 127.0.0.1) or drop --no-auth`,
    );
  }

  const skills = await serveableSkills(assembly, io);
  const server = createTrellisMcpServer({
    host: {
      catalog: () => assembly.catalog,
      runtime: assembly.runtime,
      onCatalogChange: (listener) => assembly.onCatalogChanged(() => listener()),
    },
    version: TRELLIS_VERSION,
    // Asked again at every listing: `assembly` is the live host's view, so a reload that changes
    // [serve] tool_names or the bridges applies to the next listing (and clients hear list_changed).
    naming: () => assembly.config.serve.tool_names,
    openWorldPlugins: () => assembly.snapshot.plugins.filter((p) => p.kind === 'bridge').map((p) => p.id),
    ...(skills !== undefined ? { skills } : {}),
    instructions: 'Trellis tools. Each tool title is its Trellis name, `<plugin>.<tool>`.',
  });
  const offered = server.tools().length;
  const control = await openHostControl({
    assembly,
    live,
    command: 'serve',
    warn: (message) => io.err(`trellis serve: warning: ${message}\n`),
  });
  // Connected clients hear of each reload: a rejected one as an error, with what to fix.
  const unfollow = live?.onReload((result) => {
    if (result.status !== 'unchanged') server.log(result.status === 'rejected' ? 'error' : 'info', describeReload(result));
  });
  try {
    if (!http) return await serveStdio(server, io, offered);
    return await serveHttp(server, io, { host, port, noAuth, env, assembly, offered, live });
  } finally {
    await control.close();
    unfollow?.();
    server.close();
  }
}

async function serveStdio(server: TrellisMcpServer, io: CommandIO, offered: number): Promise<number> {
  // Once stdin closes, the calls the client had sent still answer, within a signal's shutdown limit.
  const serving = serveMcpStdio(server, {
    onerror: (error) => io.err(`trellis serve: ${error.message}\n`),
    drainTimeoutMs: SHUTDOWN_LIMIT_MS,
  });
  io.err(`trellis serve: MCP over stdio, ${offered} tool${offered === 1 ? '' : 's'}; close stdin to stop\n`);
  const end = await serving.closed;
  await serving.close();
  // stdin is done with; let the process end once the plugins are down.
  process.stdin.unref?.();
  if (end !== 'broken') return EXIT.OK;
  io.err('trellis serve: the stdio connection can no longer be used; stopping\n');
  return EXIT.FAILED;
}

interface HttpSettings {
  readonly host: string;
  readonly port: number;
  readonly noAuth: boolean;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly assembly: Assembly;
  readonly offered: number;
  readonly live: Pick<LiveHost, 'onReload'> | undefined;
}

async function serveHttp(server: TrellisMcpServer, io: CommandIO, settings: HttpSettings): Promise<number> {
  const { assembly, env } = settings;
  let token: (() => string) | undefined;
  if (settings.noAuth) {
    io.err(
      'trellis serve: warning: --no-auth: any program on this machine can call these tools (browsers are still held off by the Origin check)\n',
    );
  } else {
    const fromEnv = env.TRELLIS_SERVE_TOKEN;
    const envProblem = fromEnv === undefined || fromEnv === '' ? undefined : bearerTokenProblem(fromEnv);
    if (envProblem !== undefined) throw new UsageError(`TRELLIS_SERVE_TOKEN ${envProblem}`);
    // TRELLIS_SERVE_TOKEN holds for the process; [serve] token follows the config (asked at every
    // request, so a token rotated in runtime.toml refuses the old one once the reload applies);
    // with neither, one is generated, once, and printed.
    let generated: string | undefined;
    const current = (): { readonly token: string; readonly from: string } => {
      if (fromEnv) return { token: fromEnv, from: 'TRELLIS_SERVE_TOKEN' };
      if (assembly.config.serve.token !== '') return { token: assembly.config.serve.token, from: '[serve] token' };
      if (generated === undefined) {
        generated = randomBytes(24).toString('base64url');
        io.err(`trellis serve: token (generated; set TRELLIS_SERVE_TOKEN or [serve] token to fix one): ${generated}\n`);
      }
      return { token: generated, from: 'generated' };
    };
    token = () => current().token;
    let last = current();
    settings.live?.onReload((result) => {
      if (result.status !== 'applied') return;
      const next = current();
      if (next.token !== last.token) {
        const ended = serving?.reauthorize() ?? 0;
        io.err(
          `trellis serve: the bearer token changed (now ${next.from}); requests with the old one get 401 from now on${ended > 0 ? `, and its ${ended} open request${ended === 1 ? ' was' : 's were'} ended` : ''}\n`,
        );
      }
      last = next;
    });
  }
  let serving: McpHttpServing | undefined;
  try {
    serving = await serveMcpHttp(server, {
      host: settings.host,
      port: settings.port,
      ...(token !== undefined ? { token } : {}),
      allowedOrigins: () => assembly.config.serve.allowed_origins,
      onerror: (error) => io.err(`trellis serve: ${error.message}\n`),
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(
      `cannot listen on ${settings.host}:${settings.port} (${code ?? (error instanceof Error ? error.message : String(error))})${code === 'EADDRINUSE' ? '; pick another --port, or --port 0 for any free one' : ''}`,
    );
  }
  io.err(
    `trellis serve: MCP over Streamable HTTP at ${serving.url}, ${settings.offered} tool${settings.offered === 1 ? '' : 's'}${token !== undefined ? ', bearer token required' : ''}; Ctrl-C to stop\n`,
  );
  // Runs until a signal: the CLI's trap disposes the assembly and exits.
  await new Promise<never>(() => {});
  return EXIT.OK;
}

function parsePort(text: string | undefined): number {
  if (text === undefined) return 0;
  const port = Number(text);
  if (!/^\d+$/.test(text) || !Number.isInteger(port) || port > 65_535)
    throw new UsageError(`--port must be a whole number from 0 to 65535 (0 = any free port); got "${text}"`);
  return port;
}

/** The skills skill-source-local admits, loaded for the SEP-2640 extension; undefined when it is not offered or finds none. */
async function serveableSkills(assembly: Assembly, io: CommandIO) {
  if (assembly.catalog.get(`${SKILLS_PLUGIN}.list`) === undefined || assembly.catalog.get(`${SKILLS_PLUGIN}.read`) === undefined)
    return undefined;
  const listed = await assembly.runtime.invoke({ name: `${SKILLS_PLUGIN}.list`, input: {} });
  if (!listed.ok) {
    io.err(`trellis serve: skills are not served: ${listed.error.code}: ${listed.error.message}\n`);
    return undefined;
  }
  const names = ((listed.value as { skills?: ReadonlyArray<{ name?: unknown }> }).skills ?? [])
    .map((s) => s.name)
    .filter((n): n is string => typeof n === 'string');
  if (names.length === 0) return undefined;
  const dirs = new Map<string, string>();
  for (const name of names) {
    const read = await assembly.runtime.invoke({ name: `${SKILLS_PLUGIN}.read`, input: { name } });
    const value = read.ok ? (read.value as { state?: unknown; dir?: unknown }) : undefined;
    if (value?.state === 'admitted' && typeof value.dir === 'string') dirs.set(name, value.dir);
  }
  return loadMcpSkills({ skills: dirs, onWarning: (w) => io.err(`trellis serve: skill ${w.path}: ${w.message}\n`) });
}
