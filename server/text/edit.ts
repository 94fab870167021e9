// Edit: exact string replacements on a file's bytes, all or nothing.
//
// The search and the replacement work on BYTES: old_text and new_text are
// encoded into the file's encoding and spliced into the original buffer, so
// everything outside the replaced spans (a BOM, line endings, even byte
// sequences that are not valid in the encoding) is copied verbatim. Decoding
// the file, replacing in a string and encoding it back would not be lossless.

import { fail, FileToolsError } from "../errors.js";
import { bomLength, codeUnitSize, decodeText, encodeText, type TextEncoding } from "./encoding.js";
import { toCrlf, usesCrlf } from "./newline.js";
import { copiesAfterSplice, unifiedDiff, type Copy } from "./diff.js";

/** One replacement (proto TextEdit). */
export interface TextEdit {
  oldText: string;
  newText: string;
  /** Replace every occurrence instead of requiring exactly one. */
  replaceAll?: boolean;
}

export interface EditResult {
  /** The file's new bytes. */
  updated: Buffer;
  /** Replacements made, over all edits. */
  replacements: number;
  /** Unified diff (3 lines of context) with "a/PATH" and "b/PATH" headers, of at most DIFF_MAX_BYTES. */
  diff: string;
  /** The diff stops before hunks that would take it past DIFF_MAX_BYTES. */
  diffTruncated: boolean;
}

const REPLACEMENT_CHAR = "\uFFFD";

/** A way old_text may appear in the file, with the bytes that replace it there. */
interface Candidate {
  needle: Buffer;
  replacement: Buffer;
}

/**
 * Applies `edits` in order, each to the result of the previous, and returns
 * the new bytes; throws FileToolsError (and so changes nothing) if any edit
 * fails. `displayPath` is the workspace path ("/src/a.ts") for messages and
 * diff headers. Edits are numbered from 0 in messages and metadata, as in
 * the request's list.
 */
export function applyEdits(
  original: Buffer,
  edits: readonly TextEdit[],
  encoding: TextEncoding,
  displayPath: string,
): EditResult {
  if (edits.length === 0) fail("INVALID_ARGUMENT", "edits: at least one edit is required");
  edits.forEach(checkEditArguments);
  // Every edit is encoded before any is applied, so a lossy one fails first.
  const fileCrlf = usesCrlf(original, encoding);
  const plans = edits.map((edit, i) => candidatesFor(edit, i, encoding, fileCrlf));

  const contentStart = bomLength(original, encoding);
  const unit = codeUnitSize(encoding);
  let current = original;
  let replacements = 0;
  // What of the original each result keeps, so the diff looks only around the replacements.
  let copies: Copy[] = [{ from: 0, to: 0, length: original.length }];
  edits.forEach((edit, i) => {
    const match = findMatch(current, plans[i]!, contentStart, unit, edit.replaceAll ?? false, MAX_REPLACEMENTS - replacements);
    if (match === "too many") tooMany(i, displayPath);
    if (!match) notFound(current, edit, i, encoding, displayPath);
    if (!edit.replaceAll && match.positions.length > 1) notUnique(match.positions.length, i, displayPath);
    current = splice(current, match.positions, match.candidate);
    copies = copiesAfterSplice(copies, match.positions, match.candidate.needle.length, match.candidate.replacement.length);
    replacements += match.positions.length;
  });
  const diff = unifiedDiff(original, current, copies, encoding, displayPath);
  return { updated: current, replacements, diff: diff.text, diffTruncated: diff.truncated };
}

function checkEditArguments(edit: TextEdit, i: number): void {
  if (edit.oldText === "") fail("INVALID_ARGUMENT", `edits[${i}].old_text is empty`, { edit_index: String(i) });
  if (edit.oldText === edit.newText) {
    fail("INVALID_ARGUMENT", `edits[${i}]: new_text is the same as old_text`, { edit_index: String(i) });
  }
}

/**
 * The byte forms old_text may take in the file, in order of preference: as
 * sent, then (in a file with CRLF endings) with its LFs as CRLF, because an
 * agent often writes LF. new_text follows the line endings of what it
 * replaces: CRLF where the match has CRLF, or, for a single-line match, in a
 * file whose lines end in CRLF.
 */
function candidatesFor(edit: TextEdit, i: number, encoding: TextEncoding, fileCrlf: boolean): Candidate[] {
  // U+FFFD in new_text would write the replacement character where the agent
  // most likely saw undecodable bytes; allowed only when old_text has it too,
  // i.e. when the file really contains U+FFFD there (old_text must then match it).
  if (edit.newText.includes(REPLACEMENT_CHAR) && !edit.oldText.includes(REPLACEMENT_CHAR)) {
    fail(
      "LOSSY_ENCODING",
      `edits[${i}].new_text contains U+FFFD, the character shown for bytes that are not valid ${encoding}; ` +
        "writing it would not restore those bytes. Edit around them instead.",
      { edit_index: String(i), encoding },
    );
  }
  const forms = [edit.oldText];
  const crlfOld = toCrlf(edit.oldText);
  if (crlfOld !== edit.oldText) forms.push(crlfOld);
  return forms.map((oldText) => {
    const crlfMatch = oldText.includes("\r\n") || (fileCrlf && !oldText.includes("\n"));
    const newText = crlfMatch ? toCrlf(edit.newText) : edit.newText;
    return {
      needle: encodeFor(oldText, encoding, i, "old_text"),
      replacement: encodeFor(newText, encoding, i, "new_text"),
    };
  });
}

/** encodeText, with the edit's index in the error's metadata too. */
function encodeFor(text: string, encoding: TextEncoding, i: number, field: string): Buffer {
  try {
    return encodeText(text, encoding, `edits[${i}].${field}`);
  } catch (e) {
    if (e instanceof FileToolsError) throw new FileToolsError(e.reason, e.message, { ...e.metadata, edit_index: String(i) });
    throw e;
  }
}

/**
 * Where the first candidate that occurs is found, from `from` on (after the
 * BOM), only at code unit boundaries. With replaceAll the occurrences do not
 * overlap (left to right); without it, overlapping ones count too, since they
 * make the target just as ambiguous.
 */
function findMatch(
  hay: Buffer,
  candidates: readonly Candidate[],
  from: number,
  unit: 1 | 2,
  replaceAll: boolean,
  limit: number,
): { candidate: Candidate; positions: number[] } | "too many" | undefined {
  for (const candidate of candidates) {
    const { needle } = candidate;
    const positions: number[] = [];
    for (let i = hay.indexOf(needle, from); i !== -1; ) {
      if ((i - from) % unit !== 0) {
        i = hay.indexOf(needle, i + 1);
        continue;
      }
      if (positions.length === limit) return "too many";
      positions.push(i);
      i = hay.indexOf(needle, i + (replaceAll ? needle.length : unit));
    }
    if (positions.length > 0) return { candidate, positions };
  }
  return undefined;
}

/** `hay` with `candidate.needle` at each position replaced; the bytes in between are copied as they are. */
function splice(hay: Buffer, positions: readonly number[], candidate: Candidate): Buffer {
  const parts: Buffer[] = [];
  let last = 0;
  for (const p of positions) {
    parts.push(hay.subarray(last, p), candidate.replacement);
    last = p + candidate.needle.length;
  }
  parts.push(hay.subarray(last));
  return Buffer.concat(parts);
}

/** Replacements one Edit makes at most, over all its edits: each costs memory until the file is written. */
export const MAX_REPLACEMENTS = 1_000_000;

function tooMany(i: number, displayPath: string): never {
  return fail(
    "INVALID_ARGUMENT",
    `edits[${i}] would take the edit past ${MAX_REPLACEMENTS.toLocaleString("en")} replacements in ${displayPath}; use a longer old_text, or Read and Write`,
    { edit_index: String(i) },
  );
}

function notUnique(count: number, i: number, displayPath: string): never {
  return fail(
    "OLD_TEXT_NOT_UNIQUE",
    `edits[${i}].old_text occurs ${count} times in ${displayPath}; include more surrounding text to make it unique, or set replace_all`,
    { edit_index: String(i), count: String(count) },
  );
}

function notFound(current: Buffer, edit: TextEdit, i: number, encoding: TextEncoding, displayPath: string): never {
  if (edit.oldText.includes(REPLACEMENT_CHAR)) {
    // U+FFFD is what Read shows for bytes that are not valid in the encoding;
    // as text it cannot match them.
    fail(
      "LOSSY_ENCODING",
      `edits[${i}].old_text was not found in ${displayPath} and contains U+FFFD, the character shown for bytes ` +
        `that are not valid ${encoding}; such bytes cannot be matched as text. Choose old_text around them.`,
      { edit_index: String(i), encoding },
    );
  }
  const text = decodeText(current.subarray(bomLength(current, encoding)), encoding);
  const closest = closestLine(text, edit.oldText);
  const metadata: Record<string, string> = { edit_index: String(i) };
  let hint = "";
  if (closest) {
    metadata.closest_line = String(closest.line);
    metadata.closest_text = closest.text;
    hint = `; the closest line is ${closest.line}: ${JSON.stringify(closest.text)}`;
  }
  return fail("OLD_TEXT_NOT_FOUND", `edits[${i}].old_text not found in ${displayPath}${hint}`, metadata);
}

/** Longest line text a hint quotes, and compares. */
const HINT_CHARS = 200;
/** A line differing from the target by more than this share of characters is no hint. */
const MAX_DISTANCE_RATIO = 0.5;
/** Bound on the similarity work for one hint (cells of the edit-distance table). */
const HINT_WORK = 20_000_000;

/** Whitespace differences are the commonest slip (indentation): ignore them when comparing. */
function normalize(line: string): string {
  // Only the line's start is compared: a 64 MB line is not rewritten whole.
  return line.trimStart().slice(0, 2 * HINT_CHARS).trim().replace(/\s+/g, " ").slice(0, HINT_CHARS);
}

/** What a line costs the hint at least, blank or short (in target lengths): 64 MB of "\n" is 64 M lines. */
const LINE_WORK = 16;

/**
 * The line of `text` most similar to the first non-blank line of `oldText`:
 * equal up to whitespace first, else one containing it, else the smallest
 * edit distance relative to length (if at most half the characters differ).
 * Line numbers are 1-based, as Read counts them.
 */
export function closestLine(text: string, oldText: string): { line: number; text: string } | undefined {
  const target = normalize(oldText.split("\n").find((l) => l.trim() !== "") ?? "");
  if (target === "") return undefined;
  let best: { line: number; text: string } | undefined;
  let bestRatio = MAX_DISTANCE_RATIO;
  let work = 0;
  let lineNumber = 0;
  for (let start = 0; start < text.length && work < HINT_WORK; ) {
    const newline = text.indexOf("\n", start);
    const end = newline === -1 ? text.length : newline;
    const raw = text.slice(start, end);
    lineNumber++;
    start = end + 1;
    const line = normalize(raw);
    work += Math.max(line.length, LINE_WORK) * target.length;
    if (line === "") continue;
    const hint = { line: lineNumber, text: raw.replace(/\r$/, "").slice(0, HINT_CHARS) };
    if (line === target) return hint;
    // Containing the target beats any distance; the first such line wins.
    const ratio = line.includes(target) ? 0 : editDistanceRatio(line, target, bestRatio);
    if (ratio < bestRatio) {
      bestRatio = ratio;
      best = hint;
    }
  }
  return best;
}

/**
 * Levenshtein distance of a and b divided by the longer length, or Infinity
 * when it is not below `limitRatio` (the computation stops early then).
 */
function editDistanceRatio(a: string, b: string, limitRatio: number): number {
  const longest = Math.max(a.length, b.length);
  const limit = Math.ceil(limitRatio * longest) - 1; // largest distance still below the ratio
  if (limit < 0 || Math.abs(a.length - b.length) > limit) return Infinity;
  let prev = new Uint32Array(b.length + 1).map((_, j) => j);
  let row = new Uint32Array(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    row[0] = i;
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      const value = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      row[j] = value;
      if (value < rowMin) rowMin = value;
    }
    if (rowMin > limit) return Infinity;
    [prev, row] = [row, prev];
  }
  const distance = prev[b.length]!;
  return distance > limit ? Infinity : distance / longest;
}

