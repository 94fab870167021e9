// Line matching over one file's content, fed as segments of whole lines
// (no I/O here; the worker reads and feeds). Semantics follow `grep -n`:
// lines are split at LF (a CR stays in the line), a line matches when the
// pattern matches inside it, and context lines are never sent twice: `before`
// stops at the previous match's lines, `after` stops at the next matching line.
import { isAscii } from "node:buffer";
import type { PatternSpec } from "./pattern.js";
import { FoldedLiteralFinder, LiteralFinder, TOO_COMMON } from "./find.js";

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

/** Raw bytes; subclasses find the hits. */
abstract class ByteSegment implements Segment {
  readonly length: number;
  readonly hasLineAtEnd = false;
  constructor(protected readonly buf: Buffer) {
    this.length = buf.length;
  }
  abstract nextHit(from: number): number;
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

/** A literal: found in the bytes, nothing decoded but the lines sent. */
class NeedleSegment extends ByteSegment {
  private readonly find: (from: number) => number;
  constructor(buf: Buffer, finder: LiteralFinder) {
    super(buf);
    this.find = finder.in(buf);
  }
  nextHit(from: number): number {
    if (from > this.length) return -1; // indexOf would still find an empty needle at the end
    const hit = this.find(from);
    if (hit < 0 || (hit === this.length && (this.length === 0 || this.buf[this.length - 1] === LF))) return -1;
    return hit;
  }
}

/**
 * A regex with required literals, over bytes where they are rare: only the
 * lines holding one of them (`candidates`, sorted byte positions) are decoded
 * and run through the regex.
 */
class CandidateSegment extends ByteSegment {
  private next = 0;
  /** The last match, for its column (counted in the decoded line). */
  private last = { lineStart: -1, column: 0 };
  constructor(
    buf: Buffer,
    private readonly candidates: number[],
    private readonly lineRe: RegExp,
  ) {
    super(buf);
  }
  nextHit(from: number): number {
    const { candidates } = this;
    while (this.next < candidates.length) {
      const at = candidates[this.next]!;
      if (at < from) {
        this.next++;
        continue;
      }
      const start = this.lineStart(at);
      const end = this.lineEnd(at);
      const line = this.buf.toString("utf8", start, end);
      this.lineRe.lastIndex = 0;
      const m = this.lineRe.exec(line);
      if (m) {
        const prefix = line.slice(0, m.index);
        this.last = { lineStart: start, column: codePoints(prefix) + 1 };
        return start + Buffer.byteLength(prefix);
      }
      from = end + 1;
    }
    return -1;
  }
  override column(lineStart: number, pos: number): number {
    return lineStart === this.last.lineStart ? this.last.column : super.column(lineStart, pos);
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

/** Candidate positions per byte above which a whole segment is decoded instead (a line costs more than 1 KiB of bulk decoding). */
const DENSE_CANDIDATES_PER_BYTE = 1 / 1024;

/** Builds the segments of one file and keeps the matching state across them. */
export class Matcher {
  private readonly needle: LiteralFinder | null;
  private readonly literals: (LiteralFinder | FoldedLiteralFinder)[];
  private readonly re: RegExp | null;
  private readonly lineRe: RegExp | null;

  constructor(spec: PatternSpec) {
    if (spec.kind === "literal") {
      this.needle = new LiteralFinder(Buffer.from(spec.needle, "utf8"));
      this.literals = [];
      this.re = this.lineRe = null;
    } else {
      this.needle = null;
      this.literals = (spec.literals ?? []).map((l) => (spec.foldCase ? new FoldedLiteralFinder(Buffer.from(l, "utf8")) : new LiteralFinder(Buffer.from(l, "utf8"))));
      this.re = new RegExp(spec.source, spec.flags);
      this.lineRe = new RegExp(spec.source, spec.flags.replace("g", ""));
    }
  }

  segment(bytes: Buffer): Segment {
    if (this.needle) return new NeedleSegment(bytes, this.needle);
    if (this.literals.length > 0) {
      const candidates = this.candidates(bytes);
      if (candidates) return new CandidateSegment(bytes, candidates, this.lineRe!);
    }
    // ASCII decodes the same as Latin-1, which V8 copies without UTF-8 decoding (twice as fast).
    const text = isAscii(bytes) ? bytes.toString("latin1") : bytes.toString("utf8");
    return new TextSegment(text, this.re!, this.lineRe!);
  }

  /** Sorted positions of the required literals in `bytes`, or null when they are too many to check line by line. */
  private candidates(bytes: Buffer): number[] | null {
    const most = 16 + bytes.length * DENSE_CANDIDATES_PER_BYTE;
    const found: number[] = [];
    for (const literal of this.literals) {
      const find = literal.in(bytes);
      for (let at = find(0); at !== -1; at = find(at + 1)) {
        if (found.length >= most || at === TOO_COMMON) return null;
        found.push(at);
      }
    }
    return this.literals.length > 1 ? found.sort((a, b) => a - b) : found;
  }

  textSegment(text: string): Segment {
    if (this.re) return new TextSegment(text, this.re, this.lineRe!);
    const escaped = this.needle!.needle.toString("utf8").replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");
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
    if (this.options.mode !== "content") {
      this.countLines(seg);
      return;
    }
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

  /** Count and files modes: matching lines only, no line numbers (the costly part of a common pattern). */
  private countLines(seg: Segment): void {
    const files = this.options.mode === "files";
    for (let hit = seg.nextHit(0); hit >= 0; hit = seg.nextHit(seg.lineEnd(hit) + 1)) {
      this.result.count++;
      if (files) {
        this.done = true;
        return;
      }
    }
  }

  private onMatch(seg: Segment, n: number, start: number, end: number, hit: number): void {
    const { before, after, limit } = this.options;
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
