// Line matching over one file's content, fed as segments of whole lines
// (no I/O here; the worker reads and feeds). Semantics follow `grep -n`:
// lines are split at LF (a CR stays in the line), a line matches when the
// pattern matches inside it, and context lines are never sent twice: `before`
// stops at the previous match's lines, `after` stops at the next matching line.
import { isAscii } from "node:buffer";
import type { PatternSpec } from "./pattern.js";

/** A line (or context line) longer than this many characters is cut. */
export const MAX_LINE_CHARS = 500;

export type OutputMode = "content" | "files" | "count";

export interface ScanOptions {
  mode: OutputMode;
  before: number;
  after: number;
  /** Content mode: matches to report at most (the scan stops after one more). */
  limit: number;
}

export interface LineMatch {
  line: number;
  /** 1-based, in code points. */
  column: number;
  text: string;
  cut: boolean;
  before: string[];
  after: string[];
}

export interface ScanResult {
  /** Matching lines found (content: reported ones; files: 1 at most). */
  count: number;
  matches: LineMatch[];
  /** Content mode: another matching line exists beyond `limit`. */
  more: boolean;
}

/** Cuts a line to MAX_LINE_CHARS code points. */
export function cutLine(text: string): { text: string; cut: boolean } {
  if (text.length <= MAX_LINE_CHARS) return { text, cut: false };
  let units = 0;
  for (let points = 0; points < MAX_LINE_CHARS && units < text.length; points++) {
    const code = text.charCodeAt(units);
    units += code >= 0xd800 && code <= 0xdbff && units + 1 < text.length ? 2 : 1;
  }
  return units < text.length ? { text: text.slice(0, units), cut: true } : { text, cut: false };
}

function codePoints(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0xdc00 || code > 0xdfff) n++;
  }
  return n;
}

/** A run of whole lines, searched either as bytes or as text. */
interface Segment {
  readonly length: number;
  /** Position of a match inside a line that starts at or after `from` (a line start), or -1. */
  nextHit(from: number): number;
  lineStart(pos: number): number;
  /** Index of the line's LF, or length. */
  lineEnd(pos: number): number;
  countNewlines(from: number, to: number): number;
  /** The line [from, to) decoded, cut when long. */
  line(from: number, to: number): { text: string; cut: boolean };
  column(lineStart: number, pos: number): number;
  /** Whether a line starts at `length` (false when the segment is empty or ends with LF). */
  readonly hasLineAtEnd: boolean;
}

const LF = 0x0a;

class ByteSegment implements Segment {
  readonly length: number;
  readonly hasLineAtEnd: boolean;
  constructor(
    private readonly buf: Buffer,
    private readonly needle: Buffer,
  ) {
    this.length = buf.length;
    this.hasLineAtEnd = false;
  }
  nextHit(from: number): number {
    const hit = this.buf.indexOf(this.needle, from);
    if (hit < 0 || (hit === this.length && (this.length === 0 || this.buf[this.length - 1] === LF))) return -1;
    return hit;
  }
  lineStart(pos: number): number {
    return pos === 0 ? 0 : this.buf.lastIndexOf(LF, pos - 1) + 1;
  }
  lineEnd(pos: number): number {
    const end = this.buf.indexOf(LF, pos);
    return end < 0 ? this.length : end;
  }
  countNewlines(from: number, to: number): number {
    let n = 0;
    const buf = this.buf;
    for (let i = buf.indexOf(LF, from); i >= 0 && i < to; i = buf.indexOf(LF, i + 1)) n++;
    return n;
  }
  line(from: number, to: number): { text: string; cut: boolean } {
    // 4 bytes per code point at most: decode just enough to cut.
    const end = Math.min(to, from + MAX_LINE_CHARS * 4 + 4);
    const decoded = cutLine(this.buf.toString("utf8", from, end));
    return end < to && !decoded.cut ? cutLine(this.buf.toString("utf8", from, to)) : decoded;
  }
  column(lineStart: number, pos: number): number {
    return codePoints(this.buf.toString("utf8", lineStart, pos)) + 1;
  }
}

class TextSegment implements Segment {
  readonly length: number;
  readonly hasLineAtEnd: boolean;
  constructor(
    private readonly text: string,
    private readonly re: RegExp,
    private readonly lineRe: RegExp,
  ) {
    this.length = text.length;
    this.hasLineAtEnd = text.length > 0 && text.charCodeAt(text.length - 1) !== LF;
  }
  nextHit(from: number): number {
    const { text, re } = this;
    while (from <= this.length) {
      re.lastIndex = from;
      const m = re.exec(text);
      if (!m) return -1;
      const p = m.index;
      if (p === this.length && !this.hasLineAtEnd) return -1;
      const end = this.lineEnd(p);
      if (p + m[0].length <= end) return p;
      // The match runs past the line's end (\s or [^x] took the LF): does the line match alone?
      const start = this.lineStart(p);
      this.lineRe.lastIndex = 0;
      const alone = this.lineRe.exec(text.slice(start, end));
      if (alone) return start + alone.index;
      from = end + 1;
    }
    return -1;
  }
  lineStart(pos: number): number {
    return pos === 0 ? 0 : this.text.lastIndexOf("\n", pos - 1) + 1;
  }
  lineEnd(pos: number): number {
    const end = this.text.indexOf("\n", pos);
    return end < 0 ? this.length : end;
  }
  countNewlines(from: number, to: number): number {
    let n = 0;
    const text = this.text;
    for (let i = text.indexOf("\n", from); i >= 0 && i < to; i = text.indexOf("\n", i + 1)) n++;
    return n;
  }
  line(from: number, to: number): { text: string; cut: boolean } {
    // Two UTF-16 units per code point at most: slice just enough to cut.
    const end = Math.min(to, from + MAX_LINE_CHARS * 2);
    const head = cutLine(this.text.slice(from, end));
    return end < to ? { text: head.text, cut: true } : head;
  }
  column(lineStart: number, pos: number): number {
    return codePoints(this.text.slice(lineStart, pos)) + 1;
  }
}

/** Builds the segments of one file and keeps the matching state across them. */
export class Matcher {
  private readonly needle: Buffer | null;
  private readonly re: RegExp | null;
  private readonly lineRe: RegExp | null;

  constructor(spec: PatternSpec) {
    if (spec.kind === "literal") {
      this.needle = Buffer.from(spec.needle, "utf8");
      this.re = this.lineRe = null;
    } else {
      this.needle = null;
      this.re = new RegExp(spec.source, spec.flags);
      this.lineRe = new RegExp(spec.source, spec.flags.replace("g", ""));
    }
  }

  /** Raw bytes can be searched without decoding (a literal). */
  get searchesBytes(): boolean {
    return this.needle !== null;
  }

  segment(bytes: Buffer): Segment {
    if (this.needle) return new ByteSegment(bytes, this.needle);
    // ASCII decodes the same as Latin-1, which V8 copies without UTF-8 decoding (twice as fast).
    const text = isAscii(bytes) ? bytes.toString("latin1") : bytes.toString("utf8");
    return new TextSegment(text, this.re!, this.lineRe!);
  }

  textSegment(text: string): Segment {
    if (this.re) return new TextSegment(text, this.re, this.lineRe!);
    const escaped = this.needle!.toString("utf8").replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");
    return new TextSegment(text, new RegExp(escaped, "gm"), new RegExp(escaped, "m"));
  }
}

interface Pending {
  match: LineMatch;
  remaining: number;
}

/** The scan of one file: feed segments of whole lines in order, then read `result`. */
export class FileScan {
  readonly result: ScanResult = { count: 0, matches: [], more: false };
  /** No need to feed more (files mode found one, or the limit was passed). */
  done = false;
  private firstLine = 1;
  private lastSent = 0;
  private tail: { n: number; text: string }[] = [];
  private pending: Pending | null = null;

  constructor(private readonly options: ScanOptions) {}

  /** `last`: no segment follows (saves counting the lines of a file's end). */
  feed(seg: Segment, last = false): void {
    let pos = 0;
    let lineAtPos = this.firstLine;
    while (!this.done) {
      const hit = seg.nextHit(pos);
      if (hit < 0) break;
      const start = seg.lineStart(hit);
      const end = seg.lineEnd(hit);
      const n = lineAtPos + seg.countNewlines(pos, start);
      this.fillPending(seg, pos, start, lineAtPos);
      this.onMatch(seg, n, start, end, hit);
      pos = end + 1;
      lineAtPos = n + 1;
    }
    if (this.done) return;
    const to = seg.length;
    if (pos < to) this.fillPending(seg, pos, to, lineAtPos);
    if (last) return;
    this.firstLine = lineAtPos + (pos < to ? seg.countNewlines(pos, to) : 0);
    if (this.options.before > 0 && this.options.mode === "content") this.keepTail(seg, this.firstLine);
  }

  private onMatch(seg: Segment, n: number, start: number, end: number, hit: number): void {
    const { mode, before, after, limit } = this.options;
    if (mode === "files") {
      this.result.count = 1;
      this.done = true;
      return;
    }
    if (mode === "count") {
      this.result.count++;
      return;
    }
    if (this.result.matches.length >= limit) {
      this.result.more = true;
      this.done = true;
      return;
    }
    this.result.count++;
    const lines: string[] = [];
    let cur = start;
    let k = n;
    while (lines.length < before && k - 1 > this.lastSent && cur > 0) {
      const prevStart = seg.lineStart(cur - 1);
      lines.push(seg.line(prevStart, cur - 1).text);
      cur = prevStart;
      k--;
    }
    if (lines.length < before && cur === 0) {
      for (let t = this.tail.length - 1; t >= 0 && lines.length < before; t--) {
        const entry = this.tail[t]!;
        if (entry.n !== k - 1 || entry.n <= this.lastSent) break;
        lines.push(entry.text);
        k--;
      }
    }
    const { text, cut } = seg.line(start, end);
    const match: LineMatch = { line: n, column: seg.column(start, hit), text, cut, before: lines.reverse(), after: [] };
    this.result.matches.push(match);
    this.lastSent = n;
    this.pending = after > 0 ? { match, remaining: after } : null;
  }

  /** Gives the pending match its after-context from the lines in [from, to). */
  private fillPending(seg: Segment, from: number, to: number, lineAtFrom: number): void {
    const pending = this.pending;
    if (!pending) return;
    while (pending.remaining > 0 && from < to) {
      const end = seg.lineEnd(from);
      pending.match.after.push(seg.line(from, end).text);
      this.lastSent = lineAtFrom;
      pending.remaining--;
      from = end + 1;
      lineAtFrom++;
    }
    if (pending.remaining === 0) this.pending = null;
  }

  /** Keeps the segment's last `before` lines for the next segment's first matches. */
  private keepTail(seg: Segment, nextLine: number): void {
    const want = this.options.before;
    const lines: { n: number; text: string }[] = [];
    let cur = seg.length;
    let n = nextLine;
    if (seg.hasLineAtEnd) {
      // the final line without LF: it is line `nextLine` itself
      const start = seg.lineStart(cur);
      lines.push({ n, text: seg.line(start, cur).text });
      cur = start;
    }
    while (lines.length < want && cur > 0) {
      const start = seg.lineStart(cur - 1);
      n--;
      lines.push({ n, text: seg.line(start, cur - 1).text });
      cur = start;
    }
    this.tail = [...this.tail, ...lines.reverse()].slice(-want);
  }
}
