/** A layer's keys, as `parseConfigLayer` returns them, with the name of the layer they come from. */
export interface LayerTree {
  readonly tree: Readonly<Record<string, unknown>>;
  /** Recorded as the origin of every key this layer sets. */
  readonly origin: string;
}

/** The merged keys and, for every key set by some layer, the origin of the layer that set it last. */
export interface MergedLayers {
  readonly tree: Record<string, unknown>;
  /** Dotted key path (as `formatKeyPath` writes it, e.g. `runtime.tools.fs.root`) → origin. */
  readonly origins: Map<string, string>;
}

function isTable(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date);
}

const PLAIN_KEY = /^[A-Za-z0-9_-]+$/;

/** `a.b."c.d"`: a dotted key path, quoting parts that are not bare TOML keys. */
export function joinKeyPath(parts: readonly string[]): string {
  return parts.map((p) => (PLAIN_KEY.test(p) ? p : JSON.stringify(p))).join('.');
}

/**
 * Merges config layers, lowest first, each a patch over the ones below: tables merge key by key,
 * every other value (strings, numbers, booleans, dates and whole arrays) replaces what was below.
 * An array is one value: a layer that sets `[plugins] allow` replaces the whole list (as npm and
 * most layered configs do), so a higher layer can also empty it. Pure.
 */
export function mergeConfigLayers(layers: readonly LayerTree[]): MergedLayers {
  const tree: Record<string, unknown> = {};
  const origins = new Map<string, string>();
  const merge = (into: Record<string, unknown>, patch: Readonly<Record<string, unknown>>, path: string[], origin: string): void => {
    for (const key of Object.keys(patch)) {
      const value = patch[key];
      const at = [...path, key];
      if (isTable(value)) {
        const below = into[key];
        const target: Record<string, unknown> = isTable(below) ? below : {};
        into[key] = target;
        // An empty table (`[plugins.entries.x]` with no keys) is itself something the layer set.
        if (Object.keys(value).length === 0 && !origins.has(joinKeyPath(at))) origins.set(joinKeyPath(at), origin);
        merge(target, value, at, origin);
      } else {
        into[key] = Array.isArray(value) ? [...value] : value;
        origins.set(joinKeyPath(at), origin);
      }
    }
  };
  for (const layer of layers) merge(tree, layer.tree, [], layer.origin);
  return { tree, origins };
}

/**
 * Every leaf of a config value with its dotted key path: tables are walked, anything else (arrays
 * included) is one leaf. Empty tables are listed as a leaf of value `{}`. Keys in document order.
 */
export function flattenConfig(value: Readonly<Record<string, unknown>>): Array<{ key: string; value: unknown }> {
  const out: Array<{ key: string; value: unknown }> = [];
  const walk = (node: Readonly<Record<string, unknown>>, path: string[]): void => {
    const keys = Object.keys(node);
    if (keys.length === 0 && path.length > 0) {
      out.push({ key: joinKeyPath(path), value: {} });
      return;
    }
    for (const key of keys) {
      const child = node[key];
      if (isTable(child)) walk(child, [...path, key]);
      else out.push({ key: joinKeyPath([...path, key]), value: child });
    }
  };
  walk(value, []);
  return out;
}
