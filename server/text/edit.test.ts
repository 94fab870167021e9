import { applyPatch, createTwoFilesPatch, FILE_HEADERS_ONLY, parsePatch } from "diff";
import { describe, expect, it } from "vitest";
import { caught } from "../test-support.js";
import { applyEdits, closestLine, MAX_REPLACEMENTS, type TextEdit } from "./edit.js";
import { bomBytes, bomLength, decodeText, type TextEncoding } from "./encoding.js";
import { DIFF_MAX_BYTES } from "./diff.js";


const edit = (oldText: string, newText: string, replaceAll = false): TextEdit => ({ oldText, newText, replaceAll });
const apply = (content: string | Buffer, edits: TextEdit[], encoding: TextEncoding = "utf-8") =>
  applyEdits(typeof content === "string" ? Buffer.from(content) : content, edits, encoding, "/src/a.ts");

describe("applyEdits: replacing", () => {
  it("replaces a unique occurrence", () => {
    const result = apply("const a = 1;\nconst b = 2;\n", [edit("b = 2", "b = 3")]);
    expect(result.updated.toString()).toBe("const a = 1;\nconst b = 3;\n");
    expect(result.replacements).toBe(1);
  });

  it("refuses an occurrence found more than once, with the count", () => {
    const err = caught(() => apply("x\nx\nx\n", [edit("x", "y")]));
    expect(err.reason).toBe("OLD_TEXT_NOT_UNIQUE");
    expect(err.message).toContain("3 times");
    expect(err.message).toContain("/src/a.ts");
    expect(err.metadata).toEqual({ edit_index: "0", count: "3" });
  });

  it("counts overlapping occurrences as ambiguous", () => {
    expect(caught(() => apply("aaa", [edit("aa", "b")])).metadata.count).toBe("2");
  });

  it("replaces every occurrence with replace_all, left to right without overlap", () => {
    const result = apply("x\nx\nx\n", [edit("x", "yy", true)]);
    expect(result.updated.toString()).toBe("yy\nyy\nyy\n");
    expect(result.replacements).toBe(3);
    expect(apply("aaaa", [edit("aa", "b", true)]).updated.toString()).toBe("bb");
  });

  it("applies edits in order, each to the result of the previous", () => {
    const result = apply("alpha beta\n", [edit("alpha", "gamma"), edit("gamma beta", "delta"), edit("delta", "done", true)]);
    expect(result.updated.toString()).toBe("done\n");
    expect(result.replacements).toBe(3);
  });

  it("is all or nothing: a failing later edit leaves no result", () => {
    const original = Buffer.from("one\ntwo\n");
    const err = caught(() => applyEdits(original, [edit("one", "1"), edit("three", "3")], "utf-8", "/a.txt"));
    expect(err.reason).toBe("OLD_TEXT_NOT_FOUND");
    expect(err.metadata.edit_index).toBe("1");
    expect(original.toString()).toBe("one\ntwo\n");
  });

  it("checks every edit's arguments before searching", () => {
    const err = caught(() => apply("one\n", [edit("missing", "x"), edit("", "y")]));
    expect(err.reason).toBe("INVALID_ARGUMENT");
    expect(err.message).toContain("edits[1]");
  });

  it("refuses an empty old_text and an old_text equal to new_text", () => {
    const empty = caught(() => apply("a", [edit("", "b")]));
    expect(empty.reason).toBe("INVALID_ARGUMENT");
    expect(empty.message).toBe("edits[0].old_text is empty");
    const same = caught(() => apply("a", [edit("a", "b"), edit("a", "a")]));
    expect(same.reason).toBe("INVALID_ARGUMENT");
    expect(same.message).toContain("edits[1]");
  });

  it("refuses an empty list of edits", () => {
    expect(caught(() => apply("a", [])).reason).toBe("INVALID_ARGUMENT");
  });

  it("can delete text", () => {
    expect(apply("keep\ndrop\nkeep\n", [edit("drop\n", "")]).updated.toString()).toBe("keep\nkeep\n");
  });
});

describe("applyEdits: bytes outside the edit never change", () => {
  it("keeps a UTF-8 BOM", () => {
    const original = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("hello\n")]);
    const { updated, diff } = apply(original, [edit("hello", "bye")]);
    expect(updated).toEqual(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("bye\n")]));
    expect(diff).not.toContain("\uFEFF");
  });

  it("keeps invalid byte sequences elsewhere byte for byte", () => {
    const original = Buffer.concat([Buffer.from("bad: "), Buffer.from([0xff, 0xc3, 0x28]), Buffer.from("\nfix me\n")]);
    const { updated } = apply(original, [edit("fix me", "fixed")]);
    expect(updated).toEqual(Buffer.concat([Buffer.from("bad: "), Buffer.from([0xff, 0xc3, 0x28]), Buffer.from("\nfixed\n")]));
  });

  it("keeps mixed line endings outside the edit", () => {
    const { updated } = apply("a\r\nb\nc\r\n", [edit("b", "B")]);
    expect(updated.toString()).toBe("a\r\nB\nc\r\n");
  });

  it("keeps a latin1 file's other bytes and writes latin1", () => {
    const original = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a, 0x78, 0x0a]); // "café\nx\n"
    const { updated } = apply(original, [edit("x", "naïve")], "latin1");
    expect(updated).toEqual(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a, 0x6e, 0x61, 0xef, 0x76, 0x65, 0x0a]));
  });

  it("edits UTF-16LE and keeps its BOM", () => {
    const bom = Buffer.from([0xff, 0xfe]);
    const original = Buffer.concat([bom, Buffer.from("ĊĊ x\nend\n", "utf16le")]);
    const { updated } = apply(original, [edit("x", "y")], "utf-16le");
    expect(updated).toEqual(Buffer.concat([bom, Buffer.from("ĊĊ y\nend\n", "utf16le")]));
  });

  it("does not match UTF-16LE text across a code unit boundary", () => {
    // U+6261 is bytes 61 62; its high byte and the next unit's low byte spell U+6162 ("慢" vs "扡").
    const original = Buffer.from("\u6261\u6261", "utf16le");
    expect(caught(() => apply(original, [edit("\u6162", "x")], "utf-16le")).reason).toBe("OLD_TEXT_NOT_FOUND");
  });
});

describe("applyEdits: CRLF files", () => {
  const crlf = "function f() {\r\n  return 1;\r\n}\r\n";

  it("matches old_text written with LF and writes CRLF", () => {
    const { updated, replacements } = apply(crlf, [edit("{\n  return 1;\n}", "{\n  return 2;\n  // two\n}")]);
    expect(updated.toString()).toBe("function f() {\r\n  return 2;\r\n  // two\r\n}\r\n");
    expect(replacements).toBe(1);
  });

  it("gives new lines of a single-line edit CRLF endings", () => {
    const { updated } = apply(crlf, [edit("  return 1;", "  const x = 1;\n  return x;")]);
    expect(updated.toString()).toBe("function f() {\r\n  const x = 1;\r\n  return x;\r\n}\r\n");
  });

  it("matches old_text that already has CRLF", () => {
    const { updated } = apply(crlf, [edit("{\r\n  return 1;", "{\n  return 3;")]);
    expect(updated.toString()).toBe("function f() {\r\n  return 3;\r\n}\r\n");
  });

  it("leaves LF files' new text as sent", () => {
    const { updated } = apply("a\nb\n", [edit("a\nb", "x\ny")]);
    expect(updated.toString()).toBe("x\ny\n");
  });
});

describe("applyEdits: lossy edits are refused", () => {
  it("refuses new_text that ascii cannot hold", () => {
    const err = caught(() => apply("name = x\n", [edit("x", "José")], "ascii"));
    expect(err.reason).toBe("LOSSY_ENCODING");
    expect(err.message).toContain("edits[0].new_text");
    expect(err.message).toContain('"é" (U+00E9)');
    expect(err.metadata).toMatchObject({ edit_index: "0", encoding: "ascii", character: "U+00E9" });
  });

  it("refuses new_text that latin1 cannot hold", () => {
    const err = caught(() => apply("price\n", [edit("price", "5 €")], "latin1"));
    expect(err.reason).toBe("LOSSY_ENCODING");
    expect(err.message).toContain("U+20AC");
  });

  it("refuses old_text with U+FFFD standing for undecodable bytes", () => {
    const original = Buffer.concat([Buffer.from("caf"), Buffer.from([0xe9]), Buffer.from(" au lait\n")]);
    const err = caught(() => apply(original, [edit("caf\uFFFD au lait", "café noir")]));
    expect(err.reason).toBe("LOSSY_ENCODING");
    expect(err.message).toContain("U+FFFD");
  });

  it("refuses new_text with U+FFFD when old_text has none", () => {
    const err = caught(() => apply("x\n", [edit("x", "\uFFFD")]));
    expect(err.reason).toBe("LOSSY_ENCODING");
  });

  it("refuses U+FFFD in ascii even when it shows bytes of the file", () => {
    const original = Buffer.from([0x61, 0xff, 0x0a]);
    expect(caught(() => apply(original, [edit("a\uFFFD", "b\uFFFD")], "ascii")).reason).toBe("LOSSY_ENCODING");
  });

  it("allows editing around a real U+FFFD character of the file", () => {
    const { updated } = apply("a\uFFFDb\n", [edit("a\uFFFDb", "a\uFFFDc")]);
    expect(updated.toString()).toBe("a\uFFFDc\n");
  });

  it("refuses lone surrogates", () => {
    expect(caught(() => apply("x", [edit("x", "\uD800")])).reason).toBe("LOSSY_ENCODING");
  });

  it("edits around invalid bytes while keeping them", () => {
    const original = Buffer.concat([Buffer.from("caf"), Buffer.from([0xe9]), Buffer.from(" au lait\n")]);
    const { updated } = apply(original, [edit("au lait", "noir")]);
    expect(updated).toEqual(Buffer.concat([Buffer.from("caf"), Buffer.from([0xe9]), Buffer.from(" noir\n")]));
  });
});

describe("applyEdits: not found", () => {
  const source = ["import x from 'y';", "", "function main() {", "    const value = compute(1, 2);", "    return value;", "}", ""].join("\n");

  it("names the edit and the path, and points at the line with different indentation", () => {
    const err = caught(() => apply(source, [edit("  const value = compute(1, 2);\n  return value;", "x")]));
    expect(err.reason).toBe("OLD_TEXT_NOT_FOUND");
    expect(err.message).toContain("edits[0].old_text not found in /src/a.ts");
    expect(err.message).toContain("line is 4");
    expect(err.metadata).toEqual({
      edit_index: "0",
      closest_line: "4",
      closest_text: "    const value = compute(1, 2);",
    });
  });

  it("points at the most similar line when the text differs a little", () => {
    const err = caught(() => apply(source, [edit("const valu = compute(1, 3);", "x")]));
    expect(err.metadata.closest_line).toBe("4");
  });

  it("uses the first non-blank line of old_text", () => {
    const err = caught(() => apply(source, [edit("\n\n  return  value;\n}\n// gone", "x")]));
    expect(err.metadata.closest_line).toBe("5");
  });

  it("gives no hint when nothing is similar", () => {
    const err = caught(() => apply(source, [edit("zzzzzzzzzzzzzzzzzzzz", "x")]));
    expect(err.metadata).toEqual({ edit_index: "0" });
  });

  it("numbers lines in the text as earlier edits left it", () => {
    const err = caught(() => apply("a\nb\nneedle\n", [edit("a\n", "a\nnew\n"), edit("needle x", "y")]));
    expect(err.metadata).toMatchObject({ edit_index: "1", closest_line: "4", closest_text: "needle" });
  });

  it("quotes a CRLF file's line without its CR", () => {
    expect(closestLine("one\r\n  two\r\n", "two!")).toEqual({ line: 2, text: "  two" });
  });
});

describe("applyEdits: diff", () => {
  it("is a unified diff with a/ and b/ headers and 3 lines of context", () => {
    const lines = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`);
    const { diff } = apply(lines.join("\n") + "\n", [edit("line 5", "LINE 5")]);
    expect(diff).toBe(
      [
        "--- a/src/a.ts",
        "+++ b/src/a.ts",
        "@@ -2,7 +2,7 @@",
        " line 2",
        " line 3",
        " line 4",
        "-line 5",
        "+LINE 5",
        " line 6",
        " line 7",
        " line 8",
        "",
      ].join("\n"),
    );
  });

  it("decodes the file's encoding for the diff", () => {
    const { diff } = apply(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]), [edit("café", "thé")], "latin1");
    expect(diff).toContain("-café\n+thé\n");
  });

  const fullDiff = (before: string, after: string) =>
    createTwoFilesPatch("a/src/a.ts", "b/src/a.ts", before, after, undefined, undefined, {
      context: 3,
      headerOptions: FILE_HEADERS_ONLY,
    });
  const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}\n`).join("");

  it.each([
    ["the first line", lines(20), "line 1\n", "first\n"],
    ["the last line", lines(20), "line 20\n", "last\n"],
    ["the final newline", lines(5), "line 5\n", "line 5"],
    ["an insertion at the end of a file without a final newline", "a\nb", "b", "b\nc"],
    ["a deletion of lines", lines(20), "line 9\nline 10\n", ""],
    ["a CRLF file", "a\r\nb\r\nc\r\nd\r\ne\r\nf\r\n", "d", "D"],
    ["empty lines", "\n\n\nx\n\n\n\n\n", "x", "y"],
  ])("matches a diff of the whole text when changing %s", (_name, before, oldText, newText) => {
    const { updated, diff } = apply(before, [edit(oldText, newText)]);
    expect(diff).toBe(fullDiff(before, updated.toString()));
  });

  it("gives separate hunks for distant edits", () => {
    const before = lines(40);
    const { updated, diff } = apply(before, [edit("line 3\n", "three\n"), edit("line 33\n", "thirty-three\n")]);
    expect(diff).toBe(fullDiff(before, updated.toString()));
    expect(diff.match(/^@@/gm)).toHaveLength(2);
  });

  it("always applies back to the new text", () => {
    let state = 7;
    const rand = (n: number) => {
      state = (state * 1103515245 + 12345) & 0x7fffffff;
      return state % n;
    };
    for (let round = 0; round < 200; round++) {
      const words = ["a", "b", "c", "\n", "\n", "é", " "];
      const before = Array.from({ length: 1 + rand(200) }, () => words[rand(words.length)]).join("");
      const at = rand(before.length);
      const oldText = before.slice(at, at + 1 + rand(10));
      const newText = Array.from({ length: rand(12) }, () => words[rand(words.length)]).join("");
      if (oldText === newText) continue;
      const { updated, diff } = apply(before, [edit(oldText, newText, true)]);
      expect(applyPatch(before, diff)).toBe(updated.toString());
    }
  });
});

describe("applyEdits: diff of many changes (built around the replacements)", () => {
  const decoded = (buf: Buffer, encoding: TextEncoding) => decodeText(buf.subarray(bomLength(buf, encoding)), encoding);

  it("applies back to the new text after random edit sequences, in every encoding", () => {
    let state = 11;
    const rand = (n: number) => {
      state = (state * 1103515245 + 12345) & 0x7fffffff;
      return state % n;
    };
    const words = ["a", "b", "c", "\n", "\n", "\n", "é", " ", "xy"];
    const encodings: TextEncoding[] = ["utf-8", "utf-16le", "latin1"];
    let checked = 0;
    for (let round = 0; round < 600; round++) {
      const encoding = encodings[round % encodings.length]!;
      const text = Array.from({ length: 1 + rand(300) }, () => words[rand(words.length)]).join("");
      const bom = encoding !== "latin1" && rand(4) === 0 ? bomBytes(encoding) : Buffer.alloc(0);
      const before = Buffer.concat([bom, Buffer.from(text, encoding === "utf-8" ? "utf8" : encoding)]);
      const edits: TextEdit[] = [];
      let current = text;
      for (let n = 1 + rand(3); n > 0 && current.length > 0; n--) {
        const at = rand(current.length);
        const oldText = current.slice(at, at + 1 + rand(12));
        const newText = Array.from({ length: rand(10) }, () => words[rand(words.length)]).join("");
        if (oldText === newText) continue;
        edits.push(edit(oldText, newText, true));
        current = current.replaceAll(oldText, newText);
      }
      if (edits.length === 0) continue;
      const { updated, diff, diffTruncated } = applyEdits(before, edits, encoding, "/src/a.ts");
      expect(decoded(updated, encoding)).toBe(current);
      expect(diffTruncated).toBe(false);
      expect(applyPatch(text, diff)).toBe(current);
      checked++;
    }
    expect(checked).toBeGreaterThan(500);
  });

  const numbered = (n: number, eol = "\n") => Array.from({ length: n }, (_, i) => `value ${i % 7} on line ${i + 1}${eol}`).join("");

  it.each([
    ["LF", "\n", "utf-8"],
    ["CRLF", "\r\n", "utf-8"],
    ["UTF-16LE", "\n", "utf-16le"],
  ] as const)("gives a whole, applicable diff when every line of a long %s file changes (past the library's work bound)", (_name, eol, encoding) => {
    const text = numbered(20_000, eol).slice(0, -eol.length); // and no final newline
    const before = Buffer.from(text, encoding === "utf-8" ? "utf8" : encoding);
    const { updated, diff, diffTruncated, replacements } = applyEdits(before, [edit("value", "VALUE", true)], encoding, "/big.txt");
    expect(replacements).toBe(20_000);
    expect(diffTruncated).toBe(false);
    expect(diff.match(/^@@/gm)).toHaveLength(1);
    expect(diff.endsWith("\\ No newline at end of file\n")).toBe(true);
    expect(applyPatch(text, diff)).toBe(decoded(updated, encoding));
  });

  it("gives applicable hunks when every other line changes, and separate ones when changes are far apart", () => {
    const lines = Array.from({ length: 30_000 }, (_, i) => (i % 2 === 0 ? `even ${i}\n` : i % 1000 === 1 ? `rare ${i}\n` : `odd ${i}\n`));
    const text = lines.join("");
    for (const [oldText, newText, hunks] of [
      ["even", "EVEN", 1],
      ["rare", "RARE\nsplit", 30],
    ] as const) {
      const { updated, diff, diffTruncated } = apply(text, [edit(oldText, newText, true)]);
      expect(diffTruncated).toBe(false);
      expect(diff.match(/^@@/gm)).toHaveLength(hunks);
      expect(applyPatch(text, diff)).toBe(updated.toString());
    }
  });

  it("stops the diff at a line past 1 MiB and says so, the last hunk counting what it shows; the edit is whole", () => {
    for (const oldText of ["line", "on line 1"]) {
      // One hunk of 200,000 changed lines; then 11,112 hunks of one line each.
      const text = numbered(200_000);
      const { updated, diff, diffTruncated } = apply(text, [edit(oldText, "LINE", true)]);
      expect(updated.toString()).toBe(text.replaceAll(oldText, "LINE"));
      expect(diffTruncated).toBe(true);
      expect(Buffer.byteLength(diff)).toBeLessThanOrEqual(DIFF_MAX_BYTES);
      expect(Buffer.byteLength(diff)).toBeGreaterThan(DIFF_MAX_BYTES - 1000);
      const [patch] = parsePatch(diff);
      expect(patch!.hunks.length).toBeGreaterThan(0);
      expect(patch!.hunks.at(-1)!.lines.at(-1)).toMatch(/^\+/);
      // What it shows applies: the first lines changed, the rest as they were.
      const patched = applyPatch(text, diff);
      expect(patched).not.toBe(false);
      const [got, want, was] = [patched as string, updated.toString(), text].map((t) => t.split("\n"));
      const changed = got!.findIndex((line, i) => line !== want![i]);
      expect(changed).toBeGreaterThan(0);
      expect(got!.slice(changed)).toEqual(was!.slice(changed));
    }

    // Many changes on one long line: one hunk too large to show, found without scanning the line per change.
    const long = "ab".repeat(1_000_000) + "\n";
    const one = apply(long, [edit("a", "c", true)]);
    expect(one.replacements).toBe(1_000_000);
    expect(one.diffTruncated).toBe(true);
    expect(one.diff).toBe("--- a/src/a.ts\n+++ b/src/a.ts\n");
  });
});

describe("applyEdits: bounds", () => {
  it("refuses an edit past 1,000,000 replacements (each held memory: 64 MiB of one letter ended the daemon), counting across edits", () => {
    const err = caught(() => apply("a".repeat(MAX_REPLACEMENTS + 1), [edit("a", "b", true)]));
    expect(err.reason).toBe("INVALID_ARGUMENT");
    expect(err.message).toBe("edits[0] would take the edit past 1,000,000 replacements in /src/a.ts; use a longer old_text, or Read and Write");
    expect(apply("a".repeat(MAX_REPLACEMENTS), [edit("a", "b", true)]).replacements).toBe(MAX_REPLACEMENTS);
    const flips = Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? edit("ab", "ba", true) : edit("ba", "ab", true)));
    const many = caught(() => apply("ab".repeat(100_000), flips));
    expect(many.message).toMatch(/^edits\[10\] would take the edit past 1,000,000 replacements/);
  });

  it("hints from the start of a very long line, and stops on a file of blank lines", () => {
    const long = "x ".repeat(4_000_000) + "\n" + "target line\n";
    expect(closestLine(long, "target lime")).toEqual({ line: 2, text: "target line" });
    expect(closestLine("\n".repeat(20_000_000) + "target line\n", "target lime")).toBeUndefined();
  });
});
