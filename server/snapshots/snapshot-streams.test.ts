// Every stream a snapshot call builds (tar-stream pack and extract and their
// entries, gzip and gunzip, the scratch files' read streams) killed mid-way:
// a read that fails half-way, a client stream that throws or is cut, a
// consumer that stops reading. The call fails or ends; the process sees no
// 'error' event nobody listens to and no rejection nobody handles; every
// descriptor of the scratch directory, the store and the workspace is given
// back.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Transform, pipeline } from "node:stream";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { descriptorsUnder, eventually, watchProcess } from "../../test/support/process-health.js";
import { WorkspaceRegistry } from "../workspace/registry.js";
import type { Workspace } from "../workspace/workspace.js";
import { FileStore } from "./file-store.js";
import { Snapshots, type Manifest } from "./snapshots.js";
import { fail, FileToolsError } from "../errors.js";
import { writeOldSnapshot } from "../../test/support/old-format.js";

/** Reads of files whose path matches `pattern` fail once `afterBytes` were read (an EIO half-way). */
const failing: { pattern: RegExp | null; afterBytes: number } = { pattern: null, afterBytes: 0 };
vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof import("node:fs")>();
  const createReadStream = ((file: string, options?: object) => {
    const stream = fs.createReadStream(file, options as never);
    if (!failing.pattern?.test(String(file))) return stream;
    const limit = failing.afterBytes;
    let read = 0;
    const cut = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        read += chunk.length;
        callback(read > limit ? Object.assign(new Error("EIO: i/o error, read"), { code: "EIO", syscall: "read" }) : null, chunk);
      },
    });
    return pipeline(stream, cut, () => undefined);
  }) as typeof fs.createReadStream;
  return { ...fs, createReadStream, default: { ...fs, createReadStream } };
});

let base: string;
let scratch: string;
let storeDir: string;
let snapshots: Snapshots;
let workspace: Workspace;
let manifest: Manifest;
/** The same tree later, one file changed: a snapshot that points at the first one's tarball. */
let incremental: Manifest;
/** The same tree in the format older daemons wrote (one plain tarball, read through a verified download). */
let oldManifest: Manifest;
/** Ranged reads of the store fail once this many were served (null: never). */
let rangedReadsLeft: number | null = null;
let health: ReturnType<typeof watchProcess>;

beforeAll(async () => {
  base = mkdtempSync(path.join(tmpdir(), "snapshot-streams-"));
  scratch = path.join(base, "tmp");
  storeDir = path.join(base, "store");
  mkdirSync(scratch);
  const registry = await WorkspaceRegistry.start(path.join(base, "data"), new Map());
  workspace = await registry.create("w");
  const root = path.join(base, "data", "workspaces", "w");
  // Members skipped by an include of keep/**, around the ones kept: a failure lands in one or the other.
  mkdirSync(path.join(root, "keep"));
  mkdirSync(path.join(root, "skip"));
  writeFileSync(path.join(root, "keep", "a.txt"), "kept\n");
  for (let i = 0; i < 4; i++) writeFileSync(path.join(root, "skip", `big${i}.bin`), randomBytes(1024 * 1024));
  writeFileSync(path.join(root, "keep", "z.bin"), randomBytes(2 * 1024 * 1024));
  const files = new FileStore(storeDir);
  await files.check();
  const store = Object.assign(Object.create(files) as FileStore, {
    getRange: (key: string, offset: number, length: number) => {
      if (rangedReadsLeft !== null && rangedReadsLeft-- <= 0) fail("STORE_UNAVAILABLE", "the store stopped answering");
      return files.getRange(key, offset, length);
    },
  });
  snapshots = new Snapshots(store, 100, scratch, registry);
  await snapshots.prepare();
  oldManifest = await snapshots.find("w", await writeOldSnapshot(store, "w", root));
  manifest = (await snapshots.create(workspace, { runId: "r", labels: {}, changeSet: [], parent: "", publish: { replaces: oldManifest.id } })).manifest;
  writeFileSync(path.join(root, "keep", "a.txt"), "changed\n");
  incremental = (await snapshots.create(workspace, { runId: "r2", labels: {}, changeSet: [], parent: manifest.id, publish: { replaces: manifest.id } })).manifest;
});

afterAll(() => {
  workspace?.close();
  rmSync(base, { recursive: true, force: true });
});

afterEach(() => {
  failing.pattern = null;
  rangedReadsLeft = null;
  health?.stop();
});

/** The call's descriptors are all given back, and the process saw nothing thrown at it. */
async function expectNothingLeft(held: string[]): Promise<void> {
  const dirs = [scratch, storeDir, path.join(base, "data")];
  await eventually(() => descriptorsUnder(...dirs).length === held.length);
  expect(descriptorsUnder(...dirs)).toEqual(held);
  expect(health.problems).toEqual([]);
}

function start(): string[] {
  health = watchProcess();
  return descriptorsUnder(scratch, storeDir, path.join(base, "data"));
}

async function* cut(chunks: number, end: "throws" | "ends"): AsyncGenerator<Uint8Array> {
  const tarball: Buffer[] = [];
  const stored = await snapshots.exportStored(manifest);
  for await (const chunk of stored.chunks) tarball.push(chunk);
  const bytes = Buffer.concat(tarball);
  const step = Math.ceil(bytes.length / 10);
  for (let i = 0; i < chunks; i++) yield bytes.subarray(i * step, (i + 1) * step);
  if (end === "throws") throw new Error("the client's stream broke");
}

describe("killed mid-way", () => {
  it("an export of an older-format snapshot filtered by include, its verified copy failing to read half-way (in a member it skips)", async () => {
    const held = start();
    failing.pattern = /\/download-[0-9a-f]+$/;
    failing.afterBytes = 3584 * 1024; // keep/a.txt, keep/z.bin (2 MiB), then in skip/big1.bin
    await expect(snapshots.exportFiltered({ manifest: oldManifest }, ["keep/**"])).rejects.toMatchObject({ reason: "DATA_LOSS", message: expect.stringContaining("EIO") });
    await expectNothingLeft(held);
  });

  it("a restore of an older-format snapshot, its verified copy failing to read half-way", async () => {
    const held = start();
    failing.pattern = /\/download-[0-9a-f]+$/;
    failing.afterBytes = 3584 * 1024;
    await expect(snapshots.restore("w", oldManifest)).rejects.toBeInstanceOf(FileToolsError);
    await expectNothingLeft(held);
  });

  it.each([
    ["a restore", () => snapshots.restore("w", incremental)],
    ["a filtered export", () => snapshots.exportFiltered({ manifest: incremental }, ["keep/**", "skip/big2.bin"])],
    ["an export", () => snapshots.exportStored(incremental)],
  ] as const)("%s of a seekable snapshot, the store's ranged reads failing half-way", async (_name, call) => {
    const held = start();
    rangedReadsLeft = 1;
    await expect(call()).rejects.toMatchObject({ reason: "STORE_UNAVAILABLE" });
    await expectNothingLeft(held);
  });

  it.each(["throws", "ends"] as const)("an import whose client stream %s half-way", async (end) => {
    const held = start();
    const importing = snapshots.importArchive("w", ["imported"], cut(5, end));
    await (end === "throws" ? expect(importing).rejects.toThrow("the client's stream broke") : expect(importing).rejects.toMatchObject({ reason: "UNSAFE_ARCHIVE" }));
    await expectNothingLeft(held);
  });

  it.each(["live", "stored, filtered", "stored", "stored, incremental", "older format, filtered"] as const)("an export (%s) whose consumer stops after the first chunk", async (kind) => {
    const held = start();
    const stream =
      kind === "live"
        ? await snapshots.exportFiltered({ workspace }, [])
        : kind === "stored"
          ? await snapshots.exportStored(manifest)
          : kind === "stored, incremental"
            ? await snapshots.exportStored(incremental)
            : await snapshots.exportFiltered({ manifest: kind === "stored, filtered" ? manifest : oldManifest }, ["keep/**", "skip/big1.bin"]);
    const chunks = stream.chunks[Symbol.asyncIterator]();
    expect((await chunks.next()).done).toBe(false);
    await stream.release();
    await expectNothingLeft(held);
  });
});
