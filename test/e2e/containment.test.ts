import { execFileSync } from "node:child_process";
import { existsSync, linkSync, lstatSync, mkdirSync, readFileSync, rmSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collect, expectError, readAll, setup } from "./daemon.js";

let d: Awaited<ReturnType<typeof setup>>;
const outside = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-e2e-outside-")));
writeFileSync(path.join(outside, "secret.txt"), "TOP SECRET\n");

beforeAll(async () => {
  d = await setup();
  const r = d.root;
  mkdirSync(path.join(r, "dir"), { recursive: true });
  writeFileSync(path.join(r, "dir/inner.txt"), "inner\n");
  symlinkSync(outside, path.join(r, "abs-out"));
  symlinkSync(path.relative(r, outside), path.join(r, "rel-out"));
  symlinkSync("dir/inner.txt", path.join(r, "in-link"));
  symlinkSync(path.join(outside, "created-by-daemon.txt"), path.join(r, "dangling-out"));
  symlinkSync("dir/made-through-link.txt", path.join(r, "dangling-in"));
  // a sibling of the root whose name has the root as a prefix
  mkdirSync(`${r}_evil`, { recursive: true });
  writeFileSync(`${r}_evil/loot.txt`, "loot\n");
  execFileSync("mkfifo", [path.join(r, "fifo")]);
  // a hard link to a file outside (same file system: both under the temp dir)
  try {
    linkSync(path.join(outside, "secret.txt"), path.join(r, "hard-out"));
  } catch {
    // different file systems: the test below is skipped in effect
  }
});
afterAll(async () => {
  await d?.stop();
  rmSync(outside, { recursive: true, force: true });
  if (d) rmSync(`${d.root}_evil`, { recursive: true, force: true });
});

const read = (p: string) => readAll(d.client, { workspace: d.ws, path: p });
const write = (p: string, content = "pwned") => d.client.files.write({ workspace: d.ws, path: p, body: { case: "content", value: content } });
const ESC = ["PERMISSION_DENIED", "PATH_ESCAPES_WORKSPACE"] as const;

describe("containment", () => {
  it("`..` is PATH_ESCAPES_WORKSPACE", async () => {
    await expectError(read(".."), ...ESC);
    await expectError(write("../x.txt"), ...ESC);
  });

  it("`a/../../x` is PATH_ESCAPES_WORKSPACE", async () => {
    await expectError(read("a/../../x"), ...ESC);
  });

  it("`/etc/passwd` is the workspace file /etc/passwd: NOT_FOUND, not the host's", async () => {
    const err = await expectError(read("/etc/passwd"), "NOT_FOUND", "NOT_FOUND");
    expect(err.message).not.toContain("root:");
  });

  it("an escaping absolute symlink is refused", async () => {
    await expectError(read("abs-out/secret.txt"), ...ESC);
    await expectError(write("abs-out/new.txt"), ...ESC);
    expect(existsSync(path.join(outside, "new.txt"))).toBe(false);
  });

  it("an escaping relative symlink is refused", async () => {
    await expectError(read("rel-out/secret.txt"), ...ESC);
  });

  it("an internal symlink is followed", async () => {
    expect((await read("in-link")).text).toBe("inner\n");
  });

  it("a prefix sibling of the root (<root>_evil) is unreachable", async () => {
    const name = path.basename(d.root);
    await expectError(read(`../${name}_evil/loot.txt`), ...ESC);
  });

  it("writing through a dangling symlink pointing outside is refused and creates nothing outside", async () => {
    await expectError(write("dangling-out"), ...ESC);
    expect(existsSync(path.join(outside, "created-by-daemon.txt"))).toBe(false);
  });

  it("writing through a dangling symlink inside creates its target", async () => {
    await write("dangling-in", "made\n");
    expect((await read("dir/made-through-link.txt")).text).toBe("made\n");
  });

  it("reading a FIFO is NOT_A_REGULAR_FILE and returns promptly", async () => {
    const started = Date.now();
    await expectError(
      readAll(d.client, { workspace: d.ws, path: "fifo" }).catch((e) => Promise.reject(e)),
      "FAILED_PRECONDITION",
      "NOT_A_REGULAR_FILE",
    );
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("a NUL in a path is INVALID_PATH", async () => {
    await expectError(read("a\0b"), "INVALID_ARGUMENT", "INVALID_PATH");
  });

  it("a 256-byte component is INVALID_PATH", async () => {
    await expectError(write(`dir/${"n".repeat(256)}`), "INVALID_ARGUMENT", "INVALID_PATH");
  });

  it("a path over 4096 bytes is INVALID_PATH", async () => {
    await expectError(read(Array.from({ length: 40 }, () => "d".repeat(120)).join("/")), "INVALID_ARGUMENT", "INVALID_PATH");
  });

  it("a hard link to an outside file is refused (read and write) and the outside file is untouched", async () => {
    if (!existsSync(path.join(d.root, "hard-out"))) return;
    await expectError(read("hard-out"), ...ESC);
    await expectError(
      d.client.files.write({ workspace: d.ws, path: "hard-out", body: { case: "content", value: "pwned" }, mode: 4 }),
      ...ESC,
    );
    expect(readFileSync(path.join(outside, "secret.txt"), "utf8")).toBe("TOP SECRET\n");
  });

  it("Move and Delete through an escaping symlink never touch the outside", async () => {
    await expectError(d.client.files.move({ workspace: d.ws, source: "dir/inner.txt", destination: "abs-out/stolen.txt" }), ...ESC);
    expect(existsSync(path.join(outside, "stolen.txt"))).toBe(false);
    await expectError(d.client.files.move({ workspace: d.ws, source: "abs-out/secret.txt", destination: "got.txt" }), ...ESC);
    await expectError(d.client.files.delete({ workspace: d.ws, path: "abs-out/secret.txt" }), ...ESC);
    expect(existsSync(path.join(outside, "secret.txt"))).toBe(true);
  });

  it("writing below a dangling outside symlink never creates directories outside", async () => {
    await expectError(write("dangling-out/sub/x.txt"), ...ESC);
    await expectError(d.client.files.makeDir({ workspace: d.ws, path: "dangling-out/sub" }), ...ESC);
    expect(existsSync(path.join(outside, "created-by-daemon.txt"))).toBe(false);
  });

  it("Upload through an escaping symlink is refused", async () => {
    await expectError(
      d.client.files.upload([
        { event: { case: "header", value: { workspace: d.ws, path: "abs-out/up.bin" } } },
        { event: { case: "chunk", value: { data: new Uint8Array([1, 2, 3]) } } },
      ]),
      ...ESC,
    );
    expect(existsSync(path.join(outside, "up.bin"))).toBe(false);
  });

  it("Delete of an escaping symlink removes the link, never its target", async () => {
    symlinkSync(outside, path.join(d.root, "abs-out-2"));
    expect((await d.client.files.delete({ workspace: d.ws, path: "abs-out-2", recursive: true })).existed).toBe(true);
    expect(() => lstatSync(path.join(d.root, "abs-out-2"))).toThrow();
    expect(existsSync(path.join(outside, "secret.txt"))).toBe(true);
  });

  it("a symlink loop is refused without hanging", async () => {
    symlinkSync("loop-b", path.join(d.root, "loop-a"));
    symlinkSync("loop-a", path.join(d.root, "loop-b"));
    const err = await expectError(read("loop-a"), "__any__");
    expect(err.codeName).not.toBe("INTERNAL");
  });

  it("Download of a FIFO is NOT_A_REGULAR_FILE", async () => {
    await expectError(collect(d.client.files.download({ workspace: d.ws, path: "fifo" })), "FAILED_PRECONDITION", "NOT_A_REGULAR_FILE");
  });

  it("the daemon keeps serving afterwards", async () => {
    expect((await d.client.files.stat({ workspace: d.ws, path: "dir/inner.txt" })).file?.size).toBe(6n);
  });
});
