// Text encodings of the file tools: names, BOMs, decoding and lossless encoding.
// Pure functions over bytes and strings; no file-system access.

import { fail } from "../errors.js";

export type TextEncoding = "utf-8" | "utf-16le" | "latin1" | "ascii";

export const SUPPORTED_ENCODINGS: readonly TextEncoding[] = ["utf-8", "utf-16le", "latin1", "ascii"];

// Common spellings agents and tools use. Keys are lower-case with "_" read as "-".
// "utf-16" is deliberately absent: it does not say which byte order.
const ALIASES: ReadonlyMap<string, TextEncoding> = new Map<string, TextEncoding>([
  ["utf-8", "utf-8"],
  ["utf8", "utf-8"],
  ["utf-16le", "utf-16le"],
  ["utf16le", "utf-16le"],
  ["utf16-le", "utf-16le"],
  ["utf-16-le", "utf-16le"],
  ["ucs-2", "utf-16le"],
  ["ucs2", "utf-16le"],
  ["latin1", "latin1"],
  ["latin-1", "latin1"],
  ["iso-8859-1", "latin1"],
  ["iso8859-1", "latin1"],
  ["l1", "latin1"],
  ["ascii", "ascii"],
  ["us-ascii", "ascii"],
]);

/**
 * The encoding a request names: "" (or undefined) means utf-8; aliases are
 * accepted case-insensitively. Anything else is INVALID_ARGUMENT.
 */
export function parseEncoding(name: string | undefined): TextEncoding {
  const key = (name ?? "").trim().toLowerCase().replaceAll("_", "-");
  if (key === "") return "utf-8";
  const encoding = ALIASES.get(key);
  if (encoding) return encoding;
  const shown = name!.length > 40 ? `${name!.slice(0, 40)}…` : name;
  return fail(
    "INVALID_ARGUMENT",
    `unsupported encoding ${JSON.stringify(shown)}: use one of ${SUPPORTED_ENCODINGS.join(", ")}`,
  );
}

const UTF8_BOM = [0xef, 0xbb, 0xbf] as const;
const UTF16LE_BOM = [0xff, 0xfe] as const;

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  if (bytes.length < prefix.length) return false;
  return prefix.every((b, i) => bytes[i] === b);
}

/** The encoding announced by a BOM at the start of `head`, if any. */
export function detectBom(head: Uint8Array): { encoding: TextEncoding; length: number } | undefined {
  if (startsWith(head, UTF8_BOM)) return { encoding: "utf-8", length: 3 };
  if (startsWith(head, UTF16LE_BOM)) return { encoding: "utf-16le", length: 2 };
  return undefined;
}

/**
 * Length of the BOM of `encoding` at the start of `bytes` (0 when absent).
 * Only the BOM of the encoding in use is skipped: in latin1, EF BB BF are
 * three ordinary characters.
 */
export function bomLength(bytes: Uint8Array, encoding: TextEncoding): number {
  if (encoding === "utf-8" && startsWith(bytes, UTF8_BOM)) return 3;
  if (encoding === "utf-16le" && startsWith(bytes, UTF16LE_BOM)) return 2;
  return 0;
}

/** Byte sequence of a BOM for the encoding, empty when it has none. */
export function bomBytes(encoding: TextEncoding): Buffer {
  if (encoding === "utf-8") return Buffer.from(UTF8_BOM);
  if (encoding === "utf-16le") return Buffer.from(UTF16LE_BOM);
  return Buffer.alloc(0);
}

/**
 * The encoding to use for a file given what the request asked for and the
 * file's first bytes. An explicit encoding is obeyed. When none is given, a
 * BOM decides (a UTF-16LE file with BOM read as utf-8 would be garbage), and
 * utf-8 is the default.
 */
export function resolveEncoding(
  requested: string | undefined,
  head: Uint8Array,
): { encoding: TextEncoding; bomLength: number } {
  if ((requested ?? "").trim() === "") {
    const bom = detectBom(head);
    if (bom) return { encoding: bom.encoding, bomLength: bom.length };
    return { encoding: "utf-8", bomLength: 0 };
  }
  const encoding = parseEncoding(requested);
  return { encoding, bomLength: bomLength(head, encoding) };
}

/** Bytes per code unit: where a line feed can start and how long it is. */
export function codeUnitSize(encoding: TextEncoding): 1 | 2 {
  return encoding === "utf-16le" ? 2 : 1;
}

const NON_ASCII = /[\x80-\xff]/g;

/**
 * Decodes complete bytes (no BOM handling). Invalid sequences become U+FFFD:
 * Buffer's utf-8 decoder does so, TextDecoder does it for UTF-16LE (Buffer's
 * utf16le would leave lone surrogates and drop an odd last byte), and in ascii
 * every byte above 0x7F is invalid (Buffer's ascii would strip the high bit).
 */
export function decodeText(bytes: Uint8Array, encoding: TextEncoding): string {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (encoding) {
    case "utf-8":
      return buf.toString("utf8");
    case "utf-16le":
      return new TextDecoder("utf-16le", { ignoreBOM: true }).decode(buf);
    case "latin1":
      return buf.toString("latin1");
    case "ascii":
      return buf.toString("latin1").replace(NON_ASCII, "\uFFFD");
  }
}

/** Decodes a byte stream chunk by chunk without splitting a character. */
export interface StreamDecoder {
  /** Text of the chunk; an incomplete trailing character waits for the next one. */
  write(chunk: Uint8Array): string;
  /** Flushes: an incomplete trailing character becomes U+FFFD. */
  end(): string;
}

export function createDecoder(encoding: TextEncoding): StreamDecoder {
  if (encoding === "utf-8" || encoding === "utf-16le") {
    const decoder = new TextDecoder(encoding, { ignoreBOM: true });
    return {
      write: (chunk) => decoder.decode(chunk, { stream: true }),
      end: () => decoder.decode(),
    };
  }
  // Single-byte encodings: every byte is a whole character.
  return { write: (chunk) => decodeText(chunk, encoding), end: () => "" };
}

/** The first character of `text` that `encoding` cannot hold. */
export interface Unencodable {
  /** UTF-16 index in the text. */
  index: number;
  /** The character (a lone surrogate stays alone). */
  char: string;
  /** 1-based line and column (in characters) of it. */
  line: number;
  column: number;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const BEYOND_LATIN1 = /[^\u0000-\u00FF]/u;
const BEYOND_ASCII = /[^\u0000-\u007F]/u;

export function findUnencodable(text: string, encoding: TextEncoding): Unencodable | undefined {
  // A lone surrogate is not a character in any encoding: UTF-8 would write
  // U+FFFD, UTF-16LE would write a unit that no decoder gives back.
  const candidates = [LONE_SURROGATE.exec(text)?.index];
  if (encoding === "latin1") candidates.push(BEYOND_LATIN1.exec(text)?.index);
  if (encoding === "ascii") candidates.push(BEYOND_ASCII.exec(text)?.index);
  const found = candidates.filter((i): i is number => i !== undefined);
  if (found.length === 0) return undefined;
  const index = Math.min(...found);
  const code = text.codePointAt(index)!;
  const isPair = code > 0xffff;
  const char = isPair ? text.slice(index, index + 2) : text[index]!;
  const lineStart = text.lastIndexOf("\n", index - 1) + 1;
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < index; i = text.indexOf("\n", i + 1)) line++;
  const column = [...text.slice(lineStart, index)].length + 1;
  return { index, char, line, column };
}

/** "U+00E9" for "é". */
export function codePointLabel(char: string): string {
  return `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
}

function describe(u: Unencodable): string {
  const code = codePointLabel(u.char);
  const isLone = u.char.length === 1 && u.char >= "\uD800" && u.char <= "\uDFFF";
  const what = isLone ? `a lone surrogate (${code})` : `${JSON.stringify(u.char)} (${code})`;
  return `${what} at line ${u.line}, column ${u.column}`;
}

/**
 * Encodes text, refusing any loss: a character the encoding cannot hold
 * fails with FAILED_PRECONDITION / LOSSY_ENCODING naming the first one.
 * `label` names the text in the message (e.g. "content", "edits[0].new_text").
 */
export function encodeText(text: string, encoding: TextEncoding, label = "text"): Buffer {
  const bad = findUnencodable(text, encoding);
  if (bad) {
    fail("LOSSY_ENCODING", `${label}: cannot encode ${describe(bad)} in ${encoding}`, {
      encoding,
      character: codePointLabel(bad.char),
      line: String(bad.line),
      column: String(bad.column),
    });
  }
  switch (encoding) {
    case "utf-8":
      return Buffer.from(text, "utf8");
    case "utf-16le":
      return Buffer.from(text, "utf16le");
    case "latin1":
    case "ascii":
      return Buffer.from(text, "latin1");
  }
}
