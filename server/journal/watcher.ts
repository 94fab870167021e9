// One watcher's live queue: the journal pushes each durable entry, the watch
// stream takes them. The queue is bounded: past `limit` entries waiting,
// further ones are counted, not kept, and once the waiting ones are taken
// the watcher is told how many it missed and where to resume (then its
// stream ends). Memory stays at `limit` entries, however slow the reader.
import type { JournalRecord } from "./records.js";

export type WatchEvent =
  | { kind: "changes"; records: JournalRecord[] }
  | { kind: "live"; cursor: number }
  | { kind: "missed"; count: number; resume: number }
  | { kind: "notice"; message: string; time: Date };

type Queued = JournalRecord | { notice: string; time: Date };

/** Entries sent in one message at most. */
const BATCH = 256;

export class Watcher {
  private queue: Queued[] = [];
  /** Entries dropped since the queue overflowed. */
  missedCount = 0;
  /** The last entry queued (or the watch's start): where a watcher that missed some resumes. */
  private position: number;
  private resume = 0;
  private wake: (() => void) | undefined;
  private finished = false;
  private readonly onAbort = () => this.wake?.();

  constructor(
    private readonly matches: (record: JournalRecord) => boolean,
    private readonly limit: number,
    start: number,
    private readonly signal: AbortSignal,
  ) {
    this.position = start;
    signal.addEventListener("abort", this.onAbort, { once: true });
  }

  push(records: readonly JournalRecord[]): void {
    for (const record of records) {
      if (record.seq <= this.position || !this.matches(record)) continue;
      if (this.missedCount > 0 || this.queue.length >= this.limit) {
        if (this.missedCount === 0) this.resume = this.position;
        this.missedCount++;
        continue;
      }
      this.queue.push(record);
      this.position = record.seq;
    }
    this.wake?.();
  }

  notice(message: string): void {
    if (this.queue.length < this.limit) this.queue.push({ notice: message, time: new Date() });
    this.wake?.();
  }

  /** The next event: queued entries (a batch), a notice, or "missed" once the queue is drained; undefined once aborted. */
  async next(): Promise<WatchEvent | undefined> {
    while (!this.signal.aborted && !this.finished) {
      const head = this.queue[0];
      if (head && "notice" in head) {
        this.queue.shift();
        return { kind: "notice", message: head.notice, time: head.time };
      }
      if (head) {
        let end = 1;
        while (end < this.queue.length && end < BATCH && !("notice" in this.queue[end]!)) end++;
        return { kind: "changes", records: this.queue.splice(0, end) as JournalRecord[] };
      }
      if (this.missedCount > 0) return { kind: "missed", count: this.missedCount, resume: this.resume };
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      this.wake = undefined;
    }
    return undefined;
  }

  /** Ends the watch (its workspace is gone): next() answers undefined once. */
  finish(): void {
    this.finished = true;
    this.wake?.();
  }

  close(): void {
    this.signal.removeEventListener("abort", this.onAbort);
    this.queue = [];
    this.wake?.();
  }
}
