// One workspace's journal on disk: JSON-lines segments under
// DATA_DIR/journal/WORKSPACE/, each named by the sequence number of its first
// entry (20 digits, so names sort as numbers). Appends go to the last segment
// and are made durable (fdatasync) before they are acknowledged; appends that
// arrive while one is being made durable are written together (group commit).
// A new segment is started every `perSegment` entries, and whole segments past
// the retention (count, age) are removed, oldest first. A line torn by a crash
// can only be the last one: it is cut off when the journal is opened.
import { promises as fsp, writeSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import path from "node:path";
import type { Logger } from "../log.js";
import { FileToolsError } from "../errors.js";
import { translateErrno } from "../workspace/errno.js";
import { syncDirectory } from "../workspace/sync-directory.js";
import { formatLine, parseLine, type JournalRecord } from "./records.js";

export interface Retention {
  /** Entries kept at least (whole segments past it are removed). */
  maxEntries: number;
  /** Entries older than this (ms) are removed, a segment at a time. */
  maxAgeMs: number;
}

const SEGMENT_NAME = /^([0-9]{20})\.jsonl$/;
/** How often an append also looks for segments past the age limit. */
const AGE_CHECK_MS = 60_000;

interface Segment {
  first: number;
  name: string;
}

interface Pending {
  notes: Array<Omit<JournalRecord, "seq">>;
  resolve: (records: JournalRecord[]) => void;
  reject: (error: unknown) => void;
}

export class SegmentLog {
  /** The sequence number of the last entry written (0: none ever). */
  last = 0;
  /** Bytes of the segments on disk. */
  bytes = 0;
  /** Told of each batch once it is durable, in order, before its appends resolve. */
  onAppend: ((records: readonly JournalRecord[]) => void) | undefined;
  private handle: FileHandle | undefined;
  /** Entries and bytes in the last segment. */
  private inLast = 0;
  private lastSize = 0;
  private pending: Pending[] = [];
  private isFlushing = false;
  /** The flush under way (close waits for it). */
  private flushing: Promise<void> = Promise.resolve();
  private lastAgeCheck = Date.now();
  private closed = false;

  private constructor(
    private readonly dir: string,
    private readonly retention: Retention,
    private readonly perSegment: number,
    private segments: Segment[],
    private readonly logger?: Pick<Logger, "warn">,
  ) {}

  /** Opens (creating it if needed) the journal in `dir`, cutting off a torn last line. */
  static async open(dir: string, retention: Retention, logger?: Pick<Logger, "warn">): Promise<SegmentLog> {
    await fsp.mkdir(dir, { recursive: true });
    const segments = (await fsp.readdir(dir))
      .flatMap((name) => {
        const match = SEGMENT_NAME.exec(name);
        return match ? [{ first: Number(match[1]), name }] : [];
      })
      .sort((a, b) => a.first - b.first);
    const perSegment = Math.max(16, Math.min(4096, Math.ceil(retention.maxEntries / 8)));
    const log = new SegmentLog(dir, retention, perSegment, segments, logger);
    await log.recover();
    await log.prune();
    return log;
  }

  /** The oldest sequence number held (last + 1 when the journal holds nothing). */
  get oldest(): number {
    const first = this.segments[0]?.first;
    return first === undefined || first > this.last ? this.last + 1 : first;
  }

  /**
   * Numbers and appends the entries, in order, and resolves once they are
   * durable. Appends made while another is being synced share its successor's sync.
   */
  append(notes: Array<Omit<JournalRecord, "seq">>): Promise<JournalRecord[]> {
    if (this.closed) return Promise.reject(new FileToolsError("CANCELLED", "the journal is closed: its workspace was deleted, or the daemon is stopping"));
    return new Promise((resolve, reject) => {
      this.pending.push({ notes, resolve, reject });
      if (!this.isFlushing) {
        this.isFlushing = true;
        this.flushing = this.flush();
      }
    });
  }

  /**
   * Up to `limit` entries after `after`, in order, of those held now (entries
   * pruned meanwhile are left out: compare with `oldest`).
   */
  async read(after: number, limit: number): Promise<JournalRecord[]> {
    const upTo = this.last;
    const out: JournalRecord[] = [];
    let index = this.segments.findLastIndex((segment) => segment.first <= after + 1);
    if (index < 0) index = 0;
    for (const segment of this.segments.slice(index)) {
      if (out.length >= limit || segment.first > upTo) break;
      let text: string;
      try {
        text = await fsp.readFile(path.join(this.dir, segment.name), "utf8");
      } catch {
        continue; // pruned meanwhile
      }
      for (const line of text.split("\n")) {
        if (line === "") continue;
        const record = parseLine(line);
        if (!record || record.seq <= after || record.seq > upTo) continue;
        if (out.length > 0 && record.seq <= out[out.length - 1]!.seq) continue;
        out.push(record);
        if (out.length >= limit) break;
      }
    }
    return out;
  }

  /** Waits for appends in progress, then closes the last segment. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.isFlushing) await this.flushing;
    await this.handle?.close();
    this.handle = undefined;
  }

  /** Removes the journal's files (its workspace is gone). */
  async destroy(): Promise<void> {
    await this.close();
    await fsp.rm(this.dir, { recursive: true, force: true });
  }

  /**
   * Writes what is pending, batch after batch, until nothing is.
   * `isFlushing` is cleared in the very turn that finds nothing pending (not
   * in a later callback): an append made by a caller that a resolution woke
   * must start a new flush, not join this one as it ends.
   */
  private async flush(): Promise<void> {
    for (;;) {
      if (this.pending.length === 0) {
        this.isFlushing = false;
        return;
      }
      const batch = this.pending.splice(0);
      let seq = this.last;
      const numbered = batch.map((item) => item.notes.map((note) => ({ seq: ++seq, ...note })));
      try {
        await this.write(numbered.flat());
        this.last = seq;
      } catch (error) {
        // Never a host path: the journal's files are the daemon's, not the workspace's.
        const shown = translateErrno(error, "the journal");
        for (const item of batch) item.reject(shown);
        continue;
      }
      try {
        this.onAppend?.(numbered.flat());
      } catch (error) {
        this.logger?.warn({ err: error }, "journal listener failed");
      }
      batch.forEach((item, i) => item.resolve(numbered[i]!));
    }
  }

  /** Writes the records durably, starting segments as they fill; on a failure, the last segment is cut back. */
  private async write(records: JournalRecord[]): Promise<void> {
    let start = 0;
    while (start < records.length) {
      if (!this.handle || this.inLast >= this.perSegment) await this.startSegment(records[start]!.seq);
      const chunk = records.slice(start, start + this.perSegment - this.inLast);
      const bytes = Buffer.from(chunk.map(formatLine).join(""));
      const handle = this.handle!;
      try {
        // A few hundred bytes into the page cache: written at once rather than through the thread pool (a round
        // trip of its own, measured at a tenth of a Write's time); the sync is the slow part, and stays asynchronous.
        for (let done = 0; done < bytes.length; ) done += writeSync(handle.fd, bytes, done, bytes.length - done);
        await handle.datasync();
      } catch (error) {
        await handle.truncate(this.lastSize).catch(() => undefined);
        throw error;
      }
      this.inLast += chunk.length;
      this.lastSize += bytes.length;
      this.bytes += bytes.length;
      start += chunk.length;
    }
    if (Date.now() - this.lastAgeCheck > AGE_CHECK_MS) await this.prune();
  }

  private async startSegment(first: number): Promise<void> {
    await this.handle?.close();
    this.handle = undefined;
    const name = `${String(first).padStart(20, "0")}.jsonl`;
    const handle = await fsp.open(path.join(this.dir, name), "a");
    this.handle = handle;
    this.segments.push({ first, name });
    this.inLast = 0;
    this.lastSize = 0;
    await syncDirectory(this.dir);
    await this.prune();
  }

  /** Reads the last segment back: its last good entry is the journal's last; a torn tail is cut off. */
  private async recover(): Promise<void> {
    for (const segment of this.segments) {
      const stats = await fsp.stat(path.join(this.dir, segment.name)).catch(() => null);
      this.bytes += stats?.size ?? 0;
    }
    const lastSegment = this.segments[this.segments.length - 1];
    if (!lastSegment) return;
    const file = path.join(this.dir, lastSegment.name);
    const text = await fsp.readFile(file, "utf8");
    let good = 0;
    let count = 0;
    let last = lastSegment.first - 1;
    let offset = 0;
    for (const line of text.split("\n")) {
      const end = offset + Buffer.byteLength(line) + 1;
      if (end > Buffer.byteLength(text)) break; // no newline: torn
      const record = parseLine(line);
      if (record && record.seq > last) {
        last = record.seq;
        count++;
        good = end;
      } else if (line !== "") {
        this.logger?.warn({ segment: lastSegment.name, offset }, "journal line left out");
        good = end;
      }
      offset = end;
    }
    if (good < Buffer.byteLength(text)) {
      this.logger?.warn({ segment: lastSegment.name, bytes: Buffer.byteLength(text) - good }, "torn journal tail cut off");
      await fsp.truncate(file, good);
      this.bytes -= Buffer.byteLength(text) - good;
    }
    this.last = last;
    this.inLast = count;
    this.lastSize = good;
    this.handle = await fsp.open(file, "a");
  }

  /** Removes whole segments (never the last) past the retention, oldest first. */
  private async prune(): Promise<void> {
    this.lastAgeCheck = Date.now();
    const oldestTime = Date.now() - this.retention.maxAgeMs;
    while (this.segments.length > 1) {
      const [segment, next] = [this.segments[0]!, this.segments[1]!];
      const file = path.join(this.dir, segment.name);
      const stats = await fsp.stat(file).catch(() => null);
      const pastCount = next.first - 1 <= this.last - this.retention.maxEntries;
      const pastAge = stats !== null && stats.mtimeMs < oldestTime;
      if (stats && !pastCount && !pastAge) break;
      this.segments.shift();
      await fsp.rm(file, { force: true });
      this.bytes -= stats?.size ?? 0;
    }
  }
}
