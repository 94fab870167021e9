// Per-path serialisation of mutations (SPEC section 3): two calls that change
// the same workspace path run one after the other, so `if_version` checks and
// read-modify-write edits never lose an update made through the daemon.

const tails = new Map<string, Promise<void>>();

/** Runs `work` once every earlier holder of any of `keys` is done. */
export async function withPathLocks<T>(keys: readonly string[], work: () => Promise<T>): Promise<T> {
  // A fixed order, so two calls locking the same pair cannot deadlock.
  const sorted = [...new Set(keys)].sort();
  const releases: Array<() => void> = [];
  for (const key of sorted) {
    const previous = tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => mine);
    tails.set(key, tail);
    releases.push(() => {
      release();
      if (tails.get(key) === tail) tails.delete(key);
    });
    await previous;
  }
  try {
    return await work();
  } finally {
    for (const release of releases) release();
  }
}

/** The lock key of a workspace path. */
export function pathKey(workspaceId: string, shownPath: string): string {
  return `${workspaceId}\u0000${shownPath}`;
}
