import { chmodSync, readFileSync, statSync } from "node:fs";
import { createHash } from "node:crypto";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Newline, WriteMode } from "../../clients/ts/src/index.js";
import { expectError, readAll, setup } from "./daemon.js";

let d: Awaited<ReturnType<typeof setup>>;
beforeAll(async () => {
  d = await setup();
});
afterAll(() => d?.stop());

const host = (p: string) => readFileSync(path.join(d.root, p));
const write = (p: string, content: string, extra: Record<string, unknown> = {}) =>
  d.client.files.write({ workspace: d.ws, path: p, body: { case: "content", value: content }, ...extra });

describe("Write", () => {
  it("creates a file and reports path, size, created, sha256 and version", async () => {
    const res = await write("src/a.txt", "hello\n");
    expect(res.path).toBe("/src/a.txt");
    expect(res.size).toBe(6n);
    expect(res.created).toBe(true);
    expect(res.sha256).toBe(createHash("sha256").update("hello\n").digest("hex"));
    expect(res.version).not.toBe("");
    expect(host("src/a.txt").toString()).toBe("hello\n");
  });

  it("CREATE_OR_REPLACE replaces and yields a new version", async () => {
    const a = await write("r.txt", "one\n");
    const b = await write("r.txt", "two\n", { mode: WriteMode.CREATE_OR_REPLACE });
    expect(b.created).toBe(false);
    expect(b.version).not.toBe(a.version);
    expect(host("r.txt").toString()).toBe("two\n");
  });

  it("CREATE_ONLY on an existing file is ALREADY_EXISTS and changes nothing", async () => {
    await write("co.txt", "orig");
    await expectError(write("co.txt", "new", { mode: WriteMode.CREATE_ONLY }), "ALREADY_EXISTS", "ALREADY_EXISTS");
    expect(host("co.txt").toString()).toBe("orig");
  });

  it("REPLACE_ONLY on a missing file is NOT_FOUND", async () => {
    await expectError(write("ro-missing.txt", "x", { mode: WriteMode.REPLACE_ONLY }), "NOT_FOUND", "NOT_FOUND");
  });

  it("APPEND adds to the end (and creates when absent)", async () => {
    await write("ap.txt", "a\n", { mode: WriteMode.APPEND });
    const res = await write("ap.txt", "b\n", { mode: WriteMode.APPEND });
    expect(host("ap.txt").toString()).toBe("a\nb\n");
    expect(res.size).toBe(4n);
  });

  it("newline PRESERVE turns LF into CRLF when replacing a CRLF file; new files get content as sent", async () => {
    await write("nl.txt", "x\r\ny\r\n");
    await write("nl.txt", "p\nq\n", { newline: Newline.PRESERVE });
    expect(host("nl.txt").toString()).toBe("p\r\nq\r\n");
    await write("nl-new.txt", "p\nq\r\n");
    expect(host("nl-new.txt").toString()).toBe("p\nq\r\n");
  });

  it("newline LF and CRLF normalise", async () => {
    await write("lf.txt", "a\r\nb\n", { newline: Newline.LF });
    expect(host("lf.txt").toString()).toBe("a\nb\n");
    await write("crlf.txt", "a\nb\r\n", { newline: Newline.CRLF });
    expect(host("crlf.txt").toString()).toBe("a\r\nb\r\n");
  });

  it("data bytes are written as they are", async () => {
    const bytes = new Uint8Array([0, 1, 2, 0xff, 0xfe, 10, 13]);
    const res = await d.client.files.write({ workspace: d.ws, path: "bin.dat", body: { case: "data", value: bytes }, newline: Newline.CRLF });
    expect(res.size).toBe(7n);
    expect([...host("bin.dat")]).toEqual([...bytes]);
  });

  it("latin1 round trips", async () => {
    await write("l1.txt", "café ÿ\n", { encoding: "latin1" });
    expect([...host("l1.txt")]).toEqual([...Buffer.from("café ÿ\n", "latin1")]);
    const r = await readAll(d.client, { workspace: d.ws, path: "l1.txt", encoding: "latin1" });
    expect(r.text).toBe("café ÿ\n");
  });

  it("utf-16le round trips", async () => {
    await write("u16.txt", "héllo ☃\n", { encoding: "utf-16le" });
    expect(host("u16.txt").subarray(-16).equals(Buffer.from("héllo ☃\n", "utf16le").subarray(-16))).toBe(true);
    const r = await readAll(d.client, { workspace: d.ws, path: "u16.txt", encoding: "utf-16le" });
    expect(r.text).toBe("héllo ☃\n");
  });

  it("a character latin1 cannot hold is LOSSY_ENCODING", async () => {
    await expectError(write("lossy.txt", "snow ☃", { encoding: "latin1" }), "FAILED_PRECONDITION", "LOSSY_ENCODING");
  });

  it("create_dirs false with a missing parent is NOT_FOUND", async () => {
    await expectError(write("no/such/dir/f.txt", "x", { createDirs: false }), "NOT_FOUND", "NOT_FOUND");
  });

  it("writing over a directory is IS_A_DIRECTORY", async () => {
    await write("adir/f.txt", "x");
    await expectError(write("adir", "x"), "FAILED_PRECONDITION", "IS_A_DIRECTORY");
  });

  it("a file used as a parent directory is NOT_A_DIRECTORY", async () => {
    await write("plain.txt", "x");
    await expectError(write("plain.txt/child.txt", "x"), "FAILED_PRECONDITION", "NOT_A_DIRECTORY");
  });

  it("replacing keeps the permission bits", async () => {
    await write("perm.sh", "#!/bin/sh\n");
    chmodSync(path.join(d.root, "perm.sh"), 0o751);
    await write("perm.sh", "#!/bin/sh\necho hi\n");
    expect(statSync(path.join(d.root, "perm.sh")).mode & 0o7777).toBe(0o751);
  });

  it("if_version mismatch is CONTENT_CHANGED with current_version, and writes nothing", async () => {
    const first = await write("iv.txt", "v1");
    const second = await write("iv.txt", "v2", { ifVersion: first.version });
    const err = await expectError(write("iv.txt", "v3", { ifVersion: first.version }), "FAILED_PRECONDITION", "CONTENT_CHANGED");
    expect(err.metadata.current_version).toBe(second.version);
    expect(host("iv.txt").toString()).toBe("v2");
  });

  it("an unknown encoding is INVALID_ARGUMENT", async () => {
    await expectError(write("enc.txt", "x", { encoding: "klingon" }), "INVALID_ARGUMENT", "INVALID_ARGUMENT");
  });

  it("an empty path is INVALID_PATH", async () => {
    await expectError(write("", "x"), "INVALID_ARGUMENT", "INVALID_PATH");
  });
});
