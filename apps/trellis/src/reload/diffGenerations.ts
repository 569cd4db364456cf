/** What a reload changes, by plugin id (each list sorted). */
export interface GenerationDiff {
  /** Enabled now, not before: started. */
  readonly added: readonly string[];
  /** Enabled before, not now: stopped once the old generation's calls finish. */
  readonly removed: readonly string[];
  /** Enabled in both with another manifest, resolved config or grant: restarted. */
  readonly changed: readonly string[];
  /** Enabled in both, the same: its running implementation (child process, sessions) is kept. */
  readonly unchanged: readonly string[];
}

/** Compares two generations' plugin fingerprints (enabled plugin id → fingerprint). */
export function diffGenerations(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): GenerationDiff {
  const added: string[] = [];
  const changed: string[] = [];
  const unchanged: string[] = [];
  for (const [id, fingerprint] of after) {
    const old = before.get(id);
    if (old === undefined) added.push(id);
    else if (old === fingerprint) unchanged.push(id);
    else changed.push(id);
  }
  const removed = [...before.keys()].filter((id) => !after.has(id));
  return { added: added.sort(), removed: removed.sort(), changed: changed.sort(), unchanged: unchanged.sort() };
}

/** True when the reload starts, stops or restarts nothing. */
export function isEmptyDiff(diff: GenerationDiff): boolean {
  return diff.added.length === 0 && diff.removed.length === 0 && diff.changed.length === 0;
}
