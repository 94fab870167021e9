// The journal of changes, one per workspace (DATA_DIR/journal/WORKSPACE):
// what the daemon changed and, in bound workspaces, what changed behind its
// back. Appends are durable before they are acknowledged (segments.ts); each
// one is then handed to the workspace's watchers (watcher.ts), in order.
import { promises as fsp } from "node:fs";
import path from "node:path";
import { fail } from "../errors.js";
import type { Logger } from "../log.js";
import { SegmentLog, type Retention } from "./segments.js";
import type { Actor, ChangeNote, JournalRecord } from "./records.js";
import { Watcher, type WatchEvent } from "./watcher.js";

export interface JournalOptions {
  retention: Retention;
  /** Entries a watcher may have waiting before it is told it missed some (--watch-queue). */
  watchQueue: number;
  logger?: Pick<Logger, "warn">;
}

export interface JournalStats {
  watchers: number;
  bytes: number;
  sent: number;
  dropped: number;
}

/** A page of history read for a watcher at a time. */
const HISTORY_PAGE = 512;

export class Journal {
  private readonly logs = new Map<string, Promise<SegmentLog>>();
  /** The same, once open (for the metrics, read synchronously). */
  private readonly opened = new Map<string, SegmentLog>();
  private readonly watchers = new Map<string, Set<Watcher>>();
  private readonly appendListeners: Array<(workspaceId: string, records: readonly JournalRecord[]) => void> = [];
  /** What a watcher of each workspace should know (e.g. that outside changes are found by a scan), sent when it goes live. */
  private readonly conditions = new Map<string, string[]>();
  /** Entries sent to watchers; entries dropped for slow ones by watches that have ended (open ones count their own). */
  private sent = 0;
  private dropped = 0;

  constructor(
    private readonly dir: string,
    private readonly options: JournalOptions,
  ) {}

  /** Removes the journals of workspaces that no longer exist and whose last change is past the age limit. */
  async sweep(exists: (workspaceId: string) => boolean): Promise<void> {
    await fsp.mkdir(this.dir, { recursive: true });
    const oldest = Date.now() - this.options.retention.maxAgeMs;
    for (const name of await fsp.readdir(this.dir)) {
      if (exists(name)) continue;
      const stats = await fsp.stat(path.join(this.dir, name)).catch(() => null);
      if (stats && stats.mtimeMs < oldest) await fsp.rm(path.join(this.dir, name), { recursive: true, force: true });
    }
  }

  /** Told of every append once it is durable (the outside watcher tells the daemon's own changes apart with it). */
  onAppend(listener: (workspaceId: string, records: readonly JournalRecord[]) => void): void {
    this.appendListeners.push(listener);
  }

  /** Appends changes made by `actor` (or outside, with NO_ACTOR); resolves once they are durable and handed to the watchers. */
  async append(workspaceId: string, notes: readonly ChangeNote[], actor: Actor, outside = false): Promise<JournalRecord[]> {
    const log = await this.log(workspaceId);
    const time = new Date().toISOString();
    return log.append(notes.map((note) => ({ time, ...note, ...actor, outside })));
  }

  /** The oldest cursor held and the last one given (0 when none). */
  async bounds(workspaceId: string): Promise<{ oldest: number; last: number }> {
    const log = await this.log(workspaceId);
    return { oldest: log.last === 0 ? 0 : log.oldest, last: log.last };
  }

  /** Entries after `after` (up to `limit`), of those still held. */
  async read(workspaceId: string, after: number, limit: number): Promise<JournalRecord[]> {
    return (await this.log(workspaceId)).read(after, limit);
  }

  /**
   * The events of a watch: the entries after `cursor` (when given), a "live"
   * marker, then each new entry matching `matches` as it is journaled, until
   * `signal` aborts or the watcher falls too far behind ("missed", then the end).
   */
  async *watch(workspaceId: string, cursor: number | undefined, matches: (record: JournalRecord) => boolean, signal: AbortSignal): AsyncGenerator<WatchEvent> {
    const log = await this.log(workspaceId);
    if (cursor !== undefined) this.checkCursor(workspaceId, log, cursor);
    const liveFrom = log.last;
    const watcher = new Watcher(matches, this.options.watchQueue, liveFrom, signal);
    const set = this.watchers.get(workspaceId) ?? new Set();
    this.watchers.set(workspaceId, set);
    set.add(watcher);
    try {
      if (cursor !== undefined) {
        for (let at = cursor; at < liveFrom; ) {
          const page = (await log.read(at, HISTORY_PAGE)).filter((record) => record.seq <= liveFrom);
          if (page[0]?.seq !== at + 1 && at + 1 < log.oldest) {
            // Pruned while we read: what is gone is missed.
            yield { kind: "missed", count: log.oldest - at - 1, resume: at };
            return;
          }
          // (A gap that is not pruned is a line no longer readable: skipped, as GetJournal skips it.)
          if (page.length === 0) break;
          at = page[page.length - 1]!.seq;
          const matching = page.filter(matches);
          if (matching.length > 0) {
            this.sent += matching.length;
            yield { kind: "changes", records: matching };
          }
          if (signal.aborted) return;
        }
      }
      yield { kind: "live", cursor: liveFrom };
      for (const message of this.conditions.get(workspaceId) ?? []) yield { kind: "notice", message, time: new Date() };
      for (;;) {
        const event = await watcher.next();
        if (!event) return;
        if (event.kind === "changes") this.sent += event.records.length;
        yield event;
        if (event.kind === "missed") return;
      }
    } finally {
      set.delete(watcher);
      if (set.size === 0 && this.watchers.get(workspaceId) === set) this.watchers.delete(workspaceId);
      this.dropped += watcher.missedCount;
      watcher.close();
    }
  }

  /** A lasting condition of the workspace's journal (e.g. that outside changes are found by a scan): told to its watchers now and to each new one. */
  setCondition(workspaceId: string, message: string): void {
    this.conditions.set(workspaceId, [...(this.conditions.get(workspaceId) ?? []), message]);
    for (const watcher of this.watchers.get(workspaceId) ?? []) watcher.notice(message);
  }

  /** Where the outside watcher keeps its listing of a bound workspace's tree (listing.ts): beside its journal, and removed with it. */
  async listingFile(workspaceId: string): Promise<string> {
    await this.log(workspaceId);
    return path.join(this.dir, workspaceId, "outside-listing.json");
  }

  stats(): JournalStats {
    let watchers = 0;
    let dropped = this.dropped;
    for (const set of this.watchers.values()) {
      watchers += set.size;
      for (const watcher of set) dropped += watcher.missedCount;
    }
    return { watchers, bytes: this.cachedBytes(), sent: this.sent, dropped };
  }

  /** The workspace is deleted: its journal goes with it (a cursor into it is then out of range). */
  async forget(workspaceId: string): Promise<void> {
    // Its watchers' streams end (watched again, the workspace is not found, or is a new one with a new journal).
    for (const watcher of this.watchers.get(workspaceId) ?? []) watcher.finish();
    const log = this.logs.get(workspaceId);
    this.logs.delete(workspaceId);
    this.opened.delete(workspaceId);
    if (log) await (await log).destroy();
    else await fsp.rm(path.join(this.dir, workspaceId), { recursive: true, force: true });
  }

  async close(): Promise<void> {
    for (const log of this.logs.values()) await (await log.catch(() => undefined))?.close();
    this.logs.clear();
  }

  private checkCursor(workspaceId: string, log: SegmentLog, cursor: number): void {
    const held = { oldest_cursor: String(log.last === 0 ? 0 : log.oldest), last_cursor: String(log.last) };
    if (cursor > log.last) fail("CURSOR_OUT_OF_RANGE", `cursor ${cursor} is past the last entry of workspace ${workspaceId}'s journal (${log.last})`, held);
    if (cursor + 1 < log.oldest) {
      fail("CURSOR_OUT_OF_RANGE", `cursor ${cursor} is older than the journal of workspace ${workspaceId} holds: the oldest entry held is ${log.oldest}`, held);
    }
  }

  private cachedBytes(): number {
    let bytes = 0;
    for (const log of this.opened.values()) bytes += log.bytes;
    return bytes;
  }

  private log(workspaceId: string): Promise<SegmentLog> {
    let log = this.logs.get(workspaceId);
    if (!log) {
      log = SegmentLog.open(path.join(this.dir, workspaceId), this.options.retention, this.options.logger).then((opened) => {
        opened.onAppend = (records) => this.delivered(workspaceId, records);
        this.opened.set(workspaceId, opened);
        return opened;
      });
      log.catch(() => this.logs.delete(workspaceId));
      this.logs.set(workspaceId, log);
    }
    return log;
  }

  private delivered(workspaceId: string, records: readonly JournalRecord[]): void {
    for (const watcher of this.watchers.get(workspaceId) ?? []) watcher.push(records);
    for (const listener of this.appendListeners) listener(workspaceId, records);
  }
}
