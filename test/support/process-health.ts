// For tests that kill or fail a stream mid-way: what the process must never
// see (an 'error' event nobody listens to, a rejection nobody handles: either
// ends a daemon) and what it must give back (its descriptors).
import { readdirSync, readlinkSync } from "node:fs";

/** Records uncaught exceptions and unhandled rejections until `stop()`; a test asserts `problems` is empty. */
export function watchProcess(): { problems: unknown[]; stop(): void } {
  const problems: unknown[] = [];
  const record = (error: unknown): void => void problems.push(error);
  process.on("uncaughtException", record);
  process.on("unhandledRejection", record);
  return {
    problems,
    stop() {
      process.off("uncaughtException", record);
      process.off("unhandledRejection", record);
    },
  };
}

/** What this process's open descriptors name under any of `dirs` (a removed file too: "... (deleted)"). */
export function descriptorsUnder(...dirs: string[]): string[] {
  const named: string[] = [];
  for (const fd of readdirSync("/proc/self/fd")) {
    let target: string;
    try {
      target = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue; // the listing's own descriptor, closed by now
    }
    if (dirs.some((dir) => target === dir || target.startsWith(dir + "/"))) named.push(target);
  }
  return named;
}

/** Waits until `check()` holds, up to `ms` (what closes on the thread pool closes a little later); the test then asserts what it checked. */
export async function eventually(check: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 20));
}
