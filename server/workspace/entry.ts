// What the workspace module reports about a file system entry: workspace
// paths and plain values only, never a host path.
import { hash } from "node:crypto";
import type { BigIntStats } from "node:fs";

export type EntryType = "file" | "directory" | "symlink" | "other";

export interface Entry {
  /** Workspace path, "/" for the root, names escaped (see names.ts). */
  path: string;
  /** Last component ("" for the root), escaped like the path. */
  name: string;
  /** Whether the path holds an escape (`\\` or `\xHH`). */
  escaped: boolean;
  type: EntryType;
  size: bigint;
  /** Permission bits (st_mode & 0o7777). */
  mode: number;
  mtimeNs: bigint;
  /** Status change time: moves on every write, rename, chmod or new link (the stat cache's racy check). */
  ctimeNs: bigint;
  version: string;
}

export function entryFromStats(path: string, stats: BigIntStats): Entry {
  return {
    path,
    name: path === "/" ? "" : path.slice(path.lastIndexOf("/") + 1),
    escaped: path.includes("\\"),
    ...statedEntry(stats),
  };
}

/** What an entry's stats say of it: an Entry without its names. */
export type StatedEntry = Pick<Entry, "type" | "size" | "mode" | "mtimeNs" | "ctimeNs" | "version">;

export function statedEntry(stats: BigIntStats): StatedEntry {
  return {
    type: entryType(stats),
    size: stats.size,
    mode: Number(stats.mode & 0o7777n),
    mtimeNs: stats.mtimeNs,
    ctimeNs: stats.ctimeNs,
    version: versionOf(stats),
  };
}

/**
 * The version token of SPEC section 3: cheap, from identity, size and times.
 * ctime is in it because every write, rename and chmod moves it, even one
 * that restores the old mtime.
 */
export function versionOf(stats: BigIntStats): string {
  const identity = `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`;
  // One-shot: no Hash object per call (a Read computes one per file it opens).
  return hash("sha256", identity, "hex").slice(0, 16);
}

/** Whole seconds of a time in ns, as st_mtim.tv_sec has them: rounded down, before 1970 too (BigInt division rounds toward zero). */
export function wholeSeconds(ns: bigint): bigint {
  const whole = ns / 1_000_000_000n;
  return ns < whole * 1_000_000_000n ? whole - 1n : whole;
}

function entryType(stats: BigIntStats): EntryType {
  if (stats.isFile()) return "file";
  if (stats.isDirectory()) return "directory";
  if (stats.isSymbolicLink()) return "symlink";
  return "other";
}
