import { describe, expect, it } from "vitest";
import { NO_ACTOR, type JournalRecord } from "./records.js";
import { Watcher } from "./watcher.js";

const record = (seq: number, path = `/f${seq}`): JournalRecord => ({
  seq,
  time: new Date(0).toISOString(),
  kind: "created",
  path,
  from: "",
  type: "file",
  size: 0,
  sha256: "",
  versionBefore: "",
  versionAfter: "",
  ...NO_ACTOR,
  outside: false,
});

describe("Watcher", () => {
  it("holds at most its limit; past it, counts what it drops and resumes after the last one it held", async () => {
    const controller = new AbortController();
    const watcher = new Watcher(() => true, 4, 10, controller.signal);
    watcher.push(Array.from({ length: 10 }, (_, i) => record(11 + i)));
    const first = await watcher.next();
    expect(first).toMatchObject({ kind: "changes" });
    expect(first?.kind === "changes" && first.records.map((r) => r.seq)).toEqual([11, 12, 13, 14]);
    // Once it dropped some, it keeps dropping (what follows would have a gap) until it is told.
    watcher.push([record(21)]);
    expect(await watcher.next()).toEqual({ kind: "missed", count: 7, resume: 14 });
    expect(watcher.missedCount).toBe(7);
    watcher.close();
  });

  it("keeps only what matches and what is after its start; a notice keeps its place; an abort ends next()", async () => {
    const controller = new AbortController();
    const watcher = new Watcher((r) => r.path.endsWith(".md"), 100, 5, controller.signal);
    watcher.push([record(4, "/old.md"), record(6, "/a.md"), record(7, "/b.txt")]);
    watcher.notice("scanning");
    watcher.push([record(8, "/c.md")]);
    const events = [await watcher.next(), await watcher.next(), await watcher.next()];
    expect(events.map((e) => (e?.kind === "changes" ? e.records.map((r) => r.path) : e?.kind))).toEqual([["/a.md"], "notice", ["/c.md"]]);
    const waiting = watcher.next();
    controller.abort();
    expect(await waiting).toBeUndefined();
    watcher.close();
  });

  it("finish() ends a watch whose workspace is gone", async () => {
    const watcher = new Watcher(() => true, 10, 0, new AbortController().signal);
    const waiting = watcher.next();
    watcher.finish();
    expect(await waiting).toBeUndefined();
    watcher.close();
  });
});
