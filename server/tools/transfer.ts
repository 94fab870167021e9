// Download and Upload: raw bytes in and out, with their SHA-256.
import { createHash } from "node:crypto";
import { fail } from "../errors.js";
import type { StagedFile, Workspace, WriteMode, WriteResult } from "../workspace/workspace.js";
import { NO_USAGE, type UsageGate } from "../workspace/usage.js";
import type { Components } from "../workspace/paths.js";
import type { Entry } from "../workspace/entry.js";
import { displayPath, parseFilePath } from "../workspace/paths.js";
import { pathKey, withPathLocks } from "./locks.js";
import { keepingMadeDirectories, sha256OrEmpty, writtenChanges, type ChangeRecorder } from "./changes.js";
import { openAndRead, type ReadableFile, type ReadSource } from "./source.js";

/** gRPC messages stay well under the 4 MiB default limits. */
export const TRANSFER_CHUNK_BYTES = 1 << 20;

export interface DownloadHeader {
  entry: Entry;
  size: number;
  sha256: string;
}

/**
 * Yields the header (size and sha256, from a first pass over the open file,
 * or as a snapshot's table of contents gives them), then the bytes. If the
 * file changes (or is replaced) between the passes the stream fails with CONTENT_CHANGED
 * rather than send bytes that do not match the header (a snapshot's file
 * whose bytes do not match fails DATA_LOSS as they are read).
 */
export async function* downloadFile(source: ReadSource, rawPath: string, signal: AbortSignal): AsyncGenerator<DownloadHeader | Buffer> {
  const parts = parseFilePath(rawPath);
  // The first pass is read before the header is sent: a file replaced during it is measured again, from its new version.
  const { file, read } = await openAndRead(source, parts, (file) => (file.sha256 === undefined ? measure(file, signal) : Promise.resolve({ size: file.size, sha256: file.sha256 })));
  try {
    const { size, sha256 } = read;
    yield { entry: file.entry, size, sha256 };
    const second = createHash("sha256");
    for await (const chunk of file.chunks(0, TRANSFER_CHUNK_BYTES)) {
      signal.throwIfAborted();
      second.update(chunk);
      yield chunk;
    }
    if (second.digest("hex") !== sha256) fail("CONTENT_CHANGED", `${displayPath(parts)} changed while it was being sent`);
  } finally {
    await file.close();
  }
}

async function measure(file: ReadableFile, signal: AbortSignal): Promise<{ size: number; sha256: string }> {
  const hash = createHash("sha256");
  let size = 0;
  for await (const chunk of file.chunks(0, TRANSFER_CHUNK_BYTES)) {
    signal.throwIfAborted();
    hash.update(chunk);
    size += chunk.length;
  }
  return { size, sha256: hash.digest("hex") };
}

export interface UploadTarget {
  path: string;
  mode: WriteMode;
  createDirs: boolean;
  ifVersion?: string;
  /** Expected SHA-256 (hex) of the bytes; "" = not checked. */
  sha256: string;
}

/**
 * Writes the streamed bytes atomically; nothing is written when the stream
 * fails or the hash differs. The bytes are received (staged) first and the
 * path's lock taken only to put them in place: a slow client delays nobody
 * else who writes the path, and an upload it cut off changes nothing.
 */
export async function uploadFile(
  workspace: Workspace,
  target: UploadTarget,
  chunks: AsyncIterable<Uint8Array>,
  recorder?: ChangeRecorder,
  signal?: AbortSignal,
  gate?: UsageGate,
): Promise<WriteResult & { sha256: string }> {
  const parts = parseFilePath(target.path);
  const shown = displayPath(parts);
  const hash = createHash("sha256");
  // The size is not known up front: the bytes received are held against the quota as they come (crediting
  // the file they replace), so an upload past it stops at the chunk that passes it; the write admits the exact change.
  const replaces = gate ? await sizeOrZero(workspace, parts) : 0;
  const receiving = gate?.admit({ bytes: -replaces, entries: 0 }, shown);
  let received = 0;
  async function* hashed(): AsyncGenerator<Uint8Array> {
    for await (const chunk of chunks) {
      received += chunk.length;
      receiving?.resize({ bytes: received - replaces, entries: 0 });
      hash.update(chunk);
      yield chunk;
    }
  }
  let staged: StagedFile;
  try {
    staged = await workspace.stageFile(parts, hashed());
  } finally {
    receiving?.settle(NO_USAGE);
  }
  try {
    const sha256 = hash.digest("hex");
    if (target.sha256 && sha256 !== target.sha256.toLowerCase()) {
      fail("INVALID_ARGUMENT", `the bytes received for ${shown} do not match the sha256 in the header`);
    }
    return await withPathLocks([pathKey(workspace.id, shown)], async () => {
      const recording = recorder?.isRecording(workspace.id) ?? false;
      const before = recording ? await sha256OrEmpty(workspace, parts) : "";
      signal?.throwIfAborted(); // the last moment a cancellation leaves the file as it was
      const result = await keepingMadeDirectories(recorder, workspace, (made, recorded) => {
        const whilePlacing = async (placed: WriteResult) => {
          await recorder?.record(workspace.id, ...writtenChanges(placed, shown, before, sha256));
          recorded();
        };
        return workspace.writeFile(parts, staged, { createDirs: target.createDirs, mode: target.mode, ifVersion: target.ifVersion, gate, whilePlacing, madeDirectories: made });
      });
      return { ...result, sha256 };
    }, signal);
  } finally {
    await staged.discard();
  }
}

/** The size of the regular file at `parts` (0 when there is none): what an upload there replaces. */
async function sizeOrZero(workspace: Workspace, parts: Components): Promise<number> {
  const entry = await workspace.stat(parts).catch(() => null);
  return entry?.type === "file" ? Number(entry.size) : 0;
}
