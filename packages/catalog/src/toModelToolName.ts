import { sha256Hex } from '@trellis/sdk/internal';

/** Pattern every model-API tool name matches (OpenAI and Anthropic function names). */
export const MODEL_TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

const MAX_LENGTH = 64;
const PLUGIN_SEGMENT = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
// A segment of a plain name: letters, digits, dashes and single underscores, none at either end.
const PLAIN_SEGMENT = /^[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*$/;
const DEFAULT_HASH_LENGTH = 12;
const MAX_PLUGIN_PREFIX = 20;

/**
 * The model-API name of a fully qualified tool name, matching `^[a-zA-Z0-9_-]{1,64}$`. Pure.
 *
 * Plain names (a plugin id, then dot-separated segments of letters, digits, dashes and single inner
 * underscores, 64 characters at most once encoded) join their segments with `__`:
 * `core-fs.read_file` → `core-fs__read_file`, `mcp.github.create_issue` → `mcp__github__create_issue`.
 * Splitting on `__` gives the segments back, so plain names never collide.
 *
 * Every other name (too long, `__` or edge underscores, unicode, other characters) becomes
 * `<plugin>_<hash>_<readable rest>`: the sanitized plugin part, 12 hex digits of the sha256 of the
 * whole name, and as much of a sanitized rest as fits. Such names never contain `__`, so they cannot
 * equal a plain name; two of them collide only if their hashes do, which a `ModelNameTable` resolves
 * by lengthening the hash.
 */
export function toModelToolName(name: string): string {
  return plainModelName(name) ?? hashedModelName(name, DEFAULT_HASH_LENGTH);
}

/** The fully qualified name of a plain model name (see `toModelToolName`); undefined for hashed or invalid names. */
export function decodePlainModelToolName(modelName: string): string | undefined {
  if (!MODEL_TOOL_NAME_PATTERN.test(modelName)) return undefined;
  const segments = modelName.split('__');
  if (segments.length < 2 || !PLUGIN_SEGMENT.test(segments[0] ?? '')) return undefined;
  for (const segment of segments) if (!PLAIN_SEGMENT.test(segment)) return undefined;
  return segments.join('.');
}

function plainModelName(name: string): string | undefined {
  const segments = name.split('.');
  if (segments.length < 2 || !PLUGIN_SEGMENT.test(segments[0] ?? '')) return undefined;
  for (const segment of segments) if (!PLAIN_SEGMENT.test(segment)) return undefined;
  const encoded = segments.join('__');
  return encoded.length <= MAX_LENGTH ? encoded : undefined;
}

function hashedModelName(name: string, hashLength: number): string {
  const dot = name.indexOf('.');
  const pluginPart = dot < 0 ? name : name.slice(0, dot);
  const rest = dot < 0 ? '' : name.slice(dot + 1);
  const hash = sha256Hex(name).slice(0, hashLength);
  const prefixRoom = Math.min(MAX_PLUGIN_PREFIX, MAX_LENGTH - 1 - hash.length);
  const prefix =
    pluginPart
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, prefixRoom) || 'x';
  const head = `${prefix}_${hash}`;
  const readable = rest
    .replace(/\./g, '_')
    .replace(/[^A-Za-z0-9_-]+/g, '-')
    .replace(/_+/g, '_')
    .replace(/^[_-]+|[_-]+$/g, '');
  const room = MAX_LENGTH - head.length - 1;
  const tail = readable.slice(0, Math.max(0, room)).replace(/[_-]+$/, '');
  return tail.length > 0 ? `${head}_${tail}` : head;
}

/** A two-way map between fully qualified tool names and model-API names, collision-free by construction. */
export interface ModelNameTable {
  /** The model-API name of a name the table holds; undefined otherwise. */
  toModel(name: string): string | undefined;
  /** The fully qualified name behind a model-API name; undefined when the table holds none. */
  fromModel(modelName: string): string | undefined;
}

/**
 * Assigns model-API names to `names` in the order given. Each gets `toModelToolName(name)` unless
 * an earlier name already holds it (only possible for hashed names whose 12-digit hashes collide);
 * then its hash is lengthened until the name is free. Earlier names keep theirs, so adding names
 * later never renames existing tools.
 */
export function createModelNameTable(names: Iterable<string>): ModelNameTable {
  return assignModelNames(names, DEFAULT_HASH_LENGTH);
}

/** `createModelNameTable` with a chosen first hash length; short ones let tests force collisions. Internal. */
export function assignModelNames(names: Iterable<string>, hashLength: number): ModelNameTable {
  const toModel = new Map<string, string>();
  const fromModel = new Map<string, string>();
  for (const name of names) {
    if (toModel.has(name)) continue;
    let modelName = plainModelName(name) ?? hashedModelName(name, hashLength);
    for (let longer = hashLength + 4; fromModel.has(modelName); longer += 4) {
      if (longer > 60) throw new Error(`BUG: cannot give ${JSON.stringify(name)} a free model name`);
      modelName = hashedModelName(name, longer);
    }
    toModel.set(name, modelName);
    fromModel.set(modelName, name);
  }
  return {
    toModel: (name) => toModel.get(name),
    fromModel: (modelName) => fromModel.get(modelName),
  };
}

/** The fully qualified name behind a model-API name, through a catalog (or any holder of a name table). */
export function fromModelToolName(
  modelName: string,
  catalog: { fromModelToolName(modelName: string): string | undefined },
): string | undefined {
  return catalog.fromModelToolName(modelName);
}
