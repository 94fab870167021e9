// Bytes between the daemon's streams and this machine. Download and
// ExportSnapshot send a header {size, sha256} then chunks: received bytes are
// checked against it, and a file lands atomically only when they match. Upload
// and ImportArchive take a header then chunks of at most 1 MiB.
import { createHash, randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { open, rename, stat, unlink } from "node:fs/promises";
import path from "node:path";
import { status as Code } from "@grpc/grpc-js";
import { FileToolsError } from "./errors.js";

/** Bytes moved so far, and of how many when known (a local file's size, a stream header's). */
export interface Progress {
  bytes: number;
  totalBytes?: number;
}

export type OnProgress = (progress: Progress) => void;

/** The daemon takes chunks of at most 1 MiB (messages are capped at 8 MiB by default). */
const CHUNK_BYTES = 1 << 20;

interface StreamHeader {
  size: bigint;
  sha256: string;
}

/** A Download or ExportSnapshot response stream. */
export type HeaderThenData<H extends StreamHeader> = AsyncIterable<{
  event: { case: "header"; value: H } | { case: "chunk"; value: { data: Uint8Array } } | { case: undefined; value?: undefined };
}>;

/**
 * Waits for the stream's header, then gives the chunks' bytes; once they are
 * all read, throws DATA_LOSS if their size or sha256 differ from the header's.
 * Read `data` to its end, or leave the loop early (which cancels the call).
 * For bytes going elsewhere than a file (stdout); saveVerified writes a file.
 */
export async function receiveVerified<H extends StreamHeader>(
  stream: HeaderThenData<H>,
  onProgress?: OnProgress,
): Promise<{ header: H; data: AsyncGenerator<Uint8Array> }> {
  const messages = stream[Symbol.asyncIterator]();
  const first = await messages.next();
  if (first.done || first.value.event.case !== "header") {
    await messages.return?.(); // cancels the call
    throw dataLoss("the daemon's stream did not start with a header");
  }
  const header = first.value.event.value;
  async function* data(): AsyncGenerator<Uint8Array> {
    const hash = createHash("sha256");
    let bytes = 0;
    try {
      for (let next = await messages.next(); !next.done; next = await messages.next()) {
        const { event } = next.value;
        if (event.case !== "chunk") continue;
        hash.update(event.value.data);
        bytes += event.value.data.byteLength;
        yield event.value.data;
        onProgress?.({ bytes, totalBytes: Number(header.size) });
      }
    } finally {
      await messages.return?.(); // a consumer that stops early cancels the call
    }
    const sha256 = hash.digest("hex");
    if (bytes !== Number(header.size) || sha256 !== header.sha256) {
      throw dataLoss(`received ${bytes} bytes with sha256 ${sha256}; the daemon announced ${header.size} bytes with sha256 ${header.sha256}`);
    }
  }
  return { header, data: data() };
}

/**
 * Writes the stream's bytes to `toFilePath` through a temp file next to it,
 * checks size and sha256 against the header, fsyncs and renames it into place.
 * On any failure the temp file is removed and `toFilePath` is untouched.
 */
export async function saveVerified<H extends StreamHeader>(stream: HeaderThenData<H>, toFilePath: string, onProgress?: OnProgress): Promise<H> {
  const tempPath = path.join(path.dirname(toFilePath), `.${path.basename(toFilePath)}.${randomBytes(6).toString("hex")}.tmp`);
  // Before the stream is read, so a destination that cannot be written starts no call (the client's streams start on first read).
  const file = await open(tempPath, "wx").catch((error: unknown) => {
    throw aboutDestination(error, toFilePath);
  });
  let header: H;
  try {
    const received = await receiveVerified(stream, onProgress);
    header = received.header;
    for await (const bytes of received.data) await file.write(bytes); // a failed write leaves the loop: the call is cancelled
    await file.sync();
    await file.close();
    await rename(tempPath, toFilePath).catch((error: unknown) => {
      throw aboutDestination(error, toFilePath);
    });
  } catch (error) {
    await file.close().catch(() => {}); // already closed when the rename failed
    await unlink(tempPath).catch(() => {});
    throw error;
  }
  await syncDirectory(path.dirname(toFilePath)); // so the rename survives a crash
  return header;
}

/**
 * A failure to create the temp file or to rename it into place, told about
 * `toFilePath`: the caller never named the temp file, and Node's message would
 * name only it. Keeps the error's code ("ENOENT: …" for a missing directory).
 */
function aboutDestination(error: unknown, toFilePath: string): unknown {
  const { code, message } = error as NodeJS.ErrnoException;
  if (typeof code !== "string") return error;
  const directory = path.dirname(toFilePath);
  const why =
    code === "ENOENT"
      ? `directory ${directory} does not exist`
      : code === "ENOTDIR"
        ? `${directory} is not a directory`
        : code === "EISDIR"
          ? "it is a directory"
          : message.replace(`${code}: `, "").replace(/, \w+ '.*$/, ""); // "permission denied, open '…'" → "permission denied"
  return Object.assign(new Error(`${code}: cannot save ${toFilePath}: ${why}`, { cause: error }), { code, path: toFilePath });
}

/**
 * An Upload or ImportArchive request stream: the header, then the bytes of
 * `source` (a local file's path, or any byte stream such as process.stdin) in
 * chunks of at most 1 MiB.
 */
export async function* headerThenData<H>(
  header: H,
  source: string | AsyncIterable<Uint8Array>,
  onProgress?: OnProgress,
): AsyncGenerator<{ event: { case: "header"; value: H } | { case: "chunk"; value: { data: Uint8Array } } }> {
  const totalBytes = typeof source === "string" ? (await stat(source)).size : undefined;
  const data = typeof source === "string" ? (createReadStream(source, { highWaterMark: CHUNK_BYTES }) as AsyncIterable<Buffer>) : source;
  yield { event: { case: "header", value: header } };
  let bytes = 0;
  for await (const block of data) {
    for (let offset = 0; offset < block.byteLength; offset += CHUNK_BYTES) {
      const piece = block.subarray(offset, offset + CHUNK_BYTES);
      yield { event: { case: "chunk", value: { data: piece } } };
      bytes += piece.byteLength;
      onProgress?.({ bytes, totalBytes });
    }
  }
}

async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function dataLoss(message: string): FileToolsError {
  return new FileToolsError(Code.DATA_LOSS, message, "");
}
