// Snapshots of workspaces in the store (SPEC 1, 4.2). Per snapshot two keys:
//   <workspace>/<id>.tar.gz   the tarball, put first (visible only when complete)
//   <workspace>/<id>.json     the manifest, put only once the tarball and its
//                             sha256 are known: a snapshot exists iff its manifest does.
// Ids sort by creation time, so the store's sorted listing is chronological.
import { createHash, randomBytes } from "node:crypto";
import { createReadStream, promises as fsp } from "node:fs";
import path from "node:path";
import { pipeline } from "node:stream";
import { createGunzip, createGzip } from "node:zlib";
import picomatch from "picomatch";
import tar from "tar-stream";
import { fail, FileToolsError } from "../errors.js";
import type { Change } from "../tools/changes.js";
import type { ChangeSummary } from "../runs/runs.js";
import { summarize } from "../runs/runs.js";
import type { Workspace } from "../workspace/workspace.js";
import { WORKSPACE_ID_PATTERN, type WorkspaceRegistry } from "../workspace/registry.js";
import type { Components } from "../workspace/paths.js";
import { escapeName } from "../workspace/names.js";
import { extractArchive, heldMemberNames, nameExactExtract, DEFAULT_LIMITS, type ExtractLimits, type ExtractResult } from "./extract.js";
import { packMember, packWorkspace } from "./pack.js";
import type { SnapshotStore } from "./store.js";

export const EXPORT_CHUNK_BYTES = 1 << 20;
/** Reads of a verified tarball during a restore: fewer thread-pool round trips than the 64 KiB default. */
const RESTORE_READ_BYTES = 1 << 20;
const SNAPSHOT_ID = /^[0-9]{8}T[0-9]{9}Z-[0-9a-f]{8}$/;

export interface Manifest {
  id: string;
  workspace: string;
  runId: string;
  /** ISO 8601. */
  createdAt: string;
  sizeBytes: number;
  sha256: string;
  fileCount: number;
  labels: Record<string, string>;
  changes: ChangeSummary;
  /** The run's change set, in order ([] for a snapshot outside a run). */
  changeSet: Change[];
  /** Store key of the tarball. */
  tarball: string;
}

export interface ExportStream {
  size: number;
  sha256: string;
  fileCount: number;
  chunks: AsyncIterable<Buffer>;
}

export class Snapshots {
  /** Per workspace: snapshots, restores and imports run one at a time. */
  private readonly tails = new Map<string, Promise<unknown>>();

  constructor(
    readonly store: SnapshotStore,
    private readonly keep: number,
    /** Scratch directory on the daemon's disk (downloads to verify, live exports). */
    private readonly tmpDir: string,
    private readonly registry: WorkspaceRegistry,
    readonly limits: ExtractLimits = DEFAULT_LIMITS,
  ) {}

  /** Empties the scratch directory (start-up). */
  async prepare(): Promise<void> {
    await fsp.rm(this.tmpDir, { recursive: true, force: true });
    await fsp.mkdir(this.tmpDir, { recursive: true });
  }

  /** Packs the workspace into the store, then writes the manifest, then prunes. */
  async create(workspace: Workspace, meta: { runId: string; labels: Record<string, string>; changeSet: Change[] }, signal?: AbortSignal): Promise<Manifest> {
    // The registry's current Workspace: a restore queued before may have swapped the directory.
    return this.exclusive(workspace.id, async () => this.createNow(await this.registry.get(workspace.id), meta, signal));
  }

  private async createNow(workspace: Workspace, meta: { runId: string; labels: Record<string, string>; changeSet: Change[] }, signal?: AbortSignal): Promise<Manifest> {
    const id = newSnapshotId();
    const tarball = `${workspace.id}/${id}.tar.gz`;
    const packed = packWorkspace(workspace, { signal });
    const measure = { size: 0, hash: createHash("sha256") };
    await this.store.put(tarball, measured(packed.bytes, measure), signal);
    const manifest: Manifest = {
      id,
      workspace: workspace.id,
      runId: meta.runId,
      createdAt: new Date().toISOString(),
      sizeBytes: measure.size,
      sha256: measure.hash.digest("hex"),
      fileCount: packed.fileCount,
      labels: meta.labels,
      changes: summarize(meta.changeSet),
      changeSet: meta.changeSet,
      tarball,
    };
    await this.store.put(`${workspace.id}/${id}.json`, single(Buffer.from(JSON.stringify(manifest, null, 1))), signal);
    await this.prune(workspace.id, id).catch(() => undefined);
    return manifest;
  }

  /** Manifests of a workspace, newest first. */
  async list(workspaceId: string, signal?: AbortSignal): Promise<Manifest[]> {
    const ids = await this.manifestIds(workspaceId, signal);
    const manifests = await Promise.all(ids.reverse().map((id) => this.readManifest(workspaceId, id, signal).catch(() => null)));
    return manifests.filter((m): m is Manifest => m !== null);
  }

  /** One manifest; "" = the newest. NOT_FOUND when absent. */
  async find(workspaceId: string, snapshotId: string, signal?: AbortSignal): Promise<Manifest> {
    if (snapshotId === "") {
      const ids = await this.manifestIds(workspaceId, signal);
      const newest = ids[ids.length - 1];
      if (!newest) fail("NOT_FOUND", `workspace ${workspaceId} has no snapshots`);
      return this.readManifest(workspaceId, newest, signal);
    }
    checkWorkspaceId(workspaceId);
    if (!SNAPSHOT_ID.test(snapshotId)) fail("NOT_FOUND", `snapshot ${JSON.stringify(snapshotId.slice(0, 80))} does not exist`);
    return this.readManifest(workspaceId, snapshotId, signal);
  }

  /** The manifest of the snapshot that ended (or was taken during) a run, newest first; undefined when none. */
  async findByRun(workspaceId: string, runId: string, signal?: AbortSignal): Promise<Manifest | undefined> {
    return (await this.list(workspaceId, signal)).find((m) => m.runId === runId);
  }

  /** A stored tarball, streamed in ≤ 1 MiB chunks; fails at the end if its bytes do not match the manifest. */
  exportStored(manifest: Manifest, signal?: AbortSignal): ExportStream {
    const store = this.store;
    async function* chunks(): AsyncGenerator<Buffer> {
      const hash = createHash("sha256");
      for await (const chunk of rechunk(await store.get(manifest.tarball, signal))) {
        hash.update(chunk);
        yield chunk;
      }
      if (hash.digest("hex") !== manifest.sha256) fail("STORE_UNAVAILABLE", `snapshot ${manifest.id} in the store does not match its manifest's sha256`);
    }
    return { size: manifest.sizeBytes, sha256: manifest.sha256, fileCount: manifest.fileCount, chunks: chunks() };
  }

  /**
   * A fresh tarball of the workspace as it is now (include: only matching
   * files and links), or of a stored snapshot filtered by include. Staged in
   * a scratch file so the header can carry its size and sha256.
   */
  async exportFiltered(source: { workspace: Workspace } | { manifest: Manifest }, include: readonly string[], signal?: AbortSignal): Promise<ExportStream> {
    const file = this.scratchPath("export");
    const measure = { size: 0, hash: createHash("sha256") };
    let fileCount = 0;
    try {
      let bytes: AsyncIterable<Uint8Array>;
      let counted: () => number;
      if ("workspace" in source) {
        const packed = packWorkspace(source.workspace, { include, signal });
        bytes = packed.bytes;
        counted = () => packed.fileCount;
      } else {
        const verified = await this.download(source.manifest, signal);
        try {
          const filtered = filterTarball(createReadStream(verified), include);
          bytes = filtered.bytes;
          counted = () => filtered.fileCount;
          await writeFileFrom(file, measured(bytes, measure));
        } finally {
          await fsp.unlink(verified).catch(() => undefined);
        }
        fileCount = counted();
        return this.scratchExport(file, measure, fileCount);
      }
      await writeFileFrom(file, measured(bytes, measure));
      fileCount = counted();
      return this.scratchExport(file, measure, fileCount);
    } catch (error) {
      await fsp.unlink(file).catch(() => undefined);
      throw error;
    }
  }

  /** Replaces the workspace's contents with the snapshot (sha256 verified first; extracted into staging; swapped in). */
  async restore(workspaceId: string, manifest: Manifest, signal?: AbortSignal): Promise<void> {
    return this.exclusive(workspaceId, () => this.restoreNow(workspaceId, manifest, signal));
  }

  private async restoreNow(workspaceId: string, manifest: Manifest, signal?: AbortSignal): Promise<void> {
    const verified = await this.download(manifest, signal);
    try {
      const workspace = await this.registry.get(workspaceId);
      const staging = await workspace.createStaging();
      try {
        await extractArchive(createReadStream(verified, { highWaterMark: RESTORE_READ_BYTES }), staging, this.limits);
        await this.registry.replaceWithStaging(workspaceId, staging);
      } catch (error) {
        await staging.discard(); // nothing once handed over
        throw error;
      }
    } finally {
      await fsp.unlink(verified).catch(() => undefined);
    }
  }

  /** Unpacks an untrusted tarball into directory `parts` of the workspace; a refusal changes nothing. */
  async importArchive(workspace: Workspace, parts: Components, chunks: AsyncIterable<Uint8Array>): Promise<ExtractResult> {
    return this.exclusive(workspace.id, async () => this.importNow(await this.registry.get(workspace.id), parts, chunks));
  }

  private async importNow(workspace: Workspace, parts: Components, chunks: AsyncIterable<Uint8Array>): Promise<ExtractResult> {
    const staging = await workspace.createStaging();
    let result: ExtractResult;
    try {
      result = await extractArchive(chunks, staging, this.limits);
    } catch (error) {
      await staging.discard();
      throw error;
    }
    await workspace.mergeStaging(staging, parts);
    return result;
  }

  /** Deletes every snapshot of a workspace. */
  async deleteAll(workspaceId: string, signal?: AbortSignal): Promise<void> {
    checkWorkspaceId(workspaceId);
    for (const key of await this.store.list(`${workspaceId}/`, signal)) {
      if (key.endsWith(".json")) await this.store.delete(key, signal);
    }
    for (const key of await this.store.list(`${workspaceId}/`, signal)) await this.store.delete(key, signal);
  }

  private exclusive<T>(workspaceId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(workspaceId) ?? Promise.resolve();
    const mine = previous.catch(() => undefined).then(work);
    const tail = mine.catch(() => undefined);
    this.tails.set(workspaceId, tail);
    void tail.then(() => {
      if (this.tails.get(workspaceId) === tail) this.tails.delete(workspaceId);
    });
    return mine;
  }

  /** Keeps the newest `keep` snapshots; also drops tarballs older than `newestId` that never got a manifest. */
  private async prune(workspaceId: string, newestId: string): Promise<void> {
    const keys = await this.store.list(`${workspaceId}/`);
    const ids = keys.filter((k) => k.endsWith(".json")).map((k) => idOf(k));
    for (const id of ids.slice(0, Math.max(0, ids.length - this.keep))) {
      await this.store.delete(`${workspaceId}/${id}.json`);
      await this.store.delete(`${workspaceId}/${id}.tar.gz`);
    }
    const kept = new Set(ids);
    for (const key of keys) {
      const id = idOf(key);
      if (key.endsWith(".tar.gz") && !kept.has(id) && id < newestId) await this.store.delete(key);
    }
  }

  private async manifestIds(workspaceId: string, signal?: AbortSignal): Promise<string[]> {
    checkWorkspaceId(workspaceId);
    const keys = await this.store.list(`${workspaceId}/`, signal);
    return keys.filter((k) => k.endsWith(".json") && SNAPSHOT_ID.test(idOf(k))).map(idOf).sort();
  }

  private async readManifest(workspaceId: string, id: string, signal?: AbortSignal): Promise<Manifest> {
    const parts: Buffer[] = [];
    try {
      for await (const chunk of await this.store.get(`${workspaceId}/${id}.json`, signal)) parts.push(Buffer.from(chunk));
    } catch (error) {
      if (error instanceof FileToolsError && error.reason === "NOT_FOUND") fail("NOT_FOUND", `snapshot ${id} of workspace ${workspaceId} does not exist`);
      throw error;
    }
    try {
      return JSON.parse(Buffer.concat(parts).toString("utf8")) as Manifest;
    } catch {
      fail("STORE_UNAVAILABLE", `the manifest of snapshot ${id} is not valid JSON`);
    }
  }

  /** Downloads a tarball to a scratch file, checking size and sha256 against the manifest before anything uses it. */
  private async download(manifest: Manifest, signal?: AbortSignal): Promise<string> {
    const file = this.scratchPath("download");
    const measure = { size: 0, hash: createHash("sha256") };
    try {
      const limit = manifest.sizeBytes;
      async function* capped(source: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
        for await (const chunk of source) {
          if (measure.size + chunk.length > limit) fail("UNSAFE_ARCHIVE", `snapshot ${manifest.id} is larger than its manifest says`);
          yield chunk;
        }
      }
      await writeFileFrom(file, measured(capped(await this.store.get(manifest.tarball, signal)), measure));
      if (measure.size !== manifest.sizeBytes || measure.hash.digest("hex") !== manifest.sha256) {
        fail("UNSAFE_ARCHIVE", `snapshot ${manifest.id} does not match the sha256 of its manifest; nothing was changed`);
      }
      return file;
    } catch (error) {
      await fsp.unlink(file).catch(() => undefined);
      throw error;
    }
  }

  private scratchPath(kind: string): string {
    return path.join(this.tmpDir, `${kind}-${randomBytes(8).toString("hex")}`);
  }

  private scratchExport(file: string, measure: { size: number; hash: ReturnType<typeof createHash> }, fileCount: number): ExportStream {
    async function* chunks(): AsyncGenerator<Buffer> {
      try {
        for await (const chunk of createReadStream(file, { highWaterMark: EXPORT_CHUNK_BYTES })) yield chunk as Buffer;
      } finally {
        await fsp.unlink(file).catch(() => undefined);
      }
    }
    return { size: measure.size, sha256: measure.hash.digest("hex"), fileCount, chunks: chunks() };
  }
}

function checkWorkspaceId(id: string): void {
  if (!WORKSPACE_ID_PATTERN.test(id)) fail("INVALID_ARGUMENT", `invalid workspace id ${JSON.stringify(id.slice(0, 80))}`);
}

export function newSnapshotId(): string {
  return `${new Date().toISOString().replace(/[-:]/g, "").replace(".", "")}-${randomBytes(4).toString("hex")}`;
}

function idOf(key: string): string {
  return key.slice(key.lastIndexOf("/") + 1).replace(/\.(json|tar\.gz)$/, "");
}

async function* measured(source: AsyncIterable<Uint8Array>, measure: { size: number; hash: ReturnType<typeof createHash> }): AsyncGenerator<Uint8Array> {
  for await (const chunk of source) {
    measure.hash.update(chunk);
    measure.size += chunk.length;
    yield chunk;
  }
}

async function* single(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes;
}

/** Re-cuts a byte stream into chunks of at most 1 MiB. */
async function* rechunk(source: AsyncIterable<Uint8Array>): AsyncGenerator<Buffer> {
  for await (const chunk of source) {
    const buffer = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    for (let offset = 0; offset < buffer.length; offset += EXPORT_CHUNK_BYTES) yield buffer.subarray(offset, offset + EXPORT_CHUNK_BYTES);
  }
}

async function writeFileFrom(file: string, source: AsyncIterable<Uint8Array>): Promise<void> {
  const handle = await fsp.open(file, "wx", 0o600);
  try {
    for await (const chunk of source) {
      let offset = 0;
      while (offset < chunk.length) offset += (await handle.write(chunk, offset, chunk.length - offset)).bytesWritten;
    }
  } finally {
    await handle.close();
  }
}

/** The members of a (trusted, verified) gzipped tarball whose names match `include`, re-packed. */
function filterTarball(source: AsyncIterable<Uint8Array>, include: readonly string[]): { bytes: AsyncIterable<Uint8Array>; readonly fileCount: number } {
  const matches = picomatch([...include], { dot: true });
  // Names as bytes both ways (a stored snapshot's non-UTF-8 names survive); globs see the shown path.
  const extract = nameExactExtract();
  const pack = tar.pack();
  const gzip = createGzip();
  const result = { fileCount: 0, bytes: gzip as AsyncIterable<Uint8Array> };
  pipeline(pack, gzip, () => undefined);
  (pipeline as (...args: unknown[]) => void)(source, createGunzip(), extract, (error: unknown) => {
    if (error) gzip.destroy(error as Error);
  });
  void (async () => {
    for await (const entry of extract) {
      const header = { ...entry.header, ...heldMemberNames(entry.header) };
      const name = header.name.replace(/\/$/, "");
      if (header.type === "directory" || !matches(name.split("/").map(escapeName).join("/"))) {
        entry.resume();
        continue;
      }
      await new Promise<void>((resolve, reject) => {
        const sink = packMember(pack, header, (error) => (error ? reject(error) : resolve()));
        if (header.type === "file") {
          result.fileCount++;
          entry.pipe(sink);
        } else entry.resume();
      });
    }
    pack.finalize();
  })().catch((error: unknown) => gzip.destroy(error as Error));
  return result;
}
