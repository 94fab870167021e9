// A regular file opened for reading by the workspace module. Tools read
// through it and never see a descriptor or a host path.
import { fstatSync, read, readSync } from "node:fs";
import { versionOf, type Entry } from "./entry.js";
import { assertLoneFile } from "./lone-file.js";
import { HeldDescriptor } from "./held-descriptor.js";

/** Reads of 1 MiB: few syscalls, small enough to keep memory flat. */
export const READ_CHUNK_BYTES = 1 << 20;
/**
 * Reads up to this size are synchronous (like the metadata calls, see
 * lstatOrNull): a thread-pool round trip costs more than copying a few KiB
 * from the page cache, and a small Read is made of little else.
 */
const SYNC_READ_BYTES = 16 * 1024;

export class OpenFile {
  private readonly held: HeldDescriptor;

  constructor(
    /** A descriptor the workspace opened for reading; closed once by close(). */
    descriptor: number,
    /** The file as it was when opened. */
    readonly entry: Entry,
  ) {
    this.held = new HeldDescriptor(descriptor);
  }

  get size(): number {
    return Number(this.entry.size);
  }

  /** Up to `length` bytes at `position` (fewer at the end of the file). */
  async readAt(position: number, length: number): Promise<Buffer> {
    const buffer = Buffer.allocUnsafe(length);
    return buffer.subarray(0, await this.readInto(buffer, position));
  }

  /**
   * Fills `buffer` from `position` (less at the end of the file); returns the
   * bytes read. The caller may reuse the buffer. PATH_ESCAPES_WORKSPACE when
   * the file gained a hard link meanwhile, CONTENT_CHANGED when it lost its name.
   */
  async readInto(buffer: Buffer, position: number): Promise<number> {
    let filled = 0;
    while (filled < buffer.length) {
      const length = buffer.length - filled;
      const bytesRead =
        length <= SYNC_READ_BYTES
          ? readSync(this.held.fd, buffer, filled, length, position + filled)
          : await this.held.onPool((fd) => readAsync(fd, buffer, filled, length, position + filled));
      if (bytesRead === 0) break;
      filled += bytesRead;
      // A short read up to the size the file had when opened is its end: no
      // further read to see 0 bytes (one syscall of every small Read).
      if (bytesRead < length && position + filled >= this.size) break;
    }
    // Checked after the read, before anyone uses the bytes (lone-file.ts);
    // a read that found the end has no bytes to refuse (the probe for growth
    // of a file read to its size, which an atomic write may replace meanwhile).
    if (filled > 0) assertLoneFile(this.held.fd, this.entry.path);
    return filled;
  }

  /**
   * The bytes from `position` to the end, in fresh buffers of at most
   * `chunkBytes`. Each buffer is sized to what is left of the file as opened,
   * plus one byte, so that a short chunk says the end was reached: a 2 KB
   * file costs one 2 KB buffer, not 1 MiB ones (which under concurrent calls
   * made most of the daemon's external memory) and a second read for the end.
   * A file that grew since it was opened is read on to its new end.
   */
  async *chunks(position = 0, chunkBytes = READ_CHUNK_BYTES): AsyncGenerator<Buffer> {
    for (;;) {
      const left = this.size - position;
      const want = left > 0 ? Math.min(chunkBytes, left + 1) : chunkBytes;
      const chunk = await this.readAt(position, want);
      if (chunk.length === 0) return;
      position += chunk.length;
      yield chunk;
      if (chunk.length < want) return;
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
    return versionOf(fstatSync(this.held.fd, { bigint: true }));
  }

  /**
   * The descriptor, only for the search pool's worker threads (same process,
   * same descriptor table): positional reads there, never closed there.
   */
  get fd(): number {
    return this.held.fd;
  }

  /** Closes the descriptor (once, after any read still on the thread pool). */
  close(): void {
    this.held.close();
  }
}

function readAsync(fd: number, buffer: Buffer, offset: number, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) => read(fd, buffer, offset, length, position, (error, bytesRead) => (error ? reject(error) : resolve(bytesRead))));
}
