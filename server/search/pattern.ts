// Search patterns: caps, validation with the engine's own message, and the
// form the workers run (SPEC 4.1 Search; shared/notes/security.md section 3).
//
// Engine decision (measured on Node 20.20.2, 22 MB of text): V8's
// non-backtracking engine (`/l`) scans 100-2000x slower than Irregexp (4.5 s
// vs 2 ms for a rare literal), so it cannot be the engine of every search.
// Instead the daemon sets `--enable-experimental-regexp-engine-on-excessive-
// backtracks` (see engine.ts): Irregexp runs first and a match that backtracks
// more than 50,000 times is re-run on the linear engine (`(a+)+$` on 40 a's:
// 1 ms instead of never finishing). That fallback exists only for patterns the
// linear engine accepts: no backreferences, no lookaround, no `i`/`u` flag,
// no large bounded repeats. So case-insensitive patterns are rewritten to
// ASCII case classes (`a` → `[aA]`) when they can be; the rest run on
// Irregexp alone, bounded by the search's deadline (the worker is terminated).
import { fail } from "../errors.js";
import { requiredLiterals } from "./literals.js";

export const MAX_PATTERN_LENGTH = 1024;
/** Deepest group nesting accepted. */
export const MAX_NESTING = 50;
/** Largest count accepted in a bounded repeat `{n,m}`. */
export const MAX_REPEAT = 1000;

/** What a worker needs to build its matcher (structured-clone friendly). */
export type PatternSpec =
  /** Raw bytes compared with Buffer.indexOf before any decoding. */
  | { kind: "literal"; needle: string }
  /**
   * A RegExp built as new RegExp(source, flags); flags always include "g" and
   * "m". `literals`: one of them is in every match (see literals.ts), in any
   * ASCII case when `foldCase`; or null.
   */
  | { kind: "regex"; source: string; flags: string; linearFallback: boolean; literals: string[] | null; foldCase: boolean };

export interface PatternOptions {
  fixedStrings: boolean;
  caseInsensitive: boolean;
}

/** Validates and prepares a request's pattern; INVALID_ARGUMENT when it is refused. */
export function compilePattern(pattern: string, options: PatternOptions): PatternSpec {
  if (pattern.length > MAX_PATTERN_LENGTH) {
    fail("INVALID_ARGUMENT", `pattern is ${pattern.length} characters long; the limit is ${MAX_PATTERN_LENGTH}`);
  }
  if (/[\n\r]/.test(pattern)) fail("INVALID_ARGUMENT", "pattern must not contain a line break (matching is line by line)");
  if (options.fixedStrings && !options.caseInsensitive) return { kind: "literal", needle: pattern };
  const source = options.fixedStrings ? escapeRegExp(pattern) : pattern;
  if (!options.fixedStrings) {
    try {
      new RegExp(source);
    } catch (error) {
      // V8's message starts with "Invalid regular expression: " already; the rest names the pattern and the fault.
      const fault = (error as Error).message.replace(/^Invalid regular expression: /, "");
      fail("INVALID_ARGUMENT", `invalid regular expression ${fault}`);
    }
    checkShape(source);
  }
  const literals = requiredLiterals(source);
  if (!options.caseInsensitive) return { kind: "regex", source, flags: "gm", linearFallback: true, literals, foldCase: false };
  // The folded pattern matches the original's matches in any ASCII case, so it contains one of their literals in some case.
  const folded = foldAsciiCase(source);
  if (folded !== null) return { kind: "regex", source: folded, flags: "gm", linearFallback: true, literals, foldCase: true };
  return { kind: "regex", source, flags: "gim", linearFallback: false, literals: null, foldCase: false };
}

export function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");
}

/** Group nesting and bounded-repeat caps (outside character classes). */
function checkShape(source: string): void {
  let depth = 0;
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === "\\") {
      i++;
      continue;
    }
    if (inClass) {
      if (c === "]") inClass = false;
      continue;
    }
    if (c === "[") inClass = true;
    else if (c === "(") {
      if (++depth > MAX_NESTING) fail("INVALID_ARGUMENT", `pattern nests groups deeper than ${MAX_NESTING}`);
    } else if (c === ")") depth--;
    else if (c === "{") {
      const m = /^\{(\d+)(?:,(\d*))?\}/.exec(source.slice(i));
      if (m && (Number(m[1]) > MAX_REPEAT || (m[2] !== undefined && m[2] !== "" && Number(m[2]) > MAX_REPEAT))) {
        fail("INVALID_ARGUMENT", `pattern repeats more than ${MAX_REPEAT} times (${m[0]})`);
      }
    }
  }
}

const isUpper = (c: string) => c >= "A" && c <= "Z";
const isLower = (c: string) => c >= "a" && c <= "z";
const isAsciiLetter = (c: string) => isUpper(c) || isLower(c);
const swapCase = (c: string) => (isUpper(c) ? c.toLowerCase() : c.toUpperCase());
/** Escapes whose letter has a meaning of its own (not an identity escape). */
const MEANINGFUL_ESCAPES = new Set([..."dDwWsSbBnrtvfcxukpP0123456789"]);
const hasCaseVariants = (c: string) => c.toLowerCase() !== c || c.toUpperCase() !== c;

/**
 * Rewrites a (valid, non-unicode) pattern so that it matches case-insensitively
 * without the `i` flag: `a` → `[aA]`, `[a-f]` → `[a-fA-F]`. Returns null when
 * that is not exact: a backreference (compared case-sensitively without `i`),
 * a letter with case outside ASCII, or a class range mixing letters and others.
 */
export function foldAsciiCase(source: string): string | null {
  let out = "";
  let i = 0;
  const n = source.length;
  const escapeLength = (at: number): number => {
    // `at` is the backslash; returns how many characters the escape spans.
    const next = source[at + 1];
    if (next === "c") return 3;
    if (next === "x") return 4;
    if (next === "u") return source[at + 2] === "{" ? source.indexOf("}", at) - at + 1 : 6;
    if (next === "k" && source[at + 2] === "<") return source.indexOf(">", at) - at + 1;
    if (next === "p" || next === "P") return source[at + 2] === "{" ? source.indexOf("}", at) - at + 1 : 2;
    return 2;
  };
  while (i < n) {
    const c = source[i]!;
    if (c === "\\") {
      const next = source[i + 1] ?? "";
      if (/[1-9]/.test(next) || next === "k") return null; // backreference
      if (isAsciiLetter(next) && !MEANINGFUL_ESCAPES.has(next)) {
        out += `[${next}${swapCase(next)}]`;
        i += 2;
        continue;
      }
      const len = Math.max(2, escapeLength(i));
      out += source.slice(i, i + len);
      i += len;
      continue;
    }
    if (c === "[") {
      const end = classEnd(source, i);
      if (end < 0) return null;
      const folded = foldClass(source.slice(i + 1, end));
      if (folded === null) return null;
      out += `[${folded}]`;
      i = end + 1;
      continue;
    }
    if (c === "(" && source.startsWith("(?<", i) && source[i + 3] !== "=" && source[i + 3] !== "!") {
      const close = source.indexOf(">", i);
      out += source.slice(i, close + 1); // a group name is not text to match
      i = close + 1;
      continue;
    }
    if (isAsciiLetter(c)) out += `[${c}${swapCase(c)}]`;
    else if (c.charCodeAt(0) > 0x7f && hasCaseVariants(c)) return null;
    else out += c;
    i++;
  }
  return out;
}

/** Index of the `]` closing the class opened at `start` (a `]` right after `[` or `[^` closes an empty class in JS). */
function classEnd(source: string, start: number): number {
  for (let i = start + 1; i < source.length; i++) {
    if (source[i] === "\\") i++;
    else if (source[i] === "]") return i;
  }
  return -1;
}

function foldClass(body: string): string | null {
  let out = "";
  let extra = "";
  let i = 0;
  if (body.startsWith("^")) {
    out = "^";
    i = 1;
  }
  // Items: an escape, or a character, optionally followed by -X (a range).
  const item = (at: number): [string, number] => {
    if (body[at] === "\\") {
      const next = body[at + 1] ?? "";
      if (next === "c") return [body.slice(at, at + 3), 3];
      if (next === "x") return [body.slice(at, at + 4), 4];
      if (next === "u") return [body.slice(at, at + 6), 6];
      return [body.slice(at, at + 2), 2];
    }
    return [body[at]!, 1];
  };
  while (i < body.length) {
    const [first, len] = item(i);
    i += len;
    if (body[i] === "-" && i + 1 < body.length) {
      const [last, len2] = item(i + 1);
      i += 1 + len2;
      out += `${first}-${last}`;
      if (first.length === 1 && last.length === 1) {
        if ((isLower(first) && isLower(last)) || (isUpper(first) && isUpper(last))) extra += `${swapCase(first)}-${swapCase(last)}`;
        else if (rangeTouchesLetters(first, last)) return null;
      } else if (first.length > 1 || last.length > 1) {
        // An escaped bound (\x41-\x5a): give up rather than decode it.
        return null;
      }
      continue;
    }
    out += first;
    if (first.length === 1 && isAsciiLetter(first)) extra += swapCase(first);
    else if (first.length === 2 && first[0] === "\\" && isAsciiLetter(first[1]!) && !MEANINGFUL_ESCAPES.has(first[1]!)) {
      extra += swapCase(first[1]!);
    } else if (first.length === 1 && first.charCodeAt(0) > 0x7f && hasCaseVariants(first)) return null;
  }
  return out + extra;
}

function rangeTouchesLetters(first: string, last: string): boolean {
  const lo = first.charCodeAt(0);
  const hi = last.charCodeAt(0);
  const overlaps = (a: number, b: number) => lo <= b && hi >= a;
  return overlaps(0x41, 0x5a) || overlaps(0x61, 0x7a) || hi > 0x7f;
}
