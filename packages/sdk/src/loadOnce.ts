/**
 * `load()` run once: every caller gets the same promise, and a call after one that failed tries
 * again. For modules loaded on first use by a host that asks for them again and again (a live
 * host's every reload): an `import()` of a module already loaded is not free where loader hooks
 * are registered (tsx and the like answer each one from their own thread, 0.4 ms and more).
 */
export function loadOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () =>
    (loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    }));
}
