import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, setup } from "./daemon.js";

let d: Awaited<ReturnType<typeof setup>>;
beforeAll(async () => {
  d = await setup();
});
afterAll(() => d?.stop());

const put = (p: string, b: string | Buffer) => writeFileSync(path.join(d.root, p), b);
const host = (p: string) => readFileSync(path.join(d.root, p));
const edit = (p: string, edits: { oldText: string; newText: string; replaceAll?: boolean }[], extra: Record<string, unknown> = {}) =>
  d.client.files.edit({ workspace: d.ws, path: p, edits, ...extra });

describe("Edit", () => {
  it("replaces a unique occurrence and returns a unified diff", async () => {
    put("u.ts", "const a = 1;\nconst b = 2;\n");
    const res = await edit("u.ts", [{ oldText: "b = 2", newText: "b = 3" }]);
    expect(res.replacements).toBe(1n);
    expect(res.diff).toContain("a/u.ts");
    expect(res.diff).toContain("-const b = 2;");
    expect(res.diff).toContain("+const b = 3;");
    expect(res.sha256Before).not.toBe(res.sha256After);
    expect(host("u.ts").toString()).toBe("const a = 1;\nconst b = 3;\n");
  });

  it("old_text not found is OLD_TEXT_NOT_FOUND with the closest line", async () => {
    put("nf.ts", "alpha\nfunction hello() {}\ngamma\n");
    const err = await expectError(edit("nf.ts", [{ oldText: "function helo() {}", newText: "x" }]), "FAILED_PRECONDITION", "OLD_TEXT_NOT_FOUND");
    expect(err.metadata.closest_line).toBe("2");
    expect(err.metadata.edit_index).toBe("0");
  });

  it("old_text found twice is OLD_TEXT_NOT_UNIQUE with the count", async () => {
    put("nu.ts", "x\nx\nx\n");
    const err = await expectError(edit("nu.ts", [{ oldText: "x", newText: "y" }]), "FAILED_PRECONDITION", "OLD_TEXT_NOT_UNIQUE");
    expect(err.metadata.count).toBe("3");
  });

  it("replace_all replaces every occurrence", async () => {
    put("ra.ts", "x\nx\nx\n");
    const res = await edit("ra.ts", [{ oldText: "x", newText: "y", replaceAll: true }]);
    expect(res.replacements).toBe(3n);
    expect(host("ra.ts").toString()).toBe("y\ny\ny\n");
  });

  it("applies several edits in order, each on the previous result", async () => {
    put("m.ts", "one two\n");
    await edit("m.ts", [
      { oldText: "one", newText: "three" },
      { oldText: "three two", newText: "done" },
    ]);
    expect(host("m.ts").toString()).toBe("done\n");
  });

  it("is all or nothing: a failing second edit leaves the file byte-identical", async () => {
    put("aon.ts", "keep me\nand me\n");
    const before = host("aon.ts");
    const err = await expectError(
      edit("aon.ts", [
        { oldText: "keep", newText: "lose" },
        { oldText: "absent", newText: "x" },
      ]),
      "FAILED_PRECONDITION",
      "OLD_TEXT_NOT_FOUND",
    );
    expect(err.metadata.edit_index).toBe("1");
    expect(host("aon.ts").equals(before)).toBe(true);
  });

  it("dry_run returns the diff and writes nothing", async () => {
    put("dry.ts", "a\n");
    const version = (await d.client.files.stat({ workspace: d.ws, path: "dry.ts" })).file!.version;
    const res = await edit("dry.ts", [{ oldText: "a", newText: "b" }], { dryRun: true });
    expect(res.diff).toContain("+b");
    expect(res.version).toBe(version);
    expect(host("dry.ts").toString()).toBe("a\n");
  });

  it("a CRLF file matches LF old_text and keeps CRLF", async () => {
    put("crlf.txt", "one\r\ntwo\r\nthree\r\n");
    await edit("crlf.txt", [{ oldText: "one\ntwo\n", newText: "uno\ndos\n" }]);
    expect(host("crlf.txt").toString()).toBe("uno\r\ndos\r\nthree\r\n");
  });

  it("invalid bytes elsewhere in the file stay byte for byte", async () => {
    const original = Buffer.concat([Buffer.from("\uFEFFhead \xff\n", "latin1"), Buffer.from([0xc3, 0x28, 0x0a]), Buffer.from("target\n")]);
    put("raw.txt", original);
    await edit("raw.txt", [{ oldText: "target", newText: "TARGET" }]);
    const expected = Buffer.concat([original.subarray(0, original.length - 7), Buffer.from("TARGET\n")]);
    expect(host("raw.txt").equals(expected)).toBe(true);
  });

  it("a latin1 file edited with a character latin1 cannot hold is LOSSY_ENCODING", async () => {
    put("l1.txt", Buffer.from("café\n", "latin1"));
    await expectError(edit("l1.txt", [{ oldText: "café", newText: "☃" }], { encoding: "latin1" }), "FAILED_PRECONDITION", "LOSSY_ENCODING");
    expect(host("l1.txt").equals(Buffer.from("café\n", "latin1"))).toBe(true);
  });

  it("empty old_text and old_text equal to new_text are INVALID_ARGUMENT", async () => {
    put("inv.txt", "a\n");
    await expectError(edit("inv.txt", [{ oldText: "", newText: "b" }]), "INVALID_ARGUMENT", "INVALID_ARGUMENT");
    await expectError(edit("inv.txt", [{ oldText: "a", newText: "a" }]), "INVALID_ARGUMENT", "INVALID_ARGUMENT");
  });

  it("if_version mismatch is CONTENT_CHANGED; the matching version succeeds with a new version", async () => {
    put("iv.txt", "a\n");
    const v1 = (await d.client.files.stat({ workspace: d.ws, path: "iv.txt" })).file!.version;
    const res = await edit("iv.txt", [{ oldText: "a", newText: "b" }], { ifVersion: v1 });
    expect(res.version).not.toBe(v1);
    const err = await expectError(edit("iv.txt", [{ oldText: "b", newText: "c" }], { ifVersion: v1 }), "FAILED_PRECONDITION", "CONTENT_CHANGED");
    expect(err.metadata.current_version).toBe(res.version);
    expect(host("iv.txt").toString()).toBe("b\n");
  });

  it("a UTF-8 BOM is kept", async () => {
    put("bom.txt", "\uFEFFhello\n");
    await edit("bom.txt", [{ oldText: "hello", newText: "bye" }]);
    expect(host("bom.txt").equals(Buffer.from("\uFEFFbye\n"))).toBe(true);
  });

  it("a utf-16le file with a BOM is edited in its encoding", async () => {
    put("u16.txt", Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("héllo\n", "utf16le")]));
    await edit("u16.txt", [{ oldText: "héllo", newText: "wörld" }], { encoding: "utf-16le" });
    expect(host("u16.txt").equals(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("wörld\n", "utf16le")]))).toBe(true);
  });

  it("a binary file is BINARY_FILE", async () => {
    put("bin.dat", Buffer.from([0, 1, 2, 3, 0, 0, 0x61]));
    await expectError(edit("bin.dat", [{ oldText: "a", newText: "b" }]), "FAILED_PRECONDITION", "BINARY_FILE");
  });

  it("a replace_all on every line of a long file answers at once, with a diff cut at 1 MiB that says so (the daemon's thread was held for hours)", async () => {
    const lines = Array.from({ length: 200_000 }, (_, i) => `value ${i}\n`);
    put("every.txt", lines.join(""));
    const deadline = Date.now() + 60_000; // before the fix: hours
    for (const dryRun of [true, false]) {
      const [res, stat] = await Promise.all([
        d.client.files.edit({ workspace: d.ws, path: "every.txt", edits: [{ oldText: "value", newText: "VALUE", replaceAll: true }], dryRun }, { deadline }),
        d.client.files.stat({ workspace: d.ws, path: "every.txt" }, { deadline }),
      ]);
      expect(stat.file!.size).toBeGreaterThan(0n);
      expect(res.replacements).toBe(200_000n);
      expect(res.diffTruncated).toBe(true);
      expect(Buffer.byteLength(res.diff)).toBeLessThanOrEqual(1 << 20);
      expect(res.diff).toMatch(/^--- a\/every\.txt\n\+\+\+ b\/every\.txt\n@@ -1,\d+ \+1,\d+ @@\n-value 0\n\+VALUE 0\n-value 1\n/);
    }
    expect(host("every.txt").toString()).toBe(lines.join("").replaceAll("value", "VALUE"));

    // A small edit of the same file: the whole diff, not cut.
    const small = await edit("every.txt", [{ oldText: "VALUE 7\n", newText: "seven\n" }]);
    expect(small.diffTruncated).toBe(false);
    expect(small.diff).toContain("-VALUE 7\n+seven\n");
  });
});
