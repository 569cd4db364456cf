import { parseArgs } from 'node:util';
import { PLUGIN_ID_PATTERN, PROFILE_NAMES, type ProfileName } from '@trellis/sdk';
import { UsageError } from './errors.ts';

/** Flags every command accepts. */
export interface GlobalFlags {
  readonly config?: string;
  readonly workspace?: string;
  readonly profile?: ProfileName;
  readonly pluginPaths: readonly string[];
  readonly json: boolean;
  /** `--allow ID` (repeatable): added to `[plugins] allow` for this run. */
  readonly allow?: readonly string[];
  /** `--enable ID` (repeatable): `[plugins.entries.ID] enabled = true` for this run. */
  readonly enable?: readonly string[];
  /** `--disable ID` (repeatable): `[plugins.entries.ID] enabled = false` for this run. */
  readonly disable?: readonly string[];
}

/** A parsed command line. */
export interface CommandLine {
  /** The command words, e.g. `['tools', 'call']`; empty for bare `trellis`. */
  readonly command: readonly string[];
  /** Positional arguments after the command words. */
  readonly args: readonly string[];
  readonly flags: GlobalFlags;
  /** Command-specific options. */
  readonly options: {
    readonly args?: string;
    readonly format?: string;
    readonly limit?: string;
    readonly state?: string;
    /** `config show --origin`. */
    readonly origin?: boolean;
    /** `trust --list`. */
    readonly list?: boolean;
    /** `trust --revoke DIR`. */
    readonly revoke?: string;
    readonly grace?: string;
    /** `serve`: speak Streamable HTTP instead of stdio. */
    readonly http?: boolean;
    /** `serve --http`: the address to bind. */
    readonly host?: string;
    /** `serve --http`: the port (0 = any free one). */
    readonly port?: string;
    /** `serve --http`: no bearer token (loopback only). */
    readonly noAuth?: boolean;
    /** `tools list --all`: also the tools known but not offered, with the reason. */
    readonly all?: boolean;
    /** `plugin new --external process|script|http`. */
    readonly external?: string;
    /** `plugin new --lang python|node|sh`. */
    readonly lang?: string;
    /** `plugins list --running`: ask the running host(s) instead of reading the config. */
    readonly running?: boolean;
  };
  readonly help: boolean;
  readonly version: boolean;
}

/** The commands and how many positional arguments each takes. */
export const COMMANDS: Readonly<
  Record<
    string,
    { words: readonly string[]; positionals: readonly string[]; options: readonly string[]; optionalPositionals?: readonly string[] }
  >
> = {
  doctor: { words: ['doctor'], positionals: [], options: [] },
  'config check': { words: ['config', 'check'], positionals: [], options: [] },
  'plugins list': { words: ['plugins', 'list'], positionals: [], options: ['state', 'running'] },
  'plugins explain': { words: ['plugins', 'explain'], positionals: ['id'], options: [] },
  'tools list': { words: ['tools', 'list'], positionals: [], options: ['format', 'all'] },
  'tools describe': { words: ['tools', 'describe'], positionals: ['name'], options: [] },
  'tools search': { words: ['tools', 'search'], positionals: ['query'], options: ['limit'] },
  'tools call': { words: ['tools', 'call'], positionals: ['name'], options: ['args'] },
  'config show': { words: ['config', 'show'], positionals: [], options: ['origin'] },
  trust: { words: ['trust'], positionals: [], optionalPositionals: ['dir'], options: ['list', 'revoke'] },
  'mcp import': { words: ['mcp', 'import'], positionals: ['file'], options: [] },
  'mcp approve': { words: ['mcp', 'approve'], positionals: ['server'], options: [], optionalPositionals: ['tool'] },
  chat: { words: ['chat'], positionals: [], optionalPositionals: ['prompt'], options: [] },
  run: { words: ['run'], positionals: [], options: ['grace'] },
  serve: { words: ['serve'], positionals: [], options: ['http', 'host', 'port', 'no-auth'] },
  'plugin new': { words: ['plugin', 'new'], positionals: ['id'], options: ['external', 'lang'] },
  'plugin test': { words: ['plugin', 'test'], positionals: ['dir'], options: [] },
  status: { words: ['status'], positionals: [], options: [] },
};

/** Parses argv (without `node` and the script), checking flags and arity; throws `UsageError`. */
export function parseCommandLine(argv: readonly string[]): CommandLine {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        config: { type: 'string' },
        workspace: { type: 'string' },
        profile: { type: 'string' },
        'plugin-path': { type: 'string', multiple: true },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
        args: { type: 'string' },
        format: { type: 'string' },
        limit: { type: 'string' },
        state: { type: 'string' },
        origin: { type: 'boolean' },
        list: { type: 'boolean' },
        revoke: { type: 'string' },
        grace: { type: 'string' },
        http: { type: 'boolean' },
        host: { type: 'string' },
        port: { type: 'string' },
        'no-auth': { type: 'boolean' },
        allow: { type: 'string', multiple: true },
        enable: { type: 'string', multiple: true },
        disable: { type: 'string', multiple: true },
        all: { type: 'boolean' },
        external: { type: 'string' },
        lang: { type: 'string' },
        running: { type: 'boolean' },
      },
    });
  } catch (error) {
    const message = error instanceof Error ? error.message.replace(/\. To specify a positional argument.*$/s, '') : String(error);
    throw new UsageError(`${message}. Run \`trellis --help\` for the flags each command takes.`);
  }
  const { values, positionals } = parsed;
  const profile = values.profile;
  if (profile !== undefined && !(PROFILE_NAMES as readonly string[]).includes(profile)) {
    throw new UsageError(`--profile must be one of ${PROFILE_NAMES.join(', ')}; got "${profile}"`);
  }
  const flags: GlobalFlags = {
    ...(values.config !== undefined ? { config: values.config } : {}),
    ...(values.workspace !== undefined ? { workspace: values.workspace } : {}),
    ...(profile !== undefined ? { profile: profile as ProfileName } : {}),
    pluginPaths: values['plugin-path'] ?? [],
    json: values.json ?? false,
    ...pluginSwitches(values),
  };
  const help = values.help ?? false;
  const version = values.version ?? false;
  if (positionals.length === 0) {
    return { command: [], args: [], flags, options: {}, help, version };
  }

  const spec = COMMANDS[positionals[0]!] ?? COMMANDS[`${positionals[0]} ${positionals[1] ?? ''}`];
  if (spec === undefined) {
    const group = Object.values(COMMANDS).filter((c) => c.words[0] === positionals[0]);
    if (group.length > 0) {
      const sub = positionals[1];
      throw new UsageError(
        `${sub === undefined ? 'missing subcommand' : `unknown subcommand "${sub}"`} for "${positionals[0]}"; use one of: ${group.map((c) => c.words.join(' ')).join(', ')}`,
      );
    }
    throw new UsageError(`unknown command "${positionals[0]}"; run \`trellis --help\` for the list`);
  }
  const rest = positionals.slice(spec.words.length);
  const name = spec.words.join(' ');
  if (!help) {
    if (rest.length < spec.positionals.length) {
      throw new UsageError(`\`trellis ${name}\` needs <${spec.positionals[rest.length]}>`);
    }
    const most = spec.positionals.length + (spec.optionalPositionals?.length ?? 0);
    if (rest.length > most) {
      const takes = [...spec.positionals.map((p) => `<${p}>`), ...(spec.optionalPositionals ?? []).map((p) => `[${p}]`)];
      throw new UsageError(
        `\`trellis ${name}\` takes ${takes.length === 0 ? 'no arguments' : takes.join(' ')}; unexpected "${rest[most]}"`,
      );
    }
  }
  const options: Record<string, string | boolean> = {};
  for (const key of ['args', 'format', 'limit', 'state', 'grace', 'external', 'lang'] as const) {
    const value = values[key];
    if (value === undefined) continue;
    if (!spec.options.includes(key)) throw new UsageError(`\`trellis ${name}\` does not take --${key}`);
    options[key] = value;
  }
  for (const key of ['origin', 'list', 'revoke'] as const) {
    const value = values[key];
    if (value === undefined) continue;
    if (!spec.options.includes(key)) throw new UsageError(`\`trellis ${name}\` does not take --${key}`);
    options[key] = value;
  }
  const serveOptions: { http?: boolean; host?: string; port?: string; noAuth?: boolean } = {};
  for (const key of ['http', 'host', 'port', 'no-auth'] as const) {
    const value = values[key];
    if (value === undefined) continue;
    if (!spec.options.includes(key)) throw new UsageError(`\`trellis ${name}\` does not take --${key}`);
    if (key === 'no-auth') serveOptions.noAuth = value as boolean;
    else if (key === 'http') serveOptions.http = value as boolean;
    else serveOptions[key] = value as string;
  }
  if (values.running !== undefined) {
    if (!spec.options.includes('running')) throw new UsageError(`\`trellis ${name}\` does not take --running`);
    if (values.state !== undefined) throw new UsageError('--state goes without --running (the running host lists every plugin)');
    options.running = values.running;
  }
  if (values.all !== undefined) {
    if (!spec.options.includes('all')) throw new UsageError(`\`trellis ${name}\` does not take --all`);
    options.all = values.all;
  }
  return { command: spec.words, args: rest, flags, options: { ...options, ...serveOptions }, help, version };
}

/** `--allow/--enable/--disable`: each value a plugin id; one id cannot be both enabled and disabled. */
function pluginSwitches(values: {
  allow?: string[];
  enable?: string[];
  disable?: string[];
}): Pick<GlobalFlags, 'allow' | 'enable' | 'disable'> {
  const out: { allow?: string[]; enable?: string[]; disable?: string[] } = {};
  for (const key of ['allow', 'enable', 'disable'] as const) {
    const ids = values[key];
    if (ids === undefined) continue;
    for (const id of ids) {
      if (!PLUGIN_ID_PATTERN.test(id))
        throw new UsageError(`--${key} takes a plugin id (lowercase letters, digits and dashes), e.g. --${key} core-python; got "${id}"`);
    }
    out[key] = [...new Set(ids)];
  }
  const both = out.enable?.find((id) => out.disable?.includes(id));
  if (both !== undefined) throw new UsageError(`--enable ${both} and --disable ${both} contradict each other; give one`);
  return out;
}
