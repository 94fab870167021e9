// A regular file opened for reading by the workspace module. Tools read
// through it and never see a descriptor or a host path.
import type { FileHandle } from "node:fs/promises";
import { versionOf, type Entry } from "./entry.js";

/** Reads of 1 MiB: few syscalls, small enough to keep memory flat. */
export const READ_CHUNK_BYTES = 1 << 20;

export class OpenFile {
  constructor(
    private readonly handle: FileHandle,
    /** The file as it was when opened. */
    readonly entry: Entry,
  ) {}

  get size(): number {
    return Number(this.entry.size);
  }

  /** Up to `length` bytes at `position` (fewer at the end of the file). */
  async readAt(position: number, length: number): Promise<Buffer> {
    const buffer = Buffer.allocUnsafe(length);
    let filled = 0;
    while (filled < length) {
      const { bytesRead } = await this.handle.read(buffer, filled, length - filled, position + filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return buffer.subarray(0, filled);
  }

  /** Fills `buffer` from `position` (less at the end of the file); returns the bytes read. The caller may reuse the buffer. */
  async readInto(buffer: Buffer, position: number): Promise<number> {
    let filled = 0;
    while (filled < buffer.length) {
      const { bytesRead } = await this.handle.read(buffer, filled, buffer.length - filled, position + filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return filled;
  }

  /** The bytes from `position` to the end, in fresh buffers of at most `chunkBytes`. */
  async *chunks(position = 0, chunkBytes = READ_CHUNK_BYTES): AsyncGenerator<Buffer> {
    for (;;) {
      const chunk = await this.readAt(position, chunkBytes);
      if (chunk.length === 0) return;
      position += chunk.length;
      yield chunk;
    }
  }

  /** The whole file (for edits; callers bound the size first). */
  async readAll(): Promise<Buffer> {
    const parts: Buffer[] = [];
    for await (const chunk of this.chunks()) parts.push(chunk);
    return Buffer.concat(parts);
  }

  /** The version of the file now (a fresh fstat): differs from entry.version when it changed since it was opened. */
  async currentVersion(): Promise<string> {
    return versionOf(await this.handle.stat({ bigint: true }));
  }

  /**
   * The descriptor, only for the search pool's worker threads (same process,
   * same descriptor table): positional reads there, never closed there.
   */
  get fd(): number {
    return this.handle.fd;
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}
