// The `file://DIR` snapshot store: one file per key under DIR. A put streams
// into a temp file next to the key, fsyncs it, renames it into place and
// fsyncs the directory, so a key is visible only once complete.
//
// Conditional writes (the workspaces' heads) compare an ETag that is the
// SHA-256 of the object's bytes, under a lock: one promise chain per key in
// this process, and a lock file (`KEY.lock`, created exclusively, holding
// its owner's pid and a random token) against other daemons on the same
// machine and directory. A lock is broken only when its owner's process is
// gone (a live owner, however slow, is waited for), by one waiter at a time
// (breakLock), and an owner removes the lock file only while it still holds
// its own token.
import { promises as fsp, type BigIntStats } from "node:fs";
import { createHash, randomBytes } from "node:crypto";
import path from "node:path";
import { fail, FileToolsError } from "../errors.js";
import type { ConditionalStore, SnapshotStore } from "./store.js";
import { syncDirectory } from "../workspace/sync-directory.js";

const TEMP_SUFFIX = /\.tmp-[0-9a-f]{16}$/;
const LOCK_SUFFIX = ".lock";
const LOCK_RETRY_MS = 5;
/** An empty lock file this old was left by an owner that died before writing its pid. */
const EMPTY_LOCK_MS = 5_000;

export class FileStore implements SnapshotStore, ConditionalStore {
  readonly description: string;
  readonly shared = false;
  /** Per key, the tail of this process's conditional writes. */
  private readonly keyQueues = new Map<string, Promise<unknown>>();

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

  async getRange(key: string, offset: number, length: number): Promise<Buffer> {
    let handle: fsp.FileHandle;
    try {
      handle = await fsp.open(this.pathOf(key), "r");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") fail("NOT_FOUND", `snapshot object ${key} does not exist`);
      throw storeError(error, `reading ${key}`);
    }
    try {
      const buffer = Buffer.allocUnsafe(length);
      let filled = 0;
      for (let n = -1; n !== 0 && filled < length; filled += n) n = (await handle.read(buffer, filled, length - filled, offset + filled)).bytesRead;
      return buffer.subarray(0, filled);
    } catch (error) {
      throw storeError(error, `reading ${key}`);
    } finally {
      await handle.close();
    }
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
        } else if (entry.isFile() && !TEMP_SUFFIX.test(entry.name) && !entry.name.endsWith(LOCK_SUFFIX) && key.startsWith(prefix)) {
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

  async createIfAbsent(key: string, body: Buffer, signal?: AbortSignal): Promise<string | undefined> {
    return this.underLock(key, signal, async (current) => (current === undefined ? this.writeSmall(key, body) : undefined));
  }

  async replaceIfMatch(key: string, body: Buffer, etag: string, signal?: AbortSignal): Promise<string | undefined> {
    return this.underLock(key, signal, async (current) => (current !== undefined && etagOf(current) === etag ? this.writeSmall(key, body) : undefined));
  }

  async readWithTag(key: string): Promise<{ text: string; etag: string } | undefined> {
    const bytes = await this.readSmall(key);
    return bytes && { text: bytes.toString("utf8"), etag: etagOf(bytes) };
  }

  /** Runs `write` with the key's current bytes, holding the key's lock (in this process and on disk). */
  private async underLock<T>(key: string, signal: AbortSignal | undefined, write: (current: Buffer | undefined) => Promise<T>): Promise<T> {
    const lockFile = this.pathOf(key) + LOCK_SUFFIX;
    const previous = this.keyQueues.get(key) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(async () => {
      const token = await this.takeLockFile(lockFile, key, signal);
      try {
        return await write(await this.readSmall(key));
      } finally {
        if ((await fsp.readFile(lockFile, "utf8").catch(() => "")) === token) await fsp.unlink(lockFile).catch(() => undefined);
      }
    });
    this.keyQueues.set(key, next);
    try {
      return await next;
    } finally {
      if (this.keyQueues.get(key) === next) this.keyQueues.delete(key);
    }
  }

  /** Creates the lock file, waiting while a live process holds it; its content, the token that proves it is ours. */
  private async takeLockFile(lockFile: string, key: string, signal: AbortSignal | undefined): Promise<string> {
    const token = `${process.pid} ${randomBytes(8).toString("hex")}`;
    try {
      await fsp.mkdir(path.dirname(lockFile), { recursive: true });
    } catch (error) {
      throw storeError(error, `locking ${key}`);
    }
    for (;;) {
      signal?.throwIfAborted();
      try {
        await fsp.writeFile(lockFile, token, { flag: "wx", mode: 0o600 });
        return token;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw storeError(error, `locking ${key}`);
      }
      const seen = await fsp.stat(lockFile, { bigint: true }).catch(() => undefined);
      const holder = await fsp.readFile(lockFile, "utf8").catch(() => undefined);
      // Empty: being written now, or its owner died between the create and the write (then it stays empty).
      const dead = seen !== undefined && holder !== undefined && (holder === "" ? Date.now() - Number(seen.mtimeMs) > EMPTY_LOCK_MS : !processAlive(Number(holder.split(" ")[0])));
      if (dead) await breakLock(lockFile, seen, holder);
      else await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS));
    }
  }

  private async readSmall(key: string): Promise<Buffer | undefined> {
    try {
      return await fsp.readFile(this.pathOf(key));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw storeError(error, `reading ${key}`);
    }
  }

  private async writeSmall(key: string, body: Buffer): Promise<string> {
    await this.put(key, (async function* () {
      yield body;
    })());
    return etagOf(body);
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

/** Whether process `pid` is running on this machine (EPERM: it is, under another user). */
function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Removes a dead owner's lock file if it is still the one seen (inode, its
 * change and modification times in ns, and content). Breakers exclude each
 * other with `KEY.lock.break` (created exclusively): only a breaker removes a
 * lock file that is not its own, so the one it checked is the one it removes,
 * never a live lock taken since. The times matter: a lock taken just after
 * another breaker removed the dead one may get the freed inode number back,
 * and it is empty until its owner has written its token, so inode and content
 * alike could match (a double win in 1 of 60 trials on a loaded machine).
 */
async function breakLock(lockFile: string, seen: BigIntStats, holder: string): Promise<void> {
  const breaker = `${lockFile}.break`;
  try {
    await fsp.writeFile(breaker, "", { flag: "wx", mode: 0o600 });
  } catch {
    // Another waiter is breaking it; a breaker file left by a waiter that died goes once it is old.
    const stats = await fsp.stat(breaker).catch(() => undefined);
    if (stats && Date.now() - stats.mtimeMs > EMPTY_LOCK_MS) await fsp.unlink(breaker).catch(() => undefined);
    return;
  }
  try {
    const now = await fsp.stat(lockFile, { bigint: true }).catch(() => undefined);
    const same = now !== undefined && now.ino === seen.ino && now.ctimeNs === seen.ctimeNs && now.mtimeNs === seen.mtimeNs;
    if (same && (await fsp.readFile(lockFile, "utf8").catch(() => undefined)) === holder) await fsp.unlink(lockFile).catch(() => undefined);
  } finally {
    await fsp.unlink(breaker).catch(() => undefined);
  }
}

function etagOf(bytes: Buffer): string {
  return createHash("sha256").update(bytes).digest("hex");
}

function storeError(error: unknown, what: string): unknown {
  if (error instanceof FileToolsError) return error;
  const code = (error as NodeJS.ErrnoException).code ?? "error";
  return new FileToolsError("STORE_UNAVAILABLE", `snapshot store: ${what} failed (${code})`);
}
