// The streaming handlers, stopped at each of their yields the way the adapter
// stops a cancelled call (return() on the handler's generator): whatever the
// call opened — a file's descriptor, a walk's directories, an export's
// scratch file — is released there and then, not when (or if) an inner
// generator that nobody resumes would have got to its finally.
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { create } from "@bufbuild/protobuf";
import { Metadata } from "@grpc/grpc-js";
import { DownloadRequestSchema, ListRequestSchema, ReadRequestSchema, SearchOrder, SearchRequestSchema, WriteRequestSchema } from "@filetools/proto/filetools/v1/files_pb.js";
import { descriptorsUnder } from "../../test/support/process-health.js";
import { CreateWorkspaceRequestSchema, ExportSnapshotRequestSchema } from "@filetools/proto/filetools/v1/workspaces_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../config.js";
import { FileToolsError } from "../errors.js";
import type { CallContext } from "../grpc/handlers.js";
import { createHandlers, type Handlers } from "./index.js";

const dataDir = mkdtempSync(path.join(tmpdir(), "filetools-stream-release-"));
let handlers: Handlers;

const ctx: CallContext = {
  signal: new AbortController().signal,
  metadata: new Metadata(),
  setWorkspace: () => {},
  mayAccess: () => true,
  tokenQuota: () => undefined,
  committed: () => {},
  caller: () => ({ token: "", rpc: "Test", callId: "" }),
};

// At most as many as before (not exactly: a descriptor an earlier test released asynchronously may close meanwhile).
// Those in the data directory: worker threads that come and go (the gzip pool's) hold descriptors of their own.
const openDescriptors = () => descriptorsUnder(dataDir).length;
const scratchFiles = () => readdirSync(path.join(dataDir, "tmp"));

beforeAll(async () => {
  handlers = await createHandlers(parseConfig(["--data-dir", dataDir, "--workers", "1"], {}));
  await handlers.workspaces.createWorkspace!(create(CreateWorkspaceRequestSchema, { workspace: "w" }), ctx);
  const text = Buffer.from("line\n".repeat(300_000));
  await handlers.files.write!(create(WriteRequestSchema, { workspace: "w", path: "/big.txt", body: { case: "data", value: text } }), ctx);
  for (let i = 0; i < 1_200; i++) await handlers.files.write!(create(WriteRequestSchema, { workspace: "w", path: `/many/f${i}`, body: { case: "data", value: Buffer.from("x") } }), ctx);
}, 120_000);

afterAll(async () => {
  await handlers?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Takes `messages` messages of the stream, then stops it as the adapter does when the client goes away. */
async function stopAfter(stream: AsyncIterable<unknown>, messages: number): Promise<void> {
  const iterator = stream[Symbol.asyncIterator]();
  for (let i = 0; i < messages; i++) expect((await iterator.next()).done).toBe(false);
  await iterator.return!();
}

describe("a streaming handler stopped at a yield releases what it holds", () => {
  it.each([1, 2, 3])("Read stopped after %i messages closes the file", async (messages) => {
    const before = openDescriptors();
    await stopAfter(handlers.files.read!(create(ReadRequestSchema, { workspace: "w", path: "/big.txt", lineCount: 300_000n }), ctx), messages);
    expect(openDescriptors()).toBeLessThanOrEqual(before);
  });

  it("List stopped after its first batch closes the directories it walks", async () => {
    const before = openDescriptors();
    await stopAfter(handlers.files.list!(create(ListRequestSchema, { workspace: "w", path: "/many" }), ctx), 1);
    expect(openDescriptors()).toBeLessThanOrEqual(before);
  });

  it("List whose call is cancelled fails with the abort's reason at the next entry, rather than finish a batch nobody reads, and closes its directories", async () => {
    const before = openDescriptors();
    const cancelled = new FileToolsError("CANCELLED", "the client cancelled the call");
    const list = () => {
      const controller = new AbortController();
      const stream = handlers.files.list!(create(ListRequestSchema, { workspace: "w", path: "/many" }), { ...ctx, signal: controller.signal });
      return { messages: stream[Symbol.asyncIterator](), cancel: () => controller.abort(cancelled) };
    };
    const midway = list();
    expect((await midway.messages.next()).done).toBe(false); // the first batch of 500; 700 entries to go
    midway.cancel();
    await expect(midway.messages.next()).rejects.toBe(cancelled);
    const early = list();
    early.cancel();
    await expect(early.messages.next()).rejects.toBe(cancelled);
    expect(openDescriptors()).toBeLessThanOrEqual(before);
  });

  it.each([1, 2])("a live ExportSnapshot stopped after %i messages (the header, a chunk) removes its scratch file", async (messages) => {
    await stopAfter(handlers.workspaces.exportSnapshot!(create(ExportSnapshotRequestSchema, { workspace: "w", live: true, include: ["**"] }), ctx), messages);
    expect(scratchFiles()).toEqual([]);
  });

  it.each([
    [false, SearchOrder.PATH],
    [true, SearchOrder.PATH],
    [true, SearchOrder.FOUND],
  ])("Search (batch_matches %s, order %i) stopped after its first message closes the directories and files it holds, and frees its worker", async (batchMatches, order) => {
    const before = openDescriptors();
    const request = create(SearchRequestSchema, { workspace: "w", path: "/many", pattern: "x", fixedStrings: true, maxResults: 10_000, batchMatches, order });
    await stopAfter(handlers.files.search!(request, ctx), 1);
    // The one worker is free again: a search after it runs to its summary.
    const after: unknown[] = [];
    for await (const m of handlers.files.search!(create(SearchRequestSchema, { workspace: "w", path: "/many", pattern: "x", fixedStrings: true, maxResults: 10_000, batchMatches }), ctx)) after.push(m);
    expect(after.at(-1)).toMatchObject({ event: { case: "summary" } });
    expect(openDescriptors()).toBeLessThanOrEqual(before);
  });

  it("Download stopped at its header closes the file", async () => {
    const before = openDescriptors();
    await stopAfter(handlers.files.download!(create(DownloadRequestSchema, { workspace: "w", path: "/big.txt" }), ctx), 1);
    expect(openDescriptors()).toBeLessThanOrEqual(before);
  });
});
