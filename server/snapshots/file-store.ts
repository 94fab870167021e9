// The `file://DIR` snapshot store: one file per key under DIR. A put streams
// into a temp file next to the key, fsyncs it, renames it into place and
// fsyncs the directory, so a key is visible only once complete.
import { promises as fsp } from "node:fs";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { fail, FileToolsError } from "../errors.js";
import type { SnapshotStore } from "./store.js";
import { syncDirectory } from "../workspace/sync-directory.js";

const TEMP_SUFFIX = /\.tmp-[0-9a-f]{16}$/;

export class FileStore implements SnapshotStore {
  readonly description: string;

  constructor(private readonly dir: string) {
    this.description = `file://${dir}`;
  }

  async check(): Promise<void> {
    try {
      await fsp.mkdir(this.dir, { recursive: true });
      const probe = path.join(this.dir, `.probe.tmp-${randomBytes(8).toString("hex")}`);
      await fsp.writeFile(probe, "ok");
      await fsp.unlink(probe);
      await this.sweep(this.dir);
    } catch (error) {
      throw new Error(`snapshot store ${this.description} is not usable: ${(error as Error).message}`);
    }
  }

  async put(key: string, body: AsyncIterable<Uint8Array>, signal?: AbortSignal): Promise<void> {
    const target = this.pathOf(key);
    const temp = `${target}.tmp-${randomBytes(8).toString("hex")}`;
    let handle: fsp.FileHandle | undefined;
    try {
      await fsp.mkdir(path.dirname(target), { recursive: true });
      handle = await fsp.open(temp, "wx", 0o600);
      for await (const chunk of body) {
        signal?.throwIfAborted();
        let offset = 0;
        while (offset < chunk.length) offset += (await handle.write(chunk, offset, chunk.length - offset)).bytesWritten;
      }
      await handle.sync();
      await handle.close();
      handle = undefined;
      await fsp.rename(temp, target);
      await syncDirectory(path.dirname(target));
    } catch (error) {
      await handle?.close().catch(() => undefined);
      await fsp.unlink(temp).catch(() => undefined);
      throw storeError(error, `writing ${key}`);
    }
  }

  async get(key: string): Promise<AsyncIterable<Uint8Array>> {
    const file = this.pathOf(key);
    let handle: fsp.FileHandle;
    try {
      handle = await fsp.open(file, "r");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") fail("NOT_FOUND", `snapshot object ${key} does not exist`);
      throw storeError(error, `reading ${key}`);
    }
    try {
      if (!(await handle.stat()).isFile()) fail("DATA_LOSS", `snapshot object ${key} is not a file`);
    } catch (error) {
      await handle.close();
      throw storeError(error, `reading ${key}`);
    }
    // 256 KiB reads: an export streams these straight to the client, and smaller buffers keep the daemon's peak memory down.
    // The stream owns the handle and closes it once (closing its number as well would close whatever reused it).
    return handle.createReadStream({ highWaterMark: 1 << 18 });
  }

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    const walk = async (dir: string, rel: string): Promise<void> => {
      let entries;
      try {
        entries = await fsp.readdir(dir, { withFileTypes: true });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
        throw error;
      }
      for (const entry of entries) {
        const key = rel ? `${rel}/${entry.name}` : entry.name;
        if (entry.isDirectory()) {
          if (key.startsWith(prefix) || prefix.startsWith(key + "/")) await walk(path.join(dir, entry.name), key);
        } else if (entry.isFile() && !TEMP_SUFFIX.test(entry.name) && key.startsWith(prefix)) {
          keys.push(key);
        }
      }
    };
    try {
      await walk(this.dir, "");
    } catch (error) {
      throw storeError(error, `listing ${prefix}`);
    }
    return keys.sort();
  }

  async delete(key: string): Promise<void> {
    try {
      await fsp.unlink(this.pathOf(key));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw storeError(error, `deleting ${key}`);
    }
  }

  private pathOf(key: string): string {
    const parts = key.split("/");
    if (key.startsWith("/") || parts.some((p) => p === "" || p === "." || p === "..") || key.includes("\0")) {
      fail("INVALID_ARGUMENT", `invalid store key ${JSON.stringify(key)}`);
    }
    return path.join(this.dir, ...parts);
  }

  /** Removes temp files a crash left behind (they were never visible). */
  private async sweep(dir: string): Promise<void> {
    for (const entry of await fsp.readdir(dir, { withFileTypes: true })) {
      const p = path.join(dir, entry.name);
      if (entry.isDirectory()) await this.sweep(p);
      else if (TEMP_SUFFIX.test(entry.name)) await fsp.unlink(p).catch(() => undefined);
    }
  }
}

function storeError(error: unknown, what: string): unknown {
  if (error instanceof FileToolsError) return error;
  const code = (error as NodeJS.ErrnoException).code ?? "error";
  return new FileToolsError("STORE_UNAVAILABLE", `snapshot store: ${what} failed (${code})`);
}
