// File names are byte strings; the daemon holds them as JS strings without
// losing a byte. Valid UTF-8 decodes as usual; a byte that is not part of
// valid UTF-8 becomes the lone surrogate U+DC00 + byte (Python's
// "surrogateescape"). Such a surrogate can never come from a decoded request
// (protobuf strings are UTF-8), so the mapping is one-to-one and reversible.
// Clients see them escaped (see escapeName): `\xHH` for the byte, `\\` for a
// backslash.
import { isUtf8 } from "node:buffer";

const ESCAPE_BASE = 0xdc00;
/** A lone low surrogate standing for a byte 0x80–0xff (not the second half of a pair). */
const RAW_BYTE = /(?<![\uD800-\uDBFF])[\uDC80-\uDCFF]/g;

/** The name (or link target) held for the bytes `bytes`. */
export function nameFromBytes(bytes: Uint8Array): string {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (isUtf8(buffer)) return buffer.toString("utf8");
  let out = "";
  let i = 0;
  while (i < buffer.length) {
    const length = utf8SequenceLength(buffer, i);
    if (length > 0) {
      out += buffer.toString("utf8", i, i + length);
      i += length;
    } else {
      out += String.fromCharCode(ESCAPE_BASE + buffer[i]!);
      i++;
    }
  }
  return out;
}

/** The bytes of a name held by nameFromBytes (or parsed from a request). */
export function bytesOfName(name: string): Buffer {
  if (name.isWellFormed()) return Buffer.from(name, "utf8");
  const parts: Buffer[] = [];
  let last = 0;
  for (const match of name.matchAll(RAW_BYTE)) {
    parts.push(Buffer.from(name.slice(last, match.index), "utf8"), Buffer.of(match[0].charCodeAt(0) - ESCAPE_BASE));
    last = match.index + 1;
  }
  parts.push(Buffer.from(name.slice(last), "utf8"));
  return Buffer.concat(parts);
}

/** Bytes of a held name (a raw byte counts one). */
export function byteLengthOfName(name: string): number {
  return name.isWellFormed() ? Buffer.byteLength(name) : bytesOfName(name).length;
}

/** Whether the held name has bytes that are not valid UTF-8. */
export function hasRawBytes(name: string): boolean {
  return !name.isWellFormed();
}

/** A path for the file system: a string while it is valid UTF-8, its exact bytes otherwise. */
export function fsPath(prefix: string, name: string): string | Buffer {
  return name.isWellFormed() ? prefix + name : Buffer.concat([Buffer.from(prefix), bytesOfName(name)]);
}

/**
 * The name as clients see it: a raw byte as `\xHH` (two lowercase hex
 * digits), a backslash as `\\`; everything else unchanged.
 */
export function escapeName(name: string): string {
  if (name.isWellFormed() && !name.includes("\\")) return name;
  return name
    .replaceAll("\\", "\\\\")
    .replace(RAW_BYTE, (unit) => "\\x" + (unit.charCodeAt(0) - ESCAPE_BASE).toString(16).padStart(2, "0"));
}

/** Whether escapeName changes the name. */
export function needsEscape(name: string): boolean {
  return !name.isWellFormed() || name.includes("\\");
}

/**
 * The held name for one escaped request component: `\xHH` is that byte, `\\`
 * a backslash; null when another backslash sequence appears. Decoded bytes
 * are read again as a whole, so `\xc3\xa9` is the same name as "é".
 */
export function unescapeName(escaped: string): string | null {
  if (!escaped.includes("\\")) return escaped;
  const bytes: number[] = [];
  let plain = "";
  const flush = () => {
    if (plain) bytes.push(...Buffer.from(plain, "utf8"));
    plain = "";
  };
  for (let i = 0; i < escaped.length; i++) {
    const char = escaped[i]!;
    if (char !== "\\") {
      plain += char;
      continue;
    }
    const next = escaped[i + 1];
    if (next === "\\") {
      plain += "\\";
      i++;
    } else if (next === "x" && /^[0-9a-fA-F]{2}$/.test(escaped.slice(i + 2, i + 4))) {
      flush();
      bytes.push(parseInt(escaped.slice(i + 2, i + 4), 16));
      i += 3;
    } else {
      return null;
    }
  }
  flush();
  return nameFromBytes(Uint8Array.from(bytes));
}

/** Length of the well-formed UTF-8 sequence at `i`, or 0 when the byte there starts none. */
function utf8SequenceLength(bytes: Buffer, i: number): number {
  const b0 = bytes[i]!;
  if (b0 < 0x80) return 1;
  const cont = (k: number, low = 0x80, high = 0xbf) => {
    const b = bytes[i + k];
    return b !== undefined && b >= low && b <= high;
  };
  if (b0 >= 0xc2 && b0 <= 0xdf) return cont(1) ? 2 : 0;
  if (b0 === 0xe0) return cont(1, 0xa0) && cont(2) ? 3 : 0;
  if (b0 === 0xed) return cont(1, 0x80, 0x9f) && cont(2) ? 3 : 0;
  if (b0 >= 0xe1 && b0 <= 0xef) return cont(1) && cont(2) ? 3 : 0;
  if (b0 === 0xf0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (b0 >= 0xf1 && b0 <= 0xf3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (b0 === 0xf4) return cont(1, 0x80, 0x8f) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}
