// Is a file binary? Decided from its first bytes only, so that a Read of a
// huge file can refuse a binary one without scanning it.

import { bomLength, type TextEncoding } from "./encoding.js";

/** How many leading bytes the caller should pass to looksBinary. */
export const BINARY_HEAD_BYTES = 8192;

/** Share of control characters above which the head is binary. */
const CONTROL_RATIO = 0.1;

/** Bytes at `offset` (default 0), and what else must hold. */
type Signature = { offset?: number; bytes: readonly number[]; and?: (head: Uint8Array) => boolean };

const ascii = (s: string): number[] => [...s].map((c) => c.charCodeAt(0));

function has(head: Uint8Array, bytes: readonly number[], offset = 0): boolean {
  if (head.length < offset + bytes.length) return false;
  for (let i = 0; i < bytes.length; i++) if (head[offset + i] !== bytes[i]) return false;
  return true;
}

// Magic numbers of common binary formats. Signatures that are plain ASCII
// words are kept long enough (or checked further) not to catch text files.
const SIGNATURES: readonly Signature[] = [
  { bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] }, // PNG
  { bytes: [0xff, 0xd8, 0xff] }, // JPEG
  { bytes: ascii("GIF87a") },
  { bytes: ascii("GIF89a") },
  { bytes: ascii("%PDF-") },
  { bytes: [0x50, 0x4b, 0x03, 0x04] }, // ZIP, JAR, DOCX, XLSX, APK…
  { bytes: [0x50, 0x4b, 0x05, 0x06] }, // empty ZIP
  { bytes: [0x50, 0x4b, 0x07, 0x08] }, // spanned ZIP
  { bytes: [0x1f, 0x8b] }, // gzip
  { bytes: ascii("BZh"), and: (h) => h[3]! >= 0x31 && h[3]! <= 0x39 && has(h, [0x31, 0x41, 0x59, 0x26, 0x53, 0x59], 4) }, // bzip2
  { bytes: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00] }, // xz
  { bytes: [0x28, 0xb5, 0x2f, 0xfd] }, // zstd
  { bytes: [0x04, 0x22, 0x4d, 0x18] }, // lz4
  { bytes: [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c] }, // 7z
  { bytes: ascii("Rar!\x1a\x07") }, // rar
  { offset: 257, bytes: ascii("ustar") }, // tar
  { bytes: [0x7f, 0x45, 0x4c, 0x46] }, // ELF
  { bytes: [0xfe, 0xed, 0xfa, 0xce] }, // Mach-O 32
  { bytes: [0xfe, 0xed, 0xfa, 0xcf] }, // Mach-O 64
  { bytes: [0xce, 0xfa, 0xed, 0xfe] }, // Mach-O 32, little-endian
  { bytes: [0xcf, 0xfa, 0xed, 0xfe] }, // Mach-O 64, little-endian
  { bytes: [0xca, 0xfe, 0xba, 0xbe] }, // Java class, Mach-O universal
  // PE/DOS executable: "MZ" alone could start a text file; a real DOS header
  // has NUL bytes among its first 64.
  { bytes: ascii("MZ"), and: (h) => h.length >= 64 && h.subarray(0, 64).includes(0) },
  { bytes: [0x00, 0x61, 0x73, 0x6d] }, // WebAssembly
  { bytes: ascii("SQLite format 3\0") },
  { bytes: ascii("dex\n0") }, // Android DEX
  { bytes: ascii("bplist00") }, // Apple binary plist
  { bytes: ascii("PAR1") }, // Parquet
  { bytes: ascii("OggS\0") },
  { bytes: ascii("fLaC") },
  { bytes: ascii("ID3"), and: (h) => h[3]! >= 2 && h[3]! <= 4 && h[4] === 0 }, // MP3 with ID3v2 tag
  { bytes: ascii("wOFF") },
  { bytes: ascii("wOF2") },
  { bytes: [0x00, 0x01, 0x00, 0x00, 0x00] }, // TrueType
  { bytes: ascii("II*\0") }, // TIFF
  { bytes: ascii("MM\0*") }, // TIFF
  { bytes: [0x00, 0x00, 0x01, 0x00] }, // ICO
  { bytes: ascii("RIFF"), and: (h) => ["WAVE", "AVI ", "WEBP"].some((t) => has(h, ascii(t), 8)) }, // WAV, AVI, WebP
  { offset: 4, bytes: ascii("ftyp") }, // MP4, MOV, HEIC
  { bytes: [0x1a, 0x45, 0xdf, 0xa3] }, // Matroska, WebM
  { bytes: [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1] }, // MS Office (OLE2)
];

/** A known binary format's magic number at the start of `head`. */
export function hasBinarySignature(head: Uint8Array): boolean {
  if (head.length === 0) return false;
  const matches = (s: Signature) => has(head, s.bytes, s.offset) && (s.and?.(head) ?? true);
  return BY_FIRST_BYTE[head[0]!]!.some(matches) || AT_AN_OFFSET.some(matches);
}

// Signatures by the byte they start the file with, and those at an offset:
// a search tests every file's head (the whole list took ~0.7 µs a file).
const AT_AN_OFFSET = SIGNATURES.filter((s) => (s.offset ?? 0) > 0);
const BY_FIRST_BYTE = Array.from({ length: 256 }, (_, byte) => SIGNATURES.filter((s) => (s.offset ?? 0) === 0 && s.bytes[0] === byte));

// C0 controls that text files legitimately contain: \t \n \v \f \r and ESC
// (ANSI colour codes in logs).
function isTextControl(c: number): boolean {
  return (c >= 0x09 && c <= 0x0d) || c === 0x1b;
}

/**
 * Whether a file whose first bytes (up to BINARY_HEAD_BYTES) are `head` is
 * binary: a known signature, a NUL character, or more than 10% of control
 * characters. For UTF-16LE (the caller's encoding, or an FF FE BOM) the test
 * looks at 16-bit code units, so the NUL high bytes of ASCII text do not count.
 */
export function looksBinary(head: Uint8Array, encoding: TextEncoding): boolean {
  head = head.subarray(0, BINARY_HEAD_BYTES);
  if (head.length === 0) return false;
  if (hasBinarySignature(head)) return true;
  const wide = encoding === "utf-16le" || bomLength(head, "utf-16le") > 0;
  let controls = 0;
  let units = 0;
  if (wide) {
    // Start after a BOM; an odd last byte is a cut-off unit, not evidence.
    for (let i = bomLength(head, "utf-16le"); i + 1 < head.length; i += 2, units++) {
      const unit = head[i]! | (head[i + 1]! << 8);
      if (unit === 0) return true;
      if (unit < 0x20 && !isTextControl(unit)) controls++;
    }
  } else {
    for (; units < head.length; units++) {
      const c = head[units]!;
      if (c === 0) return true;
      if (c < 0x20 && !isTextControl(c)) controls++;
    }
  }
  return units > 0 && controls / units > CONTROL_RATIO;
}
