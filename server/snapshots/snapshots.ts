// Snapshots of workspaces in the store (SPEC 1, 4.2). Per snapshot two keys:
//   <workspace>/<id>.tar.gz   the tarball, put first (visible only when complete)
//   <workspace>/<id>.json     the manifest, put only once the tarball and its
//                             sha256 are known: a snapshot exists iff its manifest does.
// Ids sort by creation time, so the store's sorted listing is chronological.
import type { QuotaOverride, Quotas } from "../quotas/quotas.js";
import { addUsage, negateUsage, NO_USAGE, type Usage } from "../workspace/usage.js";
import { constants as bufferConstants } from "node:buffer";
import { createHash, randomBytes } from "node:crypto";
import { createReadStream, promises as fsp } from "node:fs";
import path from "node:path";
import type { FileHandle } from "node:fs/promises";
import { pipeline } from "node:stream";
import { createGzip } from "node:zlib";
import tar from "tar-stream";
import { fail, FileToolsError } from "../errors.js";
import type { StoreMetrics } from "../metrics/metrics.js";
import type { Logger } from "../log.js";
import type { Change } from "../tools/changes.js";
import { globMatcher } from "../tools/glob.js";
import { LockTable } from "../tools/locks.js";
import { summarize } from "../runs/runs.js";
import type { Staging } from "../workspace/staging.js";
import type { Landed, MadeDirectories, MergedInto, Workspace } from "../workspace/workspace.js";
import { walkOrder } from "../workspace/walk.js";
import { WORKSPACE_ID_PATTERN, type WorkspaceRegistry } from "../workspace/registry.js";
import type { Components } from "../workspace/paths.js";
import { escapeName } from "../workspace/names.js";
import { hashFile, hashTree } from "../workspace/hash-tree.js";
import { listStaged, listTree, TreeFingerprint, type ListedEntry, type ListedTree } from "../workspace/fingerprint.js";
import { diffRecords, type DiffCounts, type DiffEntry } from "./diff.js";
import { recordsOf, tarBytesFor, type FileList } from "./file-list.js";
import {
  extractArchive,
  extractTree,
  heldMemberNames,
  inspectArchive,
  memberParts,
  nameExactExtract,
  DEFAULT_LIMITS,
  type ExtractLimits,
  type ExtractResult,
  type StagedArchive,
} from "./extract.js";
import { contentsId, contentsKey, exportKey, MAX_CONTENTS_CHAIN, objectsReadBy, parseManifest, selfContained, SNAPSHOT_ID, tarballKey, type Manifest, type TableRef } from "./manifest.js";
import { packMember } from "./pack.js";
import { encodeContents, type Contents } from "./contents.js";
import { applyDeltas, deltaOf, parseTable, type ContentsDelta } from "./contents-delta.js";
import { packSeekable } from "./seekable.js";
import { gzipTar, listStagedMembers, membersOf, stageTreeFiles, type TreeMember } from "./seekable-read.js";
import { warmGzipPool } from "./gzip-pool.js";
import { nowNs, RACY_MARGIN_MS, settled, StatCache, type KnownFiles, type StatRecord } from "./stat-cache.js";
import { afterMerge, planInPlace, snapshotTimes, toHash, type InPlacePlan } from "./in-place.js";
import { SnapshotTree } from "./at-snapshot.js";
import type { Store } from "./store.js";
import { headKey, Heads, type Head } from "./heads.js";

export type { Manifest } from "./manifest.js";

export const EXPORT_CHUNK_BYTES = 1 << 20;
/**
 * Level 4, not gzip's 6: on the bench tree (20,000 source files, 310 MB), each
 * file a member, level 4 takes half the CPU of level 6 (4.4 s against 8.6 s)
 * for 2 % more bytes (117.6 MB against 115.1 MB); level 5, 6.6 s and 0.8 %.
 */
export const DEFAULT_GZIP_LEVEL = 4;

/**
 * When a snapshot is written whole rather than pointing at earlier tarballs
 * (README "Incremental snapshots"): when its base already reads from
 * `maxTarballs` tarballs, or when less than `minLiveRatio` of the bytes of
 * those tarballs is content the base still uses (the rest held only for
 * older snapshots, or by nothing once they are pruned) and more than
 * `minDeadBytes` are dead (a small workspace is never re-written for its
 * ratio: headers and gzip framing alone would pass it).
 */
export interface Compaction {
  maxTarballs: number;
  minLiveRatio: number;
  minDeadBytes: number;
}

// 32 tarballs: a run of scattered changes adds one the head keeps reading from (20 runs changing 1 % each, with 16: the
// 16th written whole, the store 2.46× one snapshot; with more: 1.49×), and a restore reads a few more of them.
export const DEFAULT_COMPACTION: Compaction = { maxTarballs: 32, minLiveRatio: 0.5, minDeadBytes: 16 << 20 };

export interface SnapshotsOptions {
  logger?: Pick<Logger, "warn">;
  limits?: ExtractLimits;
  /** Told how long each snapshot and restore took, and its size. */
  metrics?: Pick<StoreMetrics, "snapshot">;
  /** Usage counts, dropped after a restore or an import; their limits checked when the call asks. */
  quotas?: Quotas;
  /** This daemon, in the manifests and heads it writes (--node-name). */
  node?: string;
  /** Where what each snapshot read is remembered (stat-cache.ts); without it every file is read. */
  statCacheDir?: string;
  compaction?: Compaction;
  /** gzip level of the members written (--snapshot-gzip-level). */
  gzipLevel?: number;
}
const DEFAULT_PRESIGN_SECONDS = 3600;
/** S3's limit for a SigV4 presigned URL. */
const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;
/** Entries stat'ed at once after an in-place merge. */
const STAT_BATCH = 64;
/** Files read at once to hash them (each in pieces of up to 1 MiB). */
const HASH_BATCH = 16;

/** Reads of a verified tarball during a restore: fewer thread-pool round trips than the 64 KiB default. */
const RESTORE_READ_BYTES = 1 << 20;
/** Tables of contents kept in memory (a few MB each for 100,000 files). */
const RECENT_CONTENTS = 4;
/** A tarball without a manifest younger than this may be another daemon's snapshot on its way (prune leaves it). */
const ORPHAN_TARBALL_MS = 60 * 60 * 1000;

/** What a new snapshot records besides its contents. */
export interface SnapshotMeta {
  runId: string;
  labels: Record<string, string>;
  changeSet: Change[];
  /** The snapshot its content was made from ("" for none): Manifest.parent. */
  parent: string;
  /**
   * Publish it: make it the head if the head is still `replaces` (the run's
   * start). Absent: keep it as a recovered snapshot, for the reason given.
   */
  publish?: {
    replaces: string;
    /** Runs just before the commit point, with the tarball stored; a RUN_ACTIVE failure (the run's lease was lost) keeps the snapshot as recovered instead. */
    beforeCommit?: () => Promise<void>;
  };
  /** Why it is kept off the main line (when not published). */
  recoveredReason?: string;
}

/**
 * A snapshot written: on the main line (published), or kept off it
 * (recovered) with the head it could not replace; with the tree's
 * fingerprint, taken by the pack's walk (a change racing the pack makes the
 * copy look changed later, never unchanged).
 */
export type Written = ({ published: true; manifest: Manifest } | { published: false; manifest: Manifest; newest: string; leaseLost: boolean }) & { fingerprint: string };

/** Which snapshots ListSnapshots keeps. */
export interface SnapshotFilter {
  /** Every one of these labels, with these values. */
  labels?: Record<string, string>;
  /** Created at or after. */
  createdAfter?: Date;
  /** Created before. */
  createdBefore?: Date;
  /** Also the recovered snapshots (off the main line). */
  includeRecovered?: boolean;
}

/** A manifest as listed: off the main line, with why, when recovered. */
export type Listed = Manifest & { recoveredReason?: string };

/** Said of a manifest the head never named and that does not say why itself. */
const UNPUBLISHED = "its publish did not complete: another run published first, or its daemon stopped before the head named it";

/** A diff under way: its entries stream; `counts` is final once they are all read. */
export interface SnapshotDiff {
  from: Manifest;
  /** Undefined: the live workspace. */
  to?: Manifest;
  entries: AsyncGenerator<DiffEntry>;
  counts: DiffCounts;
}

/** How a restore runs. */
export interface RestoreOptions {
  signal?: AbortSignal;
  /** Checked against the limits of the call (its token's, else the daemon's). */
  quota?: QuotaCheck;
  /** Runs at the commit point, before the workspace changes (the copy's record marks it as being replaced). */
  beforeApply?: () => Promise<void>;
  /** The tree as a walk saw it just before (copies.ts): an in-place restore plans from it instead of walking again (and again under the lock, unless it is still current). */
  listed?: ListedTree;
}

/** A restore or import checked against the limits of its call (its token's, else the daemon's). */
export interface QuotaCheck {
  tokenQuota: QuotaOverride | undefined;
}

export interface ExportStream {
  size: number;
  sha256: string;
  fileCount: number;
  chunks: AsyncIterable<Buffer>;
  /** Frees what the stream holds (its scratch file), whether or not its chunks were read; call it once the stream is done with. */
  release(): Promise<void>;
}

/**
 * Snapshots of workspaces, restores and imports. A restore or import first
 * receives its archive (a download verified against the manifest, or the
 * client's stream) into a scratch file while the guard reads all of it (pass
 * 1: caps, bombs, malformed archives), then extracts it into a staging
 * directory (pass 2); neither holds the workspace. Only applying it (the swap
 * or the merge) and packing a snapshot take the workspace's lock, so a slow
 * client delays nobody else. The lock wait ends when the call's signal aborts.
 *
 * The commit point: with the lock held, the signal is checked once more, and
 * from then on it is ignored: the apply runs to its end and the call reports
 * OK (its handler marks the call committed, see CallContext.committed). A
 * call whose caller was told it failed before that point has changed nothing.
 */
export class Snapshots {
  /** Per workspace: snapshots, applied restores and applied imports run one at a time. */
  private readonly locks = new LockTable();

  private readonly heads: Heads;

  private readonly logger?: Pick<Logger, "warn">;
  readonly limits: ExtractLimits;
  private readonly metrics?: Pick<StoreMetrics, "snapshot">;
  private readonly quotas?: Quotas;
  private readonly node: string;
  private readonly statCache?: StatCache;
  private readonly compaction: Compaction;
  private readonly gzipLevel: number;
  /** The last tables of contents read, by their sha256: a run's end reads its start's again. */
  private readonly recentContents = new Map<string, Contents>();

  constructor(
    readonly store: Store,
    private readonly keep: number,
    /** Scratch directory on the daemon's disk (downloads to verify, imports received, exports). */
    private readonly tmpDir: string,
    private readonly registry: WorkspaceRegistry,
    options: SnapshotsOptions = {},
  ) {
    this.heads = new Heads(store);
    this.logger = options.logger;
    this.limits = options.limits ?? DEFAULT_LIMITS;
    this.metrics = options.metrics;
    this.quotas = options.quotas;
    this.node = options.node ?? "";
    this.statCache = options.statCacheDir ? new StatCache(options.statCacheDir, options.logger) : undefined;
    this.compaction = options.compaction ?? DEFAULT_COMPACTION;
    this.gzipLevel = options.gzipLevel ?? DEFAULT_GZIP_LEVEL;
  }

  /** Empties the scratch directory (start-up). */
  async prepare(): Promise<void> {
    await fsp.rm(this.tmpDir, { recursive: true, force: true });
    await fsp.mkdir(this.tmpDir, { recursive: true });
  }

  /**
   * Packs the workspace into the store and writes its manifest. Published
   * (meta.publish): the manifest first, then the head swapped to it from
   * `replaces` — the commit point; when the head moved meanwhile (another run
   * published) or the run's lease was lost, the manifest is rewritten as
   * recovered instead: the work is kept, never published over newer work.
   * When the head had already moved before packing, the snapshot is written
   * as recovered straight away.
   */
  async create(workspace: Workspace, meta: SnapshotMeta, signal?: AbortSignal): Promise<Written> {
    // The registry's current Workspace: a restore applied before may have swapped the directory.
    const started = performance.now();
    const written = await this.locks.with([workspace.id], async () => this.createNow(await this.registry.get(workspace.id), meta, signal), signal);
    this.metrics?.snapshot("snapshot", (performance.now() - started) / 1000, written.manifest.sizeBytes);
    return written;
  }

  private async createNow(workspace: Workspace, meta: SnapshotMeta, signal?: AbortSignal): Promise<Written> {
    let head: Head | undefined;
    let newest: string | undefined;
    let recoveredReason = meta.recoveredReason ?? "kept off the main line";
    if (meta.publish) {
      ({ head, newest } = await this.newestWithHead(workspace.id, signal));
      if (newest !== meta.publish.replaces) recoveredReason = movedOn(newest, meta.publish.replaces);
    }
    const publishing = meta.publish !== undefined && newest === meta.publish.replaces;
    const id = newSnapshotId();
    const tarball = tarballKey(workspace.id, id);
    const base = await this.baseFor(workspace.id, meta.parent, signal);
    const fingerprint = new TreeFingerprint();
    const packed = packSeekable(workspace, {
      fingerprint,
      key: tarball,
      base: base?.contents,
      known: base && (await this.statCache?.load(workspace.id)),
      level: this.gzipLevel,
      signal,
      scratchDir: this.tmpDir,
      logger: this.logger,
    });
    const measure = { size: 0, hash: createHash("sha256") };
    await this.store.put(tarball, measured(packed.bytes, measure), signal);
    const contents = packed.contents(workspace.id, id);
    // Told against the parent's table while the chain allows (contents-delta.ts): a run that changed little stores little.
    const delta = base && (base.table.bases?.length ?? 0) < MAX_CONTENTS_CHAIN ? deltaOf(base.contents, base.table, contents) : undefined;
    const encoded = await encodeContents(delta ?? contents);
    await this.store.put(contentsKey(workspace.id, id), single(encoded), signal);
    const contentsSha256 = createHash("sha256").update(encoded).digest("hex");
    this.remember(contentsSha256, contents);
    const bases = delta && [{ key: base!.table.key, bytes: base!.table.bytes, sha256: base!.table.sha256 }, ...(base!.table.bases ?? [])];
    let manifest: Manifest = {
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
      parent: meta.parent,
      ...(publishing ? { follows: meta.publish!.replaces } : { recovered: recoveredReason }),
      node: this.node,
      contents: { key: contentsKey(workspace.id, id), bytes: encoded.length, sha256: contentsSha256, ...(bases && { bases }) },
      tarballs: [tarball, ...contents.tarballs.map((t) => t.key).filter((key) => key !== tarball)],
      treeBytes: packed.treeBytes,
    };
    // What was read, for the next snapshot: kept whatever becomes of this one (the stats and hashes hold either way).
    this.statCache?.save(workspace.id, packed.statRecords());
    const taken = fingerprint.result().fingerprint;
    const recovered = async (reason?: string): Promise<Manifest> => {
      manifest = await this.putManifest(reason === undefined ? manifest : asRecovered(manifest, reason));
      return this.stillWhole(workspace, manifest, meta, signal);
    };
    if (!publishing) return { published: false, manifest: await recovered(), newest: newest ?? "", leaseLost: false, fingerprint: taken };
    try {
      await meta.publish!.beforeCommit?.();
    } catch (error) {
      if (!(error instanceof FileToolsError && error.reason === "RUN_ACTIVE")) throw error;
      return { published: false, manifest: await recovered(error.message), newest: newest ?? "", leaseLost: true, fingerprint: taken };
    }
    // The commit point: past it the snapshot is written and the head swapped whatever the signal says.
    signal?.throwIfAborted();
    await this.putManifest(manifest);
    const swap = await this.heads.advance(workspace.id, head, { snapshot: id, runId: meta.runId, node: this.node });
    if (!swap.advanced) return { published: false, manifest: await recovered(movedOn(swap.moved, meta.publish!.replaces)), newest: swap.moved, leaseLost: false, fingerprint: taken };
    await this.prune(workspace.id).catch(() => undefined);
    return { published: true, manifest, fingerprint: taken };
  }

  /**
   * The table of contents a new snapshot may point into: its parent's, when
   * the parent is in the seekable format and the compaction policy allows
   * (otherwise the snapshot is written whole). A parent that cannot be read
   * only means writing it whole.
   */
  private async baseFor(workspaceId: string, parent: string, signal?: AbortSignal): Promise<{ contents: Contents; table: NonNullable<Manifest["contents"]> } | undefined> {
    if (parent === "") return undefined;
    const manifest = await this.readManifest(workspaceId, parent, signal).catch(() => undefined);
    if (!manifest?.contents) return undefined;
    const table = manifest.contents;
    const contents = await this.readContents(manifest, signal).catch(() => undefined);
    if (!contents || contents.tarballs.length >= this.compaction.maxTarballs) return undefined;
    const stored = contents.tarballs.reduce((sum, t) => sum + t.bytes, 0);
    // Offsets of the chunks counted, per tarball (no key string per chunk).
    const live = contents.tarballs.map(() => new Set<number>());
    let liveBytes = 0;
    for (let c = 0; c < contents.chunks.offset.length; c++) {
      const counted = live[contents.chunks.tarball[c]!]!;
      const offset = contents.chunks.offset[c]!;
      if (!counted.has(offset)) liveBytes += contents.chunks.length[c]!;
      counted.add(offset);
    }
    const dead = stored - liveBytes;
    return dead > this.compaction.minDeadBytes && liveBytes < stored * this.compaction.minLiveRatio ? undefined : { contents, table };
  }

  /**
   * A recovered snapshot that points at earlier tarballs is not on the main
   * line, whose pruning only it holds back: should a prune have removed one
   * of them between reading the base and writing the manifest, it is written
   * again, whole (work kept is never lost to a prune).
   */
  private async stillWhole(workspace: Workspace, manifest: Manifest, meta: SnapshotMeta, signal?: AbortSignal): Promise<Manifest> {
    const others = objectsReadBy(manifest).filter((key) => idOf(key) !== manifest.id);
    if (others.length === 0) return manifest;
    const present = new Set(await this.store.list(`${workspace.id}/`, signal));
    if (others.every((key) => present.has(key))) return manifest;
    const written = await this.createNow(workspace, { ...meta, parent: "", publish: undefined, recoveredReason: manifest.recovered }, signal);
    await this.store.delete(`${workspace.id}/${manifest.id}.json`).catch(() => undefined);
    return written.manifest;
  }

  private remember(sha256: string, contents: Contents): void {
    this.recentContents.delete(sha256);
    this.recentContents.set(sha256, contents);
    while (this.recentContents.size > RECENT_CONTENTS) this.recentContents.delete(this.recentContents.keys().next().value!);
  }

  /** A seekable snapshot's table of contents, checked against its manifest and for what it says (contents.ts); DATA_LOSS otherwise. */
  async readContents(manifest: Manifest, signal?: AbortSignal): Promise<Contents> {
    const info = manifest.contents;
    if (!info) throw new Error(`snapshot ${manifest.id} is in the older format, without a table of contents`);
    const contents = await this.resolveTable(manifest.workspace, [info, ...(info.bases ?? [])], signal);
    const listed = new Set(manifest.tarballs ?? []);
    if (!contents.tarballs.every((t) => listed.has(t.key))) fail("DATA_LOSS", `the table of contents of snapshot ${manifest.id} names a tarball its manifest does not`);
    return contents;
  }

  /**
   * The whole table `chain[0]` stands for: the tables down the chain not
   * cached (by their objects' sha256: one rewritten in the store is read
   * again) fetched at once, then inflated and parsed one at a time (each may
   * inflate to MAX_CONTENTS_BYTES before it is refused), top first, and the
   * deltas applied, from the first whole (or cached) table up; the result cached.
   */
  private async resolveTable(workspaceId: string, chain: readonly TableRef[], signal?: AbortSignal): Promise<Contents> {
    const fetched: Array<Promise<Buffer>> = [];
    // Taken from the cache now: other calls may evict it while the fetches below are awaited.
    let base: Contents | undefined;
    while (fetched.length < chain.length && !(base = this.recentContents.get(chain[fetched.length]!.sha256))) {
      const stored = this.fetchTable(workspaceId, chain[fetched.length]!, signal);
      stored.catch(() => undefined); // awaited below, unless a table above it fails first
      fetched.push(stored);
    }
    const tables: Array<Contents | ContentsDelta> = [];
    for (const [k, stored] of fetched.entries()) tables.push(await parseTable(workspaceId, contentsId(workspaceId, chain[k]!.key)!, await stored));
    // The deltas above the first whole table, top first; each must stand on the next one down the chain.
    const deltas: ContentsDelta[] = [];
    for (const [k, table] of tables.entries()) {
      if (table.format === 1) {
        base = table;
        this.remember(chain[k]!.sha256, base); // the chain's root: other snapshots stand on it too
        break;
      }
      const below = chain[k + 1];
      if (below?.key !== table.base.key || below.sha256 !== table.base.sha256 || (k + 1 === tables.length && !base)) {
        fail("DATA_LOSS", `the table of contents of snapshot ${table.snapshot} stands on a table its manifest does not list`);
      }
      deltas.push(table);
    }
    const contents = applyDeltas(base!, deltas.reverse());
    this.remember(chain[0]!.sha256, contents);
    return contents;
  }

  /** One stored table of contents, checked against its size and sha256 (still gzipped: parseTable reads it). */
  private async fetchTable(workspaceId: string, ref: TableRef, signal?: AbortSignal): Promise<Buffer> {
    const id = contentsId(workspaceId, ref.key)!;
    const parts: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of await this.store.get(ref.key, signal)) {
        size += chunk.length;
        if (size > ref.bytes) fail("DATA_LOSS", `the table of contents of snapshot ${id} is larger than its manifest says`);
        parts.push(Buffer.from(chunk));
      }
    } catch (error) {
      if (error instanceof FileToolsError && error.reason === "NOT_FOUND") fail("DATA_LOSS", `the table of contents of snapshot ${id} of workspace ${workspaceId} is missing from the store`);
      throw error;
    }
    const stored = Buffer.concat(parts);
    if (stored.length !== ref.bytes || createHash("sha256").update(stored).digest("hex") !== ref.sha256) {
      fail("DATA_LOSS", `the table of contents of snapshot ${id} does not match the size and sha256 of its manifest`);
    }
    return stored;
  }

  private async putManifest(manifest: Manifest): Promise<Manifest> {
    // Not indented: with a file list of 100,000 entries, one line per array element would add megabytes.
    await this.store.put(`${manifest.workspace}/${manifest.id}.json`, single(Buffer.from(JSON.stringify(manifest))));
    return manifest;
  }

  /** The id of the workspace's newest published snapshot, "" when it has none. */
  async newestId(workspaceId: string, signal?: AbortSignal): Promise<string> {
    return (await this.newestWithHead(workspaceId, signal)).newest;
  }

  /** The head object (undefined before the first publish under heads) and the newest published snapshot. */
  private async newestWithHead(workspaceId: string, signal?: AbortSignal): Promise<{ head?: Head; newest: string }> {
    checkWorkspaceId(workspaceId);
    const head = await this.heads.read(workspaceId, signal);
    if (head) return { head, newest: head.snapshot };
    // A store from before heads: its newest manifest that is neither recovered nor a publish that never made the head (`follows`).
    for (const id of (await this.manifestIds(workspaceId, signal)).reverse()) {
      const manifest = await this.readManifest(workspaceId, id, signal).catch(() => undefined);
      if (manifest && manifest.recovered === undefined && manifest.follows === undefined) return { newest: id };
    }
    return { newest: "" };
  }

  /** Manifests of a workspace, newest first, on the main line (and with includeRecovered the rest); a damaged one is left out (with a warning), one deleted meanwhile too. */
  async list(workspaceId: string, signal?: AbortSignal, includeRecovered = false): Promise<Listed[]> {
    const ids = await this.manifestIds(workspaceId, signal);
    const [head, manifests] = await Promise.all([
      this.heads.read(workspaceId, signal),
      Promise.all(
        ids.reverse().map((id) =>
          this.readManifest(workspaceId, id, signal).catch((error: unknown) => {
            if (!(error instanceof FileToolsError)) throw error;
            if (error.reason === "DATA_LOSS") this.logger?.warn({ workspace: workspaceId, snapshot: id, reason: error.reason, problem: error.message }, "snapshot left out of the list");
            else if (error.reason !== "NOT_FOUND") throw error;
            return null;
          }),
        ),
      ),
    ]);
    const present = manifests.filter((m): m is Manifest => m !== null);
    const main = mainLine(present, head);
    const onMain = new Set(main.map((m) => m.id));
    const recovered = includeRecovered ? present.filter((m) => !onMain.has(m.id)).map((m) => ({ ...m, recoveredReason: m.recovered ?? UNPUBLISHED })) : [];
    return [...main, ...recovered];
  }

  /** Manifests of a workspace that pass `filter`, newest first (see list). */
  async listMatching(workspaceId: string, filter: SnapshotFilter, signal?: AbortSignal): Promise<Listed[]> {
    const labels = Object.entries(filter.labels ?? {});
    const after = filter.createdAfter?.getTime() ?? Number.NEGATIVE_INFINITY;
    const before = filter.createdBefore?.getTime() ?? Number.POSITIVE_INFINITY;
    return (await this.list(workspaceId, signal, filter.includeRecovered)).filter((m) => {
      const created = Date.parse(m.createdAt);
      return created >= after && created < before && labels.every(([key, value]) => m.labels[key] === value);
    });
  }

  /**
   * What changed from snapshot `fromId` ("" = the newest) to snapshot `to`,
   * or to the live workspace (its files hashed as the walk reaches them, one
   * at a time). NOT_FOUND, DATA_LOSS as find; SNAPSHOT_WITHOUT_FILE_LIST for
   * a manifest written before manifests carried a file list.
   */
  async diff(workspaceId: string, fromId: string, to: { snapshotId: string } | { live: Workspace }, signal?: AbortSignal): Promise<SnapshotDiff> {
    const from = await this.find(workspaceId, fromId, signal);
    const before = await this.fileListOf(from, signal);
    const counts = { added: 0, removed: 0, modified: 0, unchanged: 0 };
    if ("live" in to) return { from, counts, entries: diffRecords(recordsOf(before), hashTree(to.live, signal), counts) };
    const target = await this.find(workspaceId, to.snapshotId, signal);
    return { from, to: target, counts, entries: diffRecords(recordsOf(before), recordsOf(await this.fileListOf(target, signal)), counts) };
  }

  /** A snapshot's file list: in its table of contents (its paths checked as a restore checks them), or (older format) its manifest. */
  private async fileListOf(manifest: Manifest, signal?: AbortSignal): Promise<FileList> {
    if (!manifest.contents) return oldFileListOf(manifest);
    const contents = await this.readContents(manifest, signal);
    membersOf(contents, manifest.id); // DATA_LOSS for a path no tree can hold, or one named twice
    return contents.files;
  }

  /**
   * A stored snapshot's tree, for reads at it (at-snapshot.ts). NOT_FOUND and
   * DATA_LOSS as find and readContents; SNAPSHOT_WITHOUT_CONTENTS for a
   * snapshot in the older format (no table of contents to read it by).
   */
  async treeAt(workspaceId: string, snapshotId: string, signal?: AbortSignal): Promise<SnapshotTree> {
    const manifest = await this.find(workspaceId, snapshotId, signal);
    if (!manifest.contents) {
      fail(
        "SNAPSHOT_WITHOUT_CONTENTS",
        `snapshot ${manifest.id} of workspace ${workspaceId} is in the older format (one tarball, no table of contents) and cannot be read in place; restore it, or read at a snapshot written since`,
        { snapshot: manifest.id },
      );
    }
    return SnapshotTree.of(this.store, manifest, await this.readContents(manifest, signal));
  }

  /** One manifest; "" = the newest. NOT_FOUND when absent, DATA_LOSS when damaged. */
  async find(workspaceId: string, snapshotId: string, signal?: AbortSignal): Promise<Manifest> {
    if (snapshotId === "") {
      const newest = await this.newestId(workspaceId, signal);
      if (!newest) fail("NOT_FOUND", `workspace ${workspaceId} has no snapshots`);
      return this.readManifest(workspaceId, newest, signal);
    }
    checkWorkspaceId(workspaceId);
    if (!SNAPSHOT_ID.test(snapshotId)) fail("NOT_FOUND", `snapshot ${JSON.stringify(snapshotId.slice(0, 80))} does not exist`);
    return this.readManifest(workspaceId, snapshotId, signal);
  }

  /** The manifest of the snapshot that ended (or was taken during, or kept the work of) a run, newest first; undefined when none. */
  async findByRun(workspaceId: string, runId: string, signal?: AbortSignal): Promise<Manifest | undefined> {
    return (await this.list(workspaceId, signal, true)).find((m) => m.runId === runId);
  }

  /**
   * A stored snapshot as one `.tar.gz`, in ≤ 1 MiB chunks: its own tarball
   * when that holds the whole tree (failing, DATA_LOSS, at the end if its
   * bytes do not match the manifest); otherwise assembled from the tarballs
   * its content is in (seekable-read.ts) into a scratch file first, so that
   * the stream's header can carry its size and sha256.
   */
  async exportStored(manifest: Manifest, signal?: AbortSignal): Promise<ExportStream> {
    if (!selfContained(manifest)) return this.exportAssembled(manifest, [], signal);
    const tarball = (): Promise<AsyncIterable<Uint8Array>> => this.getTarball(manifest, signal);
    async function* chunks(): AsyncGenerator<Buffer> {
      const hash = createHash("sha256");
      let size = 0;
      for await (const chunk of rechunk(await tarball())) {
        hash.update(chunk);
        size += chunk.length;
        yield chunk;
      }
      if (size !== manifest.sizeBytes || hash.digest("hex") !== manifest.sha256) fail("DATA_LOSS", `snapshot ${manifest.id} in the store does not match its manifest's size and sha256`);
    }
    const stream = chunks();
    return {
      size: manifest.sizeBytes,
      sha256: manifest.sha256,
      fileCount: manifest.fileCount,
      chunks: stream,
      release: async () => void (await stream.return(undefined)),
    };
  }

  /** A seekable snapshot's tree (only files and links matching `include`, when given) assembled into one `.tar.gz` in a scratch file. */
  private async exportAssembled(manifest: Manifest, include: readonly string[], signal?: AbortSignal): Promise<ExportStream> {
    const file = this.scratchPath("export");
    const measure = { size: 0, hash: createHash("sha256") };
    try {
      const members = await this.membersMatching(manifest, include, signal);
      await writeFileFrom(file, measured(gzipTar(this.store, members, this.gzipLevel, signal), measure));
      return this.scratchExport(file, measure, members.filter((m) => m.header.type === "file").length);
    } catch (error) {
      await fsp.unlink(file).catch(() => undefined);
      throw error;
    }
  }

  /** A seekable snapshot's members; with globs, only its files and links that match (no directories, as a filtered export of the older format). */
  private async membersMatching(manifest: Manifest, include: readonly string[], signal?: AbortSignal): Promise<TreeMember[]> {
    const members = membersOf(await this.readContents(manifest, signal), manifest.id);
    const globs = include.filter((g) => g !== "");
    if (globs.length === 0) return members;
    const matches = globMatcher(globs, "include");
    return members.filter((m) => m.header.type !== "directory" && matches(m.path.slice(1)));
  }

  /** A presigned GET URL of a stored snapshot's tarball, working for `seconds` (0: an hour); INVALID_ARGUMENT on a store without them. */
  async presign(manifest: Manifest, requestedSeconds: number, signal?: AbortSignal): Promise<{ url: string; expiresAt: Date; size: number; sha256: string }> {
    if (!this.store.presignGet) fail("INVALID_ARGUMENT", "presigned URLs need an s3:// store; this daemon keeps its snapshots in a local directory");
    const seconds = requestedSeconds || DEFAULT_PRESIGN_SECONDS;
    if (!(Number.isInteger(seconds) && seconds >= 1 && seconds <= MAX_PRESIGN_SECONDS)) {
      fail("INVALID_ARGUMENT", `presign_seconds must be between 1 and ${MAX_PRESIGN_SECONDS} (seven days), not ${requestedSeconds}`);
    }
    const whole = await this.wholeTarball(manifest, signal);
    const expiresAt = new Date(Date.now() + seconds * 1000);
    return { url: await this.store.presignGet(whole.key, seconds), expiresAt, size: whole.size, sha256: whole.sha256 };
  }

  /**
   * A tarball of the snapshot's whole tree in the store, with its size and
   * sha256: its own, or one assembled once from the tarballs it points at,
   * written beside it with a note of its size and sha256 (both pruned with
   * it, reused by the next presign; the note last, so a tarball without one
   * is assembled again).
   */
  private async wholeTarball(manifest: Manifest, signal?: AbortSignal): Promise<{ key: string; size: number; sha256: string }> {
    if (selfContained(manifest)) return { key: manifest.tarball, size: manifest.sizeBytes, sha256: manifest.sha256 };
    const key = exportKey(manifest.workspace, manifest.id);
    const noteKey = `${key}.sha256`;
    const note = await this.store.getRange(noteKey, 0, 200, signal).catch(() => undefined);
    const [sha256, size] = note?.toString("utf8").split(" ") ?? [];
    if (sha256 && /^[0-9a-f]{64}$/.test(sha256) && /^\d+$/.test(size ?? "")) return { key, size: Number(size), sha256 };
    const measure = { size: 0, hash: createHash("sha256") };
    await this.store.put(key, measured(gzipTar(this.store, await this.membersMatching(manifest, [], signal), this.gzipLevel, signal), measure), signal);
    const whole = { key, size: measure.size, sha256: measure.hash.digest("hex") };
    await this.store.put(noteKey, single(Buffer.from(`${whole.sha256} ${whole.size}`)), signal);
    return whole;
  }

  /**
   * A fresh tarball of the workspace as it is now (include: only matching
   * files and links), or of a stored snapshot filtered by include. Staged in
   * a scratch file so the header can carry its size and sha256.
   */
  async exportFiltered(source: { workspace: Workspace } | { manifest: Manifest }, include: readonly string[], signal?: AbortSignal): Promise<ExportStream> {
    const file = this.scratchPath("export");
    const measure = { size: 0, hash: createHash("sha256") };
    try {
      let fileCount: number;
      if ("workspace" in source) {
        const packed = packSeekable(source.workspace, { key: "", include, level: this.gzipLevel, signal, scratchDir: this.tmpDir, logger: this.logger });
        await writeFileFrom(file, measured(packed.bytes, measure));
        fileCount = packed.fileCount;
      } else if (source.manifest.contents) {
        await fsp.unlink(file).catch(() => undefined);
        return await this.exportAssembled(source.manifest, include, signal);
      } else {
        const verified = await this.download(source.manifest, signal);
        try {
          fileCount = await filterTarball(createReadStream(verified, { highWaterMark: RESTORE_READ_BYTES }), include, (bytes) => writeFileFrom(file, measured(bytes, measure)));
        } finally {
          await fsp.unlink(verified).catch(() => undefined);
        }
      }
      return this.scratchExport(file, measure, fileCount);
    } catch (error) {
      await fsp.unlink(file).catch(() => undefined);
      throw error;
    }
  }

  /** Once the stat caches saved so far (written behind the calls that saved them) are on disk: at shutdown. */
  async flushStatCaches(): Promise<void> {
    await this.statCache?.flush();
  }

  /**
   * Replaces the workspace's contents with the snapshot: verified and
   * extracted first, then swapped in (see the class comment). Returns the
   * restored tree's fingerprint when its listing for the stat cache took one.
   */
  async restore(workspaceId: string, manifest: Manifest, options: RestoreOptions = {}): Promise<{ fingerprint?: string }> {
    const { signal, quota } = options;
    const started = performance.now();
    // A fresh daemon's threads start while the table of contents is read and checked.
    if (manifest.contents) warmGzipPool();
    // The snapshot's totals replace the tree's: refused only when they are more and past the limit.
    const hold = await this.quotaHold(workspaceId, quota, (staged, now) => addUsage(staged, negateUsage(now)));
    let verified: string | undefined;
    try {
      const members = manifest.contents ? await this.membersMatching(manifest, [], signal) : undefined;
      const known = members && (await this.statCache?.load(workspaceId));
      let appliedNs = 0n;
      let after: ListedEntry[] | undefined;
      if (members && known && known.size > 0 && !members.some((m) => m.header.type === "symlink")) {
        ({ appliedNs, after } = await this.restoreInPlace(workspaceId, members, known, hold.staged, options));
      } else {
        // Seekable: the tree straight from the tarballs its content is in, each chunk checked as it is read; older: downloaded and checked whole first.
        const rules = { limits: this.limits, damaged: "DATA_LOSS" as const, staged: hold.staged };
        let extract: (staging: Staging) => Promise<StagedArchive>;
        if (members) {
          extract = (staging) => extractTree(members, staging, rules, (files) => stageTreeFiles(this.store, files, staging, signal));
        } else {
          const source = scratchTar((verified = await this.download(manifest, signal)));
          extract = (staging) => extractArchive(source, staging, rules);
        }
        await this.stageAndApply(workspaceId, extract, signal, async (staging) => {
          // The files extracted last settle before the tree is swapped in, so that the stat cache can vouch for them all
          // (rememberRestored); a managed tree's wait runs beside its sync.
          const settling = members && new Promise((resolve) => setTimeout(resolve, RACY_MARGIN_MS));
          const settle = async () => {
            await settling;
            appliedNs = nowNs();
          };
          signal?.throwIfAborted(); // the commit point
          await options.beforeApply?.();
          const workspace = await this.registry.get(workspaceId);
          if (workspace.bound) await settle();
          // For rememberRestored, beside the swap's sync; past the commit point, a listing that fails leaves it to walk the tree.
          const listStagedTree = async () => {
            if (members) after = (await listStagedMembers(staging, members).catch(() => undefined)) ?? (await listStaged(workspace, staging).catch(() => undefined))?.listing;
            await settle();
          };
          await this.registry.replaceWithStaging(workspaceId, staging, listStagedTree);
        });
      }
      const fingerprint = members ? await this.rememberRestored(workspaceId, members, appliedNs, after).catch(() => undefined) : undefined;
      this.metrics?.snapshot("restore", (performance.now() - started) / 1000, manifest.sizeBytes);
      return { fingerprint };
    } finally {
      hold.release();
      if (verified) await fsp.unlink(verified).catch(() => undefined);
    }
  }

  /**
   * A restore into a copy that the last snapshot read (in-place.ts): only the
   * files that differ are fetched (staged first, checked like any restore;
   * those whose directory is kept staged loose), then, with the workspace
   * locked, what the snapshot does not hold is removed, the staged tree
   * merged in and the loose files moved into place. Calls may have changed
   * the tree while the fetch ran: unless the walk it was planned from is
   * still current (a managed tree no call changed since: ListedTree), it is
   * walked and planned again under the lock, and what else differs fetched
   * then. Not atomic like a swap; options.beforeApply marks the copy as
   * being replaced first, so that a crash part-way leaves a copy whose
   * content belongs to nobody (the next run restores it), not work to keep.
   * Trees with symbolic links are restored whole (their checks need the
   * whole tree). Returns when the merge began, and the tree after it as a
   * walk would list it (undefined when it could not be read).
   */
  private async restoreInPlace(
    workspaceId: string,
    members: TreeMember[],
    known: KnownFiles,
    staged: ((usage: Usage) => void) | undefined,
    options: RestoreOptions,
  ): Promise<{ appliedNs: bigint; after?: ListedEntry[] }> {
    const { signal } = options;
    const usage = { bytes: members.reduce((sum, m) => sum + m.header.size, 0), entries: members.length };
    staged?.(usage);
    const first = options.listed ?? (await listTree(await this.registry.get(workspaceId), signal));
    const vouched = await this.withHashed(workspaceId, members, first.listing, known, signal);
    const planned = planInPlace(members, first.listing, vouched);
    const rules = { limits: this.limits, damaged: "DATA_LOSS" as const };
    const staging = await this.registry.createStaging(workspaceId);
    let appliedNs = 0n;
    let after: ListedEntry[] | undefined;
    try {
      // Loose files, each staged under its index in `moves` (their names checked as the staging checks the others').
      const loose = await this.registry.createStaging(workspaceId);
      try {
        const moves: Array<{ name: string; parts: Components }> = [];
        /** The components of every member fetched so far, by path. */
        const fetched = new Map<string, Components>();
        const fetch = async (plan: InPlacePlan): Promise<void> => {
          const atPaths = plan.fetch.filter((m) => !fetched.has(m.path));
          const apart = plan.loose.filter((m) => !fetched.has(m.path));
          await extractTree(atPaths, staging, rules, (files) => stageTreeFiles(this.store, files, staging, signal));
          for (const m of atPaths) fetched.set(m.path, memberParts(m.header.name, this.limits));
          const named = apart.map((m, i) => ({ ...m, header: { ...m.header, name: String(moves.length + i) } }));
          const parts = apart.map((m) => memberParts(m.header.name, this.limits));
          await extractTree(named, loose, rules, (files) => stageTreeFiles(this.store, files, loose, signal));
          apart.forEach((m, i) => {
            fetched.set(m.path, parts[i]!);
            moves.push({ name: named[i]!.header.name, parts: parts[i]! });
          });
        };
        await fetch(planned);
        signal?.throwIfAborted();
        await this.locks.with([workspaceId], async () => {
          const workspace = await this.registry.get(workspaceId);
          const listed = first.current(workspace) ? first : await listTree(workspace, signal);
          const plan = listed === first ? planned : planInPlace(members, listed.listing, vouched);
          if (plan !== planned) await fetch(plan);
          signal?.throwIfAborted(); // the commit point
          await options.beforeApply?.();
          appliedNs = nowNs();
          const merged = afterMerge(listed.listing, plan, [...fetched.values()]);
          try {
            for (const parts of plan.remove) await workspace.remove(parts, { recursive: true });
            await workspace.mergeStaging(staging, [], async () => undefined, { directoryModes: true });
            await workspace.placeStaged(loose, moves);
            await workspace.setTimes(snapshotTimes(members, merged.touched));
          } finally {
            this.quotas?.recount(workspace);
          }
          // Past the commit point: a tree that cannot be read now is walked later.
          after = await this.listedAfterMerge(workspace, merged).catch(() => undefined);
        }, signal);
      } finally {
        await loose.discard(); // nothing once placed
      }
    } finally {
      await staging.discard(); // nothing once merged
    }
    return { appliedNs, after };
  }

  /**
   * `known`, and the live files (in-place.ts: toHash) whose content, read
   * now, is the snapshot's: by the version they had when opened, if that had
   * settled before the reads began (stat-cache.ts: a write since moves it; one
   * within its tick could go unseen). A file that cannot be read is fetched.
   */
  private async withHashed(workspaceId: string, members: readonly TreeMember[], live: readonly ListedEntry[], known: KnownFiles, signal?: AbortSignal): Promise<KnownFiles> {
    const sinceNs = nowNs();
    const candidates = toHash(members, live, known).filter((entry) => settled(entry, sinceNs));
    if (candidates.length === 0) return known;
    const workspace = await this.registry.get(workspaceId);
    const sha256 = new Map(members.map((member) => [member.path, member.sha256]));
    const vouched = new Map(known);
    for (let i = 0; i < candidates.length; i += HASH_BATCH) {
      signal?.throwIfAborted();
      const batch = candidates.slice(i, i + HASH_BATCH);
      const read = await Promise.all(batch.map((entry) => hashFile(workspace, entry.parts, signal).catch(() => undefined)));
      batch.forEach((entry, j) => {
        if (read[j]?.version === entry.version && read[j]!.sha256 === sha256.get(entry.path)) vouched.set(entry.path, { version: entry.version, sha256: read[j]!.sha256 });
      });
    }
    return vouched;
  }

  /**
   * The tree after an in-place merge, in walk order, as a walk would list it
   * (in-place.ts: afterMerge): the kept entries as the walk planned from
   * listed them, and what the merge touched stat'ed again (an entry gone
   * since is left out), a batch at a time (a bounded number of
   * descriptors); walked instead when the merge touched most of the tree. A call that changes a kept entry
   * meanwhile gives it a version this listing lacks, so the copy looks
   * changed, never clean.
   */
  private async listedAfterMerge(workspace: Workspace, { untouched, touched }: ReturnType<typeof afterMerge>): Promise<ListedEntry[]> {
    if (touched.length > untouched.length) return (await listTree(workspace)).listing;
    const listing = [...untouched];
    for (let i = 0; i < touched.length; i += STAT_BATCH) {
      for (const entry of await Promise.all(touched.slice(i, i + STAT_BATCH).map((parts) => listedEntry(workspace, parts)))) if (entry) listing.push(entry);
    }
    return listing.sort(walkOrder);
  }

  /**
   * After a restore, what the stat cache may say of the restored tree: the
   * files whose stat settled before `appliedNs` (the moment it began to
   * change the live tree) hold the content the snapshot gives them — a call
   * that changed one since moved its ctime past that moment (stat-cache.ts).
   * So the next snapshot reads only what its run changed, even on a runtime
   * whose copy came whole from the store. The tree is `after` when the
   * restore knows it, else walked; its fingerprint is returned.
   */
  private async rememberRestored(workspaceId: string, members: readonly TreeMember[], appliedNs: bigint, after?: readonly ListedEntry[]): Promise<string> {
    const sha256 = new Map(members.filter((m) => m.header.type === "file").map((m) => [m.path, m.sha256]));
    const records: StatRecord[] = [];
    const fingerprint = new TreeFingerprint();
    for (const entry of after ?? (await listTree(await this.registry.get(workspaceId))).listing) {
      fingerprint.add(entry);
      const content = entry.type === "file" ? sha256.get(entry.path) : undefined;
      if (content !== undefined && settled(entry, appliedNs)) records.push({ path: entry.path, version: entry.version, sha256: content });
    }
    this.statCache?.save(workspaceId, records);
    return fingerprint.result().fingerprint;
  }

  /** Unpacks an untrusted tarball into directory `parts` of the workspace; a refusal changes nothing (see the class comment). */
  async importArchive(
    workspaceId: string,
    parts: Components,
    chunks: AsyncIterable<Uint8Array>,
    options: { signal?: AbortSignal; quota?: QuotaCheck; record?: (merged: MergedInto) => Promise<void> } = {},
  ): Promise<ExtractResult> {
    const { signal, quota } = options;
    const spool = this.scratchPath("import");
    // Counted as if every member were new (which names it replaces is known only at the merge), from
    // the first pass on: an import past the quota stops at the header that passes it, not at its end.
    const hold = await this.quotaHold(workspaceId, quota, (staged) => staged);
    try {
      const handle = await fsp.open(spool, "wx", 0o600);
      try {
        // As received: a client's archive may be a bomb, and its compressed bytes are what is cheap to keep.
        await inspectArchive(chunks, { limits: this.limits, damaged: "UNSAFE_ARCHIVE", staged: hold.staged }, { form: "as-received", write: (chunk) => writeAll(handle, chunk) });
      } finally {
        await handle.close();
      }
      const extract = (staging: Staging) => extractArchive(scratchTar(spool), staging, { limits: this.limits, damaged: "UNSAFE_ARCHIVE", staged: hold.staged });
      return await this.stageAndApply(workspaceId, extract, signal, async (staging, staged) => {
        const workspace = await this.registry.get(workspaceId);
        signal?.throwIfAborted(); // the commit point (the link check below may still refuse, before anything moves)
        const made: MadeDirectories = [];
        const landed: Landed = {};
        // With its record, as one: the outside watcher waits for it (Workspace.recorded).
        await workspace.recorded(async () => {
          await workspace.mergeStaging(staging, parts, (into, entryAt) => staged.checkLinks(linksIn(workspace), entryAt, into), { madeDirectories: made, landed });
          await options.record?.({ madeDirectories: made, landed: landed.parts ?? parts });
        });
      });
    } finally {
      hold.release();
      await fsp.unlink(spool).catch(() => undefined);
    }
  }

  /**
   * With `quota`, what an archive's totals so far add (`adds`, given the
   * usage now) is held against the call's limits; `staged` throws
   * QUOTA_EXCEEDED at the member that passes one. `release` lets go.
   */
  private async quotaHold(workspaceId: string, quota: QuotaCheck | undefined, adds: (staged: Usage, now: Usage) => Usage): Promise<{ staged?: (usage: Usage) => void; release(): void }> {
    const gate = quota && (await this.quotas?.gate(await this.registry.get(workspaceId), quota.tokenQuota));
    if (!gate) return { release: () => undefined };
    const admission = gate.admit(NO_USAGE, "/");
    return { staged: (usage) => admission.resize(adds(usage, gate.current())), release: () => admission.settle(NO_USAGE) };
  }

  /**
   * Extracts an archive (`extract`) into a fresh staging directory, then runs
   * `apply` with the workspace's lock held; the staging directory is gone
   * after.
   */
  private async stageAndApply(
    workspaceId: string,
    extract: (staging: Staging) => Promise<StagedArchive>,
    signal: AbortSignal | undefined,
    apply: (staging: Staging, staged: StagedArchive) => Promise<void>,
  ): Promise<ExtractResult> {
    const staging = await this.registry.createStaging(workspaceId);
    try {
      const extracted = await extract(staging);
      signal?.throwIfAborted();
      await this.locks.with([workspaceId], async () => {
        try {
          await apply(staging, extracted);
        } finally {
          // The tree was replaced or merged into wholesale: the next call under a quota counts it again.
          this.quotas?.recount(await this.registry.get(workspaceId));
        }
      }, signal);
      return { fileCount: extracted.fileCount, sizeBytes: extracted.sizeBytes };
    } finally {
      await staging.discard(); // nothing once handed over
    }
  }

  /** Deletes every snapshot of a workspace. */
  async deleteAll(workspaceId: string, signal?: AbortSignal): Promise<void> {
    checkWorkspaceId(workspaceId);
    for (const key of await this.store.list(`${workspaceId}/`, signal)) {
      if (key.endsWith(".json")) await this.store.delete(key, signal);
    }
    for (const key of await this.store.list(`${workspaceId}/`, signal)) await this.store.delete(key, signal);
    // Last: a head naming a deleted snapshot would refuse every later publish.
    await this.store.delete(headKey(workspaceId), signal);
  }

  /**
   * Keeps the newest `keep` snapshots of the main line, counted along the
   * chain from the head (never by id: ids carry their writer's clock), so the
   * head is never pruned; only the main line is walked. Recovered snapshots
   * are never pruned (they are work nobody published). A snapshot goes
   * manifest first (from then on it does not exist), then its table of
   * contents and assembled export; a tarball goes once a snapshot pruned now
   * read from it (its own, or an older one it pointed at) and no manifest
   * left (recovered ones included) lists it — or, never named by a manifest,
   * once older than ORPHAN_TARBALL_MS (younger, it may be another daemon's
   * snapshot on its way). Killed at any point, it
   * leaves every kept snapshot whole, and at most objects nothing lists,
   * which the next prune removes. A manifest that cannot be read holds every
   * tarball back (what it lists is unknown).
   */
  private async prune(workspaceId: string): Promise<void> {
    const keys = await this.store.list(`${workspaceId}/`);
    const ids = keys.filter((k) => k.endsWith(".json")).map((k) => idOf(k));
    const head = ids.length > this.keep ? await this.heads.read(workspaceId) : undefined;
    const pruned = new Set<string>();
    /** Tarballs the pruned snapshots read from: each goes unless a kept snapshot still does. */
    const released = new Set<string>();
    if (head) {
      const chain: Manifest[] = [];
      // A link that cannot be read ends the walk: nothing past it is pruned.
      for (let id = head.snapshot; id !== "" && !chain.some((m) => m.id === id); ) {
        const manifest = await this.readManifest(workspaceId, id).catch(() => undefined);
        if (!manifest || manifest.recovered !== undefined) break;
        chain.push(manifest);
        id = followed(manifest);
      }
      for (const manifest of chain.slice(this.keep)) {
        await this.store.delete(`${workspaceId}/${manifest.id}.json`);
        pruned.add(manifest.id);
        for (const key of objectsReadBy(manifest)) released.add(key);
      }
    }
    const kept = ids.filter((id) => !pruned.has(id));
    const listed = new Set<string>();
    for (const id of kept) {
      const manifest: Manifest | Error = await this.readManifest(workspaceId, id).catch((error: Error) => error);
      if (!(manifest instanceof Error)) {
        for (const key of objectsReadBy(manifest)) listed.add(key);
      } else if (!(manifest instanceof FileToolsError && manifest.reason === "NOT_FOUND")) return;
    }
    const withManifest = new Set(kept);
    const cutoff = Date.now() - ORPHAN_TARBALL_MS;
    for (const key of keys) {
      const id = idOf(key);
      if (withManifest.has(id) || key.endsWith(".json") || listed.has(key)) continue;
      if (pruned.has(id) || released.has(key) || idTime(id) < cutoff) await this.store.delete(key);
    }
  }

  private async manifestIds(workspaceId: string, signal?: AbortSignal): Promise<string[]> {
    checkWorkspaceId(workspaceId);
    const keys = await this.store.list(`${workspaceId}/`, signal);
    return keys.filter((k) => k.endsWith(".json") && SNAPSHOT_ID.test(idOf(k))).map(idOf).sort();
  }

  private async readManifest(workspaceId: string, id: string, signal?: AbortSignal): Promise<Manifest> {
    const parts: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of await this.store.get(`${workspaceId}/${id}.json`, signal)) {
        // Past the longest string there is, it could not be read as text: stopped there, not held whole.
        if ((size += chunk.length) > bufferConstants.MAX_STRING_LENGTH) fail("DATA_LOSS", `the manifest of snapshot ${id} of workspace ${workspaceId} is larger than a manifest can be`);
        parts.push(Buffer.from(chunk));
      }
    } catch (error) {
      if (error instanceof FileToolsError && error.reason === "NOT_FOUND") fail("NOT_FOUND", `snapshot ${id} of workspace ${workspaceId} does not exist`);
      throw error;
    }
    return parseManifest(workspaceId, id, Buffer.concat(parts).toString("utf8"));
  }

  /** The tarball's bytes; NOT_FOUND when the snapshot was deleted meanwhile, DATA_LOSS when its manifest is there without it. */
  private async getTarball(manifest: Manifest, signal?: AbortSignal): Promise<AsyncIterable<Uint8Array>> {
    try {
      return await this.store.get(manifest.tarball, signal);
    } catch (error) {
      if (!(error instanceof FileToolsError && error.reason === "NOT_FOUND")) throw error;
    }
    const manifestKey = `${manifest.workspace}/${manifest.id}.json`;
    if (!(await this.store.list(manifestKey, signal)).includes(manifestKey)) fail("NOT_FOUND", `snapshot ${manifest.id} of workspace ${manifest.workspace} was deleted meanwhile`);
    fail("DATA_LOSS", `the tarball of snapshot ${manifest.id} of workspace ${manifest.workspace} is missing from the store`);
  }

  /**
   * Downloads a tarball, checking its size and sha256 against the manifest
   * and reading it through the archive guard (pass 1), into a scratch file of
   * plain tar that nothing uses before all of it passed. DATA_LOSS when it is
   * damaged or does not match; UNSAFE_ARCHIVE when it inflates past what its
   * manifest accounts for (a bomb), stopped there.
   */
  private async download(manifest: Manifest, signal?: AbortSignal): Promise<string> {
    const file = this.scratchPath("download");
    const measure = { size: 0, hash: createHash("sha256") };
    let handle: FileHandle | undefined;
    try {
      // The scratch file first: a store's body once asked for is always read to its end or destroyed, never left open.
      handle = await fsp.open(file, "wx", 0o600);
      const source = await this.getTarball(manifest, signal);
      async function* checked(): AsyncGenerator<Uint8Array> {
        for await (const chunk of source) {
          if (measure.size + chunk.length > manifest.sizeBytes) fail("DATA_LOSS", `snapshot ${manifest.id} is larger than its manifest says; nothing was changed`);
          measure.hash.update(chunk);
          measure.size += chunk.length;
          yield chunk;
        }
        if (measure.size !== manifest.sizeBytes || measure.hash.digest("hex") !== manifest.sha256) {
          fail("DATA_LOSS", `snapshot ${manifest.id} does not match the size and sha256 of its manifest; nothing was changed`);
        }
      }
      const scratch = handle;
      try {
        // As plain tar: a restore then inflates the snapshot once, not twice. A
        // matching sha256 proves nothing (whoever can write the store can write a
        // manifest), so the tarball may inflate only to what its manifest's file
        // list accounts for, plus the 256 MiB any archive may inflate to before
        // its ratio counts (empty directories, which the list does not name): a
        // workspace of zeros restores, a bomb stops there. A manifest without a
        // file list (an older daemon's) gets the import's ratio cap.
        const inflated = manifest.files ? { maxInflatedBytes: tarBytesFor(manifest.files) + this.limits.ratioFloorBytes } : {};
        await inspectArchive(checked(), { limits: this.limits, damaged: "DATA_LOSS", ...inflated }, { form: "plain-tar", write: (chunk) => writeAll(scratch, chunk) });
      } finally {
        handle = undefined;
        await scratch.close();
      }
      return file;
    } catch (error) {
      await handle?.close().catch(() => undefined);
      await fsp.unlink(file).catch(() => undefined);
      throw error;
    }
  }

  private scratchPath(kind: string): string {
    return path.join(this.tmpDir, `${kind}-${randomBytes(8).toString("hex")}`);
  }

  private scratchExport(file: string, measure: { size: number; hash: ReturnType<typeof createHash> }, fileCount: number): ExportStream {
    // The file is opened on the first chunk asked for: a stream opened and then released unread would fail its open later, with nobody listening.
    async function* chunks(): AsyncGenerator<Buffer> {
      for await (const chunk of createReadStream(file, { highWaterMark: EXPORT_CHUNK_BYTES })) yield chunk as Buffer;
    }
    const stream = chunks();
    return {
      size: measure.size,
      sha256: measure.hash.digest("hex"),
      fileCount,
      chunks: stream,
      // Also when the call ended before the first chunk was asked for: the scratch file goes either way.
      release: async () => {
        await stream.return(undefined);
        await fsp.unlink(file).catch(() => undefined);
      },
    };
  }
}

/** Every symbolic link in the workspace and its target (for the import's link check; only walked when the archive has links). */
async function* linksIn(workspace: Workspace): AsyncGenerator<{ at: string[]; target: string }> {
  for await (const entry of workspace.walk([], { recursive: true, maxDepth: 0, includeHidden: true, respectGitignore: false })) {
    if (entry.type !== "symlink") continue;
    const at = entry.path.slice(1).split("/");
    const target = await workspace.readLink(at).catch(() => null);
    if (target !== null) yield { at, target };
  }
}

function oldFileListOf(manifest: Manifest): FileList {
  if (manifest.files) return manifest.files;
  fail(
    "SNAPSHOT_WITHOUT_FILE_LIST",
    `snapshot ${manifest.id} of workspace ${manifest.workspace} was written by an older daemon and has no file list to compare; diff against a newer snapshot (one written by FinishRun since)`,
    { snapshot: manifest.id },
  );
}

function checkWorkspaceId(id: string): void {
  if (!WORKSPACE_ID_PATTERN.test(id)) fail("INVALID_ARGUMENT", `invalid workspace id ${JSON.stringify(id.slice(0, 80))}`);
}

export function newSnapshotId(): string {
  return `${new Date().toISOString().replace(/[-:]/g, "").replace(".", "")}-${randomBytes(4).toString("hex")}`;
}

/** When snapshot `id` was made (ids start with their UTC time). */
function idTime(id: string): number {
  const m = /^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)(\d{3})Z/.exec(id);
  return m ? Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!, +m[7]!) : Number.POSITIVE_INFINITY;
}

/**
 * The main line, newest first: the chain of `follows` (parent in manifests
 * older than heads) from the head, in chain order (ids carry their writer's
 * clock, which may be skewed). Without a head (a store from before heads),
 * every manifest that is not a recovered one nor a publish that never made
 * the head, by id.
 */
function mainLine(manifests: readonly Manifest[], head: Head | undefined): Manifest[] {
  if (!head) return manifests.filter((m) => m.recovered === undefined && m.follows === undefined);
  const byId = new Map(manifests.map((m) => [m.id, m]));
  // A link whose manifest is damaged (left out of `manifests`) is stepped over: the line goes on from the newest older one.
  const at = (id: string): Manifest | undefined => byId.get(id) ?? manifests.find((m) => m.id < id && m.recovered === undefined);
  const main: Manifest[] = [];
  const seen = new Set<string>();
  for (let m = at(head.snapshot); m && !seen.has(m.id) && m.recovered === undefined; m = followed(m) === "" ? undefined : at(followed(m))) {
    seen.add(m.id);
    main.push(m);
  }
  return main;
}

/** The snapshot before `manifest` on the main line: the head it replaced (its parent in manifests older than heads). */
function followed(manifest: Manifest): string {
  return manifest.follows ?? manifest.parent;
}

function movedOn(newest: string, replaces: string): string {
  const from = replaces === "" ? "no snapshot" : replaces;
  return `another run published ${newest || "(none)"} after this one started from ${from}`;
}

function asRecovered(manifest: Manifest, reason: string): Manifest {
  const { follows: _follows, ...rest } = manifest;
  return { ...rest, recovered: reason };
}

/** The snapshot id of a key under a workspace (`<id>.json`, `<id>.tar.gz`, `<id>.contents.json.gz`, `<id>.export.tar.gz`). */
function idOf(key: string): string {
  const name = key.slice(key.lastIndexOf("/") + 1);
  return name.slice(0, name.indexOf(".") === -1 ? name.length : name.indexOf("."));
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

/** An archive kept in a scratch file, read back. */
function scratchTar(file: string): AsyncIterable<Uint8Array> {
  return createReadStream(file, { highWaterMark: RESTORE_READ_BYTES });
}

async function writeFileFrom(file: string, source: AsyncIterable<Uint8Array>): Promise<void> {
  const handle = await fsp.open(file, "wx", 0o600);
  try {
    for await (const chunk of source) await writeAll(handle, chunk);
  } finally {
    await handle.close();
  }
}

async function writeAll(handle: FileHandle, chunk: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < chunk.length) offset += (await handle.write(chunk, offset, chunk.length - offset)).bytesWritten;
}

/**
 * Re-packs the members of a verified and guarded tar (as download keeps it,
 * decompressed) whose names match `include`, handing the new tarball's bytes to `consume`; resolves
 * with the number of files kept. A tarball that turns out damaged is
 * DATA_LOSS; every stream's error ends in the returned promise.
 */
async function filterTarball(source: AsyncIterable<Uint8Array>, include: readonly string[], consume: (bytes: AsyncIterable<Uint8Array>) => Promise<void>): Promise<number> {
  const matches = globMatcher(include, "include");
  // Names as bytes both ways (a stored snapshot's non-UTF-8 names survive); globs see the shown path.
  const extract = nameExactExtract();
  const pack = tar.pack();
  const gzip = createGzip();
  const settle = (error: unknown): void => {
    if (!error) return;
    extract.destroy();
    pack.destroy();
    gzip.destroy(asDamaged(error));
  };
  (pipeline as (...args: unknown[]) => void)(source, extract, settle);
  (pipeline as (...args: unknown[]) => void)(pack, gzip, settle);
  let fileCount = 0;
  const repack = (async () => {
    for await (const entry of extract) {
      const header = { ...entry.header, ...heldMemberNames(entry.header) };
      const name = header.name.replace(/\/$/, "");
      if (header.type === "directory" || !matches(name.split("/").map(escapeName).join("/"))) {
        entry.resume();
        continue;
      }
      if (header.type === "file") fileCount++;
      await new Promise<void>((resolve, reject) => {
        const sink = packMember(pack, header, (error) => (error ? reject(error) : resolve()));
        if (header.type === "file") (pipeline as (...args: unknown[]) => void)(entry, sink, (error: unknown) => error && reject(error));
        else entry.resume();
      });
    }
    pack.finalize();
  })().catch(settle);
  await consume(gzip);
  await repack;
  return fileCount;
}

/** The entry at `parts` as a walk lists it; undefined when there is none. */
async function listedEntry(workspace: Workspace, parts: Components): Promise<ListedEntry | undefined> {
  try {
    const entry = await workspace.stat(parts);
    return { parts, path: entry.path, type: entry.type, version: entry.version, size: entry.size, mode: entry.mode, ctimeNs: entry.ctimeNs, mtimeNs: entry.mtimeNs };
  } catch (error) {
    if (error instanceof FileToolsError && error.reason === "NOT_FOUND") return undefined;
    throw error;
  }
}

function asDamaged(error: unknown): Error {
  if (error instanceof FileToolsError) return error;
  return new FileToolsError("DATA_LOSS", `the stored snapshot is damaged: ${(error as Error)?.message ?? String(error)}`);
}
