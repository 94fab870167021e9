// Download and Upload: raw bytes in and out, with their SHA-256.
import { createHash } from "node:crypto";
import { fail } from "../errors.js";
import type { Workspace, WriteMode, WriteResult } from "../workspace/workspace.js";
import type { Entry } from "../workspace/entry.js";
import { displayPath, parseFilePath } from "../workspace/paths.js";
import { pathKey, withPathLocks } from "./locks.js";
import { sha256OrEmpty, type ChangeRecorder } from "./changes.js";

/** gRPC messages stay well under the 4 MiB default limits. */
export const TRANSFER_CHUNK_BYTES = 1 << 20;

export interface DownloadHeader {
  entry: Entry;
  size: number;
  sha256: string;
}

/**
 * Yields the header (size and sha256, from a first pass over the open file),
 * then the bytes. If the file changes between the passes the stream fails
 * with CONTENT_CHANGED rather than send bytes that do not match the header.
 */
export async function* downloadFile(workspace: Workspace, rawPath: string, signal: AbortSignal): AsyncGenerator<DownloadHeader | Buffer> {
  const parts = parseFilePath(rawPath);
  const file = await workspace.openFile(parts);
  try {
    const first = createHash("sha256");
    let size = 0;
    for await (const chunk of file.chunks(0, TRANSFER_CHUNK_BYTES)) {
      signal.throwIfAborted();
      first.update(chunk);
      size += chunk.length;
    }
    const sha256 = first.digest("hex");
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
): Promise<WriteResult & { sha256: string }> {
  const parts = parseFilePath(target.path);
  const shown = displayPath(parts);
  const hash = createHash("sha256");
  async function* hashed(): AsyncGenerator<Uint8Array> {
    for await (const chunk of chunks) {
      hash.update(chunk);
      yield chunk;
    }
  }
  const staged = await workspace.stageFile(parts, hashed());
  try {
    const sha256 = hash.digest("hex");
    if (target.sha256 && sha256 !== target.sha256.toLowerCase()) {
      fail("INVALID_ARGUMENT", `the bytes received for ${shown} do not match the sha256 in the header`);
    }
    return await withPathLocks([pathKey(workspace.id, shown)], async () => {
      const recording = recorder?.isRecording(workspace.id) ?? false;
      const before = recording ? await sha256OrEmpty(workspace, parts) : "";
      const result = await workspace.writeFile(parts, staged, { createDirs: target.createDirs, mode: target.mode, ifVersion: target.ifVersion });
      if (recording) await recorder!.record(workspace.id, { kind: result.created ? "create" : "modify", path: shown, sourcePath: "", sha256Before: before, sha256After: sha256 });
      return { ...result, sha256 };
    }, signal);
  } finally {
    await staged.discard();
  }
}
