import { describe, expect, it } from "vitest";
import { caught } from "../test-support.js";
import {
  bomLength,
  createDecoder,
  decodeText,
  detectBom,
  encodeText,
  parseEncoding,
  resolveEncoding,
  type TextEncoding,
} from "./encoding.js";


describe("parseEncoding", () => {
  it("defaults to utf-8 for an empty or missing name", () => {
    expect(parseEncoding("")).toBe("utf-8");
    expect(parseEncoding(undefined)).toBe("utf-8");
    expect(parseEncoding("  ")).toBe("utf-8");
  });

  it.each([
    ["UTF-8", "utf-8"],
    ["utf8", "utf-8"],
    ["UTF_8", "utf-8"],
    ["utf-16le", "utf-16le"],
    ["UTF16LE", "utf-16le"],
    ["ucs-2", "utf-16le"],
    ["Latin1", "latin1"],
    ["latin-1", "latin1"],
    ["ISO-8859-1", "latin1"],
    ["iso_8859-1", "latin1"],
    ["ascii", "ascii"],
    ["US-ASCII", "ascii"],
  ])("accepts the alias %s", (name, expected) => {
    expect(parseEncoding(name)).toBe(expected);
  });

  it("refuses an unknown encoding, listing the supported ones", () => {
    const err = caught(() => parseEncoding("shift_jis"));
    expect(err.reason).toBe("INVALID_ARGUMENT");
    expect(err.message).toContain('"shift_jis"');
    expect(err.message).toContain("utf-8, utf-16le, latin1, ascii");
  });

  it("does not guess the byte order of plain utf-16", () => {
    expect(caught(() => parseEncoding("utf-16")).reason).toBe("INVALID_ARGUMENT");
  });
});

describe("BOMs", () => {
  it("detects the UTF-8 and UTF-16LE byte order marks", () => {
    expect(detectBom(Buffer.from([0xef, 0xbb, 0xbf, 0x61]))).toEqual({ encoding: "utf-8", length: 3 });
    expect(detectBom(Buffer.from([0xff, 0xfe, 0x61, 0x00]))).toEqual({ encoding: "utf-16le", length: 2 });
    expect(detectBom(Buffer.from("abc"))).toBeUndefined();
    expect(detectBom(Buffer.from([0xef, 0xbb]))).toBeUndefined();
  });

  it("skips only the BOM of the encoding in use", () => {
    const utf8Bom = Buffer.from([0xef, 0xbb, 0xbf, 0x61]);
    expect(bomLength(utf8Bom, "utf-8")).toBe(3);
    expect(bomLength(utf8Bom, "latin1")).toBe(0);
    expect(bomLength(Buffer.from([0xff, 0xfe]), "utf-16le")).toBe(2);
    expect(bomLength(Buffer.from([0xff, 0xfe]), "utf-8")).toBe(0);
  });

  it("lets a BOM choose the encoding when the request names none", () => {
    expect(resolveEncoding("", Buffer.from([0xff, 0xfe, 0x61, 0x00]))).toEqual({ encoding: "utf-16le", bomLength: 2 });
    expect(resolveEncoding("", Buffer.from([0xef, 0xbb, 0xbf]))).toEqual({ encoding: "utf-8", bomLength: 3 });
    expect(resolveEncoding(undefined, Buffer.from("plain"))).toEqual({ encoding: "utf-8", bomLength: 0 });
  });

  it("obeys an explicit encoding over the BOM", () => {
    expect(resolveEncoding("latin1", Buffer.from([0xef, 0xbb, 0xbf]))).toEqual({ encoding: "latin1", bomLength: 0 });
    expect(resolveEncoding("utf8", Buffer.from([0xef, 0xbb, 0xbf]))).toEqual({ encoding: "utf-8", bomLength: 3 });
  });
});

describe("decodeText", () => {
  it("turns invalid UTF-8 into U+FFFD", () => {
    expect(decodeText(Buffer.from([0x61, 0xff, 0x62, 0xe2, 0x82]), "utf-8")).toBe("a\uFFFDb\uFFFD");
  });

  it("turns lone surrogates and an odd last byte of UTF-16LE into U+FFFD", () => {
    expect(decodeText(Buffer.from([0x3d, 0xd8, 0x61, 0x00, 0x62]), "utf-16le")).toBe("\uFFFDa\uFFFD");
  });

  it("maps every byte to a character in latin1", () => {
    expect(decodeText(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x80]), "latin1")).toBe("caf\u00e9\u0080");
  });

  it("treats bytes above 0x7F as invalid in ascii", () => {
    expect(decodeText(Buffer.from([0x41, 0xe9, 0x42]), "ascii")).toBe("A\uFFFDB");
  });
});

describe("createDecoder", () => {
  const decodeInPieces = (bytes: Buffer, encoding: TextEncoding, size: number): string => {
    const decoder = createDecoder(encoding);
    let text = "";
    for (let i = 0; i < bytes.length; i += size) text += decoder.write(bytes.subarray(i, i + size));
    return text + decoder.end();
  };

  it.each([1, 2, 3, 5])("never splits a UTF-8 character across %i-byte chunks", (size) => {
    const text = "héllo wörld €uro 😀 end";
    expect(decodeInPieces(Buffer.from(text, "utf8"), "utf-8", size)).toBe(text);
  });

  it.each([1, 3])("never splits a UTF-16LE surrogate pair across %i-byte chunks", (size) => {
    const text = "a😀b€";
    expect(decodeInPieces(Buffer.from(text, "utf16le"), "utf-16le", size)).toBe(text);
  });

  it("holds back an incomplete character until more bytes or the end", () => {
    const decoder = createDecoder("utf-8");
    expect(decoder.write(Buffer.from([0x61, 0xf0, 0x9f]))).toBe("a");
    expect(decoder.end()).toBe("\uFFFD");
  });

  it("turns invalid bytes into U+FFFD while streaming", () => {
    expect(decodeInPieces(Buffer.from([0x61, 0xc0, 0xaf, 0x62]), "utf-8", 1)).toBe("a\uFFFD\uFFFDb");
    expect(decodeInPieces(Buffer.from([0x41, 0xff]), "ascii", 1)).toBe("A\uFFFD");
  });
});

describe("encodeText", () => {
  it("encodes text each encoding can hold", () => {
    expect(encodeText("h€llo 😀", "utf-8")).toEqual(Buffer.from("h€llo 😀", "utf8"));
    expect(encodeText("h€😀", "utf-16le")).toEqual(Buffer.from("h€😀", "utf16le"));
    expect(encodeText("café ÿ", "latin1")).toEqual(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0xff]));
    expect(encodeText("plain\n", "ascii")).toEqual(Buffer.from("plain\n"));
  });

  it("refuses a character ascii cannot hold, naming it and where it is", () => {
    const err = caught(() => encodeText("line one\nnaïve", "ascii", "content"));
    expect(err.reason).toBe("LOSSY_ENCODING");
    expect(err.message).toBe('content: cannot encode "ï" (U+00EF) at line 2, column 3 in ascii');
    expect(err.metadata).toMatchObject({ encoding: "ascii", character: "U+00EF", line: "2", column: "3" });
  });

  it("refuses the euro sign in latin1", () => {
    const err = caught(() => encodeText("price: 5€", "latin1"));
    expect(err.reason).toBe("LOSSY_ENCODING");
    expect(err.message).toContain('"€" (U+20AC) at line 1, column 9');
  });

  it("counts columns in characters, not UTF-16 units", () => {
    const err = caught(() => encodeText("😀😀é", "ascii"));
    expect(err.message).toContain('"😀" (U+1F600) at line 1, column 1');
    const err2 = caught(() => encodeText("ab😀", "latin1"));
    expect(err2.message).toContain("column 3");
  });

  it.each(["utf-8", "utf-16le", "latin1", "ascii"] as const)("refuses a lone surrogate in %s", (encoding) => {
    const err = caught(() => encodeText("ok \uD83D end", encoding));
    expect(err.reason).toBe("LOSSY_ENCODING");
    expect(err.message).toContain("a lone surrogate (U+D83D) at line 1, column 4");
  });

  it("refuses a lone low surrogate too", () => {
    expect(caught(() => encodeText("\uDE00", "utf-8")).reason).toBe("LOSSY_ENCODING");
  });
});
