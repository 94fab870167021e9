// Issue 10, archives and the snapshot store, through a real daemon: archive
// parsing confusions and empty archives (UNSAFE_ARCHIVE, nothing changed),
// damaged stored snapshots and untrusted manifests (DATA_LOSS, never INTERNAL,
// never a crash, never half-applied), links that would escape through links
// already in the workspace, and a slow client that holds nobody else up.
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, realpathSync, rmSync, symlinkSync, truncateSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { gzipSync } from "node:zlib";
import { tree } from "../support/trees.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { END, makeTar, rawData, rawHeader, rawPax } from "../support/tar.js";
import { asOldFormat } from "../support/old-format.js";
import { collect, expectError, startDaemon, type Daemon } from "./daemon.js";


function importBytes(d: Daemon, workspace: string, bytes: Buffer, target = "", options: { signal?: AbortSignal } = {}) {
  async function* requests() {
    yield { event: { case: "header" as const, value: { workspace, path: target } } };
    for (let i = 0; i < bytes.length; i += 64 * 1024) yield { event: { case: "chunk" as const, value: { data: bytes.subarray(i, i + 64 * 1024) } } };
  }
  return d.client.workspaces.importArchive(requests(), options);
}

/** What `read` returns once `accept` takes it (the daemon's stderr reaches us a little after its answers); the last value after 10 s. */
async function eventually<T>(read: () => T, accept: (value: T) => boolean): Promise<T> {
  let value = read();
  for (let i = 0; i < 200 && !accept(value); i++) {
    await sleep(50);
    value = read();
  }
  return value;
}

let d: Daemon;
let store: string;
let outside: string;
let bound: string;
beforeAll(async () => {
  store = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-hard-store-")));
  outside = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-hard-outside-")));
  bound = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-hard-bound-")));
  writeFileSync(path.join(outside, "secret"), "outside secret\n");
  symlinkSync(outside, path.join(bound, "hostlink"));
  d = await startDaemon({ args: ["--store", `file://${store}`, "--log-level", "info"], binds: { bound } });
});
afterAll(async () => {
  await d.stop();
  for (const dir of [store, outside, bound]) rmSync(dir, { recursive: true, force: true });
});

/** A workspace with one file, and a snapshot of it taken through a run; returns the snapshot's id. */
async function workspaceWithSnapshot(workspace: string): Promise<string> {
  const { run } = await d.client.workspaces.startRun({ workspace });
  await d.client.files.write({ workspace, path: "a.txt", body: { case: "content", value: "snapshotted\n" } });
  const { snapshot } = await d.client.workspaces.finishRun({ workspace, runId: run!.id });
  await d.client.files.write({ workspace, path: "a.txt", body: { case: "content", value: "live\n" } });
  return snapshot!.id;
}

/**
 * Replaces a stored tarball and makes its manifest match it (a store another
 * process wrote), in the older format: one whole tarball read through the
 * archive guard (a seekable snapshot's tarball is read by its table of
 * contents: server/snapshots/seekable.test.ts tampers with those).
 */
function tamper(workspace: string, id: string, tarball: Buffer, manifestChanges: Record<string, unknown> = {}): void {
  asOldFormat(store, workspace, id);
  writeFileSync(path.join(store, workspace, `${id}.tar.gz`), tarball);
  const manifestPath = path.join(store, workspace, `${id}.json`);
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
  Object.assign(manifest, { sizeBytes: tarball.length, sha256: createHash("sha256").update(tarball).digest("hex") }, manifestChanges);
  writeFileSync(manifestPath, JSON.stringify(manifest));
}

describe("archive parsing confusions are refused with UNSAFE_ARCHIVE and change nothing (item 15)", () => {
  beforeAll(async () => {
    await d.client.workspaces.createWorkspace({ workspace: "confused" });
    writeFileSync(path.join(d.hostDir("confused"), "keep.txt"), "keep\n");
  });

  const cases: Array<[string, () => Buffer]> = [
    ["a NUL inside a ustar name", () => Buffer.concat([rawHeader({ name: "evil\0.txt", size: 4 }), rawData("evil"), END])],
    ["a NUL inside a link name", () => Buffer.concat([rawHeader({ name: "l", type: "2", linkname: "keep.txt\0/../../x" }), END])],
    ["a pax size of 1e15", () => Buffer.concat([rawPax({ size: "1e15" }), rawHeader({ name: "p.txt", size: 0 }), rawData("x"), END])],
    ["a pax mtime that is not a number", () => Buffer.concat([rawPax({ mtime: "yesterday" }), rawHeader({ name: "p.txt" }), END])],
    ["a zero-byte stream", () => Buffer.alloc(0)],
    ["an empty gzip", () => gzipSync(Buffer.alloc(0))],
    ["a symbolic link target over 4,096 bytes", () => Buffer.concat([rawPax({ linkpath: "a/".repeat(2100) }), rawHeader({ name: "long", type: "2" }), END])],
  ];
  for (const [what, archive] of cases) {
    it(what, async () => {
      const before = tree(d.hostDir("confused"));
      await expectError(importBytes(d, "confused", archive()), "FAILED_PRECONDITION", "UNSAFE_ARCHIVE");
      expect(tree(d.hostDir("confused"))).toEqual(before);
    });
  }

  it("a zero-byte or empty-gzip snapshot given to RestoreSnapshot leaves the workspace as it is", async () => {
    for (const [i, empty] of [Buffer.alloc(0), gzipSync(Buffer.alloc(0))].entries()) {
      const workspace = `empty-snap-${i}`;
      const id = await workspaceWithSnapshot(workspace);
      tamper(workspace, id, empty);
      const before = tree(d.hostDir(workspace));
      await expectError(d.client.workspaces.restoreSnapshot({ workspace, snapshotId: id }), "FAILED_PRECONDITION", "UNSAFE_ARCHIVE");
      expect(tree(d.hostDir(workspace))).toEqual(before);
    }
  });
});

describe("damaged stored snapshots: DATA_LOSS, the daemon stays up, nothing changes (item 5)", () => {
  it("a truncated gzip or tar, exported with include ['**'] or restored", async () => {
    const id = await workspaceWithSnapshot("damaged");
    const tarball = readFileSync(path.join(store, "damaged", `${id}.tar.gz`));
    const whole = Buffer.concat([rawHeader({ name: "big.txt", size: 100_000 }), rawData("y".repeat(100_000)), END]);
    for (const cut of [tarball.subarray(0, tarball.length - 20), gzipSync(whole.subarray(0, 50_000))]) {
      tamper("damaged", id, cut);
      await expectError(collect(d.client.workspaces.exportSnapshot({ workspace: "damaged", snapshotId: id, include: ["**"] })), "DATA_LOSS", "DATA_LOSS");
      const before = tree(d.hostDir("damaged"));
      await expectError(d.client.workspaces.restoreSnapshot({ workspace: "damaged", snapshotId: id }), "DATA_LOSS", "DATA_LOSS");
      expect(tree(d.hostDir("damaged"))).toEqual(before);
    }
    // Still serving.
    expect(d.proc.exitCode).toBeNull();
    await d.client.files.stat({ workspace: "damaged", path: "a.txt" });
  });

  it("a tarball that does not match its manifest, or that vanished while its manifest stayed", async () => {
    const id = await workspaceWithSnapshot("mismatch");
    const tarballPath = path.join(store, "mismatch", `${id}.tar.gz`);
    const before = tree(d.hostDir("mismatch"));
    truncateSync(tarballPath, 10);
    await expectError(d.client.workspaces.restoreSnapshot({ workspace: "mismatch", snapshotId: id }), "DATA_LOSS", "DATA_LOSS");
    unlinkSync(tarballPath);
    await expectError(d.client.workspaces.restoreSnapshot({ workspace: "mismatch", snapshotId: id }), "DATA_LOSS", "DATA_LOSS");
    await expectError(collect(d.client.workspaces.exportSnapshot({ workspace: "mismatch", snapshotId: id })), "DATA_LOSS", "DATA_LOSS");
    expect(tree(d.hostDir("mismatch"))).toEqual(before);
  });
});

describe("manifests are untrusted: a bad one is DATA_LOSS, never half-applied, and left out of ListSnapshots (item 6)", () => {
  const bad: Array<[string, Record<string, unknown>]> = [
    ["fileCount 1.5", { fileCount: 1.5 }],
    ["changes null", { changes: null }],
    ["createdAt garbage", { createdAt: "garbage" }],
    ["no tarball", { tarball: undefined }],
    ["a tarball naming a directory", { tarball: "manifests/" }],
    ["a tarball of another workspace", { tarball: "other/20200101T000000000Z-00000000.tar.gz" }],
    ["a change set that is not a list", { changeSet: { kind: "create" } }],
  ];
  let good: string;
  beforeAll(async () => {
    good = await workspaceWithSnapshot("manifests");
  });

  for (const [what, change] of bad) {
    it(what, async () => {
      const { run } = await d.client.workspaces.startRun({ workspace: "manifests" });
      const { snapshot } = await d.client.workspaces.finishRun({ workspace: "manifests", runId: run!.id });
      const manifestPath = path.join(store, "manifests", `${snapshot!.id}.json`);
      writeFileSync(manifestPath, JSON.stringify({ ...JSON.parse(readFileSync(manifestPath, "utf8")), ...change }));
      await d.client.files.write({ workspace: "manifests", path: "a.txt", body: { case: "content", value: `after ${what}\n` } });
      const before = tree(d.hostDir("manifests"));
      await expectError(d.client.workspaces.restoreSnapshot({ workspace: "manifests", snapshotId: snapshot!.id }), "DATA_LOSS", "DATA_LOSS");
      expect(tree(d.hostDir("manifests"))).toEqual(before);
      const { snapshots } = await d.client.workspaces.listSnapshots({ workspace: "manifests" });
      expect(snapshots.map((s) => s.id)).toContain(good);
      expect(snapshots.map((s) => s.id)).not.toContain(snapshot!.id);
      const warned = `"snapshot":"${snapshot!.id}"`;
      expect(await eventually(() => d.logs(), (logs) => logs.includes(warned))).toContain(warned);
    });
  }
});

describe("persisted run records are untrusted too (item 6)", () => {
  it("a daemon starts over damaged run records and change sets, leaving them out with a warning", async () => {
    const dataDir = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-hard-runs-")));
    const first = await startDaemon({ dataDir });
    const { run } = await first.client.workspaces.startRun({ workspace: "r" });
    await first.client.files.write({ workspace: "r", path: "x.txt", body: { case: "content", value: "x\n" } });
    await first.stop(true);
    const runs = path.join(dataDir, "runs");
    writeFileSync(path.join(runs, "run-20200101T000000000Z-00000000.json"), '{"state":"active","workspace":null}');
    writeFileSync(path.join(runs, "run-20200101T000000000Z-11111111.json"), "not json");
    writeFileSync(path.join(runs, `${run!.id}.changes.jsonl`), `{"kind":"explode"}\n` + readFileSync(path.join(runs, `${run!.id}.changes.jsonl`), "utf8"));
    const second = await startDaemon({ dataDir, args: ["--log-level", "warn"] });
    try {
      const changes = await collect(second.client.workspaces.getChangeSet({ workspace: "r", runId: run!.id }));
      expect(changes.flatMap((message) => message.changes.map((change) => change.path))).toEqual(["/x.txt"]);
      const logs = await eventually(() => second.logs(), (text) => /run record left out[\s\S]*change set entry left out|change set entry left out[\s\S]*run record left out/.test(text));
      expect(logs).toMatch(/run record left out/);
      expect(logs).toMatch(/change set entry left out/);
    } finally {
      await second.stop();
    }
  });
});

describe("links across archives: the check sees the links already in the workspace (item 12)", () => {
  beforeAll(async () => {
    await d.client.workspaces.createWorkspace({ workspace: "links" });
    await d.client.workspaces.createWorkspace({ workspace: "other-workspace" });
    writeFileSync(path.join(d.hostDir("other-workspace"), "secret.txt"), "other's secret\n");
  });

  it("e -> . first, then l -> e/.. and n -> e/../other-workspace/secret.txt", async () => {
    await importBytes(d, "links", await makeTar([{ name: "e", type: "symlink", linkname: "." }]));
    const before = tree(d.hostDir("links"));
    for (const [name, linkname] of [["l", "e/.."], ["n", "e/../other-workspace/secret.txt"], ["deep/m", "../e/e/.."]] as const) {
      await expectError(importBytes(d, "links", await makeTar([{ name, type: "symlink", linkname }])), "FAILED_PRECONDITION", "UNSAFE_ARCHIVE");
    }
    expect(tree(d.hostDir("links"))).toEqual(before);
    // Links that stay inside through existing ones are fine.
    await importBytes(d, "links", await makeTar([{ name: "ok", type: "symlink", linkname: "e/e/a" }]));
    expect(readlinkSync(path.join(d.hostDir("links"), "ok"))).toBe("e/e/a");
  });

  it("into a subdirectory, through a link a shell made there (sub/e -> ..), then esc -> e/.. or in -> e/sub", async () => {
    mkdirSync(path.join(d.hostDir("links"), "sub"));
    symlinkSync("..", path.join(d.hostDir("links"), "sub", "e"));
    await expectError(importBytes(d, "links", await makeTar([{ name: "esc", type: "symlink", linkname: "e/.." }]), "sub"), "FAILED_PRECONDITION", "UNSAFE_ARCHIVE");
    // Leaving the import directory to come back into it is refused too (issue 25 item 7); staying in it is fine.
    await expectError(importBytes(d, "links", await makeTar([{ name: "in", type: "symlink", linkname: "e/sub" }]), "sub"), "FAILED_PRECONDITION", "UNSAFE_ARCHIVE");
    await importBytes(d, "links", await makeTar([{ name: "in", type: "symlink", linkname: "./x" }]), "sub");
    expect(readlinkSync(path.join(d.hostDir("links"), "sub", "in"))).toBe("./x");
  });

  it("the other way round: a link already there (y -> e/..) would point out once the archive adds e -> .", async () => {
    await d.client.workspaces.createWorkspace({ workspace: "links2" });
    symlinkSync("e/..", path.join(d.hostDir("links2"), "y"));
    const before = tree(d.hostDir("links2"));
    await expectError(importBytes(d, "links2", await makeTar([{ name: "e", type: "symlink", linkname: "." }])), "FAILED_PRECONDITION", "UNSAFE_ARCHIVE");
    expect(tree(d.hostDir("links2"))).toEqual(before);
    // A link that does not change where y leads is fine.
    await importBytes(d, "links2", await makeTar([{ name: "f", type: "symlink", linkname: "y" }]));
  });

  it("an operator's link in a bound workspace (hostlink -> /outside), then m -> hostlink/../secret", async () => {
    const before = tree(bound);
    await expectError(importBytes(d, "bound", await makeTar([{ name: "m", type: "symlink", linkname: "hostlink/../secret" }])), "FAILED_PRECONDITION", "UNSAFE_ARCHIVE");
    expect(tree(bound)).toEqual(before);
    expect(existsSync(path.join(bound, "m"))).toBe(false);
  });
});

describe("one slow client holds nobody up (item 3)", () => {
  it("while an import trickles in, FinishRun, RestoreSnapshot and another import of the workspace go through", async () => {
    const id = await workspaceWithSnapshot("slow");
    const { run } = await d.client.workspaces.startRun({ workspace: "slow" });
    const stop = new AbortController();
    async function* trickle() {
      yield { event: { case: "header" as const, value: { workspace: "slow", path: "" } } };
      const archive = await makeTar([{ name: "slow.txt", content: "slow\n" }]);
      for (const byte of archive) {
        await sleep(200);
        yield { event: { case: "chunk" as const, value: { data: Buffer.from([byte]) } } };
      }
    }
    const slow = d.client.workspaces.importArchive(trickle(), { signal: stop.signal }).catch((error: unknown) => error);
    await sleep(500);
    const deadline = { deadline: 10_000 };
    const { snapshot } = await d.client.workspaces.finishRun({ workspace: "slow", runId: run!.id }, deadline);
    expect(snapshot?.id).toBeTruthy();
    await importBytes(d, "slow", await makeTar([{ name: "fast.txt", content: "fast\n" }]));
    await d.client.workspaces.restoreSnapshot({ workspace: "slow", snapshotId: id }, deadline);
    expect(readFileSync(path.join(d.hostDir("slow"), "a.txt"), "utf8")).toBe("snapshotted\n");
    stop.abort();
    await slow;
    expect(existsSync(path.join(d.hostDir("slow"), "slow.txt"))).toBe(false);
  });
});

describe("a call that gave up waiting for the workspace is never applied later (item 3)", () => {
  it("a RestoreSnapshot whose deadline passes while a long FinishRun holds the workspace", async () => {
    const id = await workspaceWithSnapshot("late");
    const { run } = await d.client.workspaces.startRun({ workspace: "late" });
    // Incompressible content, so that packing it takes a while.
    writeFileSync(path.join(d.hostDir("late"), "noise.bin"), randomBytes(96 << 20));
    const finishing = d.client.workspaces.finishRun({ workspace: "late", runId: run!.id });
    await sleep(300);
    await expectError(d.client.workspaces.restoreSnapshot({ workspace: "late", snapshotId: id }, { deadline: 300 }), "DEADLINE_EXCEEDED");
    await finishing;
    await sleep(500);
    expect(readFileSync(path.join(d.hostDir("late"), "a.txt"), "utf8")).toBe("live\n");
    expect(existsSync(path.join(d.hostDir("late"), "noise.bin"))).toBe(true);
  });
});

describe("an import either completes and logs OK, or changes nothing (item 7)", () => {
  it("cancelled at points through receiving, staging and applying 10,000 files", async () => {
    const archive = await makeTar(Array.from({ length: 10_000 }, (_, i) => ({ name: `f${i}`, content: "" })));
    // How long a whole import takes here, to spread the cancellations over it (the merge is its last part).
    await d.client.workspaces.createWorkspace({ workspace: "cancel-whole" });
    const started = Date.now();
    await importBytes(d, "cancel-whole", archive);
    const whole = Date.now() - started;
    for (const [i, fraction] of [0.2, 0.5, 0.7, 0.8, 0.88, 0.95, 1.05].entries()) {
      const workspace = `cancel-${i}`;
      await d.client.workspaces.createWorkspace({ workspace });
      const abort = new AbortController();
      const call = importBytes(d, workspace, archive, "", { signal: abort.signal }).then(() => "OK", () => "failed");
      await sleep(whole * fraction);
      abort.abort();
      await call;
      // The daemon's own line for the call says what happened to it.
      const line = await eventually(
        () =>
          d
            .logs()
            .split("\n")
            .filter((l) => l.includes('"method":"filetools.v1.Workspaces/ImportArchive"') && l.includes(`"workspace":"${workspace}"`))
            .map((l) => JSON.parse(l) as { code: string })[0],
        (found) => found !== undefined,
      );
      const landed = readdirSync(d.hostDir(workspace)).length;
      expect({ fraction, code: line?.code, landed }).toEqual({ fraction, code: line?.code, landed: line?.code === "OK" ? 10_000 : 0 });
    }
  }, 180_000);
});
