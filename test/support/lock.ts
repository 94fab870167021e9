// A cross-process lock for test setup (vitest runs test files in parallel
// processes): a directory under tmp, created atomically by mkdir.
import { mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/** Runs `work` holding the lock `name`; a lock older than `staleMs` (a crashed holder) is broken. */
export function withDirectoryLock<T>(name: string, staleMs: number, work: () => T): T {
  const lock = path.join(tmpdir(), name);
  const started = Date.now();
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (Date.now() - started > staleMs) rmSync(lock, { recursive: true, force: true });
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    }
  }
  try {
    return work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}
