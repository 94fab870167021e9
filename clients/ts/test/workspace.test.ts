// The conveniences of WorkspaceClient against a real filetoolsd: read windows
// and paging, write/edit round trips and their error reasons, search streaming
// and leaving it early, deadlines, cancellation, snapshots to and from files,
// and archives exported into and imported from files of the workspace.
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { status as Code } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDaemon, type Daemon } from "../../../test/e2e/daemon.js";
import { connect, FileToolsError, WorkspaceClient, WriteMode, type FileToolsClient } from "../src/index.js";
import { followCallLog, type CallLog } from "./daemon-log.js";

let daemon: Daemon;
let client: FileToolsClient;
let log: CallLog;
let ws: WorkspaceClient;
const local = mkdtempSync(path.join(tmpdir(), "ftc-ts-")); // a directory on this machine for exports and imports

const SEARCH = "filetools.v1.Files/Search";
const numbered = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i}\n`).join("");

// The search tests' tree: 40 files × 500 matching lines of 480 characters.
// Ten thousand results (the maximum) are about 5 MB, far more than the
// transport buffers of a client with a narrow HTTP/2 window, so the daemon
// can finish only if such a client keeps reading. It is bound as one workspace per search whose end the tests watch
// in the daemon's log, so that each log line names its test's call.
const HAYSTACK = path.join(local, "haystack");
const WATCHED = ["search-all", "search-break", "search-abort"] as const;

beforeAll(async () => {
  mkdirSync(HAYSTACK);
  const line = `needle ${"x".repeat(473)}\n`;
  for (let i = 0; i < 40; i++) writeFileSync(path.join(HAYSTACK, `f${String(i).padStart(2, "0")}.txt`), line.repeat(500));
  const binds = Object.fromEntries(["search", ...WATCHED].map((name) => [name, HAYSTACK]));
  daemon = await startDaemon({ args: ["--log-level", "info"], binds });
  log = followCallLog(daemon.proc);
  client = connect(daemon.address);
  await client.createWorkspace("w");
  ws = client.workspace("w");
});

afterAll(async () => {
  client?.close();
  await daemon?.stop();
  rmSync(local, { recursive: true, force: true });
});

/** The FileToolsError a call fails with. */
async function failure(call: Promise<unknown> | (() => Promise<unknown>)): Promise<FileToolsError> {
  const error = await (typeof call === "function" ? call() : call).then(
    () => expect.fail("expected the call to fail"),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(FileToolsError);
  return error as FileToolsError;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A client whose HTTP/2 window (64 KiB) holds far less than a search's
 * results, so that the daemon cannot have sent them all before a
 * cancellation arrives (with the default 16 MiB window, whether it has
 * depends on timing).
 */
const narrowClient = () => connect(daemon.address, { channelOptions: { "grpc-node.flow_control_window": 64 * 1024 } });
const sha256Of = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

describe("readText", () => {
  beforeAll(async () => {
    await ws.writeText("big.log", numbered(1, 1000));
  });

  it("reads a window of lines with where to go on", async () => {
    const ended = log.nextCall("filetools.v1.Files/Read", "w");
    const window = await ws.readText("big.log", { startLine: 10, lineCount: 5 });
    expect(await ended).toMatchObject({ code: "OK" }); // read to its end, not cancelled after the trailer
    expect(window).toMatchObject({
      text: numbered(10, 14),
      firstLine: 10,
      lastLine: 14,
      nextStartLine: 15,
      truncated: false,
      eof: false,
    });
    expect(window.version).toBe((await ws.stat("big.log")).version);
  });

  it("pages to the end of a file", async () => {
    const pages = [];
    let startLine: number | undefined = 1;
    while (startLine !== undefined) {
      const page = await ws.readText("big.log", { startLine, lineCount: 300 });
      pages.push(page);
      startLine = page.nextStartLine;
    }
    expect(pages.map((p) => [p.firstLine, p.lastLine])).toEqual([
      [1, 300],
      [301, 600],
      [601, 900],
      [901, 1000],
    ]);
    expect(pages.map((p) => p.text).join("")).toBe(numbered(1, 1000));
    expect(pages.at(-1)).toMatchObject({ eof: true, totalLines: 1000, nextStartLine: undefined });
  });

  it("hands a large window to readTo piece by piece, each with its first line number", async () => {
    await ws.writeText("bigger.log", numbered(1, 20_000));
    const pieces: { text: string; firstLine: number }[] = [];
    const window = await ws.readTo("bigger.log", (text, firstLine) => void pieces.push({ text, firstLine }), { startLine: 2 });
    expect(pieces.length).toBeGreaterThan(1);
    let expected = 2;
    for (const piece of pieces) {
      expect(piece.firstLine).toBe(expected);
      expected += piece.text.split("\n").length - 1;
    }
    expect(pieces.map((p) => p.text).join("")).toBe(numbered(2, 20_000));
    expect(window).toMatchObject({ firstLine: 2, lastLine: 20_000, totalLines: 20_000, eof: true, encoding: "utf-8" });
    expect("text" in window).toBe(false);
  });

  it("reads the tail, and past the end", async () => {
    expect(await ws.readText("big.log", { tail: 3 })).toMatchObject({ text: numbered(998, 1000), firstLine: 998, lastLine: 1000, totalLines: 1000 });
    expect(await ws.readText("big.log", { startLine: 2000 })).toMatchObject({ text: "", firstLine: 2000, lastLine: 1999, eof: true });
  });

  it("says when maxBytes cut the window short", async () => {
    const window = await ws.readText("big.log", { startLine: 1, maxBytes: 20 });
    expect(window).toMatchObject({ text: numbered(1, 2), lastLine: 2, truncated: true, nextStartLine: 3 });
  });
});

describe("write and edit", () => {
  it("round-trips text through writeText, edit and readText", async () => {
    const written = await ws.writeText("notes/todo.md", "alpha\nbeta\ngamma\n");
    expect(written).toMatchObject({ path: "/notes/todo.md", created: true });
    const edited = await ws.edit("notes/todo.md", { oldText: "beta", newText: "BETA" }, { ifVersion: written.version });
    expect(edited.replacements).toBe(1n);
    expect(edited.diff).toContain("-beta\n+BETA");
    const both = await ws.edit("notes/todo.md", [
      { oldText: "alpha", newText: "ALPHA" },
      { oldText: "gamma", newText: "GAMMA" },
    ]);
    expect(both.replacements).toBe(2n);
    expect((await ws.readText("notes/todo.md")).text).toBe("ALPHA\nBETA\nGAMMA\n");
  });

  it("fails with typed reasons", async () => {
    await ws.writeText("dup.txt", "x\nx\n");
    const stale = (await ws.stat("dup.txt")).version;
    await ws.writeText("dup.txt", "x\nx\ny\n");

    const notUnique = await failure(ws.edit("dup.txt", { oldText: "x", newText: "z" }));
    expect(notUnique).toMatchObject({ code: Code.FAILED_PRECONDITION, codeName: "FAILED_PRECONDITION", reason: "OLD_TEXT_NOT_UNIQUE" });
    expect(notUnique.metadata.count).toBe("2");

    const notFound = await failure(ws.edit("dup.txt", { oldText: "nowhere", newText: "z" }));
    expect(notFound.reason).toBe("OLD_TEXT_NOT_FOUND");

    const changed = await failure(ws.edit("dup.txt", { oldText: "y", newText: "z" }, { ifVersion: stale }));
    expect(changed).toMatchObject({ codeName: "FAILED_PRECONDITION", reason: "CONTENT_CHANGED" });
    expect(changed.metadata.current_version).toBe((await ws.stat("dup.txt")).version);

    expect(await failure(ws.readText("missing.txt"))).toMatchObject({ code: Code.NOT_FOUND, reason: "NOT_FOUND" });
    expect(await failure(ws.readText("../outside"))).toMatchObject({ code: Code.PERMISSION_DENIED, reason: "PATH_ESCAPES_WORKSPACE" });
    expect(await failure(ws.writeText("dup.txt", "new", { mode: WriteMode.CREATE_ONLY }))).toMatchObject({
      code: Code.ALREADY_EXISTS,
      reason: "ALREADY_EXISTS",
    });
    expect(await failure(client.workspace("nope").stat("a"))).toMatchObject({ code: Code.NOT_FOUND, reason: "WORKSPACE_NOT_FOUND" });
    // All or nothing: nothing above changed the file.
    expect((await ws.readText("dup.txt")).text).toBe("x\nx\ny\n");
  });

  it("makes, lists, moves and deletes", async () => {
    expect(await ws.mkdir("tree/a")).toMatchObject({ created: true });
    await ws.writeText("tree/a/one.txt", "1\n");
    await ws.writeBytes("tree/two.bin", new Uint8Array([0, 1, 2]));
    const moved = await ws.move("tree/a/one.txt", "tree/b/one.txt");
    expect(moved.file?.path).toBe("/tree/b/one.txt");
    const listing = await ws.list("tree", { recursive: true });
    expect(listing.entries.map((e) => e.path)).toEqual(["/tree/a", "/tree/b", "/tree/b/one.txt", "/tree/two.bin"]);
    expect(listing.truncated).toBe(false);
    expect((await ws.list("tree", { recursive: true, maxEntries: 1 })).truncated).toBe(true);
    expect(await failure(ws.delete("tree"))).toMatchObject({ reason: "IS_A_DIRECTORY" });
    expect(await ws.delete("tree", { recursive: true })).toMatchObject({ existed: true });
    expect(await ws.delete("tree")).toMatchObject({ existed: false });
  });

  it("uploads a local file and downloads it again, checked by sha256", async () => {
    const source = path.join(local, "upload.bin");
    writeFileSync(source, Buffer.alloc(3 * 1024 * 1024 + 5, 7));
    const progress: number[] = [];
    const uploaded = await ws.upload(source, "blobs/up.bin", { onProgress: (p) => progress.push(p.bytes) });
    expect(uploaded).toMatchObject({ size: BigInt(3 * 1024 * 1024 + 5), sha256: sha256Of(source) });
    expect(progress).toEqual([1, 2, 3].map((mib) => mib * 1024 * 1024).concat(3 * 1024 * 1024 + 5));
    const target = path.join(local, "down.bin");
    const header = await ws.download("blobs/up.bin", target);
    expect(header.sha256).toBe(sha256Of(source));
    expect(sha256Of(target)).toBe(sha256Of(source));
  });

  it("uploads a byte stream, cut into chunks the daemon takes", async () => {
    const block = Buffer.alloc(2.5 * 1024 * 1024, 1);
    const progress: unknown[] = [];
    const uploaded = await ws.upload(Readable.from([block]), "blobs/stream.bin", { onProgress: (p) => progress.push(p) });
    expect(uploaded).toMatchObject({ size: BigInt(block.length), sha256: createHash("sha256").update(block).digest("hex") });
    expect(progress).toEqual([1, 2, 2.5].map((mib) => ({ bytes: mib * 1024 * 1024, totalBytes: undefined })));
  });
});

describe("search", () => {
  const everything = { maxResults: 10_000 };

  it("streams matches in walk order, then holds the summary", async () => {
    const haystack = client.workspace("search");
    const results = haystack.search("needle", { maxResults: 3 });
    const matches = [];
    for await (const match of results) matches.push([match.path, match.lineNumber, match.column]);
    expect(matches).toEqual([
      ["/f00.txt", 1n, 1],
      ["/f00.txt", 2n, 1],
      ["/f00.txt", 3n, 1],
    ]);
    expect(results.summary).toMatchObject({ matches: 3n, truncated: true });
    const files = [];
    for await (const file of haystack.searchFiles("needle", { include: ["f0*.txt"] })) files.push(file);
    expect(files).toHaveLength(10);
  });

  it("runs to its end on the daemon when the client reads everything", async () => {
    const ended = log.nextCall(SEARCH, "search-all");
    let count = 0;
    for await (const _ of client.workspace("search-all").search("needle", everything)) count++;
    expect(count).toBe(10_000);
    expect(await ended).toMatchObject({ code: "OK" });
  });

  it("stops on the daemon when the client leaves the loop after the first match", async () => {
    const narrow = narrowClient();
    const ended = log.nextCall(SEARCH, "search-break");
    let count = 0;
    for await (const _ of narrow.workspace("search-break").search("needle", everything)) {
      count++;
      break;
    }
    narrow.close();
    expect(count).toBe(1);
    // The daemon's call ended, cancelled, with thousands of results still unsent.
    expect(await ended).toMatchObject({ code: "CANCELLED", reason: "CANCELLED" });
  });

  it("is cancelled by an AbortSignal", async () => {
    const narrow = narrowClient();
    const ended = log.nextCall(SEARCH, "search-abort");
    const controller = new AbortController();
    const error = await failure(async () => {
      for await (const _ of narrow.workspace("search-abort").search("needle", { ...everything, signal: controller.signal })) controller.abort();
    });
    narrow.close();
    expect(error).toMatchObject({ code: Code.CANCELLED, reason: "CANCELLED" });
    expect(await ended).toMatchObject({ code: "CANCELLED" });
    expect(await failure(ws.readText("big.log", { signal: AbortSignal.abort() }))).toMatchObject({ codeName: "CANCELLED" });
  });

  it("fails with DEADLINE_EXCEEDED when the deadline passes before the end", async () => {
    const haystack = client.workspace("search");
    const error = await failure(async () => {
      // The client stops reading until past the deadline: the daemon cannot have finished by then.
      let paused = false;
      for await (const _ of haystack.search("needle", { ...everything, deadline: 300 })) {
        if (!paused) await sleep(1000);
        paused = true;
      }
    });
    expect(error).toMatchObject({ code: Code.DEADLINE_EXCEEDED, codeName: "DEADLINE_EXCEEDED" });
    expect(await failure(haystack.stat("f00.txt", { deadline: new Date(Date.now() - 1) }))).toMatchObject({ codeName: "DEADLINE_EXCEEDED" });
  });
});

describe("runs and snapshots", () => {
  it("finishes a run and exports its snapshot to a file whose sha256 matches the header", async () => {
    const reports = client.workspace("reports");
    const run = await reports.startRun({ labels: { crew: "alpha" } });
    await reports.writeText("q3.md", "# Q3\n");
    await reports.writeText("data/numbers.csv", "a,b\n1,2\n");
    expect((await reports.changeSet(run.id)).map((c) => c.path).sort()).toEqual(["/data/numbers.csv", "/q3.md"]);
    const finished = await reports.finishRun(run.id);
    const snapshot = finished.snapshot!;
    expect(finished.changes).toMatchObject({ created: 2n });
    expect((await reports.listSnapshots()).map((s) => s.id)).toEqual([snapshot.id]);

    const target = path.join(local, "reports.tar.gz");
    const progress: number[] = [];
    const header = await reports.exportSnapshot(target, { onProgress: (p) => progress.push(p.bytes) });
    expect(header).toMatchObject({ sha256: snapshot.sha256, size: snapshot.sizeBytes, fileCount: 2n });
    expect(sha256Of(target)).toBe(header.sha256);
    expect(progress.at(-1)).toBe(Number(header.size));
    const members = execFileSync("tar", ["-tzf", target], { encoding: "utf8" }).split("\n");
    expect(members).toEqual(expect.arrayContaining([expect.stringMatching(/q3\.md$/), expect.stringMatching(/data\/numbers\.csv$/)]));

    // A failed export leaves neither the file nor a temp file behind.
    const failed = path.join(local, "failed", "nope.tar.gz");
    mkdirSync(path.dirname(failed));
    expect(await failure(reports.exportSnapshot(failed, { snapshotId: "20000101T000000Z-00000000" }))).toMatchObject({ code: Code.NOT_FOUND });
    expect(readdirSync(path.dirname(failed))).toEqual([]);

    // The snapshot comes back over a change, and imports unpack a local tarball.
    await reports.writeText("q3.md", "changed\n");
    expect((await reports.restoreSnapshot()).id).toBe(snapshot.id);
    expect((await reports.readText("q3.md")).text).toBe("# Q3\n");
    const imported = await reports.importArchive(target, { path: "copy" });
    expect(imported.fileCount).toBe(2n);
    expect((await reports.readText("copy/data/numbers.csv")).text).toBe("a,b\n1,2\n");
    expect(existsSync(target)).toBe(true);
  });

  it("exports into a file of the workspace and imports from one, byte streams passed straight from call to call", async () => {
    const artifacts = client.workspace("artifacts");
    await artifacts.startRun(); // creates the workspace
    async function* random() {
      for (let i = 0; i < 3; i++) yield randomBytes(1 << 20); // random: the archive does not shrink, three chunks or more
    }
    await artifacts.upload(random(), "data/blob.bin");
    const exported: number[] = [];
    const { header, file } = await artifacts.exportInto("out/data.tar.gz", { live: true, include: ["data/**"], mode: WriteMode.CREATE_ONLY, onProgress: (p) => exported.push(p.bytes) });
    expect(file).toMatchObject({ path: "/out/data.tar.gz", size: header.size, sha256: header.sha256 });
    expect(header.fileCount).toBe(1n);
    expect(exported.length).toBeGreaterThanOrEqual(3);
    expect(exported.at(-1)).toBe(Number(header.size));
    expect(await failure(artifacts.exportInto("out/data.tar.gz", { live: true, mode: WriteMode.CREATE_ONLY }))).toMatchObject({ reason: "ALREADY_EXISTS" });

    const imported: number[] = [];
    const { archive, imported: unpacked } = await artifacts.importFrom("out/data.tar.gz", { path: "copy", onProgress: (p) => imported.push(p.bytes) });
    expect(archive?.path).toBe("/out/data.tar.gz");
    expect(unpacked).toMatchObject({ fileCount: 1n, sizeBytes: BigInt(3 << 20) });
    expect(imported.at(-1)).toBe(Number(header.size));
    expect(await failure(artifacts.importFrom("data/blob.bin", { path: "bad" }))).toMatchObject({ reason: "UNSAFE_ARCHIVE" });
    expect(await failure(artifacts.importFrom("none.tar.gz"))).toMatchObject({ reason: "NOT_FOUND" });
    expect((await artifacts.list("/")).entries.map((e) => e.path)).toEqual(["/copy", "/data", "/out"]);
  });
});
