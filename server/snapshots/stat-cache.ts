// What the last snapshot of each workspace read: per file its version (a
// hash of device, inode, size, mtime and ctime in ns: entry.ts) and the
// SHA-256 of the content read with it, so that the next snapshot reads only
// the files whose stat changed — git's index, for a tree that may be changed
// behind the daemon's back (a bound directory). A file changed within a few
// ms of the walk that recorded it is left out ("racily clean": it could
// change again within its timestamp's tick, unseen; seekable.ts). One JSON
// file per workspace in DATA_DIR/stat-cache, written atomically behind the
// call that saved it; a missing or damaged one only means reading every file
// once.
import { randomBytes } from "node:crypto";
import { promises as fsp } from "node:fs";
import path from "node:path";
import { z } from "zod";
import type { Logger } from "../log.js";
import { parseRecord } from "../runs/records.js";

export interface StatRecord {
  /** Workspace path. */
  path: string;
  version: string;
  /** Hex. */
  sha256: string;
}

/** Timestamps move in ticks (a few ms on Linux): a file changed within this of a walk's start may change again within its tick, unseen. */
export const RACY_MARGIN_MS = 50;
const RACY_MARGIN_NS = BigInt(RACY_MARGIN_MS) * 1_000_000n;

/** Whether a stat taken after `sinceNs` (ns since the epoch) may stand for the content read with it (git's "racily clean" rule). */
export function settled(stat: { ctimeNs: bigint; mtimeNs: bigint }, sinceNs: bigint): boolean {
  return stat.ctimeNs < sinceNs - RACY_MARGIN_NS && stat.mtimeNs < sinceNs - RACY_MARGIN_NS;
}

/** Now, in ns since the epoch, for `settled`. */
export function nowNs(): bigint {
  return BigInt(Date.now()) * 1_000_000n;
}

/** By workspace path. */
export type KnownFiles = ReadonlyMap<string, { version: string; sha256: string }>;

const CacheSchema = z.object({ paths: z.array(z.string()), versions: z.array(z.string()), sha256: z.array(z.string()) });
/** Workspaces whose cache is kept in memory too (this daemon is the only writer of its data dir). */
const IN_MEMORY = 4;

export class StatCache {
  /** The last caches saved, as saved: a run's snapshot does not parse what the last one wrote (20,000 files: ~40 ms and their garbage). */
  private readonly recent = new Map<string, KnownFiles>();
  /** Each workspace's newest records not yet written: an older save that was not written yet is superseded. */
  private readonly unwritten = new Map<string, readonly StatRecord[]>();
  /** Each workspace's writer while it runs: it writes what is unwritten until nothing is. */
  private readonly writers = new Map<string, Promise<void>>();

  constructor(
    private readonly dir: string,
    private readonly logger?: Pick<Logger, "warn">,
  ) {}

  /** What the workspace's last snapshot read (empty when unknown). */
  async load(workspaceId: string): Promise<KnownFiles> {
    const kept = this.recent.get(workspaceId);
    if (kept) return kept;
    await this.written(workspaceId);
    const text = await fsp.readFile(this.file(workspaceId), "utf8").catch(() => undefined);
    const parsed = text === undefined ? undefined : parseRecord(CacheSchema, text);
    if (!parsed?.ok) return new Map();
    const { paths, versions, sha256 } = parsed.value;
    return new Map(paths.map((p, i) => [p, { version: versions[i] ?? "", sha256: sha256[i] ?? "" }]));
  }

  /**
   * Keeps `records` as the workspace's cache: in memory at once, on disk
   * behind the caller (a snapshot or restore does not wait ~50 ms for 20,000
   * records' JSON). Writes do not fail anyone: one that fails is logged and
   * leaves the older file, whose records still hold (a record vouches only
   * for the version it names), or none.
   */
  save(workspaceId: string, records: readonly StatRecord[]): void {
    this.recent.delete(workspaceId);
    this.recent.set(workspaceId, new Map(records.map((r) => [r.path, r])));
    while (this.recent.size > IN_MEMORY) this.recent.delete(this.recent.keys().next().value!);
    this.unwritten.set(workspaceId, records);
    if (!this.writers.has(workspaceId)) this.writers.set(workspaceId, this.writeBehind(workspaceId));
  }

  /** Once every save of the workspace so far is on disk (or has failed). */
  private written(workspaceId: string): Promise<void> {
    return this.writers.get(workspaceId) ?? Promise.resolve();
  }

  /** Once every save so far is on disk (or has failed): at shutdown. */
  async flush(): Promise<void> {
    await Promise.all(this.writers.values());
  }

  /** Writes the workspace's newest records until none are left; never rejects. */
  private async writeBehind(workspaceId: string): Promise<void> {
    // After the caller's reply is on its way: the JSON of 20,000 records is ~30 ms of the main thread.
    await new Promise((resolve) => setImmediate(resolve));
    for (let records = this.unwritten.get(workspaceId); records; records = this.unwritten.get(workspaceId)) {
      this.unwritten.delete(workspaceId);
      await this.write(workspaceId, records).catch((error: unknown) =>
        this.logger?.warn({ workspace: workspaceId, err: error }, "stat cache not written: the next snapshot after a restart reads every file once"),
      );
    }
    // Nothing unwritten, with no wait since it looked: a save from now on starts a writer of its own.
    this.writers.delete(workspaceId);
  }

  private async write(workspaceId: string, records: readonly StatRecord[]): Promise<void> {
    await fsp.mkdir(this.dir, { recursive: true });
    const temp = path.join(this.dir, `.${workspaceId}.${randomBytes(6).toString("hex")}.tmp`);
    const body = { paths: records.map((r) => r.path), versions: records.map((r) => r.version), sha256: records.map((r) => r.sha256) };
    try {
      await fsp.writeFile(temp, JSON.stringify(body), { mode: 0o600 });
      await fsp.rename(temp, this.file(workspaceId));
    } catch (error) {
      await fsp.unlink(temp).catch(() => undefined);
      throw error;
    }
  }

  private file(workspaceId: string): string {
    return path.join(this.dir, `${workspaceId}.json`);
  }
}
