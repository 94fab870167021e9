// The behaviour every SnapshotStore must have (store.ts), as a vitest suite
// that each implementation's test file runs against a real backend:
//
//   storeContract("file://", { open: () => new FileStore(dir), ... });
//   storeContract("s3://", { open: () => new S3Store(url, opts), ... });
//
// Each test works under its own random key prefix, so one store may serve all.
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { FileToolsError } from "../errors.js";
import type { Store } from "./store.js";

export interface StoreContractHarness {
  /** A working store (may be the same instance every time). */
  open(): Store | Promise<Store>;
  /** A store whose backend is down at use (closed port, server stopped, ...). */
  openDown?(): Store | Promise<Store>;
  /** Stores that are unusable at start-up: check() must throw a plain Error matching `message`. */
  unusable?: ReadonlyArray<{ label: string; open(): Store | Promise<Store>; message: RegExp }>;
  /** Size of the large streamed body (default 12 MiB: more than two 5 MiB multipart parts). */
  largeBytes?: number;
}

const MiB = 1024 * 1024;

async function* chunked(data: Buffer, chunk = 256 * 1024): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < data.length; i += chunk) {
    yield data.subarray(i, Math.min(i + chunk, data.length));
    // Let other work run: a real tarball producer is asynchronous too.
    await new Promise((r) => setImmediate(r));
  }
}

async function* failingAfter(data: Buffer, bytes: number, error: Error): AsyncGenerator<Uint8Array> {
  let sent = 0;
  for await (const chunk of chunked(data)) {
    if (sent >= bytes) throw error;
    sent += chunk.length;
    yield chunk;
  }
  throw error;
}

async function readAll(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of body) parts.push(Buffer.from(chunk));
  return Buffer.concat(parts);
}

async function reason(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(FileToolsError);
    return (error as FileToolsError).reason;
  }
  throw new Error("expected a FileToolsError");
}

const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");

export function storeContract(name: string, harness: StoreContractHarness): void {
  const large = harness.largeBytes ?? 12 * MiB;

  describe(`SnapshotStore contract: ${name}`, () => {
    const ns = () => `contract-${randomUUID()}`;

    it("describes itself without secrets", async () => {
      const store = await harness.open();
      expect(store.description).toMatch(/^(file|s3):\/\//);
      for (const secret of [process.env.AWS_SECRET_ACCESS_KEY, "filetools-test-secret-key"]) {
        if (secret) expect(store.description).not.toContain(secret);
      }
    });

    it("check() passes on a usable store", async () => {
      const store = await harness.open();
      await store.check();
    });

    it(`round-trips a streamed ${large / MiB} MiB body byte for byte`, async () => {
      const store = await harness.open();
      const key = `${ns()}/big.tar.gz`;
      const data = randomBytes(large);
      await store.put(key, chunked(data));
      const back = await readAll(await store.get(key));
      expect(back.length).toBe(data.length);
      expect(sha256(back)).toBe(sha256(data));
      await store.delete(key);
    });

    it("round-trips small and empty bodies, and a put replaces the object", async () => {
      const store = await harness.open();
      const dir = ns();
      await store.put(`${dir}/empty`, chunked(Buffer.alloc(0)));
      expect((await readAll(await store.get(`${dir}/empty`))).length).toBe(0);
      await store.put(`${dir}/m.json`, chunked(Buffer.from('{"v":1}')));
      await store.put(`${dir}/m.json`, chunked(Buffer.from('{"v":2}')));
      expect((await readAll(await store.get(`${dir}/m.json`))).toString()).toBe('{"v":2}');
    });

    it("reads byte ranges: inside, at the end, past the end, and of an absent key", async () => {
      const store = await harness.open();
      const key = `${ns()}/ranged.tar.gz`;
      const data = randomBytes(3 * MiB + 17);
      await store.put(key, chunked(data));
      expect((await store.getRange(key, 0, 10)).equals(data.subarray(0, 10))).toBe(true);
      expect((await store.getRange(key, 2 * MiB + 5, MiB)).equals(data.subarray(2 * MiB + 5, 3 * MiB + 5))).toBe(true);
      expect((await store.getRange(key, data.length - 7, 100)).equals(data.subarray(data.length - 7))).toBe(true);
      expect((await store.getRange(key, data.length + 10, 5)).length).toBe(0);
      expect((await store.getRange(key, 5, 0)).length).toBe(0);
      await expect(store.getRange(`${ns()}/absent`, 0, 5)).rejects.toMatchObject({ reason: "NOT_FOUND" });
      await store.delete(key);
    });

    it("lists keys by prefix, sorted, relative to the store", async () => {
      const store = await harness.open();
      const dir = ns();
      const keys = [`${dir}/b/2.json`, `${dir}/a/1.tar.gz`, `${dir}/b/10.json`, `${dir}/a/1.json`, `${dir}-other/x`];
      for (const key of keys) await store.put(key, chunked(Buffer.from(key)));
      expect(await store.list(`${dir}/`)).toEqual([`${dir}/a/1.json`, `${dir}/a/1.tar.gz`, `${dir}/b/10.json`, `${dir}/b/2.json`]);
      expect(await store.list(`${dir}/b/`)).toEqual([`${dir}/b/10.json`, `${dir}/b/2.json`]);
      expect(await store.list(`${dir}/none/`)).toEqual([]);
    });

    it("deletes; deleting an absent key is not an error", async () => {
      const store = await harness.open();
      const dir = ns();
      await store.put(`${dir}/x`, chunked(Buffer.from("x")));
      await store.delete(`${dir}/x`);
      expect(await store.list(`${dir}/`)).toEqual([]);
      await store.delete(`${dir}/x`);
      await store.delete(`${dir}/never-was`);
    });

    it("conditional writes: a create only where nothing is, a replace only on the ETag read, absent is undefined", async () => {
      const store = await harness.open();
      const key = `${ns()}/head.json`;
      expect(await store.readWithTag(key)).toBeUndefined();
      expect(await store.replaceIfMatch(key, Buffer.from("x"), "\"nope\"")).toBeUndefined();
      const first = await store.createIfAbsent(key, Buffer.from("one"));
      expect(first).toBeTruthy();
      expect(await store.createIfAbsent(key, Buffer.from("two"))).toBeUndefined();
      const read = await store.readWithTag(key);
      expect(read).toEqual({ text: "one", etag: first });
      const second = await store.replaceIfMatch(key, Buffer.from("three"), first!);
      expect(second).toBeTruthy();
      expect(await store.replaceIfMatch(key, Buffer.from("stale"), first!)).toBeUndefined();
      expect((await store.readWithTag(key))?.text).toBe("three");
    });

    it("conditional writes: of writers racing on one ETag (separate store instances), exactly one wins", async () => {
      const key = `${ns()}/head.json`;
      const etag = (await (await harness.open()).createIfAbsent(key, Buffer.from("start")))!;
      const writers = await Promise.all(Array.from({ length: 6 }, () => harness.open()));
      const results = await Promise.all(writers.map((store, i) => store.replaceIfMatch(key, Buffer.from(`writer ${i}`), etag)));
      const winners = results.flatMap((result, i) => (result === undefined ? [] : [i]));
      expect(winners).toHaveLength(1);
      expect((await writers[0]!.readWithTag(key))?.text).toBe(`writer ${winners[0]}`);
    });

    it("get of a missing key is NOT_FOUND", async () => {
      const store = await harness.open();
      expect(await reason(store.get(`${ns()}/missing.tar.gz`))).toBe("NOT_FOUND");
    });

    it("a put whose body fails midway leaves nothing under the key (and keeps an earlier object)", async () => {
      const store = await harness.open();
      const dir = ns();
      const boom = new Error("producer failed");
      const data = randomBytes(large);
      // Midway through a large body (after at least one full multipart part) ...
      await expect(store.put(`${dir}/half.tar.gz`, failingAfter(data, Math.floor(large * 0.6), boom))).rejects.toThrow();
      // ... and within the first part.
      await expect(store.put(`${dir}/small.tar.gz`, failingAfter(data, 64 * 1024, boom))).rejects.toThrow();
      expect(await store.list(`${dir}/`)).toEqual([]);
      expect(await reason(store.get(`${dir}/half.tar.gz`))).toBe("NOT_FOUND");
      // A failed overwrite leaves the complete earlier object as it was.
      await store.put(`${dir}/keep`, chunked(Buffer.from("complete")));
      await expect(store.put(`${dir}/keep`, failingAfter(data, Math.floor(large * 0.6), boom))).rejects.toThrow();
      expect((await readAll(await store.get(`${dir}/keep`))).toString()).toBe("complete");
    });

    it("a put cancelled by its signal leaves nothing under the key", async () => {
      const store = await harness.open();
      const dir = ns();
      const controller = new AbortController();
      const data = randomBytes(large);
      async function* body(): AsyncGenerator<Uint8Array> {
        let sent = 0;
        for await (const chunk of chunked(data)) {
          if (sent > large / 2) controller.abort();
          sent += chunk.length;
          yield chunk;
        }
      }
      await expect(store.put(`${dir}/cancelled`, body(), controller.signal)).rejects.toThrow();
      expect(await store.list(`${dir}/`)).toEqual([]);
    });

    if (harness.openDown) {
      const openDown = harness.openDown;
      it("a store that is down at use fails every call with STORE_UNAVAILABLE, without crashing", async () => {
        const store = await openDown();
        const key = `${ns()}/x.tar.gz`;
        expect(await reason(store.put(key, chunked(randomBytes(1024))))).toBe("STORE_UNAVAILABLE");
        expect(await reason(store.get(key))).toBe("STORE_UNAVAILABLE");
        expect(await reason(store.list(`${key}/`))).toBe("STORE_UNAVAILABLE");
        expect(await reason(store.delete(key))).toBe("STORE_UNAVAILABLE");
        await expect(store.check()).rejects.toThrow(/./);
      });
    }

    for (const unusable of harness.unusable ?? []) {
      it(`check() refuses a store that is unusable at start-up: ${unusable.label}`, async () => {
        const store = await unusable.open();
        const error = await store.check().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(Error);
        expect(error).not.toBeInstanceOf(FileToolsError);
        expect((error as Error).message).toMatch(unusable.message);
        for (const secret of [process.env.AWS_SECRET_ACCESS_KEY, "filetools-test-secret-key"]) {
          if (secret) expect((error as Error).message).not.toContain(secret);
        }
      });
    }
  });
}
