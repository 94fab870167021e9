// The rules of .gitignore files, as walks apply them: parsed from a file's
// text, chained from the root down, tested against each entry. No file-system
// access: the live walk (walk.ts) reads the files through held descriptors, a
// walk of a stored snapshot (snapshots/at-snapshot.ts) from the store.
import ignore, { type Ignore } from "ignore";
import type { Components } from "./paths.js";
import { displayPath } from "./paths.js";

/** A .gitignore larger than this is not applied. */
export const MAX_GITIGNORE_BYTES = 1 << 20;

// A .gitignore line with more than one "/**/" inside is left out: the ignore
// library's expressions for them backtrack along a deep path (two took 3.2 s
// to list a chain of 1,000 directories, three did not end, holding the
// daemon's thread). One is ~0.4 s there, and so is any rule a repository
// really writes ("**/build/**" has none inside).
const MAX_INNER_GLOBSTARS = 1;
/** Rules of one .gitignore applied (the first ones; a repository's rarely pass a few hundred). */
const MAX_GITIGNORE_RULES = 2000;
const INNER_GLOBSTAR = /\/\*\*(?=\/)/g;

/** The rules of a .gitignore whose text is `text`. */
export function gitignoreRules(text: string): Ignore {
  // "***" is a globstar to the library too (and slipped past the count as such).
  const lines = text.split(/\r?\n/).map((line) => line.replace(/\*{3,}/g, "**"));
  const rules = lines.filter((line) => line.trim() !== "" && !line.startsWith("#"));
  // Each entry is tested against every rule: 105,425 of them held the daemon 6 s for 20 files.
  return ignore().add(rules.slice(0, MAX_GITIGNORE_RULES).filter((line) => (line.match(INNER_GLOBSTAR)?.length ?? 0) <= MAX_INNER_GLOBSTARS));
}

/** The .gitignore rules of one directory, which apply to paths below it; a chain up to the root (one walk's, shared by its directories). */
export interface IgnoreLevel {
  /** Characters of a display path to drop for the path relative to the level's directory. */
  prefix: number;
  rules: Ignore;
  parent: IgnoreLevel | null;
  /** The copy of `rules` the walk's directories test with now (see forDirectory), and how many have. */
  copy?: { rules: Ignore; directories: number };
}

export function ignoreLevel(base: Components, rules: Ignore, parent: IgnoreLevel | null): IgnoreLevel {
  return { prefix: base.length === 0 ? 1 : displayPath(base).length + 1, rules, parent };
}

export interface IgnoreTest {
  prefix: number;
  rules: Ignore;
}

/**
 * The levels' rules for testing one directory's entries, root first: copies
 * of the compiled rules, each used by DIRECTORIES_PER_COPY directories at
 * most, because an Ignore keeps every path it tested in a cache for its
 * lifetime. One instance over a whole walk held ~20,000 paths (and most of
 * the daemon's heap growth during a search); a copy per directory was a
 * quarter of what .gitignore costs a walk (1,488 directories, 6,000 files:
 * 28 ms of CPU without .gitignore, 49-52 ms with a copy per directory,
 * 44-46 ms with these).
 */
export function forDirectory(levels: IgnoreLevel | null): IgnoreTest[] {
  const tests: IgnoreTest[] = [];
  for (let level = levels; level; level = level.parent) {
    if (!level.copy || level.copy.directories === DIRECTORIES_PER_COPY) level.copy = { rules: ignore().add(level.rules), directories: 0 };
    level.copy.directories++;
    tests.push({ prefix: level.prefix, rules: level.copy.rules });
  }
  return tests.reverse();
}

/** Directories that test their entries with one copy of a level's rules: its cache holds their paths and their parents'. */
const DIRECTORIES_PER_COPY = 64;

/** Whether the entry `name` (a held name) at the display path `path` is ignored. */
export function isIgnored(tests: readonly IgnoreTest[], path: string, name: string, isDirectory: boolean): boolean {
  if (isDirectory && name === ".git") return true;
  let ignored = false;
  for (const level of tests) {
    const relative = isDirectory ? path.slice(level.prefix) + "/" : path.slice(level.prefix);
    const verdict = level.rules.test(relative);
    if (verdict.ignored) ignored = true;
    else if (verdict.unignored) ignored = false;
  }
  return ignored;
}
