import { createHash } from 'node:crypto';
import type { ProfileName } from '@trellis/sdk';
import { stableStringify } from './stableStringify.ts';
import type { DecidedCandidate, PluginRegistrySnapshot, Reason, SnapshotEntry } from './types.ts';

/** Inputs of {@link buildSnapshot}. */
export interface BuildSnapshotOptions {
  readonly decided: readonly DecidedCandidate[];
  readonly profile: ProfileName;
  /** Host-level warnings (discovery's `ROOT_MISSING`, profile problems). */
  readonly warnings: readonly Reason[];
}

const bodies = new WeakMap<PluginRegistrySnapshot, string>();

/** Snapshot order: by id, then root number (winner first), then manifest path (bundled last). */
export function compareEntries(a: SnapshotEntry, b: SnapshotEntry): number {
  if (a.id !== b.id) return a.id < b.id ? -1 : 1;
  if (a.source.priority !== b.source.priority) return a.source.priority - b.source.priority;
  const pa = a.source.manifestPath ?? '';
  const pb = b.source.manifestPath ?? '';
  return pa < pb ? -1 : pa > pb ? 1 : 0;
}

/** Decided candidates in snapshot order ({@link compareEntries}), as a new array. */
export function orderDecided(decided: readonly DecidedCandidate[]): DecidedCandidate[] {
  const keyed = decided.map((d) => {
    const f = d.admitted.facts;
    return { d, id: d.admitted.id, priority: f.source.priority, path: f.bundled ? '' : f.manifestPath };
  });
  keyed.sort((a, b) =>
    a.id !== b.id ? (a.id < b.id ? -1 : 1) : a.priority !== b.priority ? a.priority - b.priority : a.path < b.path ? -1 : a.path > b.path ? 1 : 0,
  );
  return keyed.map((k) => k.d);
}

/** One decided candidate as a snapshot entry (not yet frozen). */
export function toSnapshotEntry(d: DecidedCandidate): SnapshotEntry {
  const facts = d.admitted.facts;
  return {
    id: d.admitted.id,
    kind: d.admitted.kind,
    state: d.state,
    source: {
      root: facts.source.root,
      priority: facts.source.priority,
      manifestPath: facts.bundled ? null : facts.manifestPath,
    },
    reasons: d.reasons.map((r) => ({ code: r.code, message: r.message })),
    warnings: d.warnings.map((r) => ({ code: r.code, message: r.message })),
    manifest: d.admitted.manifest,
    bundled: facts.bundled,
    pluginDir: facts.bundled ? null : facts.pluginDirReal,
  };
}

function deepFreeze<T>(value: T): T {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object' || Object.isFrozen(v)) continue;
    Object.freeze(v);
    for (const child of Object.values(v)) if (child !== null && typeof child === 'object') stack.push(child);
  }
  return value;
}

/**
 * Assembles the immutable snapshot: every decided candidate (rejected and shadowed ones too) in
 * {@link compareEntries} order, the host warnings in the order given, and `hash` = sha256 (hex)
 * of the stable JSON of `{ plugins, profile, warnings }`. Deep-frozen, manifests included.
 */
export function buildSnapshot(options: BuildSnapshotOptions): PluginRegistrySnapshot {
  const plugins = orderDecided(options.decided).map(toSnapshotEntry);
  const warnings = options.warnings.map((r) => ({ code: r.code, message: r.message }));
  const body = stableStringify({ plugins, profile: options.profile, warnings });
  const hash = createHash('sha256').update(body).digest('hex');
  const snapshot = deepFreeze({ profile: options.profile, hash, plugins, warnings });
  bodies.set(snapshot, body);
  return snapshot;
}

/**
 * The snapshot as stable JSON (keys sorted at every level, no whitespace): byte-identical for
 * identical inputs. This is the text `hash` is computed over, plus the `hash` member itself.
 */
export function serializeSnapshot(snapshot: PluginRegistrySnapshot): string {
  const body = bodies.get(snapshot) ?? stableStringify({ plugins: snapshot.plugins, profile: snapshot.profile, warnings: snapshot.warnings });
  // "hash" sorts before "plugins", so it is the first member.
  return `{"hash":${JSON.stringify(snapshot.hash)},${body.slice(1)}`;
}
