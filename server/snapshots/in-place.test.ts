// planInPlace: what a restore into a copy that the last snapshot read fetches
// and removes. A copy one run behind fetches the files that changed, loose
// into the directories it keeps, not the tree's skeleton; afterMerge: which
// entries a walk after the merge would find as the plan's walk listed them,
// and which take the snapshot's mtime.
import { describe, expect, it } from "vitest";
import type { ListedEntry } from "../workspace/fingerprint.js";
import { afterMerge, planInPlace, snapshotTimes, toHash } from "./in-place.js";
import type { TreeMember } from "./seekable-read.js";
import type { EntryType } from "../workspace/entry.js";

const member = (path: string, type: "file" | "directory", mode: number, sha256 = ""): TreeMember =>
  ({ path, sha256, chunks: [], header: { name: path.slice(1), type, mode, size: 0, mtime: 0 } }) as unknown as TreeMember;
const live = (path: string, type: EntryType, mode: number, version = "v"): ListedEntry => ({ parts: path.split("/").slice(1), path, type, mode, version, size: 0n, ctimeNs: 0n, mtimeNs: 0n });

describe("planInPlace", () => {
  const target = [
    member("/a", "directory", 0o755),
    member("/a/b", "directory", 0o755),
    member("/a/b/changed.txt", "file", 0o644, "new"),
    member("/a/b/same.txt", "file", 0o644, "same"),
    member("/c", "directory", 0o755),
    member("/c/same.txt", "file", 0o644, "same"),
    member("/d", "directory", 0o700),
    member("/e", "directory", 0o755),
    member("/e/f", "directory", 0o755),
    member("/e/f/new.txt", "file", 0o644, "new"),
  ];
  const known = new Map([
    ["/a/b/changed.txt", { version: "v", sha256: "old" }],
    ["/a/b/same.txt", { version: "v", sha256: "same" }],
    ["/c/same.txt", { version: "v", sha256: "same" }],
  ]);

  const behind = [
    live("", "directory", 0o755),
    live("/a", "directory", 0o755),
    live("/a/b", "directory", 0o755),
    live("/a/b/changed.txt", "file", 0o644),
    live("/a/b/same.txt", "file", 0o644),
    live("/a/b/extra.txt", "file", 0o644),
    live("/c", "directory", 0o755),
    live("/c/same.txt", "file", 0o644),
    live("/d", "directory", 0o755), // its mode differs: fetched
    live("/gone", "directory", 0o755),
    live("/gone/inside.txt", "file", 0o644),
  ];

  it("fetches what differs and the directories on the way to it, keeps the rest, and removes what the snapshot does not hold", () => {
    const plan = planInPlace(target, behind, known);
    // changed.txt goes loose into /a/b, which stays; /e/f is new, /d's mode differs: staged with what goes into them.
    expect(plan.fetch.map((m) => m.path)).toEqual(["/d", "/e", "/e/f", "/e/f/new.txt"]);
    expect(plan.loose.map((m) => m.path)).toEqual(["/a/b/changed.txt"]);
    expect(plan.remove).toEqual([["a", "b", "extra.txt"], ["gone"]]);
  });

  it("after the merge: the kept entries it left alone stay as listed; what it placed, went through or removed from is read again (not the root)", () => {
    const plan = planInPlace(target, behind, known);
    const placed = [...plan.fetch, ...plan.loose].map((m) => m.path.split("/").slice(1));
    const { untouched, touched } = afterMerge(behind, plan, placed);
    expect(untouched.map((e) => e.path)).toEqual(["/a", "/a/b/same.txt", "/c", "/c/same.txt"]);
    expect(touched.map((parts) => parts.join("/"))).toEqual(["d", "e", "e/f", "e/f/new.txt", "a/b/changed.txt", "a/b"]);
  });

  it("retimes kept entries whose mtime is not the snapshot's to the second (not fetched), and gives every touched entry the snapshot's", () => {
    const withinTheSecond = { ...live("/c", "directory", 0o755), mtimeNs: 999_999_999n };
    const later = { ...live("/c/same.txt", "file", 0o644), mtimeNs: 1_000_000_000n };
    const plan = planInPlace(target, behind.map((e) => (e.path === "/c" ? withinTheSecond : e.path === "/c/same.txt" ? later : e)), known);
    expect(plan.retime).toEqual([["c", "same.txt"]]);
    expect(plan.loose.map((m) => m.path)).toEqual(["/a/b/changed.txt"]);
    const { untouched, touched } = afterMerge(behind, plan, []);
    expect(touched).toContainEqual(["c", "same.txt"]);
    expect(untouched.map((e) => e.path)).not.toContain("/c/same.txt");
    // The snapshot's mtime for what it holds; the root and what it does not hold are left alone.
    expect(snapshotTimes(target, [[], ["c", "same.txt"], ["gone"]])).toEqual([{ parts: ["c", "same.txt"], mtime: 0 }]);
  });

  it("lists for hashing the live files the cache cannot vouch for whose member is a file of their size and mode", () => {
    const sized = (entry: ListedEntry, size: bigint): ListedEntry => ({ ...entry, size });
    const copy = [
      ...behind.filter((e) => e.path !== "/c/same.txt"),
      sized(live("/c/same.txt", "file", 0o644, "new inode"), 0n), // unvouched, same size and mode: hashed
      sized(live("/e/f/new.txt", "file", 0o644, "w"), 9n), // another size: fetched unread
      live("/d/x.txt", "file", 0o644, "w"), // not in the snapshot
    ];
    const modes = [...target.filter((m) => m.path !== "/a/b/same.txt"), member("/a/b/same.txt", "file", 0o600, "same")];
    expect(toHash(modes, [...copy, live("/a/b/same.txt", "file", 0o644, "other")], known).map((e) => e.path)).toEqual(["/c/same.txt"]);
  });

  it("fetches everything into an empty copy, the files at the top loose", () => {
    const plan = planInPlace([...target, member("/top.txt", "file", 0o644, "new")], [live("", "directory", 0o755)], known);
    expect(plan.fetch).toEqual(target);
    expect(plan.loose.map((m) => m.path)).toEqual(["/top.txt"]);
  });
});
