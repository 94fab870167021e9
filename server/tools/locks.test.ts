// Lock waits end with the caller's signal: the call fails with the abort
// reason, its work never runs later, and the calls queued behind it wait
// only for the holders before it.
import { describe, expect, it } from "vitest";
import { LockTable, pathKey, withPathLocks } from "./locks.js";

function gate(): { open: () => void; opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe("LockTable", () => {
  it("a wait aborted by its signal fails with the reason and never runs; the next waiter runs after the holder", async () => {
    const locks = new LockTable();
    const holder = gate();
    const ran: string[] = [];
    const first = locks.with(["k"], async () => {
      ran.push("first");
      await holder.opened;
    });
    const abort = new AbortController();
    const cancelled = locks.with(["k"], async () => void ran.push("cancelled"), abort.signal);
    const third = locks.with(["k"], async () => void ran.push("third"));
    abort.abort(new Error("deadline"));
    await expect(cancelled).rejects.toThrow("deadline");
    holder.open();
    await first;
    await third;
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(ran).toEqual(["first", "third"]);
  });

  it("an already-aborted signal never runs the work, even with the lock free", async () => {
    const abort = new AbortController();
    abort.abort(new Error("gone"));
    let ran = false;
    await expect(new LockTable().with(["k"], async () => void (ran = true), abort.signal)).rejects.toThrow("gone");
    expect(ran).toBe(false);
  });

  it("an abort while waiting for the second of two keys releases the first", async () => {
    const locks = new LockTable();
    const holder = gate();
    const holding = locks.with(["b"], () => holder.opened);
    const abort = new AbortController();
    const both = locks.with(["a", "b"], async () => undefined, abort.signal);
    abort.abort(new Error("cancelled"));
    await expect(both).rejects.toThrow("cancelled");
    // "a" is free again although "b" is still held.
    expect(await locks.with(["a"], async () => "a is free")).toBe("a is free");
    holder.open();
    await holding;
  });
});

describe("withPathLocks", () => {
  it("takes the call's signal", async () => {
    const holder = gate();
    const key = pathKey("w", "/f");
    const holding = withPathLocks([key], () => holder.opened);
    const abort = new AbortController();
    let ran = false;
    const waiting = withPathLocks([key], async () => void (ran = true), abort.signal);
    abort.abort(new Error("deadline"));
    await expect(waiting).rejects.toThrow("deadline");
    holder.open();
    await holding;
    expect(ran).toBe(false);
  });
});
