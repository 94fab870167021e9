import { describe, expect, it } from "vitest";
import { BINARY_HEAD_BYTES, hasBinarySignature, looksBinary } from "./binary.js";

const bytes = (...parts: (number[] | string)[]): Buffer =>
  Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p, "latin1") : Buffer.from(p))));

describe("looksBinary", () => {
  it("reads an 8 KiB head", () => {
    expect(BINARY_HEAD_BYTES).toBe(8192);
  });

  it.each([
    ["PNG", bytes([0x89], "PNG\r\n\x1a\n", "rest")],
    ["JPEG", bytes([0xff, 0xd8, 0xff, 0xe0], "JFIF")],
    ["GIF", bytes("GIF89a", "rest")],
    ["PDF", bytes("%PDF-1.7\n%text-like header\n")],
    ["ZIP/JAR/DOCX", bytes("PK\x03\x04", "word/document.xml")],
    ["gzip", bytes([0x1f, 0x8b, 0x08])],
    ["bzip2", bytes("BZh91AY&SY", "data")],
    ["xz", bytes([0xfd], "7zXZ", [0x00])],
    ["zstd", bytes([0x28, 0xb5, 0x2f, 0xfd])],
    ["7z", bytes("7z", [0xbc, 0xaf, 0x27, 0x1c])],
    ["rar", bytes("Rar!\x1a\x07\x00")],
    ["ELF", bytes([0x7f], "ELF", [2, 1, 1])],
    ["Mach-O", bytes([0xcf, 0xfa, 0xed, 0xfe])],
    ["Java class", bytes([0xca, 0xfe, 0xba, 0xbe])],
    ["wasm", bytes([0x00], "asm", [1, 0, 0, 0])],
    ["SQLite", bytes("SQLite format 3\x00")],
    ["tar", Buffer.concat([Buffer.alloc(257, 0x61), Buffer.from("ustar")])],
    // Every other signature too: each is looked up by its first byte (or its offset).
    ["GIF87a", bytes("GIF87a", "rest")],
    ["empty ZIP", bytes("PK\x05\x06")],
    ["spanned ZIP", bytes("PK\x07\x08")],
    ["lz4", bytes([0x04, 0x22, 0x4d, 0x18])],
    ["Mach-O 32", bytes([0xfe, 0xed, 0xfa, 0xce])],
    ["Mach-O 64", bytes([0xfe, 0xed, 0xfa, 0xcf])],
    ["Mach-O 32 LE", bytes([0xce, 0xfa, 0xed, 0xfe])],
    ["DEX", bytes("dex\n035\x00")],
    ["binary plist", bytes("bplist00")],
    ["Parquet", bytes("PAR1")],
    ["Ogg", bytes("OggS\x00")],
    ["FLAC", bytes("fLaC")],
    ["MP3 with ID3v2", bytes("ID3", [3, 0])],
    ["WOFF", bytes("wOFF")],
    ["WOFF2", bytes("wOF2")],
    ["TrueType", bytes([0x00, 0x01, 0x00, 0x00, 0x00])],
    ["TIFF little-endian", bytes("II*\x00")],
    ["TIFF big-endian", bytes("MM\x00*")],
    ["ICO", bytes([0x00, 0x00, 0x01, 0x00])],
    ["WAV", bytes("RIFF", [0, 0, 0, 0], "WAVE")],
    ["WebP", bytes("RIFF", [0, 0, 0, 0], "WEBP")],
    ["MP4", bytes([0, 0, 0, 0x18], "ftypisom")],
    ["Matroska", bytes([0x1a, 0x45, 0xdf, 0xa3])],
    ["OLE2", bytes([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])],
  ])("recognises the %s signature", (_name, head) => {
    expect(hasBinarySignature(head)).toBe(true);
    // Even for a caller who asked for UTF-16LE, where NULs are no evidence.
    expect(looksBinary(head, "utf-16le")).toBe(true);
  });

  it("recognises a PE executable by MZ and its DOS header", () => {
    const pe = Buffer.alloc(128);
    pe.write("MZ", 0, "latin1");
    expect(looksBinary(pe, "utf-8")).toBe(true);
  });

  it("does not take text that starts like a signature word for binary", () => {
    expect(looksBinary(Buffer.from("MZ is a two-letter word that starts this text file.\n".repeat(3)), "utf-8")).toBe(false);
    expect(looksBinary(Buffer.from("BZh is not bzip2 without its block magic\n"), "utf-8")).toBe(false);
    expect(looksBinary(Buffer.from("ID3 tags: notes\n"), "utf-8")).toBe(false);
    expect(looksBinary(Buffer.from("RIFF raff\n"), "utf-8")).toBe(false);
  });

  it("calls plain text, UTF-8 text and an empty file text", () => {
    expect(looksBinary(Buffer.from("hello\tworld\r\n\fpage\vtab\n"), "utf-8")).toBe(false);
    expect(looksBinary(Buffer.from("naïve café 😀 — ünïcödé\n"), "utf-8")).toBe(false);
    expect(looksBinary(Buffer.alloc(0), "utf-8")).toBe(false);
  });

  it("allows ANSI escape sequences of coloured logs", () => {
    expect(looksBinary(Buffer.from("\x1b[31merror\x1b[0m: failed\n".repeat(50)), "utf-8")).toBe(false);
  });

  it("calls a head with a NUL byte binary", () => {
    expect(looksBinary(Buffer.from("text\x00more text"), "utf-8")).toBe(true);
    expect(looksBinary(Buffer.from("text\x00more text"), "latin1")).toBe(true);
  });

  it("calls a head with more than 10% control characters binary", () => {
    const controls = (n: number) => Buffer.concat([Buffer.alloc(n, 0x01), Buffer.alloc(100 - n, 0x61)]);
    expect(looksBinary(controls(10), "utf-8")).toBe(false);
    expect(looksBinary(controls(11), "utf-8")).toBe(true);
  });

  it("looks only at the first 8 KiB", () => {
    const head = Buffer.concat([Buffer.alloc(BINARY_HEAD_BYTES, 0x61), Buffer.from([0x00])]);
    expect(looksBinary(head, "utf-8")).toBe(false);
  });

  it("does not call UTF-16LE text with a BOM binary for its NUL bytes", () => {
    const text = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("hello\r\nworld\n", "utf16le")]);
    expect(looksBinary(text, "utf-8")).toBe(false);
    expect(looksBinary(text, "utf-16le")).toBe(false);
  });

  it("does not call UTF-16LE text without a BOM binary when the caller says utf-16le", () => {
    const text = Buffer.from("hello world, this is UTF-16LE\n", "utf16le");
    expect(looksBinary(text, "utf-16le")).toBe(false);
    expect(looksBinary(text, "utf-8")).toBe(true);
  });

  it("still calls a UTF-16LE head with NUL characters binary", () => {
    const text = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("ab\u0000cd", "utf16le")]);
    expect(looksBinary(text, "utf-16le")).toBe(true);
  });

  it("does not count a cut-off last UTF-16 unit", () => {
    const text = Buffer.concat([Buffer.from("hello", "utf16le"), Buffer.from([0x61])]);
    expect(looksBinary(text, "utf-16le")).toBe(false);
  });
});
