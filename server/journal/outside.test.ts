// OutsideChanges against a journal and a workspace made up for the test: how
// a look that meets the daemon's own changes under way is taken again.
import { describe, expect, it } from "vitest";
import { OutsideChanges } from "./outside.js";
import type { ChangeNote, JournalRecord } from "./records.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
type Events = (events: Array<{ parts: string[]; type: "create" | "update" | "delete" }>) => void;

/** A watcher on a made-up workspace: `busy` says whether one of the daemon's changes is under way; stat and walk answer from `tree`. */
async function watcher(tree: Map<string, { type: "file" | "directory"; version: string }>) {
  let listener!: (id: string, records: readonly JournalRecord[]) => void;
  let onEvents!: Events;
  const appended: ChangeNote[] = [];
  const state = { busy: false, walks: 0, busyWhileWalking: false };
  const entry = (path: string) => ({ path, name: path.split("/").pop()!, escaped: false, size: 0n, mode: 0o644, mtimeNs: 0n, ctimeNs: 0n, ...tree.get(path)! });
  const journal = {
    onAppend: (l: typeof listener) => (listener = l),
    listingFile: async () => "/nonexistent/listing",
    bounds: async () => ({ oldest: 0, last: 0 }),
    read: async () => [],
    append: async (_id: string, notes: ChangeNote[]) => void appended.push(...notes),
    setCondition: () => undefined,
  };
  const workspace = {
    id: "w",
    stat: async (parts: string[]) => {
      const path = "/" + parts.join("/");
      if (!tree.has(path)) throw new Error("gone");
      return entry(path);
    },
    walk: async function* (parts: string[]) {
      if (parts.length > 0) state.walks++; // not the whole tree's scans at start and close
      if (state.busyWhileWalking) state.busy = true; // an agent's write begins while the walk runs
      const prefix = parts.length === 0 ? "/" : "/" + parts.join("/") + "/";
      for (const path of tree.keys()) if (path.startsWith(prefix)) yield { ...entry(path), parts: path.slice(1).split("/") };
    },
    quietMark: () => (state.busy ? undefined : 0),
    watchOutside: async (cb: Events) => {
      onEvents = cb;
      return { close: async () => undefined };
    },
  };
  const outside = new OutsideChanges(journal as never, workspace as never, { mode: "notify", scanMs: 1000, verifyMs: 0 });
  await outside.start();
  return { outside, state, appended, events: (e: Parameters<Events>[0]) => onEvents(e), records: (r: JournalRecord[]) => listener("w", r) };
}

const record = (kind: string, path: string, type: string, versionAfter: string): JournalRecord =>
  ({ kind, path, from: "", type, size: 0, sha256: "", versionBefore: "", versionAfter, seq: 1, time: "", outside: false, token: "", run: "", rpc: "Write", callId: "" }) as JournalRecord;

describe("outside changes while the daemon changes the tree", () => {
  it("a directory made from outside is walked once, even when the daemon begins a change while the walk runs", async () => {
    const tree = new Map<string, { type: "file" | "directory"; version: string }>([["/big", { type: "directory", version: "d1" }]]);
    for (let i = 0; i < 100; i++) tree.set(`/big/f${i}`, { type: "file", version: `v${i}` });
    const w = await watcher(tree);
    w.state.busyWhileWalking = true;
    w.events([{ parts: ["big"], type: "create" }]);
    await sleep(400);
    await w.outside.close();
    expect(w.state.walks).toBe(1);
    expect(w.appended.map((n) => n.path)).toEqual(["/big", ...Array.from({ length: 100 }, (_, i) => `/big/f${i}`)]);
  });

  it("a look taken while the daemon is busy is taken again once it is not, and then told once", async () => {
    const tree = new Map([["/x.txt", { type: "file" as const, version: "v1" }]]);
    const w = await watcher(tree);
    w.state.busy = true;
    w.events([{ parts: ["x.txt"], type: "create" }]);
    await sleep(350); // several looks, all deferred
    expect(w.appended).toEqual([]);
    w.state.busy = false;
    await sleep(250);
    await w.outside.close();
    expect(w.appended.map((n) => [n.path, n.kind])).toEqual([["/x.txt", "created"]]);
  });

  it("a path deferred, then passed over (under a tree the daemon deleted), leaves nothing behind", async () => {
    const w = await watcher(new Map());
    for (let i = 0; i < 1000; i++) w.records([record("created", `/t/f${i}`, "file", "v1")]);
    w.state.busy = true; // the daemon deletes /t, its record not in yet: the files' deletions are deferred
    w.events(Array.from({ length: 1000 }, (_, i) => ({ parts: ["t", `f${i}`], type: "delete" as const })));
    await sleep(150);
    w.records([record("deleted", "/t", "directory", "")]);
    w.state.busy = false;
    await sleep(400);
    const deferred = (w.outside as unknown as { deferred: Map<string, number> }).deferred;
    await w.outside.close();
    expect({ deferred: deferred.size, told: w.appended.length }).toEqual({ deferred: 0, told: 0 });
  });
});
