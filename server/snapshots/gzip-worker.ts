// A thread of the gzip pool (gzip-pool.ts): compresses, or inflates and
// hashes, batches of gzip members, off the daemon's main thread. Small
// members are the norm (a source tree's files), where a zlib call's set-up
// costs more than its bytes: a batch pays for one message, and the threads
// run batches in parallel.
import { hash } from "node:crypto";
import { gunzipSync, gzipSync } from "node:zlib";

/** A member to inflate: it must inflate to exactly `bytes`, of which the first `hashed` are hashed. */
export interface MemberToInflate {
  member: Uint8Array;
  bytes: number;
  hashed: number;
}

export type GzipTask = { compress: Uint8Array[]; level: number } | { inflate: MemberToInflate[] };

/** An inflated member with the SHA-256 (hex) of its hashed bytes, or why it could not be inflated to its size. */
export type Inflated = { content: Uint8Array; sha256: string } | { problem: "too-large" | "damaged" | "short" };

export default function run(task: GzipTask): Uint8Array[] | Inflated[] {
  if ("compress" in task) return task.compress.map((member) => gzipSync(member, { level: task.level }));
  return task.inflate.map(({ member, bytes, hashed }): Inflated => {
    let content: Buffer;
    try {
      // Past its size it is stopped there: a bomb costs one bound, not its size.
      content = gunzipSync(member, { maxOutputLength: Math.max(1, bytes) });
    } catch (error) {
      return { problem: (error as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE" ? "too-large" : "damaged" };
    }
    if (content.length !== bytes) return { problem: "short" };
    return { content, sha256: hash("sha256", content.subarray(0, hashed), "hex") };
  });
}
