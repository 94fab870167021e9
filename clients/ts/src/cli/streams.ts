// Bytes between local files (or stdin/stdout) and the daemon's streams:
// chunked sources, verified saves, and a progress bar on a terminal.
import { createHash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { readFile, rename, rm, stat } from "node:fs/promises";
import { pipeline } from "node:stream/promises";
import cliProgress from "cli-progress";
import type { DataChunk } from "../gen/filetools/v1/common_pb.js";
import { humanBytes, writeOut } from "./output.js";

/** The daemon takes chunks of at most 1 MiB. */
const CHUNK_BYTES = 1024 * 1024;

export interface Progress {
  advance(bytes: number): void;
  stop(): void;
}

/**
 * A progress bar on stderr, only when stderr is a terminal and the total is
 * known: stdout (data or JSON) is never touched, and logs get no bar noise.
 */
export function progressBar(label: string, total: bigint | number | undefined): Progress {
  if (!process.stderr.isTTY || !total) return { advance() {}, stop() {} };
  const bar = new cliProgress.SingleBar(
    {
      format: `${label} [{bar}] {percentage}% | {done} of ${humanBytes(total)} | ETA {eta_formatted}`,
      stream: process.stderr,
      hideCursor: true,
    },
    cliProgress.Presets.shades_classic,
  );
  let done = 0;
  bar.start(Number(total), 0, { done: humanBytes(0) });
  return {
    advance(bytes) {
      done += bytes;
      bar.update(done, { done: humanBytes(done) });
    },
    stop: () => bar.stop(),
  };
}

/** All bytes of a local file, or of standard input for "-". */
export async function readSource(source: string): Promise<Uint8Array> {
  if (source !== "-") return readFile(source);
  const parts: Buffer[] = [];
  for await (const part of process.stdin) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

/** Size of a local file for a progress bar; undefined for standard input. */
export async function sourceSize(source: string): Promise<bigint | undefined> {
  return source === "-" ? undefined : BigInt((await stat(source)).size);
}

/** The bytes of a local file, or of standard input for "-", in chunks of at most 1 MiB. */
export async function* chunksOf(source: string, progress: Progress): AsyncGenerator<Uint8Array> {
  const stream = source === "-" ? process.stdin : createReadStream(source, { highWaterMark: CHUNK_BYTES });
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    for (let offset = 0; offset < chunk.length; offset += CHUNK_BYTES) {
      const piece = chunk.subarray(offset, offset + CHUNK_BYTES);
      progress.advance(piece.length);
      yield piece;
    }
  }
}

type HeaderThenChunks<H> = AsyncIterable<{
  event: { case: "header"; value: H } | { case: "chunk"; value: DataChunk } | { case: undefined; value?: undefined };
}>;

/** Download and ExportSnapshot send one header, then chunks: the header, and the chunks' bytes to read on. */
export async function splitHeader<H>(stream: HeaderThenChunks<H>): Promise<{ header: H; data: AsyncIterable<Uint8Array> }> {
  const messages = stream[Symbol.asyncIterator]();
  const first = await messages.next();
  if (first.done || first.value.event.case !== "header") throw new Error("the daemon's stream did not start with a header");
  async function* data() {
    for (let next = await messages.next(); !next.done; next = await messages.next()) {
      if (next.value.event.case === "chunk") yield next.value.event.value.data;
    }
  }
  return { header: first.value.event.value, data: data() };
}

/**
 * Saves `data` to `destination` ("-" = stdout) and checks it against the
 * header's size and sha256. A file is written under a temporary name and
 * renamed only once it is complete and verified, so a failed transfer leaves
 * no partial file behind.
 */
export async function saveVerified(
  data: AsyncIterable<Uint8Array>,
  destination: string,
  expected: { size: bigint; sha256: string },
  progress: Progress,
): Promise<void> {
  const hash = createHash("sha256");
  let size = 0n;
  async function* counted() {
    for await (const bytes of data) {
      hash.update(bytes);
      size += BigInt(bytes.length);
      progress.advance(bytes.length);
      yield bytes;
    }
  }
  const check = () => {
    const sha256 = hash.digest("hex");
    if (size !== expected.size || sha256 !== expected.sha256) {
      throw new Error(`received ${size} bytes with sha256 ${sha256}, but the daemon announced ${expected.size} bytes with sha256 ${expected.sha256}`);
    }
  };
  try {
    if (destination === "-") {
      for await (const bytes of counted()) await writeOut(bytes);
      check();
      return;
    }
    const partial = `${destination}.filetools-partial`;
    try {
      await pipeline(counted(), createWriteStream(partial, { flags: "w", mode: 0o644 }));
      check();
      await rename(partial, destination);
    } catch (error) {
      await rm(partial, { force: true });
      throw error;
    }
  } finally {
    progress.stop();
  }
}
