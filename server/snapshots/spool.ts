// A scratch file that holds a large file's bytes while the packer reads
// them, until the one-link rule held after the read (workspace/opened-file.ts):
// no byte of a member goes into a tarball before that, and bytes sent cannot
// be taken back. One per pack, rewritten from its start for each large file,
// unlinked as soon as it is created: nothing is left behind, even by a daemon
// that is killed.
import { randomBytes } from "node:crypto";
import { promises as fsp } from "node:fs";
import path from "node:path";

const CHUNK_BYTES = 1 << 20;

export class Spool {
  private handle: Promise<fsp.FileHandle> | undefined;
  /** Bytes it holds. */
  length = 0;

  /** `dir`: the daemon's scratch directory. */
  constructor(private readonly dir: string) {}

  /** Starts over: what is appended next is written from the start. */
  clear(): void {
    this.length = 0;
  }

  async append(chunk: Buffer): Promise<void> {
    const handle = await this.open();
    for (let offset = 0; offset < chunk.length; ) offset += (await handle.write(chunk, offset, chunk.length - offset, this.length + offset)).bytesWritten;
    this.length += chunk.length;
  }

  /** What it holds, in fresh buffers of `size` bytes (the last one shorter). */
  async *chunks(size = CHUNK_BYTES): AsyncGenerator<Buffer> {
    const handle = await this.open();
    for (let position = 0; position < this.length; ) {
      const buffer = Buffer.allocUnsafe(Math.min(size, this.length - position));
      for (let filled = 0; filled < buffer.length; ) {
        const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, position + filled);
        if (bytesRead === 0) throw new Error("the pack's spool file is shorter than what was written to it");
        filled += bytesRead;
      }
      position += buffer.length;
      yield buffer;
    }
  }

  async close(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    await (await handle?.catch(() => undefined))?.close();
  }

  private open(): Promise<fsp.FileHandle> {
    this.handle ??= (async () => {
      const file = path.join(this.dir, `spool-${randomBytes(8).toString("hex")}`);
      const handle = await fsp.open(file, "wx+", 0o600);
      try {
        await fsp.unlink(file);
      } catch (error) {
        await handle.close();
        throw error;
      }
      return handle;
    })();
    return this.handle;
  }
}
