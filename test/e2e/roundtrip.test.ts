// The round trip of every tree the API can make (and the odd names an
// agent's shell makes): FinishRun on one daemon, StartRun's restore on a
// fresh daemon (new data dir, same store), compared byte for byte: content,
// modes, symlink targets, names as bytes and mtimes (to the second, what a
// table of contents holds; directories and links too). GNU tar extracts the
// same snapshot to the same. A tree past the limits fails FinishRun clearly.
import { execFileSync } from "node:child_process";
import { chmodSync, closeSync, constants, existsSync, lstatSync, lutimesSync, openSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { expectError, listAll, startDaemon, type Daemon } from "./daemon.js";
import { exportTarball } from "./runs-scenario.js";

const scratch = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-roundtrip-")));
afterAll(() => execFileSync("rm", ["-rf", scratch]));

// The limits of server/workspace/limits.ts.
const MAX_DEPTH = 1024;
const MAX_PATH_BYTES = 4095;
const MAX_SYMLINK_TARGET_BYTES = 4095;

const bytes = (...parts: (string | number[])[]) => Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p) : Buffer.from(p))));

/**
 * Everything below `dir`, by name bytes (hex-keyed): type, mode, content or
 * link target, and mtime in whole seconds. Walks through held descriptors (/proc/self/fd/N/name): the
 * deepest paths are longer than PATH_MAX from the host root.
 */
function snapshotOf(dir: Buffer | string): Map<string, string> {
  const out = new Map<string, string>();
  const visit = (fd: number, rel: string) => {
    const at = (name: Buffer) => Buffer.concat([Buffer.from(`/proc/self/fd/${fd}/`), name]);
    for (const name of readdirSync(`/proc/self/fd/${fd}`, { encoding: "buffer" })) {
      const key = rel + "/" + name.toString("hex");
      const stats = lstatSync(at(name), { bigint: true });
      const mode = (stats.mode & 0o777n).toString(8);
      const mtime = `@${stats.mtimeNs / 1_000_000_000n}`;
      if (stats.isSymbolicLink()) out.set(key, `link ${readlinkSync(at(name), { encoding: "buffer" }).toString("hex")} ${mtime}`);
      else if (stats.isDirectory()) {
        out.set(key, `dir ${mode} ${mtime}`);
        const child = openSync(at(name), constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
        try {
          visit(child, key);
        } finally {
          closeSync(child);
        }
      } else out.set(key, `file ${mode} ${readFileSync(at(name)).toString("hex")} ${mtime}`);
    }
  };
  const fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    visit(fd, "");
  } finally {
    closeSync(fd);
  }
  return out;
}

/** The helper's cleanup removes by host path, which the longest paths exceed: a recursive Delete (of any depth) first. */
async function deleteLongPaths(daemon: Daemon, workspace: string): Promise<void> {
  for (const top of ["/" + "n".repeat(255), "/d"]) await daemon.client.files.delete({ workspace, path: top, recursive: true }).catch(() => undefined);
}

describe("round trip: FinishRun → a fresh daemon → StartRun restore", () => {
  it("keeps every tree the API can make, and shell-made names, byte for byte", async () => {
    const store = `file://${path.join(scratch, "store")}`;
    const a = await startDaemon({ args: ["--store", store] });
    let expected: Map<string, string>;
    let snapshotId: string;
    try {
      const c = a.client.files;
      const ws = "rt";
      const { run } = await a.client.workspaces.startRun({ workspace: ws, restore: "NONE" });
      const write = (p: string, body: string | Buffer) =>
        c.write({ workspace: ws, path: p, body: typeof body === "string" ? { case: "content", value: body } : { case: "data", value: body } });
      // the deepest path allowed, and the longest
      await write("/" + Array(MAX_DEPTH - 1).fill("d").join("/") + "/deepest.txt", "deep\n");
      const longParts = [...Array(15).fill("n".repeat(255)), "e".repeat(255)]; // 16 × 255 + 15 slashes
      expect(longParts.join("/").length).toBe(MAX_PATH_BYTES);
      await write("/" + longParts.join("/"), "long\n");
      await expectError(write("/" + Array(MAX_DEPTH).fill("d").join("/") + "/x", "x"), "INVALID_ARGUMENT", "INVALID_PATH");
      await write("/" + "L".repeat(255), "longest name\n");
      await write("/ünïcødé/日本語/😀.txt", "unicode\n");
      await write("/empty.txt", "");
      await write("/big.bin", randomBytes(5 * 1024 * 1024 + 123));
      await write("/back\\\\slash.txt", "a name with a backslash\n");
      await c.makeDir({ workspace: ws, path: "/empty-dir" });
      await c.makeDir({ workspace: ws, path: "/nested/empty/dirs", parents: true });
      await write("/run.sh", "#!/bin/sh\necho hi\n");
      chmodSync(path.join(a.hostDir(ws), "run.sh"), 0o755);
      mkdirSync(path.join(a.hostDir(ws), "private"), 0o700);
      chmodSync(path.join(a.hostDir(ws), "private"), 0o700);
      writeFileSync(path.join(a.hostDir(ws), "private", "key.txt"), "kept private\n");
      // what an agent's shell makes: non-UTF-8 names, links (one with the longest target there is)
      writeFileSync(bytes(a.hostDir(ws), "/", [0x62, 0xff]), "b\\xff\n");
      mkdirSync(bytes(a.hostDir(ws), "/", "d", [0xfe]));
      writeFileSync(bytes(a.hostDir(ws), "/", "d", [0xfe], "/", "in", [0x80, 0xc3]), "inside\n");
      symlinkSync("empty.txt", path.join(a.hostDir(ws), "link"));
      symlinkSync(bytes("d", [0xfe]), bytes(a.hostDir(ws), "/", "raw-link"));
      const longTarget = "./".repeat((MAX_SYMLINK_TARGET_BYTES - "empty.txt".length) / 2) + "empty.txt";
      expect(longTarget.length).toBe(MAX_SYMLINK_TARGET_BYTES);
      symlinkSync(longTarget, path.join(a.hostDir(ws), "longest-link"));
      // mtimes in the past, between whole seconds: a file, a link, an empty directory, and directories with entries (set after them)
      for (const [i, name] of ["run.sh", "link", "empty-dir", "nested/empty", "private", "ünïcødé"].entries()) {
        lutimesSync(path.join(a.hostDir(ws), name), 1_500_000_000 + i * 1000, 1_500_000_000 + i * 1000 + 0.5);
      }
      // listed, escaped and flagged, and usable as shown
      const { entries } = await listAll(a.client, { workspace: ws, path: "/", recursive: true, maxDepth: 2 });
      const raw = entries.find((e) => e.path === "/b\\xff");
      expect(raw?.escaped).toBe(true);
      expect(entries.find((e) => e.path === "/d\\xfe/in\\x80\\xc3")?.escaped).toBe(true);
      expect(entries.find((e) => e.path === "/back\\\\slash.txt")?.escaped).toBe(true);
      expect(entries.find((e) => e.path === "/empty.txt")?.escaped).toBe(false);
      const stat = await c.stat({ workspace: ws, path: "/d\\xfe/in\\x80\\xc3" });
      expect(stat.file?.size).toBe(7n);
      expect(stat.file?.escaped).toBe(true);

      expected = snapshotOf(a.hostDir(ws));
      const finished = await a.client.workspaces.finishRun({ workspace: ws, runId: run!.id });
      snapshotId = finished.snapshot!.id;

      // GNU tar extracts the same bytes
      const exported = await exportTarball(a.client, { workspace: ws, snapshotId });
      const tarDir = path.join(scratch, "gnu-tar");
      mkdirSync(tarDir);
      writeFileSync(path.join(scratch, "s.tar.gz"), exported.bytes);
      execFileSync("tar", ["-xzf", path.join(scratch, "s.tar.gz"), "-C", tarDir]);
      expect(snapshotOf(tarDir)).toEqual(expected);
      execFileSync("rm", ["-rf", tarDir]); // GNU rm walks by descriptors
      // a stored snapshot filtered by globs keeps the bytes too; globs match the shown paths, and a
      // backslash in a glob escapes the next character: the shown "d\xfe" is the glob "d\\xfe"
      const filtered = await exportTarball(a.client, { workspace: ws, snapshotId, include: ["b\\\\xff", "d\\\\xfe/**"] });
      const filteredDir = path.join(scratch, "filtered");
      mkdirSync(filteredDir);
      writeFileSync(path.join(scratch, "f.tar.gz"), filtered.bytes);
      execFileSync("tar", ["-xzf", path.join(scratch, "f.tar.gz"), "-C", filteredDir]);
      expect([...snapshotOf(filteredDir).keys()].sort()).toEqual(["/62ff", "/64fe", "/64fe/696e80c3"]);
    } finally {
      await deleteLongPaths(a, "rt");
      await a.stop();
    }

    const b = await startDaemon({ args: ["--store", store] });
    try {
      const { run } = await b.client.workspaces.startRun({ workspace: "rt", restore: snapshotId });
      expect(run!.restoredFrom).toBe(snapshotId);
      expect(snapshotOf(b.hostDir("rt"))).toEqual(expected);
    } finally {
      await deleteLongPaths(b, "rt");
      await b.stop();
    }
  }, 180_000);

  it("keeps mtimes at the edges: before 1970, the epoch, tar's 11 octal digits and past them (2242), ext4's last second (2446), on restore and in exports", async () => {
    const store = `file://${path.join(scratch, "store-mtimes")}`;
    const edges = { "before-1970.txt": -315_619_200, "epoch.txt": 0, "octal-max.txt": 8 ** 11 - 1, "past-octal.txt": 8 ** 11, "ext4-last.txt": 15_032_385_535, "a-dir": -1 };
    const a = await startDaemon({ args: ["--store", store] });
    let expected: Map<string, string>;
    let snapshotId: string;
    try {
      const { run } = await a.client.workspaces.startRun({ workspace: "mt", restore: "NONE" });
      for (const name of Object.keys(edges)) {
        if (name === "a-dir") mkdirSync(path.join(a.hostDir("mt"), name));
        else writeFileSync(path.join(a.hostDir("mt"), name), `${name}\n`);
      }
      symlinkSync("epoch.txt", path.join(a.hostDir("mt"), "old-link"));
      // touch, as Node takes a negative time for now
      for (const [name, seconds] of [...Object.entries(edges), ["old-link", -2] as const]) execFileSync("touch", ["-h", "-d", `@${seconds}`, path.join(a.hostDir("mt"), name)]);
      expected = snapshotOf(a.hostDir("mt"));
      // what this file system holds is what the test expects back
      expect([...expected.values()].map((v) => v.split(" ").at(-1))).toEqual(expect.arrayContaining(["@-315619200", "@0", "@8589934591", "@8589934592", "@15032385535", "@-1", "@-2"]));
      snapshotId = (await a.client.workspaces.finishRun({ workspace: "mt", runId: run!.id })).snapshot!.id;
      for (const include of [[], ["*"]]) {
        const exported = await exportTarball(a.client, { workspace: "mt", snapshotId, include });
        const tarDir = mkdtempSync(path.join(scratch, "mt-tar-"));
        writeFileSync(path.join(scratch, "mt.tar.gz"), exported.bytes);
        execFileSync("tar", ["-xzf", path.join(scratch, "mt.tar.gz"), "-C", tarDir], { stdio: "ignore" }); // it warns of the odd times
        // an export filtered by globs holds no directory members
        expect(snapshotOf(tarDir)).toEqual(include.length === 0 ? expected : new Map([...expected].filter(([, v]) => !v.startsWith("dir "))));
      }
      // and ImportArchive reads the times back from an export
      const whole = (await exportTarball(a.client, { workspace: "mt", snapshotId })).bytes;
      async function* importing() {
        yield { event: { case: "header" as const, value: { workspace: "mt", path: "/imported" } } };
        yield { event: { case: "chunk" as const, value: { data: whole } } };
      }
      await a.client.workspaces.importArchive(importing());
      // GNU tar's own archive of them too (its default format writes a time before 1970 in base-256)
      const gnu = execFileSync("tar", ["-cz", "-C", a.hostDir("mt"), "before-1970.txt", "old-link"], { stdio: ["ignore", "pipe", "ignore"] });
      async function* importingGnu() {
        yield { event: { case: "header" as const, value: { workspace: "mt", path: "/gnu" } } };
        yield { event: { case: "chunk" as const, value: { data: gnu } } };
      }
      await a.client.workspaces.importArchive(importingGnu());
      expect([...snapshotOf(path.join(a.hostDir("mt"), "gnu")).values()].map((v) => v.split(" ").at(-1))).toEqual(["@-315619200", "@-2"]);
      const imported = snapshotOf(path.join(a.hostDir("mt"), "imported"));
      expect(imported).toEqual(new Map([...expected].filter(([k]) => k !== "/696d706f72746564" && k !== "/676e75").map(([k, v]) => [k, v.startsWith("dir ") ? v.replace(/@.*/, imported.get(k)!.replace(/.*@/, "@")) : v])));
    } finally {
      await a.stop();
    }
    const b = await startDaemon({ args: ["--store", store] });
    try {
      const { run } = await b.client.workspaces.startRun({ workspace: "mt", restore: snapshotId });
      expect(run!.restoredFrom).toBe(snapshotId);
      expect(snapshotOf(b.hostDir("mt"))).toEqual(expected);
    } finally {
      await b.stop();
    }
  }, 120_000);

  it("a restored file rewritten behind the daemon's back at once, to the same size with its restored mtime put back, is read by the next FinishRun", async () => {
    const store = `file://${path.join(scratch, "store-racy")}`;
    const a = await startDaemon({ args: ["--store", store] });
    let snapshotId = "";
    try {
      const { run } = await a.client.workspaces.startRun({ workspace: "racy", restore: "NONE" });
      await a.client.files.write({ workspace: "racy", path: "/f.txt", body: { case: "content", value: "before\n" } });
      lutimesSync(path.join(a.hostDir("racy"), "f.txt"), 1_500_000_000, 1_500_000_000);
      snapshotId = (await a.client.workspaces.finishRun({ workspace: "racy", runId: run!.id })).snapshot!.id;
    } finally {
      await a.stop();
    }
    const b = await startDaemon({ args: ["--store", store] });
    try {
      const { run } = await b.client.workspaces.startRun({ workspace: "racy", restore: snapshotId });
      const file = path.join(b.hostDir("racy"), "f.txt");
      expect(lstatSync(file).mtimeMs).toBe(1_500_000_000_000);
      // The stat cache vouches for it: only its version tells the change (written behind the call: waited for).
      const cacheFile = path.join(b.dataDir, "stat-cache", "racy.json");
      await expect.poll(() => (existsSync(cacheFile) ? JSON.parse(readFileSync(cacheFile, "utf8")).paths : []), { timeout: 10_000 }).toContain("/f.txt");
      writeFileSync(file, "AFTER!\n");
      lutimesSync(file, 1_500_000_000, 1_500_000_000);
      const next = (await b.client.workspaces.finishRun({ workspace: "racy", runId: run!.id })).snapshot!.id;
      expect((await b.client.workspace("racy").readText("f.txt", { atSnapshot: next })).text).toBe("AFTER!\n");
    } finally {
      await b.stop();
    }
  }, 60_000);

  it("a file of zeros far past the import's expansion ratio round-trips (a stored snapshot may inflate to what its manifest's file list accounts for)", async () => {
    const store = `file://${path.join(scratch, "store-zeros")}`;
    const a = await startDaemon({ args: ["--store", store] });
    let snapshotId = "";
    try {
      const { run } = await a.client.workspaces.startRun({ workspace: "zeros", restore: "NONE" });
      // 300 MiB of zeros (sparse, made by a shell): gzip packs it ~1,000 to 1, past 256 MiB expanded
      execFileSync("truncate", ["-s", "300M", path.join(a.hostDir("zeros"), "zeros.bin")]);
      snapshotId = (await a.client.workspaces.finishRun({ workspace: "zeros", runId: run!.id })).snapshot!.id;
    } finally {
      await a.stop();
    }
    const b = await startDaemon({ args: ["--store", store] });
    try {
      await b.client.workspaces.startRun({ workspace: "zeros", restore: snapshotId });
      const restored = path.join(b.hostDir("zeros"), "zeros.bin");
      expect(lstatSync(restored).size).toBe(300 * 1024 ** 2);
      expect(execFileSync("cmp", ["-n", String(300 * 1024 ** 2), restored, "/dev/zero"]).length).toBe(0);
    } finally {
      await b.stop();
    }
  }, 120_000);

  it("a tree past the limits (made by a shell) fails FinishRun with QUOTA_EXCEEDED, naming no store fault", async () => {
    const d = await startDaemon({ args: ["--store", `file://${path.join(scratch, "store-deep")}`] });
    try {
      const { run } = await d.client.workspaces.startRun({ workspace: "deep", restore: "NONE" });
      await d.client.files.makeDir({ workspace: "deep", path: "/a" });
      const dir = d.hostDir("deep") + "/a";
      // 1,100 levels below /a, built with relative steps (the host path would pass PATH_MAX)
      execFileSync("sh", ["-c", `cd "${dir}" && i=0; while [ $i -lt 1100 ]; do mkdir x && cd x; i=$((i+1)); done; echo bottom > f`]);
      await expectError(d.client.workspaces.finishRun({ workspace: "deep", runId: run!.id }), "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED");
    } finally {
      await d.stop();
    }
  }, 120_000);
});
