// The end-to-end scenario of the runs issue, parameterised by store URL so
// that every store runs it (file:// in runs.test.ts, s3:// on SeaweedFS):
// daemon A runs on `reports`, writes and edits, finishes; A and its whole data
// directory go away; daemon B, with an empty data directory and the same
// store, restores the files byte for byte, reads A's change set from the
// snapshot manifest, and exports a tarball whose sha256 matches and which GNU
// tar lists.
import { createHash, randomBytes } from "node:crypto";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "vitest";
import { ChangeKind } from "@filetools/proto/filetools/v1/workspaces_pb.js";
import { collect, startDaemon } from "./daemon.js";

export async function download(client: Awaited<ReturnType<typeof startDaemon>>["client"], workspace: string, p: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const m of client.files.download({ workspace, path: p })) if (m.event.case === "chunk") parts.push(Buffer.from(m.event.value.data));
  return Buffer.concat(parts);
}

export async function exportTarball(client: Awaited<ReturnType<typeof startDaemon>>["client"], request: { workspace: string; snapshotId?: string; live?: boolean; include?: string[] }) {
  const messages = await collect(client.workspaces.exportSnapshot(request));
  const first = messages[0]!;
  if (first.event.case !== "header") throw new Error("export did not start with a header");
  const header = first.event.value;
  const chunks = messages.slice(1).map((m) => {
    if (m.event.case !== "chunk") throw new Error("export sent a second header");
    return Buffer.from(m.event.value.data);
  });
  return { header, chunks, bytes: Buffer.concat(chunks) };
}

/** GNU tar's listing of a gzipped tarball. */
export function tarList(bytes: Buffer): string[] {
  const dir = mkdtempSync(path.join(tmpdir(), "ftd-tar-"));
  try {
    const file = path.join(dir, "x.tar.gz");
    writeFileSync(file, bytes);
    return execFileSync("tar", ["-tzf", file], { encoding: "utf8" }).split("\n").filter((l) => l !== "");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runScenario(storeUrl: string, extraArgs: string[] = []): Promise<void> {
  const ws = "reports";
  const args = ["--store", storeUrl, ...extraArgs];
  const binary = randomBytes(300_000);
  const a = await startDaemon({ args });
  let runA: string;
  let snapshot;
  try {
    const { run } = await a.client.workspaces.startRun({ workspace: ws, labels: { crew: "alpha" } });
    expect(run!.restoredFrom).toBe("");
    runA = run!.id;
    await a.client.files.write({ workspace: ws, path: "summary.md", body: { case: "content", value: "# Q3\n\nrevenue: TBD\n" } });
    await a.client.files.write({ workspace: ws, path: "data/raw.bin", body: { case: "data", value: binary } });
    await a.client.files.write({ workspace: ws, path: "data/tmp.txt", body: { case: "content", value: "scratch\n" } });
    await a.client.files.edit({ workspace: ws, path: "summary.md", edits: [{ oldText: "TBD", newText: "42" }] });
    await a.client.files.move({ workspace: ws, source: "data/tmp.txt", destination: "data/kept.txt" });
    await a.client.files.write({ workspace: ws, path: "gone.txt", body: { case: "content", value: "bye\n" } });
    await a.client.files.delete({ workspace: ws, path: "gone.txt" });
    const finished = await a.client.workspaces.finishRun({ workspace: ws, runId: runA, labels: { stage: "done" } });
    snapshot = finished.snapshot!;
    expect(finished.changes).toMatchObject({ created: 4n, modified: 1n, deleted: 1n, moved: 1n });
    expect(snapshot.runId).toBe(runA);
    expect(snapshot.fileCount).toBe(3n);
    expect(snapshot.labels).toEqual({ crew: "alpha", stage: "done" });
  } finally {
    await a.stop(); // also deletes A's whole data directory
  }
  expect(existsSync(a.dataDir)).toBe(false);

  const b = await startDaemon({ args });
  try {
    const listed = await b.client.workspaces.listSnapshots({ workspace: ws });
    expect(listed.snapshots.map((s) => s.id)).toEqual([snapshot.id]);
    const { run } = await b.client.workspaces.startRun({ workspace: ws });
    expect(run!.restoredFrom).toBe(snapshot.id);
    expect((await download(b.client, ws, "summary.md")).toString()).toBe("# Q3\n\nrevenue: 42\n");
    expect((await download(b.client, ws, "data/raw.bin")).equals(binary)).toBe(true);
    expect((await download(b.client, ws, "data/kept.txt")).toString()).toBe("scratch\n");
    await expect(b.client.files.stat({ workspace: ws, path: "gone.txt" })).rejects.toThrow();

    // A's change set, from the snapshot manifest (B never saw run A).
    const changes = (await collect(b.client.workspaces.getChangeSet({ workspace: ws, runId: runA }))).flatMap((m) => m.changes);
    expect(changes.map((c) => [c.kind, c.path, c.sourcePath])).toEqual([
      [ChangeKind.CREATE, "/summary.md", ""],
      [ChangeKind.CREATE, "/data/raw.bin", ""],
      [ChangeKind.CREATE, "/data/tmp.txt", ""],
      [ChangeKind.MODIFY, "/summary.md", ""],
      [ChangeKind.MOVE, "/data/kept.txt", "/data/tmp.txt"],
      [ChangeKind.CREATE, "/gone.txt", ""],
      [ChangeKind.DELETE, "/gone.txt", ""],
    ]);
    const sha = (b: Buffer | string) => createHash("sha256").update(b).digest("hex");
    expect(changes[1]!.sha256After).toBe(sha(binary));
    expect(changes[3]!.sha256Before).toBe(sha("# Q3\n\nrevenue: TBD\n"));
    expect(changes[3]!.sha256After).toBe(sha("# Q3\n\nrevenue: 42\n"));

    const exported = await exportTarball(b.client, { workspace: ws, snapshotId: snapshot.id });
    expect(exported.header.sha256).toBe(snapshot.sha256);
    expect(exported.header.size).toBe(snapshot.sizeBytes);
    expect(exported.header.fileCount).toBe(3n);
    expect(sha(exported.bytes)).toBe(snapshot.sha256);
    expect(exported.chunks.every((c) => c.length <= 1 << 20)).toBe(true);
    expect(tarList(exported.bytes)).toEqual(["data/", "data/kept.txt", "data/raw.bin", "summary.md"]);
    await b.client.workspaces.finishRun({ workspace: ws, runId: run!.id, snapshot: false });
  } finally {
    await b.stop();
  }
}
