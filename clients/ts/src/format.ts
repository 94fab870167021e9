// Line-numbered text in the style of `cat -n`, the form agents are trained to
// read and to quote line numbers from.

export interface NumberLinesOptions {
  /** Number of the first line of `text` (1-based). Default 1. */
  firstLine?: number | bigint;
  /** Minimum width the numbers are right-aligned to. Default 6, as `cat -n`. */
  width?: number;
}

/**
 * `text` with every line prefixed by its number, right-aligned to `width`, and
 * a tab: `"     1\tone\n     2\ttwo\n"`. Lines end at LF and keep their
 * endings (a CR stays in the line); a last line without LF stays without one.
 * Windows formatted one after the other line up as long as they share `width`.
 */
export function numberLines(text: string, options: NumberLinesOptions = {}): string {
  if (text === "") return "";
  const width = options.width ?? 6;
  let lineNumber = BigInt(options.firstLine ?? 1);
  let out = "";
  let start = 0;
  while (start < text.length) {
    const newline = text.indexOf("\n", start);
    const end = newline === -1 ? text.length : newline + 1;
    out += `${String(lineNumber).padStart(width)}\t${text.slice(start, end)}`;
    lineNumber++;
    start = end;
  }
  return out;
}
