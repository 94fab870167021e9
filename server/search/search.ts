// Search (SPEC 4.1): the walk and the file opening happen here, on the main
// thread, through the workspace module; batches of open descriptors go to the
// pool; results come back per batch and are yielded in walk order.
import picomatch from "picomatch";
import { fail, FileToolsError } from "../errors.js";
import { countArgument } from "../tools/arguments.js";
import type { Entry } from "../workspace/entry.js";
import { parsePath } from "../workspace/paths.js";
import type { WalkEntry } from "../workspace/walk.js";
import type { Workspace } from "../workspace/workspace.js";
import { compilePattern } from "./pattern.js";
import type { SearchPool } from "./pool.js";
import type { LineMatch, OutputMode, ScanOptions } from "./scan.js";
import type { FileOutcome, SearchTask } from "./worker.js";

export const DEFAULT_MAX_RESULTS = 100;
export const MAX_RESULTS_LIMIT = 10_000;
export const MAX_CONTEXT_LINES = 1000;
/** The server's time budget when the client sets no (nearer) deadline. */
export const DEFAULT_BUDGET_MS = 30_000;

/** Files per batch, and bytes (by size at walk time) per batch: small files travel together. */
const BATCH_FILES = 64;
const BATCH_BYTES = 1 << 20;

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
}

export type SearchEvent =
  | { kind: "match"; path: string; match: LineMatch }
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
  result: Promise<FileOutcome[]>;
}

/**
 * Yields results in walk order, then returns the summary. The search stops at
 * `budgetMs` (summary.timedOut; workers still busy are terminated) and when
 * `signal` aborts (the abort reason is thrown).
 */
export async function* search(
  workspace: Workspace,
  pool: SearchPool,
  options: SearchOptions,
  signal: AbortSignal,
  budgetMs: number,
): AsyncGenerator<SearchEvent, SearchSummary> {
  const parts = parsePath(options.path);
  const pattern = compilePattern(options.pattern, options);
  const maxResults = countArgument("max_results", options.maxResults, DEFAULT_MAX_RESULTS, MAX_RESULTS_LIMIT) || DEFAULT_MAX_RESULTS;
  const before = countArgument("context_before", options.contextBefore, 0, MAX_CONTEXT_LINES);
  const after = countArgument("context_after", options.contextAfter, 0, MAX_CONTEXT_LINES);
  const maxFileSize = countArgument("max_file_size", options.maxFileSize, 0);
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
  const window = pool.threads * 2 + 1;
  const queue: Batch[] = [];
  let reported = 0;
  /** Opened files not yet handed to the pool (closed in `finally` if the search stops first). */
  let batch: { path: string; fd: number; close(): Promise<void> }[] = [];
  /** Once max_results is reached, any further result only proves truncation. */
  let full = false;

  const dispatch = (files: { path: string; fd: number; close(): Promise<void> }[]) => {
    const task: SearchTask = {
      pattern,
      options: { mode: options.mode, before, after, limit: full ? 0 : maxResults - reported } satisfies ScanOptions,
      files: files.map((f) => ({ fd: f.fd })),
    };
    const result = pool.run(task, taskSignal);
    // Descriptors are closed once the worker is done with them (or terminated).
    const settled = result.then(
      () => {},
      () => {},
    ).finally(() => Promise.all(files.map((f) => f.close().catch(() => {}))));
    inFlight.add(settled);
    void settled.then(() => inFlight.delete(settled));
    queue.push({ paths: files.map((f) => f.path), result });
  };

  /** Consumes the oldest batch; returns false when the search must stop. */
  async function* drain(): AsyncGenerator<SearchEvent, boolean> {
    const batch = queue.shift()!;
    let outcomes: FileOutcome[];
    try {
      outcomes = await batch.result;
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (summary.timedOut) return false;
      throw error;
    }
    for (let i = 0; i < outcomes.length; i++) {
      const outcome = outcomes[i]!;
      const path = batch.paths[i]!;
      if (outcome.kind === "binary") {
        summary.binarySkipped++;
        continue;
      }
      if (outcome.kind === "skipped") continue;
      summary.filesSearched++;
      summary.bytesSearched += outcome.bytes;
      if (outcome.count === 0 && !outcome.more) continue;
      if (full) {
        summary.truncated = true;
        return false;
      }
      if (options.mode === "content") {
        let sent = 0;
        for (const match of outcome.matches) {
          if (reported === maxResults) break;
          reported++;
          sent++;
          yield { kind: "match", path, match };
        }
        if (sent > 0) summary.filesMatched++;
        summary.matches += sent;
        if (sent < outcome.matches.length || outcome.more) {
          summary.truncated = true;
          return false;
        }
      } else {
        reported++;
        summary.filesMatched++;
        summary.matches += outcome.count;
        yield options.mode === "files" ? { kind: "file", path } : { kind: "count", path, count: outcome.count };
      }
      if (reported === maxResults) full = true;
    }
    return true;
  }

  try {
    const target = await workspace.stat(parts);
    let single: { path: string; fd: number; close(): Promise<void> } | null = null;
    if (target.type !== "directory") {
      try {
        const file = await workspace.openFile(parts);
        single = { path: target.path, fd: file.fd, close: () => file.close() };
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
      dispatch([single]);
    } else {
      const prefixLength = parts.length === 0 ? 1 : parts.join("/").length + 2;
      const relative = (entry: Entry) => entry.path.slice(prefixLength);
      const wanted = (entry: Entry) => included(relative(entry), true) && !excluded(relative(entry), false);
      const tooLarge = (entry: Entry) => maxFileSize > 0 && entry.size > BigInt(maxFileSize);
      const walk = workspace.walk(parts, {
        recursive: true,
        maxDepth: 0,
        includeHidden: true,
        respectGitignore: options.respectGitignore ?? true,
        prune: (dir) => excluded(relative(dir), false),
        open: (file) => wanted(file) && !tooLarge(file),
      });
      let batchBytes = 0;
      walking: for await (const entry of walk as AsyncIterable<WalkEntry>) {
        if (stop.signal.aborted || signal.aborted) {
          await entry.opened?.close();
          break;
        }
        if (entry.type !== "file" || !wanted(entry)) continue;
        if (tooLarge(entry)) {
          summary.tooLargeSkipped++;
          continue;
        }
        if (!entry.opened) continue; // vanished, or several hard links (never read: see Read)
        batch.push({ path: entry.path, fd: entry.opened.fd, close: entry.opened.close });
        batchBytes += Number(entry.size);
        if (batch.length >= BATCH_FILES || batchBytes >= BATCH_BYTES) {
          dispatch(batch);
          batch = [];
          batchBytes = 0;
          while (queue.length >= window) {
            if (!(yield* drain())) break walking;
          }
        }
      }
      if (batch.length > 0 && !stop.signal.aborted && !signal.aborted) {
        dispatch(batch);
        batch = [];
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
    await Promise.all(batch.map((f) => f.close().catch(() => {})));
    if (signal.aborted) stop.abort(signal.reason);
    void Promise.allSettled([...inFlight]).then(() => clearTimeout(timer));
  }
}

/**
 * Glob lists, as ripgrep's -g: a glob without a slash matches a name at any
 * depth; one with a slash matches the path relative to the searched directory.
 */
function globs(name: string, patterns: readonly string[]): (path: string, emptyMeans: boolean) => boolean {
  const list = patterns.filter((p) => p !== "");
  if (list.length === 0) return (_path, emptyMeans) => emptyMeans;
  const never = () => false;
  try {
    const options = { dot: true, strictBrackets: true };
    const withSlash = list.filter((p) => p.includes("/")).map((p) => p.replace(/^\/+/, "").replace(/\/+$/, ""));
    const names = list.filter((p) => !p.includes("/"));
    const full = withSlash.length > 0 ? picomatch(withSlash, options) : never;
    const base = names.length > 0 ? picomatch(names, options) : never;
    return (path) => full(path) || base(path.slice(path.lastIndexOf("/") + 1));
  } catch (error) {
    fail("INVALID_ARGUMENT", `invalid ${name} glob: ${(error as Error).message}`);
  }
}
