// Workspace quotas (--quota-bytes, --quota-files, quota_bytes / quota_files
// per token) against a real daemon: every mutating RPC past a limit is
// RESOURCE_EXHAUSTED / QUOTA_EXCEEDED with the usage and limit in its
// metadata and changes nothing; a call that adds nothing is always allowed;
// racing calls cannot both take the last bytes; and the daemon's count stays
// what a walk of the tree finds.
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, type FileToolsError } from "../../clients/ts/src/client.js";
import { ToolDispatcher } from "../../clients/ts/src/tools/dispatcher.js";
import { makeTar, rawHeader } from "../support/tar.js";
import { expectError, forbidHostPath, startDaemon, type Daemon } from "./daemon.js";

const LIMIT_BYTES = 10_000;
const LIMIT_FILES = 20;
const DEFAULT = "default-token-0001"; // the daemon's limits
const SMALL = "small-token-00002"; // quota_bytes 3000, the daemon's quota_files
const OPS = "ops-token-0000003"; // quota_bytes 0, quota_files 0: no limit
const PROBE = "probe-token-00004"; // 1 byte, 1 entry: any write is refused, and the refusal shows the usage

const dir = mkdtempSync(path.join(tmpdir(), "ftd-e2e-quotas-"));
const tokensFile = path.join(dir, "tokens.json");
const boundDir = path.join(dir, "bound");
mkdirSync(boundDir);
function writeTokens(smallBytes: number | string): void {
  writeFileSync(
    tokensFile,
    JSON.stringify({
      tokens: [
        { name: "default", token: DEFAULT, workspaces: ["*"] },
        { name: "small", token: SMALL, workspaces: ["*"], quota_bytes: smallBytes },
        { name: "ops", token: OPS, workspaces: ["*"], quota_bytes: 0, quota_files: 0 },
        { name: "probe", token: PROBE, workspaces: ["*"], quota_bytes: 1, quota_files: 1 },
      ],
    }),
  );
}
writeTokens(3000);

const as = (token: string) => ({ metadata: { authorization: `Bearer ${token}` } });
const bytes = (n: number, fill = "x") => Buffer.alloc(n, fill);

let d: Daemon;
let counter = 0;

/** A fresh workspace for one test. */
async function workspace(): Promise<string> {
  const ws = `q${++counter}`;
  await d.client.workspaces.createWorkspace({ workspace: ws }, as(OPS));
  return ws;
}

function write(ws: string, p: string, data: Buffer | string, token = DEFAULT, extra: Record<string, unknown> = {}) {
  const body = typeof data === "string" ? { case: "content" as const, value: data } : { case: "data" as const, value: data };
  return d.client.files.write({ workspace: ws, path: p, body, ...extra }, as(token));
}

function* uploadMessages(ws: string, p: string, data: Buffer, chunk = 1024) {
  yield { event: { case: "header" as const, value: { workspace: ws, path: p } } };
  for (let i = 0; i < data.length; i += chunk) yield { event: { case: "chunk" as const, value: { data: data.subarray(i, i + chunk) } } };
}

function importTar(ws: string, tar: Buffer, token = DEFAULT) {
  async function* requests() {
    yield { event: { case: "header" as const, value: { workspace: ws, path: "" } } };
    yield { event: { case: "chunk" as const, value: { data: tar } } };
  }
  return d.client.workspaces.importArchive(requests(), as(token));
}

/** What the daemon counts for `ws`, read from the metadata of a refusal. */
async function counted(ws: string): Promise<{ bytes: number; files: number }> {
  const error = await expectError(write(ws, "probe/never.txt", "probe", PROBE), "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED");
  return { bytes: Number(error.metadata.usage_bytes), files: Number(error.metadata.usage_files) };
}

/** What a walk of the host directory finds: regular files' sizes, every entry but temp files. */
function walked(ws: string): { bytes: number; files: number } {
  const usage = { bytes: 0, files: 0 };
  const walk = (p: string) => {
    for (const name of readdirSync(p)) {
      if (name.startsWith(".filetools-tmp-")) continue;
      const full = path.join(p, name);
      const st = lstatSync(full);
      usage.files++;
      if (st.isDirectory()) walk(full);
      else if (st.isFile()) usage.bytes += st.size;
    }
  };
  walk(ws === "bound" ? boundDir : d.hostDir(ws));
  return usage;
}

/** Every name in the workspace's host directory, temp files included (they must not be left behind). */
function tree(ws: string): string[] {
  const out: string[] = [];
  const walk = (p: string, rel: string) => {
    for (const name of readdirSync(p).sort()) {
      const r = `${rel}/${name}`;
      const st = lstatSync(path.join(p, name));
      out.push(st.isDirectory() ? `${r}/` : `${r}:${st.size}`);
      if (st.isDirectory()) walk(path.join(p, name), r);
    }
  };
  walk(d.hostDir(ws), "");
  return out;
}

function expectQuota(error: FileToolsError, expected: Record<string, string>): void {
  expect(error.metadata).toMatchObject(expected);
  expect(error.message).not.toContain(d.dataDir);
}

beforeAll(async () => {
  d = await startDaemon({ binds: { bound: boundDir }, args: ["--tokens", tokensFile, "--quota-bytes", String(LIMIT_BYTES), "--quota-files", String(LIMIT_FILES)] });
  forbidHostPath(d.dataDir);
});
afterAll(async () => {
  await d.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("each mutating call past the limit is refused and changes nothing", () => {
  it("Write: over the byte limit, with the usage, limit and what it would add in the metadata; no parent directory made", async () => {
    const ws = await workspace();
    await write(ws, "a.bin", bytes(6000));
    const before = tree(ws);
    const error = await expectError(write(ws, "new/dirs/b.bin", bytes(5000)), "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED");
    expectQuota(error, { usage_bytes: "6000", limit_bytes: String(LIMIT_BYTES), usage_files: "1", limit_files: String(LIMIT_FILES), added_bytes: "5000", added_files: "3" });
    expect(error.message).toContain("/new/dirs/b.bin");
    expect(tree(ws)).toEqual(before);
  });

  it("exactly at the limit is allowed; one byte more is not", async () => {
    const ws = await workspace();
    await write(ws, "a.bin", bytes(LIMIT_BYTES - 1));
    await write(ws, "b.bin", bytes(1));
    expect(await counted(ws)).toEqual({ bytes: LIMIT_BYTES, files: 2 });
    await expectError(write(ws, "c.bin", bytes(1)), "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED");
    // An empty file adds no bytes, but an entry: still within the file limit.
    await write(ws, "empty.txt", "");
  });

  it("APPEND over the limit is refused and the file keeps its bytes", async () => {
    const ws = await workspace();
    await write(ws, "log.txt", "x".repeat(9000));
    await expectError(write(ws, "log.txt", "y".repeat(1001), DEFAULT, { mode: 4 }), "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED");
    expect(readFileSync(path.join(d.hostDir(ws), "log.txt"), "utf8")).toBe("x".repeat(9000));
    await write(ws, "log.txt", "y".repeat(1000), DEFAULT, { mode: 4 });
    expect(await counted(ws)).toEqual({ bytes: LIMIT_BYTES, files: 1 });
  });

  it("Edit that grows the file past the limit is refused; one that shrinks it passes", async () => {
    const ws = await workspace();
    await write(ws, "doc.txt", "alpha " + "x".repeat(9994));
    const error = await expectError(
      d.client.files.edit({ workspace: ws, path: "doc.txt", edits: [{ oldText: "alpha", newText: "alphabet" }] }, as(DEFAULT)),
      "RESOURCE_EXHAUSTED",
      "QUOTA_EXCEEDED",
    );
    expectQuota(error, { added_bytes: "3", added_files: "0" });
    expect(readFileSync(path.join(d.hostDir(ws), "doc.txt"), "utf8").startsWith("alpha x")).toBe(true);
    await d.client.files.edit({ workspace: ws, path: "doc.txt", edits: [{ oldText: "alpha", newText: "a" }] }, as(DEFAULT));
    expect(await counted(ws)).toEqual(walked(ws));
  });

  it("Upload past the limit fails while it is still sending, its staged bytes removed, the old file intact", async () => {
    const ws = await workspace();
    await write(ws, "up.bin", bytes(4000, "o"));
    let sent = 0;
    const total = 4096;
    async function* endless() {
      yield { event: { case: "header" as const, value: { workspace: ws, path: "up.bin" } } };
      for (; sent < total; sent++) yield { event: { case: "chunk" as const, value: { data: bytes(16 * 1024) } } };
    }
    const error = await expectError(d.client.files.upload(endless(), as(DEFAULT)), "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED");
    expect(Number(error.metadata.usage_bytes)).toBe(4000);
    // Refused at the chunk that passed the limit, not after 64 MiB.
    expect(sent).toBeLessThan(total);
    expect(tree(ws)).toEqual(["/up.bin:4000"]);
    // What replaces a file is credited with its size: 10,000 bytes over 4,000 fit exactly.
    await d.client.files.upload(uploadMessages(ws, "up.bin", bytes(LIMIT_BYTES)), as(DEFAULT));
    expect(await counted(ws)).toEqual({ bytes: LIMIT_BYTES, files: 1 });
  });

  it("MakeDir at the file limit is refused (its parents counted too); a directory already there is not", async () => {
    const ws = await workspace();
    for (let i = 0; i < LIMIT_FILES - 2; i++) await d.client.files.makeDir({ workspace: ws, path: `d${i}` }, as(DEFAULT));
    const error = await expectError(d.client.files.makeDir({ workspace: ws, path: "x/y/z" }, as(DEFAULT)), "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED");
    expectQuota(error, { usage_files: String(LIMIT_FILES - 2), added_files: "3" });
    expect(tree(ws)).not.toContain("/x/");
    await d.client.files.makeDir({ workspace: ws, path: "x/y" }, as(DEFAULT));
    expect(await d.client.files.makeDir({ workspace: ws, path: "d0" }, as(DEFAULT))).toMatchObject({ created: false });
    await expectError(d.client.files.makeDir({ workspace: ws, path: "one-more" }, as(DEFAULT)), "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED");
  });

  it("Move onto an existing file frees its bytes and is allowed over the limit; a Move that makes directories past the file limit is not", async () => {
    const ws = await workspace();
    await write(ws, "big.bin", bytes(8000), OPS);
    await write(ws, "small.bin", bytes(100), OPS);
    // 8,100 bytes are past SMALL's 3,000: a move onto big.bin adds nothing, so it passes.
    await d.client.files.move({ workspace: ws, source: "small.bin", destination: "big.bin", overwrite: true }, as(SMALL));
    expect(await counted(ws)).toEqual({ bytes: 100, files: 1 });
    for (let i = 0; i < LIMIT_FILES - 1; i++) await write(ws, `f${i}`, "");
    await expectError(
      d.client.files.move({ workspace: ws, source: "big.bin", destination: "deep/er/big.bin" }, as(DEFAULT)),
      "RESOURCE_EXHAUSTED",
      "QUOTA_EXCEEDED",
    );
    expect(tree(ws)).toContain("/big.bin:100");
    await d.client.files.move({ workspace: ws, source: "big.bin", destination: "renamed.bin" }, as(DEFAULT));
  });

  it("ImportArchive whose last member passes the limit is refused whole and leaves no staging behind", async () => {
    const ws = await workspace();
    await write(ws, "keep.txt", "keep");
    const members = [
      { name: "in/one.bin", content: "1".repeat(3000) },
      { name: "in/two.bin", content: "2".repeat(3000) },
      { name: "in/three.bin", content: "3".repeat(3996) },
    ];
    const before = tree(ws);
    const error = await expectError(importTar(ws, await makeTar([...members, { name: "in/last.bin", content: "4" }])), "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED");
    expectQuota(error, { usage_bytes: "4", added_bytes: "9997" });
    expect(tree(ws)).toEqual(before);
    expect(readdirSync(d.hostDir(ws))).toEqual(["keep.txt"]);
    // Without the last member it fits to the byte: 4 + 3,000 + 3,000 + 3,996.
    await importTar(ws, await makeTar(members));
    expect(await counted(ws)).toEqual({ bytes: LIMIT_BYTES, files: 5 });
    expect(await counted(ws)).toEqual(walked(ws));
  });

  it("ImportArchive past the limit fails at the header that passes it, while the client is still sending", async () => {
    const ws = await workspace();
    let sent = 0;
    const total = 4096;
    async function* requests() {
      yield { event: { case: "header" as const, value: { workspace: ws, path: "" } } };
      yield { event: { case: "chunk" as const, value: { data: rawHeader({ name: "big.bin", size: total * 16 * 1024 }) } } };
      for (; sent < total; sent++) yield { event: { case: "chunk" as const, value: { data: bytes(16 * 1024, "\0") } } };
    }
    const error = await expectError(d.client.workspaces.importArchive(requests(), as(DEFAULT)), "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED");
    expectQuota(error, { added_bytes: String(total * 16 * 1024) });
    expect(sent).toBeLessThan(total);
    expect(tree(ws)).toEqual([]);
    expect(readdirSync(path.join(d.dataDir, "tmp"))).toEqual([]);
  });

  it("RestoreSnapshot of a snapshot larger than the limit is refused; one within it, or a call whose token has no limit, restores", async () => {
    const ws = await workspace();
    const { run } = await d.client.workspaces.startRun({ workspace: ws }, as(OPS));
    await write(ws, "huge.bin", bytes(30_000), OPS);
    const { snapshot } = await d.client.workspaces.finishRun({ workspace: ws, runId: run!.id }, as(OPS));
    await d.client.files.delete({ workspace: ws, path: "huge.bin" }, as(OPS));
    await write(ws, "now.txt", "now");
    const error = await expectError(d.client.workspaces.restoreSnapshot({ workspace: ws, snapshotId: snapshot!.id }, as(DEFAULT)), "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED");
    expect(error.message).not.toMatch(/ftd-e2e/);
    expect(tree(ws)).toEqual(["/now.txt:3"]);
    await d.client.workspaces.restoreSnapshot({ workspace: ws, snapshotId: snapshot!.id }, as(OPS));
    expect(tree(ws)).toEqual(["/huge.bin:30000"]);
    // Counted again after the restore: 30,000 bytes, over the limit; a delete is still allowed.
    expect(await counted(ws)).toEqual({ bytes: 30_000, files: 1 });
    await d.client.files.delete({ workspace: ws, path: "huge.bin" }, as(DEFAULT));
  });
});

describe("what is always allowed, and who gets which limit", () => {
  it("over the limit, deletes and shrinking writes pass; growing ones do not", async () => {
    const ws = await workspace();
    await write(ws, "a.bin", bytes(9000), OPS);
    await write(ws, "b.bin", bytes(9000), OPS);
    await expectError(write(ws, "a.bin", bytes(9001)), "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED");
    await write(ws, "a.bin", bytes(5000)); // shrinks: 18,000 → 14,000, still over, allowed
    await expectError(write(ws, "c.txt", "c"), "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED");
    await d.client.files.delete({ workspace: ws, path: "b.bin" }, as(DEFAULT));
    await write(ws, "c.txt", "c");
    expect(await counted(ws)).toEqual({ bytes: 5001, files: 2 });
  });

  it("a token's quota_bytes replaces the daemon's for its calls, and SIGHUP carries a new one", async () => {
    const ws = await workspace();
    await write(ws, "a.bin", bytes(2500));
    const error = await expectError(write(ws, "b.bin", bytes(1000), SMALL), "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED");
    expectQuota(error, { limit_bytes: "3000", limit_files: String(LIMIT_FILES) });
    await write(ws, "b.bin", bytes(1000)); // the daemon's 10,000
    await write(ws, "c.bin", bytes(20_000), OPS); // no limit at all
    writeTokens("40KiB");
    d.proc.kill("SIGHUP");
    await expect.poll(async () => (await write(ws, "d.bin", bytes(100), SMALL).then(() => "ok", (e: FileToolsError) => e.reason))).toBe("ok");
    expect(await counted(ws)).toEqual({ bytes: 23_600, files: 4 });
    writeTokens(3000);
    d.proc.kill("SIGHUP");
  });

  it("concurrent writes racing for the last bytes: exactly one wins", async () => {
    const ws = await workspace();
    await write(ws, "base.bin", bytes(LIMIT_BYTES - 1000));
    const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => write(ws, `race${i}.bin`, bytes(1000))));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    for (const r of results) if (r.status === "rejected") expect((r.reason as FileToolsError).reason).toBe("QUOTA_EXCEEDED");
    expect(walked(ws)).toEqual({ bytes: LIMIT_BYTES, files: 2 });
    // The same race through Upload, whose size is not known up front.
    await d.client.files.delete({ workspace: ws, path: readdirSync(d.hostDir(ws)).find((n) => n.startsWith("race"))! }, as(DEFAULT));
    const uploads = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => d.client.files.upload(uploadMessages(ws, `up${i}.bin`, bytes(1000), 100), as(DEFAULT))));
    expect(uploads.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(walked(ws)).toEqual({ bytes: LIMIT_BYTES, files: 2 });
    expect(tree(ws).filter((n) => n.includes(".filetools-tmp-"))).toEqual([]);
  });

  it("the count stays what a walk finds after deletes, edits, moves, failed and cancelled calls", async () => {
    const ws = await workspace();
    await write(ws, "src/a.txt", "hello world\n".repeat(100));
    await write(ws, "src/b.txt", "b");
    await d.client.files.makeDir({ workspace: ws, path: "empty/dir" }, as(DEFAULT));
    await d.client.files.edit({ workspace: ws, path: "src/a.txt", edits: [{ oldText: "world", newText: "there", replaceAll: true }] }, as(DEFAULT));
    await d.client.files.move({ workspace: ws, source: "src/b.txt", destination: "moved/b.txt" }, as(DEFAULT));
    await d.client.files.delete({ workspace: ws, path: "empty", recursive: true }, as(DEFAULT));
    await expectError(write(ws, "src/a.txt", "x", DEFAULT, { mode: 2 }), "ALREADY_EXISTS"); // CREATE_ONLY on an existing file
    await expectError(write(ws, "too/big.bin", bytes(LIMIT_BYTES)), "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED");
    await expectError(d.client.files.edit({ workspace: ws, path: "src/a.txt", edits: [{ oldText: "absent", newText: "x" }] }, as(DEFAULT)), "FAILED_PRECONDITION");
    const controller = new AbortController();
    async function* cut() {
      yield { event: { case: "header" as const, value: { workspace: ws, path: "cut.bin" } } };
      yield { event: { case: "chunk" as const, value: { data: bytes(500) } } };
      controller.abort();
      await new Promise((r) => setTimeout(r, 50));
    }
    await expectError(d.client.files.upload(cut(), { ...as(DEFAULT), signal: controller.signal }), "CANCELLED");
    await importTar(ws, await makeTar([{ name: "imp/x.txt", content: "x" }]));
    await write(ws, "after-import.txt", "y");
    await d.client.files.delete({ workspace: ws, path: "imp", recursive: true }, as(DEFAULT));
    await expect.poll(() => tree(ws).filter((n) => n.includes(".filetools-tmp-"))).toEqual([]);
    expect(await counted(ws)).toEqual(walked(ws));
  });

  it("a bound workspace changed behind the daemon's back is counted again after an import", async () => {
    await write("bound", "through-the-daemon.txt", "x".repeat(1000));
    expect(await counted("bound")).toEqual({ bytes: 1000, files: 1 });
    writeFileSync(path.join(boundDir, "by-a-shell.bin"), bytes(5000));
    expect(await counted("bound")).toEqual({ bytes: 1000, files: 1 }); // not seen: the daemon keeps its count
    await importTar("bound", await makeTar([{ name: "imported.txt", content: "i" }]));
    expect(await counted("bound")).toEqual({ bytes: 6001, files: 3 });
    expect(await counted("bound")).toEqual(walked("bound"));
  });

  it("a model reads the usage, the limit and what to do next", async () => {
    const ws = await workspace();
    await write(ws, "a.bin", bytes(9000));
    const client = connect(d.address, { token: DEFAULT });
    try {
      const result = await new ToolDispatcher(client.workspace(ws)).call("write", { path: "/notes.md", content: "n".repeat(2000) });
      expect(result.text).toBe(
        "Error (QUOTA_EXCEEDED): /notes.md: the workspace's quota is 10000 bytes, 9000 are used and this would add 2000; delete or shrink files first.\n" +
          "Quota use: bytes 9000 of 10000, entries (files, directories, links) 1 of 20 (a limit of 0 is none); this call would add bytes 2000, entries 1.\n" +
          "Delete files you no longer need or make them smaller (deleting and shrinking are always allowed), then retry; if the task needs more than 10000 bytes and 20 entries, tell the operator.\n" +
          "If no quota is named above, a size limit was hit: make the request smaller (read a smaller window, edit instead of write).\n",
      );
    } finally {
      client.close();
    }
  });
});
