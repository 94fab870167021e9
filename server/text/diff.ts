// The unified diff an edit returns, built from where the edit's replacements
// landed rather than by diffing the whole text: a diff library's cost grows
// with the text times the number of changed lines (Myers), so a replace_all
// on every line of a 400 KB file held the daemon's thread for hours. Here
// only the stretches around each change go through the library, each with a
// bound on its work; the rest is copied, and the text stops at
// DIFF_MAX_BYTES (at a line, the last hunk's counts those of its lines
// shown), which the response says.

import { FILE_HEADERS_ONLY, formatPatch, structuredPatch, type StructuredPatchHunk } from "diff";
import { bomLength, codeUnitSize, decodeText, type TextEncoding } from "./encoding.js";

/** A stretch of the new bytes copied from the old ones: old[from, from + length) = new[to, to + length). */
export interface Copy {
  from: number;
  to: number;
  length: number;
}

/** Lines of context around each change. */
const DIFF_CONTEXT = 3;
/** The diff's text stops at the line that would take it past this (a model reads it; a message carries it). */
export const DIFF_MAX_BYTES = 1 << 20;
/** Bound on the library's work for one group of changes: (old + new lines) × edit length. */
const DIFF_WORK = 4_000_000;

/** At most, "@@ -a,b +c,d @@" with its newline. */
const HUNK_HEADER_BYTES = 64;
const NO_NEWLINE = "\\ No newline at end of file";

/** Where the unchanged bytes are after replacing `removed` bytes at each of `positions` (ascending, apart) with `inserted` bytes. */
export function copiesAfterSplice(copies: readonly Copy[], positions: readonly number[], removed: number, inserted: number): Copy[] {
  const out: Copy[] = [];
  let before = 0; // replacements wholly before `start`
  for (const copy of copies) {
    const end = copy.to + copy.length;
    let start = copy.to;
    while (start < end) {
      while (before < positions.length && positions[before]! + removed <= start) before++;
      const cut = before < positions.length ? Math.min(end, positions[before]!) : end;
      if (cut > start) out.push({ from: copy.from + (start - copy.to), to: start + before * (inserted - removed), length: cut - start });
      if (cut === end) break;
      start = positions[before]! + removed;
    }
  }
  return out;
}

export interface UnifiedDiff {
  /** "a/PATH" and "b/PATH" headers, then the hunks (none when the text did not change). */
  text: string;
  /** The diff stops at DIFF_MAX_BYTES: changes after its last line are left out. */
  truncated: boolean;
}

/** A change: old[oldStart, oldEnd) became new[newStart, newEnd); in a block, both ends lie on line starts. */
interface Change {
  oldStart: number;
  oldEnd: number;
  newStart: number;
  newEnd: number;
}

/**
 * Unified diff (DIFF_CONTEXT lines of context, "a/" and "b/" headers) of
 * `before` → `after`, given the bytes `after` copied from `before` (the rest
 * is what changed). The BOM is left out.
 */
export function unifiedDiff(before: Buffer, after: Buffer, copies: readonly Copy[], encoding: TextEncoding, displayPath: string): UnifiedDiff {
  const bom = bomLength(before, encoding);
  const lines = new Lines(before.subarray(bom), after.subarray(bom), codeUnitSize(encoding));
  const blocks = lineBlocks(changesBetween(copies, bom, lines), lines);
  const path = displayPath.replace(/^\/+/, "");
  const patch = { oldFileName: `a/${path}`, newFileName: `b/${path}`, oldHeader: undefined, newHeader: undefined, hunks: [] as StructuredPatchHunk[] };
  let room = DIFF_MAX_BYTES - Buffer.byteLength(formatPatch(patch, FILE_HEADERS_ONLY));
  let truncated = false;
  outer: for (const group of groups(blocks, lines)) {
    for (const hunk of hunksOf(group, lines, encoding, room)) {
      const fits = cutToFit(hunk, room);
      if (fits.lines.length > 0) patch.hunks.push(fits);
      if (fits !== hunk) {
        truncated = true;
        break outer;
      }
      room -= hunkBytes(hunk);
    }
  }
  return { text: formatPatch(patch, FILE_HEADERS_ONLY), truncated };
}

function hunkBytes(hunk: StructuredPatchHunk): number {
  return hunk.lines.reduce((n, line) => n + Buffer.byteLength(line) + 1, HUNK_HEADER_BYTES);
}

/** The hunk if it fits in `room` bytes; else its lines that do, up to the last whole change among them, its counts those of the lines kept. */
function cutToFit(hunk: StructuredPatchHunk, room: number): StructuredPatchHunk {
  if (hunkBytes(hunk) <= room) return hunk;
  let used = HUNK_HEADER_BYTES;
  let kept = 0;
  while (kept < hunk.lines.length && used + Buffer.byteLength(hunk.lines[kept]!) + 1 <= room) used += Buffer.byteLength(hunk.lines[kept++]!) + 1;
  // Not inside a change (between its removed and added lines), nor after context.
  const at = (i: number) => hunk.lines[i]?.[0];
  const changeStartsAt = (i: number) => (at(i) === "-" && at(i - 1) !== "-") || (at(i) === "+" && (i === 0 || at(i - 1) === " "));
  while (kept > 0 && !(at(kept) === " " || changeStartsAt(kept))) kept--;
  while (kept > 0 && (at(kept - 1) === " " || (at(kept - 1) === "\\" && at(kept - 2) === " "))) kept--;
  const lines = hunk.lines.slice(0, kept);
  const counted = (prefixes: string) => lines.filter((line) => prefixes.includes(line[0]!)).length;
  return { ...hunk, lines, oldLines: counted(" -"), newLines: counted(" +") };
}

/** The old and new bytes (BOM left out), with line arithmetic on them in the encoding's code units. */
class Lines {
  private readonly newline: Buffer;
  constructor(
    readonly old: Buffer,
    readonly new_: Buffer,
    private readonly unit: 1 | 2,
  ) {
    this.newline = unit === 1 ? Buffer.from([0x0a]) : Buffer.from([0x0a, 0x00]);
  }

  /** The offset of the first newline at or after `from` (a code unit boundary), or -1. */
  private nextNewline(buf: Buffer, from: number): number {
    for (let i = buf.indexOf(this.newline, from); i !== -1; i = buf.indexOf(this.newline, i + 1)) {
      if (i % this.unit === 0) return i;
    }
    return -1;
  }

  /** Whether `at` (a code unit boundary) starts a line or ends the text. */
  atLineStart(buf: Buffer, at: number): boolean {
    if (at === 0 || at === buf.length) return true;
    return this.unit === 1 ? buf[at - 1] === 0x0a : buf[at - 2] === 0x0a && buf[at - 1] === 0x00;
  }

  /** The start of the line holding `at`. */
  lineStart(buf: Buffer, at: number): number {
    for (let i = at; i > 0; i -= this.unit) if (this.atLineStart(buf, i)) return i;
    return 0;
  }

  /** The start of the line before the one starting at `start` (> 0). */
  previousLine(buf: Buffer, start: number): number {
    return this.lineStart(buf, start - this.unit);
  }

  /** Just past the newline ending the line holding `at` (or the end of the text). */
  lineEnd(buf: Buffer, at: number): number {
    const newline = this.nextNewline(buf, at);
    return newline === -1 ? buf.length : newline + this.unit;
  }

  /** Lines in buf[from, to) (`from` a line start), counting a last one without its newline at the text's end. */
  count(buf: Buffer, from: number, to: number): number {
    let n = 0;
    let at = from;
    for (let i = this.nextNewline(buf, from); i !== -1 && i < to; i = this.nextNewline(buf, i + this.unit)) {
      n++;
      at = i + this.unit;
    }
    return to === buf.length && at < to ? n + 1 : n;
  }

  /** The text of buf[from, to), decoded. */
  text(buf: Buffer, from: number, to: number, encoding: TextEncoding): string {
    return decodeText(buf.subarray(from, to), encoding);
  }
}

/** The stretches between the copies, in BOM-less offsets. */
function changesBetween(copies: readonly Copy[], bom: number, lines: Lines): Change[] {
  const changes: Change[] = [];
  let oldAt = 0;
  let newAt = 0;
  const gap = (oldEnd: number, newEnd: number) => {
    if (oldEnd > oldAt || newEnd > newAt) changes.push({ oldStart: oldAt, oldEnd, newStart: newAt, newEnd });
  };
  for (const copy of copies) {
    // The BOM is copied (replacements start after it): only the part after it counts.
    const skip = Math.max(0, bom - copy.from);
    if (skip >= copy.length) continue;
    const from = copy.from + skip - bom;
    const to = copy.to + skip - bom;
    gap(from, to);
    oldAt = from + copy.length - skip;
    newAt = to + copy.length - skip;
  }
  gap(lines.old.length, lines.new_.length);
  return changes;
}

/**
 * The changes widened to whole lines on both sides, those that then touch
 * merged. The bytes around a change are copies, the same on both sides, so
 * a widening by k bytes on one side is k bytes on the other.
 */
function lineBlocks(changes: readonly Change[], lines: Lines): Change[] {
  const blocks: Change[] = [];
  for (const change of changes) {
    const last = blocks.at(-1);
    if (last && change.oldEnd < last.oldEnd) {
      // Within the last block's lines (many changes on one long line): what follows it there is copied.
      last.newEnd = change.newEnd + (last.oldEnd - change.oldEnd);
      continue;
    }
    const back = last && change.oldStart <= last.oldEnd ? 0 : change.oldStart - lines.lineStart(lines.old, change.oldStart);
    const aligned = lines.atLineStart(lines.old, change.oldEnd) && lines.atLineStart(lines.new_, change.newEnd);
    const forward = aligned ? 0 : lines.lineEnd(lines.old, change.oldEnd) - change.oldEnd;
    const block = { oldStart: change.oldStart - back, oldEnd: change.oldEnd + forward, newStart: change.newStart - back, newEnd: change.newEnd + forward };
    if (last && block.oldStart < last.oldEnd) {
      // Widened into the one before (they share a line): one block. Blocks on adjacent lines stay
      // apart, so that each line's old and new text come together (replace_all on every line).
      last.oldEnd = block.oldEnd;
      last.newEnd = block.newEnd;
    } else {
      blocks.push(block);
    }
  }
  return blocks;
}

/** Blocks close enough for their context to join, with their first line numbers (1-based). */
interface Group {
  blocks: Change[];
  oldLine: number;
  newLine: number;
}

/** The blocks in groups: at most 2 × DIFF_CONTEXT unchanged lines apart share a hunk (the library's rule). */
function* groups(blocks: readonly Change[], lines: Lines): Generator<Group> {
  let oldLine = 1; // the line starting at oldAt
  let oldAt = 0;
  let shift = 0; // new line numbers minus old ones, past the blocks so far
  let group: Group | undefined;
  for (const block of blocks) {
    const unchanged = lines.count(lines.old, oldAt, block.oldStart);
    oldLine += unchanged;
    if (group && unchanged <= 2 * DIFF_CONTEXT) {
      group.blocks.push(block);
    } else {
      if (group) yield group;
      group = { blocks: [block], oldLine, newLine: oldLine + shift };
    }
    const oldLines = lines.count(lines.old, block.oldStart, block.oldEnd);
    shift += lines.count(lines.new_, block.newStart, block.newEnd) - oldLines;
    oldLine += oldLines;
    oldAt = block.oldEnd;
  }
  if (group) yield group;
}

/** The group's hunks: the library's, on the group's lines and context alone, or (past its work bound) each block as removed then added lines. */
function hunksOf(group: Group, lines: Lines, encoding: TextEncoding, room: number): StructuredPatchHunk[] {
  const first = group.blocks[0]!;
  const last = group.blocks.at(-1)!;
  // DIFF_CONTEXT lines before and after: copies, the same on both sides.
  let oldFrom = first.oldStart;
  let contextBefore = 0;
  for (; contextBefore < DIFF_CONTEXT && oldFrom > 0; contextBefore++) oldFrom = lines.previousLine(lines.old, oldFrom);
  let oldTo = last.oldEnd;
  for (let i = 0; i < DIFF_CONTEXT && oldTo < lines.old.length; i++) oldTo = lines.lineEnd(lines.old, oldTo);
  const newFrom = first.newStart - (first.oldStart - oldFrom);
  const newTo = last.newEnd + (oldTo - last.oldEnd);
  const oldText = lines.text(lines.old, oldFrom, oldTo, encoding);
  const newText = lines.text(lines.new_, newFrom, newTo, encoding);
  const oldLine = group.oldLine - contextBefore;
  const newLine = group.newLine - contextBefore;

  const size = lines.count(lines.old, oldFrom, oldTo) + lines.count(lines.new_, newFrom, newTo);
  const maxEditLength = Math.max(DIFF_CONTEXT, Math.floor(DIFF_WORK / Math.max(1, size)));
  // Each block is one edit at least: past the bound already, the library is not asked.
  const patch = group.blocks.length <= maxEditLength ? structuredPatch("a", "b", oldText, newText, undefined, undefined, { context: DIFF_CONTEXT, maxEditLength }) : undefined;
  if (patch) {
    for (const hunk of patch.hunks) {
      hunk.oldStart += oldLine - 1;
      hunk.newStart += newLine - 1;
    }
    return patch.hunks;
  }
  return [blockHunk(group, lines, encoding, { oldFrom, oldTo, newFrom, newTo, oldLine, newLine }, room)];
}

/** One hunk for the group without the library: context, then each block's old lines removed and new lines added (those past `room` bytes left out). */
function blockHunk(
  group: Group,
  lines: Lines,
  encoding: TextEncoding,
  at: { oldFrom: number; oldTo: number; newFrom: number; newTo: number; oldLine: number; newLine: number },
  room: number,
): StructuredPatchHunk {
  const out: string[] = [];
  let oldLines = 0;
  let newLines = 0;
  let bytes = 0; // of `out`, as a patch's lines
  const add = (buf: Buffer, from: number, to: number, prefix: string) => {
    if (to <= from) return 0;
    const text = lines.text(buf, from, to, encoding);
    const split = text.split("\n");
    const complete = split.at(-1) === "";
    if (complete) split.pop();
    for (const line of split) {
      out.push(prefix + line);
      bytes += Buffer.byteLength(line) + 2;
    }
    if (!complete) out.push(NO_NEWLINE);
    return split.length;
  };
  let oldAt = at.oldFrom;
  for (const block of group.blocks) {
    if (bytes > room) return hunk(); // too large already: cut to fit, the rest left out
    const shared = add(lines.old, oldAt, block.oldStart, " ");
    oldLines += shared;
    newLines += shared;
    oldLines += add(lines.old, block.oldStart, block.oldEnd, "-");
    newLines += add(lines.new_, block.newStart, block.newEnd, "+");
    oldAt = block.oldEnd;
  }
  const shared = add(lines.old, oldAt, at.oldTo, " ");
  oldLines += shared;
  newLines += shared;
  return hunk();

  function hunk(): StructuredPatchHunk {
    return { oldStart: at.oldLine, oldLines, newStart: at.newLine, newLines, lines: out };
  }
}
