// List: a walk of the workspace module, filtered by a glob and capped.
import type { ReadSource } from "./source.js";
import type { Entry } from "../workspace/entry.js";
import { displayPath, parsePath } from "../workspace/paths.js";
import { globMatcher } from "./glob.js";
import { countArgument } from "./arguments.js";

export const DEFAULT_MAX_ENTRIES = 10_000;
export const MAX_ENTRIES_LIMIT = 100_000;

export interface ListOptions {
  pattern: string;
  recursive: boolean;
  maxDepth?: number;
  includeHidden?: boolean;
  respectGitignore?: boolean;
  maxEntries?: number;
}

export interface ListSummary {
  total: number;
  truncated: boolean;
}

/**
 * Yields matching entries, then returns the summary. Once `signal` aborts it
 * throws the abort's reason at the next entry: a cancelled List walks no
 * further (the caller batches entries, and would otherwise finish a batch
 * nobody reads).
 */
export async function* listEntries(source: ReadSource, rawPath: string, options: ListOptions, signal: AbortSignal): AsyncGenerator<Entry, ListSummary> {
  signal.throwIfAborted(); // cancelled before it began: not even the directory is read
  const parts = parsePath(rawPath);
  const maxEntries = countArgument("max_entries", options.maxEntries, DEFAULT_MAX_ENTRIES, MAX_ENTRIES_LIMIT) || DEFAULT_MAX_ENTRIES;
  const maxDepth = countArgument("max_depth", options.maxDepth, 0);
  const matches = options.pattern === "" ? () => true : globMatcher(options.pattern, "pattern");
  const prefixLength = parts.length === 0 ? 1 : displayPath(parts).length + 1; // of the shown (escaped) paths
  const walk = source.walk(parts, {
    recursive: options.recursive,
    maxDepth,
    includeHidden: options.includeHidden ?? true,
    respectGitignore: options.respectGitignore ?? true,
  });
  let total = 0;
  for await (const entry of walk) {
    signal.throwIfAborted();
    if (!matches(entry.path.slice(prefixLength))) continue;
    if (total === maxEntries) return { total, truncated: true }; // closes the walk
    total++;
    yield entry;
  }
  return { total, truncated: false };
}
