// Line endings of text written through Write (and of Edit's replacement text).

import { bomLength, codeUnitSize, type TextEncoding } from "./encoding.js";

/** Write's newline modes (proto Newline; UNSPECIFIED is "preserve"). */
export type NewlineMode = "preserve" | "lf" | "crlf";

/** Every lone LF becomes CRLF (existing CRLFs stay single). */
export function toCrlf(text: string): string {
  return text.replace(/\r?\n/g, "\r\n");
}

/** Every CRLF becomes LF (a lone CR stays: it is not a line ending here). */
export function toLf(text: string): string {
  return text.replace(/\r\n/g, "\n");
}

/**
 * Whether existing file bytes use CRLF, judged by the first line ending (the
 * way editors guess a file's style). `bytes` may be just the file's head; if
 * it holds no line feed the answer is false.
 */
export function usesCrlf(bytes: Uint8Array, encoding: TextEncoding): boolean {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const start = bomLength(buf, encoding);
  if (codeUnitSize(encoding) === 1) {
    const lf = buf.indexOf(0x0a, start);
    return lf > start && buf[lf - 1] === 0x0d;
  }
  // UTF-16LE: the unit 0A 00 at an even offset, preceded by 0D 00.
  for (let i = buf.indexOf("\n\0", start, "latin1"); i !== -1; i = buf.indexOf("\n\0", i + 1, "latin1")) {
    if ((i - start) % 2 === 0) return i >= start + 2 && buf[i - 2] === 0x0d && buf[i - 1] === 0x00;
  }
  return false;
}

/**
 * Applies Write's newline mode to text content. `existingCrlf` tells whether
 * the file being replaced uses CRLF (usesCrlf); false for a new file.
 * PRESERVE keeps the file's style when it is CRLF (an agent's LF text would
 * otherwise mix styles) and leaves text as sent otherwise.
 */
export function applyNewlineMode(text: string, mode: NewlineMode, existingCrlf: boolean): string {
  switch (mode) {
    case "lf":
      return toLf(text);
    case "crlf":
      return toCrlf(text);
    case "preserve":
      return existingCrlf ? toCrlf(text) : text;
  }
}
