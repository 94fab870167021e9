// A long life of cancellations: for each streaming RPC, 1,000 calls over four
// connections, each cancelled at a random point (before the first message,
// after a few, or part-way through a client stream). Afterwards the daemon
// holds no more descriptors than before, every connection still serves calls
// (a connection whose HTTP/2 session memory filled up answers
// RESOURCE_EXHAUSTED to everything), its RSS stayed bounded, and it printed no
// MaxListenersExceededWarning and logged no internal error. No timing
// assertions: a wait for descriptors to be released is a poll with a generous
// limit.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { pack } from "tar-stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, FileToolsError, type FileToolsClient } from "../../clients/ts/src/client.js";
import { collect, setup } from "./daemon.js";

const CALLS_PER_RPC = 1_000;
const AT_ONCE = 50;
const CONNECTIONS = 4;
const MiB = 1024 * 1024;
/**
 * Above the 450-760 MiB the daemon peaks at here, far below what an unbounded
 * leak of 7,000 streams reaches. The peak is the Read storm's buffers, then
 * the List storm's garbage, which V8's default heap growth leaves uncollected
 * a while (bin/filetoolsd's V8 flags keep the whole run under ~530 MiB).
 */
const RSS_LIMIT_BYTES = 1024 * MiB;

let d: Awaited<ReturnType<typeof setup>>;
let connections: FileToolsClient[];
let snapshotId: string;
let archive: Buffer;

beforeAll(async () => {
  d = await setup("w");
  const files = d.client.files;
  // Read: a 24 MiB text file; Download: an 8 MiB one (8 chunks); List: a 5,000-entry directory; Search: 300 files.
  await uploadWhole("/lines.txt", Buffer.from("a line of text that goes on for a while\n".repeat(600_000)));
  await uploadWhole("/blob.bin", Buffer.alloc(8 * MiB, 7));
  for (let i = 0; i < 5_000; i += 500) {
    await Promise.all(Array.from({ length: 500 }, (_, j) => files.write({ workspace: "w", path: `/many/f${i + j}.txt`, body: { case: "data", value: Buffer.from("x") } })));
  }
  await Promise.all(Array.from({ length: 300 }, (_, i) => files.write({ workspace: "w", path: `/src/m${i}.txt`, body: { case: "data", value: Buffer.from("needle in a haystack\n".repeat(2_000)) } })));
  const { run } = await d.client.workspaces.startRun({ workspace: "w" });
  snapshotId = (await d.client.workspaces.finishRun({ workspace: "w", runId: run!.id })).snapshot!.id;
  archive = await tarOf(40, 256 * 1024);
  connections = Array.from({ length: CONNECTIONS }, () => connect(d.address, { channelOptions: { "grpc.use_local_subchannel_pool": 1 } }));
  // Every kind of call once on every connection: what the daemon opens lazily (workers, line index) is in the baseline.
  for (const client of connections) await completeOneOfEach(client);
}, 240_000);

afterAll(async () => {
  for (const client of connections ?? []) client.close();
  await d?.stop();
});

type Streaming = "read" | "list" | "search" | "download" | "exportStored" | "exportFiltered" | "upload" | "importArchive";

/** One call of `rpc`, cancelled through `signal`; resolves with the status code name it ended with. */
function callOf(client: FileToolsClient, rpc: Streaming, signal: AbortSignal, messagesBeforeCancel: number, cancel: () => void): Promise<string> {
  const drain = async (stream: AsyncIterable<unknown>) => {
    let seen = 0;
    for await (const _ of stream) if (++seen === messagesBeforeCancel) cancel();
  };
  const options = { signal };
  let done: Promise<unknown>;
  switch (rpc) {
    case "read":
      done = drain(client.files.read({ workspace: "w", path: "/lines.txt", startLine: BigInt(1 + Math.floor(Math.random() * 500_000)), lineCount: 200_000n, maxBytes: 8n * BigInt(MiB) }, options));
      break;
    case "list":
      done = drain(client.files.list({ workspace: "w", path: "/many" }, options));
      break;
    case "search":
      done = drain(client.files.search({ workspace: "w", path: "/src", pattern: "needle", maxResults: 0 }, options));
      break;
    case "download":
      done = drain(client.files.download({ workspace: "w", path: "/blob.bin" }, options));
      break;
    case "exportStored":
      done = drain(client.workspaces.exportSnapshot({ workspace: "w", snapshotId }, options));
      break;
    case "exportFiltered":
      done = drain(client.workspaces.exportSnapshot({ workspace: "w", live: true, include: ["src/m1?.txt"] }, options));
      break;
    case "upload":
      done = client.files.upload(clientStream(signal, messagesBeforeCancel, cancel, { case: "header", value: { workspace: "w", path: `/up/${Math.random()}.bin` } }), options);
      break;
    case "importArchive":
      done = client.workspaces.importArchive(clientStream(signal, messagesBeforeCancel, cancel, { case: "header", value: { workspace: "w", path: "/imported" } }), options);
      break;
  }
  return done.then(
    () => "OK",
    (error: unknown) => (error instanceof FileToolsError ? error.codeName : `not a status: ${String(error)}`),
  );
}

/** A header, then chunks of the archive (a valid tar, so a completed upload or import is a real one), cancelled after `chunksBeforeCancel`. */
async function* clientStream(signal: AbortSignal, chunksBeforeCancel: number, cancel: () => void, header: { case: "header"; value: object }) {
  yield { event: header } as never;
  for (let offset = 0, sent = 0; offset < archive.length && !signal.aborted; offset += 64 * 1024) {
    if (sent++ === chunksBeforeCancel) cancel();
    yield { event: { case: "chunk", value: { data: archive.subarray(offset, offset + 64 * 1024) } } } as never;
    await sleep(0);
  }
}

/** `count` calls of `rpc`, AT_ONCE at a time, round-robin over the connections; the status codes they ended with, counted. */
async function storm(rpc: Streaming, count: number): Promise<Record<string, number>> {
  const codes: Record<string, number> = {};
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next++;
      const controller = new AbortController();
      const cancel = () => controller.abort();
      // A third cancelled before any message, the rest after 1–4 messages (or chunks sent).
      const early = Math.random() < 1 / 3;
      if (early) setTimeout(cancel, Math.random() * 3);
      const code = await callOf(connections[index % CONNECTIONS]!, rpc, controller.signal, early ? -1 : 1 + Math.floor(Math.random() * 4), cancel);
      codes[code] = (codes[code] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: AT_ONCE }, worker));
  return codes;
}

async function completeOneOfEach(client: FileToolsClient): Promise<void> {
  await collect(client.files.read({ workspace: "w", path: "/lines.txt", lineCount: 10n }));
  await collect(client.files.list({ workspace: "w", path: "/many" }));
  await collect(client.files.search({ workspace: "w", path: "/src", pattern: "needle", maxResults: 10 }));
  await collect(client.files.download({ workspace: "w", path: "/src/m1.txt" }));
  await collect(client.workspaces.exportSnapshot({ workspace: "w", snapshotId }));
  await collect(client.workspaces.exportSnapshot({ workspace: "w", live: true, include: ["src/m1*"] }));
  await client.files.upload([{ event: { case: "header", value: { workspace: "w", path: "/up/first.bin" } } }, { event: { case: "chunk", value: { data: Buffer.from("x") } } }]);
  const header = { event: { case: "header", value: { workspace: "w", path: "/imported" } } } as const;
  await client.workspaces.importArchive([header, ...chunksOf(archive)]);
  await client.files.stat({ workspace: "w", path: "/lines.txt" });
}

/** Bytes bigger than one message, as 1 MiB chunk messages. */
function chunksOf(bytes: Buffer) {
  const chunks = [];
  for (let offset = 0; offset < bytes.length; offset += MiB) chunks.push({ event: { case: "chunk", value: { data: bytes.subarray(offset, offset + MiB) } } } as const);
  return chunks;
}

async function uploadWhole(path: string, bytes: Buffer): Promise<void> {
  await d.client.files.upload([{ event: { case: "header", value: { workspace: "w", path } } }, ...chunksOf(bytes)]);
}

function openDescriptors(): number {
  return readdirSync(`/proc/${d.proc.pid}/fd`).length;
}

function rssBytes(): number {
  const kib = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${d.proc.pid}/status`, "utf8"))![1]!;
  return Number(kib) * 1024;
}

/** `read()` once `ok` holds of it, or after a generous wait whatever it is then: what a cancelled call frees, it may free just after its status went out. */
async function settled<T>(read: () => T, ok: (value: T) => boolean): Promise<T> {
  for (let waited = 0; waited < 30_000 && !ok(read()); waited += 250) await sleep(250);
  return read();
}

const tempNamesIn = (dir: string) => readdirSync(dir).filter((name) => name.startsWith(".filetools-tmp-"));

async function tarOf(files: number, size: number): Promise<Buffer> {
  const tar = pack();
  for (let i = 0; i < files; i++) tar.entry({ name: `f${i}.bin`, size }, Buffer.alloc(size, i));
  tar.finalize();
  const parts: Buffer[] = [];
  for await (const part of tar as AsyncIterable<Buffer>) parts.push(part);
  return Buffer.concat(parts);
}

describe("1,000 cancelled calls of each streaming RPC over four connections", () => {
  const rpcs: Streaming[] = ["read", "list", "search", "download", "exportStored", "exportFiltered", "upload", "importArchive"];
  let peakRss = 0;

  it.each(rpcs)("%s: every call ends CANCELLED or OK; descriptors and scratch files come back; the connections still serve", async (rpc) => {
    expect(d.unexpectedExit(), "the daemon died before this storm").toBeUndefined();
    const baseline = openDescriptors();
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssBytes())), 100);
    const started = performance.now();
    let codes: Record<string, number>;
    try {
      codes = await storm(rpc, CALLS_PER_RPC);
    } finally {
      clearInterval(sampler);
    }
    // Figures for people (no assertion on them): how the calls ended, how long the storm took, descriptors, peak RSS so far.
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(`${rpc}: ${JSON.stringify(codes)} in ${seconds} s, descriptors ${baseline} before, ${openDescriptors()} just after, peak RSS ${Math.round(peakRss / MiB)} MiB`);
    expect(d.unexpectedExit(), "the daemon died during this storm").toBeUndefined();
    expect(Object.keys(codes).filter((code) => code !== "CANCELLED" && code !== "OK"), JSON.stringify(codes)).toEqual([]);
    expect(codes.CANCELLED ?? 0).toBeGreaterThan(CALLS_PER_RPC / 2);
    expect(await settled(openDescriptors, (count) => count <= baseline)).toBeLessThanOrEqual(baseline);
    // Nor scratch files (exports, imports), nor staged uploads at the workspace root.
    expect(await settled(() => readdirSync(path.join(d.dataDir, "tmp")), (names) => names.length === 0)).toEqual([]);
    expect(await settled(() => tempNamesIn(d.root), (names) => names.length === 0)).toEqual([]);
    for (const client of connections) await completeOneOfEach(client);
    expect(peakRss).toBeLessThan(RSS_LIMIT_BYTES);
  }, 600_000);

  it("printed no listener warning and logged no internal error", () => {
    expect(d.logs()).not.toContain("MaxListenersExceededWarning");
    expect(d.logs()).not.toMatch(/"level":"(error|fatal)"/);
  });
});
