// Run history and diffs against a real daemon (file:// store): the manifests'
// file lists, DiffSnapshots between snapshots and against the live
// workspace, and ListSnapshots' label and time filters.
import { createHash } from "node:crypto";
import { chmodSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { DiffEntryType, DiffKind, type DiffEntry } from "@filetools/proto/filetools/v1/workspaces_pb.js";
import { expectError, setup } from "./daemon.js";

const sha = (text: string) => createHash("sha256").update(text).digest("hex");
let d: Awaited<ReturnType<typeof setup>>;
beforeAll(async () => {
  d = await setup("hist");
});
afterAll(() => d?.stop());

const write = (p: string, text: string) => d.client.files.write({ workspace: "hist", path: p, body: { case: "content", value: text } });
const byPath = (entries: DiffEntry[]) => Object.fromEntries(entries.map((e) => [e.path, e]));

describe("DiffSnapshots", () => {
  let first = "";
  let second = "";

  beforeAll(async () => {
    const ws = d.client.workspace("hist");
    const runA = await ws.startRun({ labels: { team: "docs", step: "1" } });
    await write("keep.txt", "same\n");
    await write("edit.txt", "old\n");
    await write("gone.txt", "bye\n");
    await write("mode.sh", "#!/bin/sh\n");
    first = (await ws.finishRun(runA.id)).snapshot!.id;
    const runB = await ws.startRun({ labels: { team: "docs", step: "2" } });
    await write("edit.txt", "new text\n");
    await d.client.files.delete({ workspace: "hist", path: "gone.txt" });
    await write("dir/added.txt", "hello\n");
    chmodSync(path.join(d.root, "mode.sh"), 0o755);
    symlinkSync("keep.txt", path.join(d.root, "link"));
    second = (await ws.finishRun(runB.id)).snapshot!.id;
  });

  it("between two snapshots: added, removed and modified paths with sizes, hashes, modes and link targets", async () => {
    const { entries, summary } = await d.client.workspace("hist").diffSnapshots(first, { to: second });
    expect(summary).toMatchObject({ from: first, to: second, added: 2n, removed: 1n, modified: 2n, unchanged: 1n });
    const e = byPath(entries);
    expect(Object.keys(e).sort()).toEqual(["/dir/added.txt", "/edit.txt", "/gone.txt", "/link", "/mode.sh"]);
    expect(e["/edit.txt"]).toMatchObject({ kind: DiffKind.MODIFIED, sizeBefore: 4n, sizeAfter: 9n, sha256Before: sha("old\n"), sha256After: sha("new text\n") });
    expect(e["/gone.txt"]).toMatchObject({ kind: DiffKind.REMOVED, sizeBefore: 4n, sha256Before: sha("bye\n"), sha256After: "", typeAfter: DiffEntryType.UNSPECIFIED });
    expect(e["/dir/added.txt"]).toMatchObject({ kind: DiffKind.ADDED, sizeAfter: 6n, sha256After: sha("hello\n"), typeBefore: DiffEntryType.UNSPECIFIED, typeAfter: DiffEntryType.FILE });
    expect(e["/mode.sh"]).toMatchObject({ kind: DiffKind.MODIFIED, modeBefore: 0o644, modeAfter: 0o755, sha256Before: sha("#!/bin/sh\n"), sha256After: sha("#!/bin/sh\n") });
    expect(e["/link"]).toMatchObject({ kind: DiffKind.ADDED, typeAfter: DiffEntryType.SYMLINK, linkAfter: "keep.txt", sha256After: "" });
  });

  it("against the live workspace: unchanged right after the snapshot, then the live edits (hashed now)", async () => {
    const ws = d.client.workspace("hist");
    const clean = await ws.diffSnapshots(second);
    expect(clean.entries).toEqual([]);
    expect(clean.summary).toMatchObject({ from: second, to: "", added: 0n, removed: 0n, modified: 0n, unchanged: 5n });
    writeFileSync(path.join(d.root, "keep.txt"), "changed outside a run\n");
    await write("live.txt", "x\n");
    const { entries, summary } = await ws.diffSnapshots(second);
    expect(summary).toMatchObject({ added: 1n, removed: 0n, modified: 1n, unchanged: 4n });
    expect(byPath(entries)["/keep.txt"]).toMatchObject({ kind: DiffKind.MODIFIED, sha256Before: sha("same\n"), sha256After: sha("changed outside a run\n") });
    expect(byPath(entries)["/live.txt"]).toMatchObject({ kind: DiffKind.ADDED, sha256After: sha("x\n") });
    // "" = the newest snapshot
    expect((await ws.diffSnapshots("")).summary.from).toBe(second);
  });

  it("an unknown snapshot is NOT_FOUND; to and live together are INVALID_ARGUMENT", async () => {
    await expectError(d.client.workspace("hist").diffSnapshots("20200101T000000000Z-00000000"), "NOT_FOUND");
    await expectError(d.client.workspace("hist").diffSnapshots(first, { to: "20200101T000000000Z-00000000" }), "NOT_FOUND");
    const both = async () => {
      for await (const _ of d.client.workspaces.diffSnapshots({ workspace: "hist", from: first, to: second, live: true }));
    };
    await expectError(both, "INVALID_ARGUMENT");
  });

  it("a damaged manifest is DATA_LOSS; one without a file list or table of contents (an older daemon's) still lists, and a diff against it says to use a newer snapshot", async () => {
    const dir = path.join(d.dataDir, "snapshots", "hist");
    const ws = d.client.workspace("hist");
    const run = await ws.startRun();
    const old = (await ws.finishRun(run.id)).snapshot!.id;
    const manifestFile = path.join(dir, `${old}.json`);
    const manifest = JSON.parse(readFileSync(manifestFile, "utf8"));
    expect(manifest.contents.bytes).toBeGreaterThan(0);
    delete manifest.contents;
    writeFileSync(manifestFile, JSON.stringify(manifest, null, 1));
    expect((await ws.listSnapshots()).map((s) => s.id)).toContain(old);
    const error = await expectError(ws.diffSnapshots(old), "FAILED_PRECONDITION", "SNAPSHOT_WITHOUT_FILE_LIST");
    expect(error.message).toContain("newer snapshot");
    await expectError(ws.diffSnapshots(first, { to: old }), "FAILED_PRECONDITION", "SNAPSHOT_WITHOUT_FILE_LIST");
    // arrays of different lengths: not a valid manifest
    manifest.files = { paths: ["/a"], shared: [0], sizes: [], modes: [], sha256: "", links: { paths: [], targets: [] } };
    writeFileSync(manifestFile, JSON.stringify(manifest));
    await expectError(ws.diffSnapshots(old), "DATA_LOSS", "DATA_LOSS");
    expect(readdirSync(dir)).toContain(`${old}.json`);
  });
});

describe("ListSnapshots filters", () => {
  it("by labels (all must match) and by creation time", async () => {
    const ws = d.client.workspace("filters");
    const ids: string[] = [];
    for (const labels of [{ team: "a", kind: "x" }, { team: "a", kind: "y" }, { team: "b", kind: "x" }]) {
      const run = await ws.startRun({ labels });
      await d.client.files.write({ workspace: "filters", path: "f.txt", body: { case: "content", value: JSON.stringify(labels) } });
      ids.push((await ws.finishRun(run.id)).snapshot!.id);
    }
    const all = await ws.listSnapshots();
    expect(all.map((s) => s.id)).toEqual([...ids].reverse());
    expect((await ws.listSnapshots({ labels: { team: "a" } })).map((s) => s.id)).toEqual([ids[1], ids[0]]);
    expect((await ws.listSnapshots({ labels: { team: "a", kind: "x" } })).map((s) => s.id)).toEqual([ids[0]]);
    expect(await ws.listSnapshots({ labels: { team: "c" } })).toEqual([]);
    const middle = timestampDate(all[1]!.createdAt!);
    expect((await ws.listSnapshots({ createdAfter: middle })).map((s) => s.id)).toEqual([ids[2], ids[1]]);
    expect((await ws.listSnapshots({ createdBefore: middle })).map((s) => s.id)).toEqual([ids[0]]);
    expect((await ws.listSnapshots({ createdAfter: middle, createdBefore: middle })).map((s) => s.id)).toEqual([]);
    expect((await ws.listSnapshots({ createdAfter: middle, labels: { kind: "x" } })).map((s) => s.id)).toEqual([ids[2]]);
  });
});
