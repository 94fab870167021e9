// Watching a workspace's journal: an async iterator of its changes that
// resumes by itself from the last cursor it saw when the stream breaks (the
// daemon restarted, the connection dropped) or when the daemon says the
// watcher fell behind (WatchMissed): nothing is missed and nothing is seen twice
// while the journal still holds the entries (else the iterator throws
// CURSOR_OUT_OF_RANGE).
import { status as Code } from "@grpc/grpc-js";
import type { JournalEntry } from "@filetools/proto/filetools/v1/journal_pb.js";
import type { CallOptions, RawClient } from "./client.js";
import { FileToolsError } from "./errors.js";

export interface WatchOptions extends CallOptions {
  /** Only changes whose path matches one of these globs ("src/**", "*.ts"). Default: all. */
  globs?: string[];
  /** Start after this cursor (0: every change the journal holds). Default: only what happens from now on. */
  since?: bigint | number;
  /** Broken streams retried in a row before the iterator throws (default 20; 0: never resume). */
  retries?: number;
  /** Told of the daemon's notices (e.g. outside changes found by a stat scan). */
  onNotice?: (message: string) => void;
  /** Told when the history asked for has been sent and what follows is live. */
  onLive?: (cursor: bigint) => void;
}

const FIRST_BACKOFF_MS = 50;
const MAX_BACKOFF_MS = 2000;

/** The changes of workspace `id`, in order, until `options.signal` aborts (or the loop is left). */
export async function* watchChanges(raw: RawClient, id: string, options: WatchOptions = {}): AsyncGenerator<JournalEntry> {
  let cursor = options.since === undefined ? undefined : BigInt(options.since);
  const retries = options.retries ?? 20;
  let failures = 0;
  for (;;) {
    try {
      for await (const { event } of raw.journal.watch({ workspace: id, globs: options.globs ?? [], cursor }, options)) {
        failures = 0;
        if (event.case === "changes") {
          for (const entry of event.value.entries) {
            cursor = entry.cursor;
            yield entry;
          }
        } else if (event.case === "live") {
          cursor ??= event.value.cursor;
          options.onLive?.(event.value.cursor);
        } else if (event.case === "missed") {
          cursor = event.value.resumeCursor; // the stream ends next: watched again from there
        } else if (event.case === "notice") {
          options.onNotice?.(event.value.message);
        }
      }
    } catch (error) {
      if (options.signal?.aborted || !resumable(error) || ++failures > retries) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (failures - 1))));
    }
    if (options.signal?.aborted) return;
  }
}

/** A stream broken by the connection or the daemon going away (shutting down: CANCELLED, though our signal did not abort), not by the request. */
function resumable(error: unknown): boolean {
  return error instanceof FileToolsError && (error.code === Code.UNAVAILABLE || error.code === Code.CANCELLED);
}
