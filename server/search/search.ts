// Search (SPEC 4.1): the walk happens here, on the main thread, through the
// workspace module; batches of files (names in directories the walk holds
// open) go to the pool, whose workers open, read and scan them; results come
// back per batch and are yielded in walk order.
import { setMaxListeners } from "node:events";
import { globMatcher } from "../tools/glob.js";
import { fail, FileToolsError } from "../errors.js";
import { countArgument } from "../tools/arguments.js";
import { displayPath, parsePath } from "../workspace/paths.js";
import type { Workspace } from "../workspace/workspace.js";
import { compilePattern } from "./pattern.js";
import type { SearchPool } from "./pool.js";
import type { EncodedMatches } from "./match-wire.js";
import type { OutputMode, ScanOptions } from "./scan.js";
import { FILE_KINDS, newLease, revokeTask, type BatchResult, type FileHit, type SearchTask, type TaskFiles } from "./worker.js";

export const DEFAULT_MAX_RESULTS = 100;
export const MAX_RESULTS_LIMIT = 10_000;
export const MAX_CONTEXT_LINES = 1000;
/** Globs an include or an exclude list holds at most. */
export const MAX_GLOBS = 100;
/** The server's time budget when the client sets no (nearer) deadline. */
export const DEFAULT_BUDGET_MS = 30_000;

/**
 * The search budget: the server's default, or less when the client's deadline
 * is nearer, keeping back a margin (a tenth of the time left, 50 ms to 1 s) so
 * that the summary with timed_out still reaches the client.
 */
export function searchBudgetMs(deadline: Date | undefined, now = Date.now()): number {
  if (!deadline) return DEFAULT_BUDGET_MS;
  const left = deadline.getTime() - now;
  const margin = Math.min(1000, Math.max(50, left / 10));
  return Math.max(1, Math.min(DEFAULT_BUDGET_MS, left - margin));
}

/**
 * Files per task: few enough at first that the first results come soon and a
 * small tree is shared among the workers, then doubling up to 512 (a task
 * costs a message each way and some main-thread work).
 */
const batchFiles = (n: number) => Math.min(512, 32 * 2 ** n);

/** Files handed to the pool as one task. */
interface FileBatch {
  paths: string[];
  files: TaskFiles;
  /** Closes the files, or lets their directories go. */
  release(): unknown;
}

/** Files in sorted path order, or as the workers finish them (SearchOrder in the proto). */
export type ResultOrder = "path" | "found";

export interface SearchOptions {
  path: string;
  pattern: string;
  fixedStrings: boolean;
  caseInsensitive: boolean;
  include: readonly string[];
  exclude: readonly string[];
  contextBefore: number;
  contextAfter: number;
  maxResults?: number;
  maxFileSize?: bigint;
  respectGitignore?: boolean;
  mode: OutputMode;
  /** Unset = "path". */
  order?: ResultOrder;
}

export type SearchEvent =
  /** Consecutive matches of one file, as the workers encoded them (match-wire.ts); at least one. */
  | { kind: "matches"; path: string; matches: EncodedMatches }
  | { kind: "file"; path: string }
  | { kind: "count"; path: string; count: number };

export interface SearchSummary {
  filesSearched: number;
  filesMatched: number;
  matches: number;
  binarySkipped: number;
  tooLargeSkipped: number;
  bytesSearched: number;
  truncated: boolean;
  timedOut: boolean;
}

interface Batch {
  paths: string[];
  result: Promise<BatchResult>;
  /** The results its worker has found so far (SearchTask.progress). */
  progress: Int32Array;
  /** Its task has finished: its results are in `found`. */
  done: boolean;
  /** Its task has finished or failed. */
  settled: boolean;
}

/**
 * Yields results in walk order (or, in found order, each finished task's as
 * soon as it is the oldest finished one), then returns the summary: each yield is what
 * one finished task adds (never empty), so that a caller can send it on at
 * once, in as few messages as it likes. The search stops at `budgetMs`
 * (summary.timedOut; workers still busy are terminated) and when `signal`
 * aborts (the abort reason is thrown).
 */
export async function* search(
  workspace: Workspace,
  pool: SearchPool,
  options: SearchOptions,
  signal: AbortSignal,
  budgetMs: number,
): AsyncGenerator<SearchEvent[], SearchSummary> {
  const parts = parsePath(options.path);
  const pattern = compilePattern(options.pattern, options);
  const maxResults = countArgument("max_results", options.maxResults, DEFAULT_MAX_RESULTS, MAX_RESULTS_LIMIT) || DEFAULT_MAX_RESULTS;
  const before = countArgument("context_before", options.contextBefore, 0, MAX_CONTEXT_LINES);
  const after = countArgument("context_after", options.contextAfter, 0, MAX_CONTEXT_LINES);
  const maxFileSize = countArgument("max_file_size", options.maxFileSize, 0);
  const inFoundOrder = options.order === "found";
  const included = globs("include", options.include);
  const excluded = globs("exclude", options.exclude);

  const summary: SearchSummary = {
    filesSearched: 0,
    filesMatched: 0,
    matches: 0,
    binarySkipped: 0,
    tooLargeSkipped: 0,
    bytesSearched: 0,
    truncated: false,
    timedOut: false,
  };
  const stop = new AbortController();
  const timer = setTimeout(() => {
    summary.timedOut = true;
    stop.abort(new FileToolsError("SEARCH_TIMEOUT", "the search's time budget is spent"));
  }, Math.max(1, budgetMs));
  const taskSignal = AbortSignal.any([signal, stop.signal]);
  const inFlight = new Set<Promise<unknown>>();
  const window = pool.threads * 4;
  // The pool listens to it once per task in flight, up to `window` of them: with 4 workers or
  // more, Node's default of 10 printed a MaxListenersExceededWarning for every search.
  setMaxListeners(window + 1, taskSignal);
  const queue: Batch[] = [];
  let reported = 0;
  /** Results in the batches done so far, sent or not; more than max_results stop the walk. */
  let found = 0;
  /** Once max_results is reached, any further result only proves truncation. */
  let full = false;

  const dispatch = (batch: FileBatch) => {
    // Every batch before this one is either done (its results are in `found`) or running: the
    // worker reads the running ones' progress as it grows, so that two tasks on two workers do
    // not both gather a whole max_results (10,000 lines of a common word: half the daemon's CPU).
    // In found order this task may be reported before those it counted on: it then leaves the
    // rest of max_results to them (consume), and what they found is real, so they will fill it.
    const progress = new Int32Array(new SharedArrayBuffer(4));
    const lease = newLease();
    const task: SearchTask = {
      pattern,
      options: { mode: options.mode, before, after, limit: maxResults } satisfies ScanOptions,
      foundBefore: found,
      running: queue.filter((earlier) => !earlier.done).map((earlier) => earlier.progress.buffer as SharedArrayBuffer),
      progress: progress.buffer as SharedArrayBuffer,
      maxFileSize,
      files: batch.files,
      paths: batch.paths.join("\0"),
      lease: lease.buffer as SharedArrayBuffer,
    };
    const result = pool.run(task, taskSignal);
    const batchOf: Batch = { paths: batch.paths, result, progress, done: false, settled: false };
    result.then(
      (done) => {
        found += done.hits.reduce((n, hit) => n + resultsIn(hit, options.mode), 0);
        batchOf.done = true;
        batchOf.settled = true;
      },
      () => {
        batchOf.settled = true;
      },
    );
    const releaseAll = async () => {
      try {
        await batch.release();
      } catch {
        // nothing more to do about a directory that fails to close
      }
    };
    // Descriptors and directories are let go once no worker can use them: the task is done,
    // or it failed or was aborted and the worker that started it (if one did) has exited.
    const settled = result.then(releaseAll, async () => {
      const worker = revokeTask(lease);
      if (worker !== null) await pool.exited(worker);
      await releaseAll();
    });
    inFlight.add(settled);
    void settled.then(() => inFlight.delete(settled));
    queue.push(batchOf);
  };

  /** The batch to report next, taken off the queue: the oldest, or in found order the oldest finished one (once one is). */
  async function next(): Promise<Batch> {
    if (!inFoundOrder) return queue.shift()!;
    if (!queue.some((batch) => batch.settled)) await Promise.race(queue.map((batch) => batch.result.then(ignore, ignore)));
    return queue.splice(queue.findIndex((batch) => batch.settled), 1)[0]!;
  }

  /** Consumes the next batch, yielding its results; returns false when the search must stop. */
  async function* drain(): AsyncGenerator<SearchEvent[], boolean> {
    const batch = await next();
    let result: BatchResult;
    try {
      result = await batch.result;
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (summary.timedOut) return false;
      throw error;
    }
    const events: SearchEvent[] = [];
    const more = consume(batch, result, events);
    if (events.length > 0) yield events;
    return more;
  }

  /** Adds a finished batch to the summary and its results to `events`; false when the search must stop. */
  function consume(batch: Batch, result: BatchResult, events: SearchEvent[]): boolean {
    let next = 0; // the next of `hits`
    for (let i = 0; i < result.kinds.length; i++) {
      const kind = FILE_KINDS[result.kinds[i]!];
      if (kind === "binary") {
        summary.binarySkipped++;
        continue;
      }
      if (kind === "too_large") {
        summary.tooLargeSkipped++;
        continue;
      }
      if (kind === "skipped") continue;
      summary.filesSearched++;
      summary.bytesSearched += result.bytes[i]!;
      if (result.hits[next]?.index !== i) continue;
      const outcome = result.hits[next++]!;
      const path = batch.paths[i]!;
      if (full) {
        summary.truncated = true;
        return false;
      }
      if (options.mode === "content") {
        const encoded = outcome.matches!;
        const { bytes, ends } = encoded;
        const sent = Math.min(ends.length, maxResults - reported);
        if (sent > 0) {
          events.push({ kind: "matches", path, matches: sent === ends.length ? encoded : { bytes: bytes.subarray(0, ends[sent - 1]), ends: ends.slice(0, sent) } });
          summary.filesMatched++;
        }
        reported += sent;
        summary.matches += sent;
        if (sent < ends.length || outcome.more) {
          summary.truncated = true;
          // In path order nothing after this file may come; in found order the task may have
          // stopped because others (not yet reported) had found enough: their results follow.
          if (!inFoundOrder || reported === maxResults) return false;
        }
      } else {
        reported++;
        summary.filesMatched++;
        summary.matches += outcome.count;
        events.push(options.mode === "files" ? { kind: "file", path } : { kind: "count", path, count: outcome.count });
      }
      if (reported === maxResults) full = true;
    }
    return true;
  }

  try {
    const target = await workspace.stat(parts);
    let single: FileBatch | null = null;
    if (target.type !== "directory") {
      try {
        const file = await workspace.openFile(parts);
        single = { paths: [target.path], files: { fd: file.fd }, release: () => file.close() };
        if (maxFileSize > 0 && file.size > maxFileSize) {
          await file.close();
          summary.tooLargeSkipped++;
          return summary;
        }
      } catch (error) {
        if (!(error instanceof FileToolsError && error.reason === "IS_A_DIRECTORY")) throw error;
      }
    }
    if (single) {
      dispatch(single);
    } else {
      const prefixLength = parts.length === 0 ? 1 : displayPath(parts).length + 1; // of the shown (escaped) paths
      const batches = workspace.heldFiles(parts, {
        includeHidden: true,
        respectGitignore: options.respectGitignore ?? true,
        prune: (path) => excluded(path.slice(prefixLength), false),
        want: (path) => included(path.slice(prefixLength), true) && !excluded(path.slice(prefixLength), false),
        batchFiles,
        unsorted: inFoundOrder,
      });
      walking: for await (const held of batches) {
        if (stop.signal.aborted || signal.aborted) {
          held.release();
          break;
        }
        dispatch({ paths: held.paths, files: { dirFds: Int32Array.from(held.dirFds), names: held.names.join("\0") }, release: held.release });
        while (queue.length >= window) {
          if (!(yield* drain())) break walking;
        }
        if (found > maxResults) break; // what is queued holds enough
      }
    }
    while (queue.length > 0) {
      if (!(yield* drain())) break;
    }
    if (signal.aborted) throw signal.reason;
    return summary;
  } finally {
    // Batches left behind (max_results reached, timed out, cancelled) are not
    // waited for; the budget still bounds them, then the timer goes.
    for (const left of queue) left.result.catch(() => {});
    if (signal.aborted) stop.abort(signal.reason);
    void Promise.allSettled([...inFlight]).then(() => clearTimeout(timer));
  }
}

function ignore(): void {}

/** What one matching file adds to the results: its reported matches (and one for more), or 1. */
function resultsIn(hit: FileHit, mode: OutputMode): number {
  return mode === "content" ? hit.matches!.ends.length + (hit.more ? 1 : 0) : 1;
}

/**
 * Glob lists, as ripgrep's -g: a glob without a slash matches a name at any
 * depth; one with a slash matches the path relative to the searched directory.
 */
function globs(name: string, patterns: readonly string[]): (path: string, emptyMeans: boolean) => boolean {
  // Every walked file is tested against each (300 includes over 100,000 names held the daemon 4.7 s).
  if (patterns.length > MAX_GLOBS) fail("INVALID_ARGUMENT", `${name}: at most ${MAX_GLOBS} globs, not ${patterns.length}`);
  const list = patterns.filter((p) => p !== "");
  if (list.length === 0) return (_path, emptyMeans) => emptyMeans;
  const never = () => false;
  const withSlash = list.filter((p) => p.includes("/")).map((p) => p.replace(/^\/+/, "").replace(/\/+$/, ""));
  const names = list.filter((p) => !p.includes("/"));
  const full = withSlash.length > 0 ? globMatcher(withSlash, name) : never;
  const base = names.length > 0 ? globMatcher(names, name) : never;
  return (path) => full(path) || base(path.slice(path.lastIndexOf("/") + 1));
}
