// What a workspace holds, as quotas count it, and the gate a mutation passes
// before it writes. The workspace module measures and reports; the policy
// (limits, who is refused) is the quota module's (server/quotas).
import { lstatSync } from "node:fs";
import { Directory } from "./directory.js";
import { at } from "./resolver.js";
import { TEMP_FILE_PATTERN } from "./temp-files.js";
import { DepthFirst, HeldPath } from "./tree.js";

/**
 * A workspace's usage, or a change to it (negative: freed). `bytes`: the
 * sizes of its regular files, each name counted; `entries`: every entry
 * below the root (files, directories, symbolic links, FIFOs...). Temp files
 * and staging directories are not counted.
 */
export interface Usage {
  bytes: number;
  entries: number;
}

export const NO_USAGE: Usage = { bytes: 0, entries: 0 };

/** Asked before a mutation writes anything (see quotas/quotas.ts). */
export interface UsageGate {
  /** Throws (QUOTA_EXCEEDED, naming `shown`) when `delta` would take the workspace past a limit; else holds it until settled. */
  admit(delta: Usage, shown: string): Admission;
  /** The usage counted now (without what calls in flight hold). */
  current(): Usage;
  /** The tree changed by an amount not known (a removal that failed half-way): count it again. */
  recount(): void;
}

export interface Admission {
  /** Holds `delta` instead (a stream's bytes as they arrive, the exact change once known); throws like admit. */
  resize(delta: Usage): void;
  /** The mutation is over: `actual` is what it changed (NO_USAGE when it changed nothing). Once; later calls do nothing. */
  settle(actual: Usage): void;
}

/** Entries counted between turns given to other calls: a first count of a big tree must not stall the daemon. */
const ENTRIES_PER_TURN = 2048;

/** The usage of the tree in `dir` (which it closes), never following a link; iterative, see tree.ts. */
export async function measureTree(dir: Directory): Promise<Usage> {
  const path = new HeldPath(dir);
  const usage = { bytes: 0, entries: 0 };
  try {
    const walk = new DepthFirst(path);
    for (let step = walk.next(); step; step = walk.next()) {
      if ("left" in step) continue;
      const child = step.entry;
      if (TEMP_FILE_PATTERN.test(child.name)) continue;
      usage.entries++;
      if (child.kind === "directory") walk.descend(child.name);
      else if (child.kind === "file") usage.bytes += lstatSync(at(path.current(), child.name)).size;
      // Calls on this workspace that need the count wait for it (quotas/quotas.ts); others go on meanwhile.
      if (usage.entries % ENTRIES_PER_TURN === 0) await new Promise(setImmediate);
    }
    return usage;
  } finally {
    path.close();
  }
}

export function addUsage(a: Usage, b: Usage): Usage {
  return { bytes: a.bytes + b.bytes, entries: a.entries + b.entries };
}

export function negateUsage(a: Usage): Usage {
  return { bytes: -a.bytes, entries: -a.entries };
}
