// ApplyPatch against a real daemon: the Codex format over several files, all
// or nothing. Every bad patch fails with its reason and changes nothing;
// a daemon killed (SIGKILL) while a patch is applied leaves, after its next
// start, either every file changed or none.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PatchAction } from "@filetools/proto/filetools/v1/files_pb.js";
import { expectError, setup, startDaemon } from "./daemon.js";

let d: Awaited<ReturnType<typeof setup>>;
beforeAll(async () => {
  d = await setup();
});
afterAll(() => d?.stop());

const put = (p: string, b: string | Buffer) => {
  mkdirSync(path.dirname(path.join(d.root, p)), { recursive: true });
  writeFileSync(path.join(d.root, p), b);
};
const host = (p: string) => readFileSync(path.join(d.root, p), "utf8");
const apply = (patch: string, dryRun = false) => d.client.files.applyPatch({ workspace: d.ws, patch, dryRun });
const patchOf = (...sections: string[]) => ["*** Begin Patch", ...sections, "*** End Patch", ""].join("\n");

/** Every file under the workspace root with its content, what the daemon left beside them (temp files), and every directory (its path and "/": an empty one too). */
function tree(): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string, rel: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const child = path.join(rel, e.name);
      if (e.isDirectory()) {
        out[`${child}/`] = "";
        walk(path.join(dir, e.name), child);
      } else out[child] = readFileSync(path.join(dir, e.name), "utf8");
    }
  };
  walk(d.root, "");
  return out;
}

describe("ApplyPatch", () => {
  it("adds, updates (hunks located by their lines and an @@ anchor), moves and deletes in one call, and records each file in the run's change set", async () => {
    put("p/a.py", "def one():\n    return 1\n\ndef two():\n    return 1\n");
    put("p/old.txt", "keep\nme\n");
    put("p/gone.txt", "bye\n");
    const run = await d.client.workspaces.startRun({ workspace: d.ws });
    const { files } = await apply(
      patchOf(
        "*** Add File: p/new/b.txt",
        "+hello",
        "+world",
        "*** Update File: p/a.py",
        "@@ def two():",
        "-    return 1",
        "+    return 2",
        "*** Update File: p/old.txt",
        "*** Move to: p/moved.txt",
        "@@",
        " keep",
        "-me",
        "+you",
        "*** Delete File: p/gone.txt",
      ),
    );
    expect(files.map((f) => [f.path, f.action, f.movedFrom])).toEqual([
      ["/p/new/b.txt", PatchAction.ADDED, ""],
      ["/p/a.py", PatchAction.UPDATED, ""],
      ["/p/moved.txt", PatchAction.MOVED, "/p/old.txt"],
      ["/p/gone.txt", PatchAction.DELETED, ""],
    ]);
    expect(files.every((f) => (f.action === PatchAction.DELETED) === (f.version === ""))).toBe(true);
    expect(host("p/new/b.txt")).toBe("hello\nworld\n");
    expect(host("p/a.py")).toBe("def one():\n    return 1\n\ndef two():\n    return 2\n");
    expect(host("p/moved.txt")).toBe("keep\nyou\n");
    expect(existsSync(path.join(d.root, "p/old.txt")) || existsSync(path.join(d.root, "p/gone.txt"))).toBe(false);
    const { changes } = await d.client.workspaces.finishRun({ workspace: d.ws, runId: run.run!.id, snapshot: false });
    expect(changes).toMatchObject({ created: 1n, modified: 1n, deleted: 1n, moved: 1n });
  });

  it("a dry run checks every hunk and changes nothing", async () => {
    put("dry.txt", "a\n");
    const before = tree();
    const { files } = await apply(patchOf("*** Update File: dry.txt", "@@", "-a", "+b"), true);
    expect(files.map((f) => [f.path, f.action])).toEqual([["/dry.txt", PatchAction.UPDATED]]);
    expect(tree()).toEqual(before);
  });

  it("a patch over three files whose last hunk does not fit changes none of them", async () => {
    put("t/1.txt", "one\n");
    put("t/2.txt", "two\n");
    put("t/3.txt", "three\nfour\n");
    const before = tree();
    const versions = await Promise.all(["t/1.txt", "t/2.txt", "t/3.txt"].map(async (p) => (await d.client.files.stat({ workspace: d.ws, path: p })).file!.version));
    const err = await expectError(
      apply(patchOf("*** Update File: t/1.txt", "@@", "-one", "+1", "*** Update File: t/2.txt", "@@", "-two", "+2", "*** Update File: t/3.txt", "@@", "-three", "+3", "@@", "-five", "+5")),
      "FAILED_PRECONDITION",
      "OLD_TEXT_NOT_FOUND",
    );
    expect(err.message).toBe('hunk 2 of /t/3.txt: its lines were not found in order after the previous hunk (the first: "five")');
    expect(err.metadata.hunk).toBe("2");
    expect(tree()).toEqual(before);
    const after = await Promise.all(["t/1.txt", "t/2.txt", "t/3.txt"].map(async (p) => (await d.client.files.stat({ workspace: d.ws, path: p })).file!.version));
    expect(after).toEqual(versions);
    expect(readdirSync(path.join(d.dataDir, "patches")).filter((n) => !n.startsWith("."))).toEqual([]);
  });

  // Each bad patch: its status and reason, and the tree exactly as it was (no temp file, no half change).
  const BAD: Array<[string, string, string, string]> = [
    ["no Begin Patch", "*** Update File: x\n*** End Patch\n", "INVALID_ARGUMENT", "INVALID_ARGUMENT"],
    ["no End Patch", "*** Begin Patch\n*** Delete File: t/1.txt\n", "INVALID_ARGUMENT", "INVALID_ARGUMENT"],
    ["an unknown section", patchOf("*** Rename File: t/1.txt"), "INVALID_ARGUMENT", "INVALID_ARGUMENT"],
    ["a hunk line without a prefix", patchOf("*** Update File: t/1.txt", "@@", "one"), "INVALID_ARGUMENT", "INVALID_ARGUMENT"],
    ["no file at all", patchOf(), "INVALID_ARGUMENT", "INVALID_ARGUMENT"],
    ["a path changed twice", patchOf("*** Delete File: t/1.txt", "*** Update File: t/1.txt", "@@", "-one", "+1"), "INVALID_ARGUMENT", "INVALID_ARGUMENT"],
    ["a move onto a path another section changes", patchOf("*** Update File: t/1.txt", "*** Move to: t/2.txt", "*** Delete File: t/2.txt"), "INVALID_ARGUMENT", "INVALID_ARGUMENT"],
    ["Add File of an existing file", patchOf("*** Add File: t/1.txt", "+x"), "ALREADY_EXISTS", "ALREADY_EXISTS"],
    ["Move to an existing file", patchOf("*** Update File: t/1.txt", "*** Move to: t/2.txt"), "ALREADY_EXISTS", "ALREADY_EXISTS"],
    ["Delete File of a missing file", patchOf("*** Add File: t/ok.txt", "+x", "*** Delete File: t/missing.txt"), "NOT_FOUND", "NOT_FOUND"],
    ["Delete File of a directory", patchOf("*** Delete File: t"), "FAILED_PRECONDITION", "IS_A_DIRECTORY"],
    ["Update File of a missing file", patchOf("*** Update File: t/missing.txt", "@@", "-a", "+b"), "NOT_FOUND", "NOT_FOUND"],
    ["a path out of the workspace", patchOf("*** Add File: t/ok.txt", "+x", "*** Add File: ../escape.txt", "+x"), "PERMISSION_DENIED", "PATH_ESCAPES_WORKSPACE"],
    ["an @@ anchor not in the file", patchOf("*** Update File: t/1.txt", "@@ nowhere", "-one", "+1"), "FAILED_PRECONDITION", "OLD_TEXT_NOT_FOUND"],
    ["an update of a binary file", patchOf("*** Update File: t/bin.dat", "@@", "-a", "+b"), "FAILED_PRECONDITION", "BINARY_FILE"],
  ];
  it.each(BAD)("%s: refused, nothing changes", async (_name, patch, code, reason) => {
    put("t/bin.dat", Buffer.from([0, 1, 2, 0, 0, 3]));
    const before = tree();
    await expectError(apply(patch), code, reason);
    expect(tree()).toEqual(before);
  });
});

/** Whether this machine lets us make a directory immutable (chattr +i: root with CAP_LINUX_IMMUTABLE, on ext4 or tmpfs). */
function canMakeImmutable(): boolean {
  const dir = mkdtempSync(path.join(tmpdir(), "immutable-"));
  try {
    return spawnSync("chattr", ["+i", dir]).status === 0 && spawnSync("chattr", ["-i", dir]).status === 0;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.skipIf(!canMakeImmutable())("ApplyPatch failing after its commit point", () => {
  // The patch's last file is in a directory made immutable after the patch was checked (chattr +i: even root
  // may not change it), so its step fails live, after the record and after the steps before it changed files.
  const locked = "frozen";
  const lock = (on: boolean) => execFileSync("chattr", [on ? "+i" : "-i", path.join(d.root, locked)]);
  it.each([
    ["an update after an update, an add, a move and a delete", ["*** Update File: u/a.txt", "@@", "-a1", "+A1", "*** Add File: u/new/added.txt", "+new", "*** Update File: u/m.txt", "*** Move to: u/moved.txt", "@@", "-m1", "+M1", "*** Delete File: u/gone.txt", `*** Update File: ${locked}/z.txt`, "@@", "-z1", "+Z1"]],
    // The first add makes new/ and new/deep/, the second only new/deep/more/ (new/deep/ is there by then), the move into/.
    ["an update after adds and a move into new directories", ["*** Add File: new/deep/file.txt", "+new", "*** Add File: new/deep/more/file.txt", "+more", "*** Update File: u/m.txt", "*** Move to: into/m.txt", `*** Update File: ${locked}/z.txt`, "@@", "-z1", "+Z1"]],
    ["a delete after an update and a delete", ["*** Update File: u/a.txt", "@@", "-a1", "+A1", "*** Delete File: u/gone.txt", `*** Delete File: ${locked}/z.txt`]],
  ])("%s: the steps before are undone, the caller is told, and no restart applies it", async (_name, sections) => {
    put("u/a.txt", "a1\na2\n");
    put("u/m.txt", "m1\n");
    put("u/gone.txt", "bye\n");
    put(`${locked}/z.txt`, "z1\n");
    const before = tree();
    lock(true);
    try {
      const error = await apply(patchOf(...sections)).then(() => undefined, (e: unknown) => e as { code: number; message: string });
      expect(error, "the patch's last step cannot succeed in an immutable directory").toBeDefined();
      expect(error!.message).not.toContain("undoing");
    } finally {
      lock(false);
    }
    const after = tree();
    // Files, temp files and directories alike (tree() lists them all): the directories the steps made are gone too.
    expect(after).toEqual(before);
    expect(readdirSync(path.join(d.dataDir, "patches")).filter((n) => n.endsWith(".json"))).toEqual([]);
  });
});

/** Resolves once a committed record is in the journal (or after 5 s: the patch may have finished already). */
async function journalRecordAppears(dir: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline && !(existsSync(dir) && readdirSync(dir).some((n) => n.endsWith(".json")))) await new Promise((r) => setImmediate(r));
}

describe("ApplyPatch and a crash", () => {
  it("a record the journal committed is finished at the next start; a record written only half is dropped and its staged files swept", async () => {
    const a = await startDaemon();
    await a.client.workspaces.createWorkspace({ workspace: "j" });
    const root = a.hostDir("j");
    writeFileSync(path.join(root, "x.txt"), "old x\n");
    writeFileSync(path.join(root, "y.txt"), "old y\n");
    await a.stop(true);
    // What applyPatch leaves between its commit point and the files' change: staged contents and a durable record.
    writeFileSync(path.join(root, ".filetools-tmp-00000000000000a1"), "new x\n");
    writeFileSync(path.join(root, ".filetools-tmp-00000000000000a2"), "new z\n");
    writeFileSync(path.join(root, ".filetools-tmp-00000000000000b1"), "never\n");
    mkdirSync(path.join(a.dataDir, "patches"), { recursive: true });
    const committed = { workspace: "j", writes: [{ path: "/x.txt", staged: ".filetools-tmp-00000000000000a1" }, { path: "/sub/z.txt", staged: ".filetools-tmp-00000000000000a2" }], removes: ["/y.txt"] };
    writeFileSync(path.join(a.dataDir, "patches", "00000000000000aa.json"), JSON.stringify(committed));
    writeFileSync(path.join(a.dataDir, "patches", "00000000000000bb.tmp"), JSON.stringify({ workspace: "j", writes: [{ path: "/x.txt", staged: ".filetools-tmp-00000000000000b1" }], removes: [] }));
    const b = await startDaemon({ dataDir: a.dataDir });
    try {
      expect(readFileSync(path.join(root, "x.txt"), "utf8")).toBe("new x\n");
      expect(readFileSync(path.join(root, "sub/z.txt"), "utf8")).toBe("new z\n");
      expect(existsSync(path.join(root, "y.txt"))).toBe(false);
      expect(readdirSync(root).filter((n) => n.startsWith(".filetools"))).toEqual([]);
      expect(readdirSync(path.join(a.dataDir, "patches"))).toEqual([]);
    } finally {
      await b.stop();
      rmSync(a.dataDir, { recursive: true, force: true });
    }
  });

  it("SIGKILL while patches are applied: after each restart, all three files are of one generation", async () => {
    let daemon = await startDaemon();
    const dataDir = daemon.dataDir;
    await daemon.client.workspaces.createWorkspace({ workspace: "k" });
    const root = daemon.hostDir("k");
    // Large files make the window between the first and the last file's change wide enough for a kill to land in it.
    const body = (gen: number, name: string) => `generation ${gen}\n${`${name} filler line\n`.repeat(200_000)}`;
    const names = ["a.txt", "b.txt", "c.txt"];
    for (const name of names) writeFileSync(path.join(root, name), body(0, name));
    const seen = new Map<string, number>();
    try {
      for (let round = 0; round < 16; round++) {
        const gens = names.map((name) => Number(/^generation (\d+)/.exec(readFileSync(path.join(root, name), "utf8"))![1]));
        expect(new Set(gens).size, `round ${round}: ${gens}`).toBe(1);
        const gen = gens[0]!;
        const patch = patchOf(...names.flatMap((name) => [`*** Update File: ${name}`, "@@", `-generation ${gen}`, `+generation ${gen + 1}`]));
        const call = daemon.client.files.applyPatch({ workspace: "k", patch }).then(
          () => "applied",
          () => "cut",
        );
        if (round % 2 === 0) await new Promise((r) => setTimeout(r, (round * 7) % 60));
        else await journalRecordAppears(path.join(dataDir, "patches")); // past the commit point, before or while the files change
        daemon.proc.kill("SIGKILL");
        await new Promise((r) => daemon.proc.once("exit", r));
        const outcome = await call;
        daemon.client.close();
        daemon = await startDaemon({ dataDir });
        const after = names.map((name) => Number(/^generation (\d+)/.exec(readFileSync(path.join(root, name), "utf8"))![1]));
        expect(new Set(after).size, `round ${round} (${outcome}): ${after}`).toBe(1);
        expect([gen, gen + 1]).toContain(after[0]);
        if (outcome === "applied") expect(after[0]).toBe(gen + 1);
        expect(readdirSync(root).filter((n) => n.startsWith(".filetools"))).toEqual([]);
        for (const name of names) expect(readFileSync(path.join(root, name), "utf8")).toBe(body(after[0]!, name));
        const key = `${outcome}, ${after[0] === gen ? "none changed" : "all changed"}`;
        seen.set(key, (seen.get(key) ?? 0) + 1);
      }
    } finally {
      await daemon.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
    // How the kills fell (not asserted: timing on a shared machine): printed for the record.
    console.log(`apply-patch kill loop: ${[...seen].map(([k, n]) => `${k}: ${n}`).join("; ")}`);
  }, 240_000);
});
