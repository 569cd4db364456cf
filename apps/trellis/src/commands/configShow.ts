import type { ConfigOrigin } from '@trellis/config';
import { ConfigError, EXIT } from '../errors.ts';
import { toJson, type CommandIO } from '../io.ts';
import { loadConfig, resolveHostPaths } from '../loadConfig.ts';
import type { CommandLine } from '../parseCommandLine.ts';
import { describeTrust } from './describeTrust.ts';

/** What `config show` prints instead of a value that came from a `${VAR}`. */
export const HIDDEN_VALUE = '<hidden: expanded from an environment variable>';

/** What `config show` prints instead of a literal value under a key named like a credential. */
export const HIDDEN_SECRET = '<hidden: a credential; read it in the file that sets it>';

/**
 * Keys whose last part names a credential (`serve.token`, `…config.api_key`, an `Authorization` or
 * `Cookie` header, `PGPASSWORD` or `GITHUB_PERSONAL_ACCESS_TOKEN` in a server's env): their literal
 * values are not printed either, nor anything beneath them (a `[credentials]` table), at any depth
 * (a bridged server's `env` and `headers` sit inside an array of tables). Short words count only
 * as a word of their own (`db_pass`, not `bypass`); a model's special tokens (`eos_token`) are
 * settings, not secrets.
 */
const SECRET_KEY =
  /(?:password|passwd|secret|api[_-]?key|apikey|private[_-]?key|access[_-]?key|secret[_-]?key|credentials?|authorization|cookie|bearer)$|(?:^|[._-])(?:token|pass|pwd|pat)$/i;
const NOT_SECRET = /(?:^|[._-])(?:eos|bos|pad|stop|sep|unk|mask|cls)[_-]token$/i;

const isSecretKey = (name: string): boolean => SECRET_KEY.test(name) && !NOT_SECRET.test(name);

/** `value` with every non-empty string under a credential-named key (`hidden`: one above it already is) replaced by {@link HIDDEN_SECRET}. */
function hideCredentials(value: unknown, hidden: boolean): unknown {
  if (typeof value === 'string') return value !== '' && hidden ? HIDDEN_SECRET : value;
  if (Array.isArray(value)) return value.map((item) => hideCredentials(item, hidden));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, hideCredentials(inner, hidden || isSecretKey(name))]));
  return value;
}

/**
 * `trellis config show [--origin] [--json]`: every effective key of the layered config; with
 * `--origin`, the file that set it (or `default` for a key no file sets). Values that came from a
 * `${VAR}` are never printed, nor literal values under a key named like a credential (`serve.token`),
 * since this output gets pasted into bug reports.
 */
export async function configShow(line: CommandLine, io: CommandIO, env: Readonly<Record<string, string | undefined>>): Promise<number> {
  const loaded = await loadConfig({
    configPath: line.flags.config,
    env,
    ...resolveHostPaths({ workspace: line.flags.workspace, env }),
    withOrigins: true,
  });
  if (loaded.errors.length > 0 || loaded.value === undefined) throw new ConfigError(loaded.errors);
  const origins = loaded.origins ?? new Map<string, ConfigOrigin>();
  // Imported here, not at the top: main.ts imports every command, and a static import of
  // @trellis/config would load zod and the TOML parser into every command's start-up.
  const { flattenConfig } = await import('@trellis/config');
  const keys = flattenConfig(loaded.value as unknown as Record<string, unknown>).map(({ key, value }) => {
    const origin = originOf(origins, key);
    return {
      key,
      value: origin?.fromEnv === true ? HIDDEN_VALUE : hideCredentials(value, key.split('.').some(isSecretKey)),
      origin:
        origin === undefined
          ? { source: 'default' }
          : { source: origin.source, ...(origin.path !== undefined ? { path: origin.path } : {}) },
    };
  });
  const layers = (loaded.layers ?? []).map((l) => ({
    source: l.source,
    path: l.path ?? null,
    applied: l.applied,
    ...(l.reason !== undefined ? { reason: l.reason } : {}),
    keys: l.keys.length,
  }));
  const trust = loaded.workspaceTrust;
  if (line.flags.json) {
    io.out(
      toJson({
        workspace: { path: trust.workspace, real: trust.real, trusted: trust.trusted, by: trust.by ?? null, store: trust.storePath },
        layers,
        keys,
      }),
    );
    return EXIT.OK;
  }
  io.out(`${describeTrust(trust)}\n`);
  io.out('Layers (lowest first; each a patch over the one below):\n');
  for (const l of layers) {
    const state = l.applied ? 'applied' : `NOT applied: ${l.reason?.code ?? 'skipped'}`;
    io.out(`  ${l.source.padEnd(9)} ${l.path ?? '<embedded runtime.toml>'}  (${state})\n`);
  }
  for (const l of layers) if (!l.applied && l.reason !== undefined) io.out(`    ${l.reason.message}\n`);
  io.out('\n');
  const width =
    line.options.origin === true ? Math.min(60, Math.max(...keys.map((k) => `${k.key} = ${JSON.stringify(k.value)}`.length))) : 0;
  for (const k of keys) {
    const text = `${k.key} = ${k.value === HIDDEN_VALUE || k.value === HIDDEN_SECRET ? k.value : JSON.stringify(k.value)}`;
    if (line.options.origin !== true) io.out(`${text}\n`);
    else
      io.out(
        `${text.padEnd(width)}  # ${k.origin.source === 'default' ? 'schema default' : k.origin.source === 'embedded' ? 'embedded default' : `${k.origin.source}: ${(k.origin as { path?: string }).path ?? ''}`}\n`,
      );
  }
  return EXIT.OK;
}

/** The origin of a key, or of the nearest table above it that a layer set (an empty `[table]`). */
function originOf(origins: ReadonlyMap<string, ConfigOrigin>, key: string): ConfigOrigin | undefined {
  const exact = origins.get(key);
  if (exact !== undefined) return exact;
  for (let cut = key.lastIndexOf('.'); cut > 0; cut = key.lastIndexOf('.', cut - 1)) {
    const parent = origins.get(key.slice(0, cut));
    if (parent !== undefined) return parent;
  }
  return undefined;
}
