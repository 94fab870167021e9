// A regular file a walk opened for a reader of whole files (the snapshot
// packer, the live side of a diff). The one-link rule (lone-file.ts) is
// checked at open (held-open.ts) and again after the read, by name
// (isLoneByName); readAll hands the bytes over as it reads them and says at
// the end whether they may be used, so a reader keeps them to itself until
// then.
import { read, readSync, type BigIntStats } from "node:fs";
import type { Directory } from "./directory.js";
import { HeldDescriptor } from "./held-descriptor.js";
import { isLoneByName, isLoneFile } from "./lone-file.js";

/** Files up to this size are read whole with one synchronous read (cheaper than several calls on the thread pool). */
export const WHOLE_READ_BYTES = 1 << 20;
/** Larger files are read in chunks of this size, on the thread pool. */
const CHUNK_BYTES = 1 << 20;

export class OpenedFile {
  private readonly held: HeldDescriptor;
  /** Size at open: reads stop there (what the file grew by meanwhile is not read). */
  readonly size: number;
  /** Permission bits at open. */
  readonly mode: number;
  readonly mtime: Date;

  constructor(
    fd: number,
    stats: BigIntStats,
    /** The directory it was opened in (borrowed, let go by close()) and its name there, for the check after the read. */
    private readonly dir: Directory,
    private readonly name: string,
  ) {
    this.held = new HeldDescriptor(fd);
    this.size = Number(stats.size);
    this.mode = Number(stats.mode & 0o7777n);
    this.mtime = stats.mtime;
  }

  /**
   * Reads the file from its start up to its size at open (fewer bytes when it
   * shrank meanwhile) and gives `take` each chunk, a fresh buffer: the whole
   * file in one up to WHOLE_READ_BYTES (an empty file: one empty buffer).
   * Then checks the rule again: false when the file failed it, and nothing
   * `take` was given may be used. Stops early, false, at a chunk after which
   * the rule no longer holds.
   */
  async readAll(take: (chunk: Buffer) => void | Promise<void>): Promise<boolean> {
    if (this.size <= WHOLE_READ_BYTES) {
      const buffer = Buffer.allocUnsafe(this.size);
      let filled = 0;
      for (let n = -1; n !== 0 && filled < buffer.length; filled += n) n = readSync(this.held.fd, buffer, filled, buffer.length - filled, filled);
      await take(buffer.subarray(0, filled));
      return isLoneByName(this.held.fd, this.dir.fd, this.name);
    }
    for (let position = 0; position < this.size; ) {
      const buffer = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, this.size - position));
      const filled = await this.held.onPool((fd) => readFully(fd, buffer, position));
      position += filled;
      if (filled > 0) await take(buffer.subarray(0, filled));
      if (!isLoneFile(this.held.fd)) return false; // early: no use reading on
      if (filled < buffer.length) break; // shrank
    }
    return isLoneByName(this.held.fd, this.dir.fd, this.name);
  }

  /** Closes the descriptor (once, after a read still on the thread pool) and lets go of the directory. */
  close(): void {
    this.held.close();
    this.dir.close();
  }
}

/** Fills `buffer` from `position` (less at the end of the file); the bytes read. */
async function readFully(fd: number, buffer: Buffer, position: number): Promise<number> {
  let filled = 0;
  while (filled < buffer.length) {
    const n = await new Promise<number>((resolve, reject) => read(fd, buffer, filled, buffer.length - filled, position + filled, (error, count) => (error ? reject(error) : resolve(count))));
    if (n === 0) break;
    filled += n;
  }
  return filled;
}
