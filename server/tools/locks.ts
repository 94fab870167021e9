// Locks by key, held in call order: per-path serialisation of mutations (SPEC
// section 3: two calls that change the same workspace path run one after the
// other, so `if_version` checks and read-modify-write edits never lose an
// update made through the daemon), and the per-workspace lock of snapshots,
// restores and imports. A wait ends when the caller's signal aborts: the call
// fails with the abort reason and its work never runs later, and whoever
// queued behind it waits only for the holders before it.

export class LockTable {
  private readonly tails = new Map<string, Promise<void>>();

  /** Runs `work` once every earlier holder of any of `keys` is done, unless `signal` aborts first. */
  async with<T>(keys: readonly string[], work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    // A fixed order, so two calls locking the same pair cannot deadlock.
    const sorted = [...new Set(keys)].sort();
    const releases: Array<() => void> = [];
    try {
      for (const key of sorted) {
        const previous = this.tails.get(key) ?? Promise.resolve();
        let release!: () => void;
        const mine = new Promise<void>((resolve) => (release = resolve));
        const tail = previous.then(() => mine);
        this.tails.set(key, tail);
        releases.push(() => {
          release();
          if (this.tails.get(key) === tail) this.tails.delete(key);
        });
        await abortable(previous, signal);
      }
      signal?.throwIfAborted();
      return await work();
    } finally {
      for (const release of releases) release();
    }
  }
}

/** `promise`, or the abort reason as soon as `signal` aborts. */
function abortable(promise: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return promise;
  signal.throwIfAborted();
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    void promise.then(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    });
  });
}

const pathLocks = new LockTable();

/** Runs `work` once every earlier holder of any of the path `keys` is done; a wait `signal` aborts fails and never runs. */
export function withPathLocks<T>(keys: readonly string[], work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  return pathLocks.with(keys, work, signal);
}

/** The lock key of a workspace path. */
export function pathKey(workspaceId: string, shownPath: string): string {
  return `${workspaceId}\u0000${shownPath}`;
}
