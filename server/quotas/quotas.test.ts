import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FileToolsError } from "../errors.js";
import { Workspace } from "../workspace/workspace.js";
import { Quotas } from "./quotas.js";

function refusal(run: () => unknown): FileToolsError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(FileToolsError);
    return error as FileToolsError;
  }
  throw new Error("expected a refusal");
}

describe("Quotas", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "ftd-quotas-"));
  let workspace: Workspace;
  beforeAll(async () => {
    mkdirSync(path.join(dir, "src/deep"), { recursive: true });
    writeFileSync(path.join(dir, "src/a.txt"), "a".repeat(100));
    writeFileSync(path.join(dir, "src/deep/b.txt"), "b".repeat(50));
    symlinkSync("a.txt", path.join(dir, "src/link"));
    writeFileSync(path.join(dir, ".filetools-tmp-0123456789abcdef"), "a temp file is not counted");
    workspace = await Workspace.open("w", dir, true);
  });
  afterAll(() => {
    workspace.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("counts once by a walk: regular files' bytes, every entry but temp files", async () => {
    const gate = (await new Quotas({ bytes: 1000, files: 10 }).gate(workspace, undefined))!;
    expect(gate.current()).toEqual({ bytes: 150, entries: 5 });
  });

  it("a first count of a big tree lets other work in while it walks, and counts it all", async () => {
    const big = mkdtempSync(path.join(tmpdir(), "ftd-quotas-big-"));
    for (let d = 0; d < 50; d++) {
      mkdirSync(path.join(big, `d${d}`));
      for (let f = 0; f < 200; f++) writeFileSync(path.join(big, `d${d}`, `f${f}`), "x");
    }
    const bigWorkspace = await Workspace.open("big", big, true);
    try {
      let turnsTaken = 0;
      const counting = new Quotas({ bytes: 0, files: 1_000_000 }).gate(bigWorkspace, undefined);
      const other = () => {
        turnsTaken++;
        if (turnsTaken < 3) setImmediate(other);
      };
      setImmediate(other);
      const gate = (await counting)!;
      expect(gate.current()).toEqual({ bytes: 10_000, entries: 10_050 });
      expect(turnsTaken).toBe(3); // a walk of 10,050 entries in one turn would have let none in
    } finally {
      bigWorkspace.close();
      rmSync(big, { recursive: true, force: true });
    }
  });

  it("costs nothing without a limit or a count, and keeps a count once there is one", async () => {
    const quotas = new Quotas({ bytes: 0, files: 0 });
    expect(await quotas.gate(workspace, undefined)).toBeUndefined();
    expect(await quotas.gate(workspace, { bytes: 200 })).toBeDefined();
    expect(await quotas.gate(workspace, undefined)).toBeDefined();
  });

  it("holds what a call admits until it settles, so a second call cannot take the same room", async () => {
    const gate = (await new Quotas({ bytes: 1000, files: 0 }).gate(workspace, undefined))!;
    const first = gate.admit({ bytes: 800, entries: 1 }, "/one");
    const second = refusal(() => gate.admit({ bytes: 100, entries: 1 }, "/two"));
    expect(second.reason).toBe("QUOTA_EXCEEDED");
    expect(second.message).toBe("/two: the workspace's quota is 1000 bytes, 150 are used and this would add 100; delete or shrink files first");
    expect(second.metadata).toEqual({
      usage_bytes: "150", limit_bytes: "1000", usage_files: "5", limit_files: "0",
      added_bytes: "100", added_files: "1", reserved_bytes: "800", reserved_files: "1",
    });
    first.settle({ bytes: 0, entries: 0 }); // it failed: it gives its room back
    gate.admit({ bytes: 850, entries: 1 }, "/two").settle({ bytes: 850, entries: 1 });
    expect(gate.current()).toEqual({ bytes: 1000, entries: 6 });
    // Past the limit nothing that adds is admitted, and whatever frees or adds nothing is.
    expect(refusal(() => gate.admit({ bytes: 1, entries: 0 }, "/x")).reason).toBe("QUOTA_EXCEEDED");
    gate.admit({ bytes: -10, entries: 1 }, "/shrinks").settle({ bytes: -10, entries: 1 });
    gate.admit({ bytes: 0, entries: 0 }, "/same").settle({ bytes: 0, entries: 0 });
  });

  it("a stream resized past the limit is refused and lets go of what it held", async () => {
    const gate = (await new Quotas({ bytes: 1000, files: 0 }).gate(workspace, undefined))!;
    const upload = gate.admit({ bytes: -100, entries: 0 }, "/up");
    upload.resize({ bytes: 700, entries: 0 });
    const other = gate.admit({ bytes: 100, entries: 0 }, "/other");
    expect(refusal(() => upload.resize({ bytes: 800, entries: 0 })).metadata.added_bytes).toBe("800");
    gate.admit({ bytes: 700, entries: 0 }, "/third").settle({ bytes: 700, entries: 0 });
    other.settle({ bytes: 100, entries: 0 });
    upload.settle({ bytes: 0, entries: 0 });
    expect(gate.current()).toEqual({ bytes: 950, entries: 5 });
  });

  it("a token's limits replace the daemon's field by field, 0 meaning none", () => {
    const quotas = new Quotas({ bytes: 1000, files: 50 });
    expect(quotas.limitsFor(undefined)).toEqual({ bytes: 1000, files: 50 });
    expect(quotas.limitsFor({ bytes: 0 })).toEqual({ bytes: 0, files: 50 });
    expect(quotas.limitsFor({ bytes: 10, files: 2 })).toEqual({ bytes: 10, files: 2 });
  });

  it("a recount walks the tree again", async () => {
    const quotas = new Quotas({ bytes: 1000, files: 0 });
    const gate = (await quotas.gate(workspace, undefined))!;
    gate.admit({ bytes: 5, entries: 1 }, "/not-really").settle({ bytes: 5, entries: 1 });
    expect(gate.current()).toEqual({ bytes: 155, entries: 6 });
    quotas.recount(workspace);
    expect((await quotas.gate(workspace, undefined))!.current()).toEqual({ bytes: 150, entries: 5 });
  });
});
