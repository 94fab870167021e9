// A file's new text from its patch hunks, located as Codex locates them: by
// their lines (exactly, then ignoring trailing whitespace, then ignoring
// surrounding whitespace), after the previous hunk and after the "@@" line
// that anchors them; no line numbers. No I/O.
import { fail } from "../errors.js";
import type { Hunk } from "./parse.js";

/** `text` with every hunk applied; OLD_TEXT_NOT_FOUND names the first hunk that does not fit. */
export function applyHunks(text: string, hunks: readonly Hunk[], path: string): string {
  const lines = text === "" ? [] : text.replace(/\n$/, "").split("\n");
  const replacements: Array<{ at: number; remove: number; insert: string[] }> = [];
  let cursor = 0;
  hunks.forEach((hunk, index) => {
    const where = `hunk ${index + 1} of ${path}`;
    if (hunk.anchor !== "") {
      const anchor = seek(lines, [hunk.anchor], cursor, false);
      if (anchor === undefined) fail("OLD_TEXT_NOT_FOUND", `${where}: its "@@ ${hunk.anchor}" line was not found`, { hunk: String(index + 1) });
      cursor = anchor + 1;
    }
    // A hunk of added lines only goes at the end of the file (or after its anchor).
    const at = hunk.before.length === 0 ? (hunk.anchor === "" ? lines.length : cursor) : seek(lines, hunk.before, cursor, hunk.atEnd);
    if (at === undefined) {
      fail("OLD_TEXT_NOT_FOUND", `${where}: its lines were not found in order after the previous hunk (the first: ${JSON.stringify(hunk.before[0]!.slice(0, 120))})`, { hunk: String(index + 1) });
    }
    replacements.push({ at, remove: hunk.before.length, insert: hunk.after });
    cursor = at + hunk.before.length;
  });
  for (const { at, remove, insert } of replacements.reverse()) lines.splice(at, remove, ...insert);
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
}

const MATCHERS: Array<(line: string) => string> = [(line) => line, (line) => line.trimEnd(), (line) => line.trim()];

/** Where `wanted` starts in `lines` at or after `from` (with atEnd: ending the file), by the strictest matcher that finds it. */
function seek(lines: readonly string[], wanted: readonly string[], from: number, atEnd: boolean): number | undefined {
  for (const same of MATCHERS) {
    const fits = (start: number) => wanted.every((line, k) => same(lines[start + k]!) === same(line));
    if (atEnd) {
      const start = lines.length - wanted.length;
      if (start >= from && fits(start)) return start;
      continue;
    }
    for (let start = from; start + wanted.length <= lines.length; start++) if (fits(start)) return start;
  }
  return undefined;
}
