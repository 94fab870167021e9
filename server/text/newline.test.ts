import { describe, expect, it } from "vitest";
import { applyNewlineMode, toCrlf, toLf, usesCrlf } from "./newline.js";

describe("line ending conversion", () => {
  it("turns lone LFs into CRLF without doubling existing CRLFs", () => {
    expect(toCrlf("a\nb\r\nc\n")).toBe("a\r\nb\r\nc\r\n");
  });

  it("turns CRLFs into LF and leaves a lone CR alone", () => {
    expect(toLf("a\r\nb\rc\r\n")).toBe("a\nb\rc\n");
  });
});

describe("usesCrlf", () => {
  it("judges a file by its first line ending", () => {
    expect(usesCrlf(Buffer.from("a\r\nb\n"), "utf-8")).toBe(true);
    expect(usesCrlf(Buffer.from("a\nb\r\n"), "utf-8")).toBe(false);
    expect(usesCrlf(Buffer.from("\r\n"), "utf-8")).toBe(true);
  });

  it("is false without any line feed", () => {
    expect(usesCrlf(Buffer.from("no newline\r"), "utf-8")).toBe(false);
    expect(usesCrlf(Buffer.alloc(0), "latin1")).toBe(false);
  });

  it("looks past a BOM", () => {
    expect(usesCrlf(Buffer.from([0xef, 0xbb, 0xbf, 0x0d, 0x0a]), "utf-8")).toBe(true);
  });

  it("reads UTF-16LE code units, not stray 0x0A bytes", () => {
    const crlf = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("Ċ\r\nx\n", "utf16le")]);
    expect(usesCrlf(crlf, "utf-16le")).toBe(true);
    // U+0D0A has the bytes 0A 0D: neither a CR nor an LF.
    expect(usesCrlf(Buffer.from("\u0d0a\u000a", "utf16le"), "utf-16le")).toBe(false);
    expect(usesCrlf(Buffer.from("ab\r\n", "utf16le"), "utf-16le")).toBe(true);
  });
});

describe("applyNewlineMode", () => {
  it("PRESERVE gives LF text CRLF endings when the replaced file uses CRLF", () => {
    expect(applyNewlineMode("a\nb\n", "preserve", true)).toBe("a\r\nb\r\n");
  });

  it("PRESERVE leaves text as sent for a new or LF file", () => {
    expect(applyNewlineMode("a\r\nb\n", "preserve", false)).toBe("a\r\nb\n");
  });

  it("LF and CRLF force their style whatever the file had", () => {
    expect(applyNewlineMode("a\r\nb\n", "lf", true)).toBe("a\nb\n");
    expect(applyNewlineMode("a\r\nb\n", "crlf", false)).toBe("a\r\nb\r\n");
  });
});
