const localLocks = new Map<string, Promise<unknown>>();

/** One at a time per key within this process. */
export function localExclusive<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const prev = localLocks.get(key) ?? Promise.resolve();
  const next = prev.catch(() => undefined).then(fn);
  localLocks.set(key, next);
  // Cleanup on either outcome, on a branch of its own: a failing `fn` rejects what the caller awaits, never an
  // orphan promise (an unhandled rejection would take the worker process down).
  const cleanup = () => {
    if (localLocks.get(key) === next) localLocks.delete(key);
  };
  next.then(cleanup, cleanup);
  return next;
}
