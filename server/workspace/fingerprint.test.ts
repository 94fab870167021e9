// A tree's fingerprint is kept with a copy's state across restarts: however
// the entries are hashed, its value is the SHA-256 of one line per entry.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { TreeFingerprint } from "./fingerprint.js";

describe("TreeFingerprint", () => {
  it("is the SHA-256 of the entries' lines, in order, for a tree larger than what is hashed at a time", () => {
    const entries = Array.from({ length: 5000 }, (_, i) => ({ path: `/dir-${i % 7}/é-${i}`, type: i % 3 ? ("file" as const) : ("directory" as const), mode: 0o644, version: `v${i}` }));
    const fingerprint = new TreeFingerprint();
    for (const entry of entries) fingerprint.add(entry);
    const lines = entries.map((e) => `${e.path}\0${e.type}\0${e.mode}\0${e.version}\n`).join("");
    expect(fingerprint.result()).toEqual({ fingerprint: createHash("sha256").update(lines).digest("hex"), entries: 5000 });
  });

  it("of no entries is the SHA-256 of nothing", () => {
    expect(new TreeFingerprint().result()).toEqual({ fingerprint: createHash("sha256").digest("hex"), entries: 0 });
  });
});
