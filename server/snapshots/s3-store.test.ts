// The S3 store against a real S3-compatible server (SeaweedFS on loopback,
// started by test/support/seaweedfs.ts): the store contract, plus what only
// S3 has (URL parsing, multipart uploads left behind, a server that stops).
import { createServer } from "node:net";
import { AbortMultipartUploadCommand, ListMultipartUploadsCommand, S3Client } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSeaweedfs, type Seaweedfs } from "../../test/support/seaweedfs.js";
import { watchProcess } from "../../test/support/process-health.js";
import { S3Store, parseS3Url } from "./s3-store.js";
import { storeContract } from "./store-contract.js";

let s3: Seaweedfs;
const stores: S3Store[] = [];
function track(store: S3Store): S3Store {
  stores.push(store);
  return store;
}

/** A loopback port with nothing listening. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

beforeAll(async () => {
  s3 = await startSeaweedfs();
}, 120_000);

afterAll(async () => {
  for (const store of stores) store.close();
  await s3?.stop();
});

let downPort = 0;
beforeAll(async () => {
  downPort = await closedPort();
});

storeContract("s3:// (SeaweedFS)", {
  open: () => track(new S3Store(`s3://${s3.bucket}/contract`, s3.storeOptions)),
  openDown: () =>
    track(new S3Store(`s3://${s3.bucket}/contract`, { ...s3.storeOptions, endpoint: `http://127.0.0.1:${downPort}`, maxAttempts: 1 })),
  unusable: [
    {
      label: "missing bucket",
      open: () => track(new S3Store("s3://no-such-bucket-filetools/x", s3.storeOptions)),
      message: /no-such-bucket-filetools does not exist/,
    },
    {
      label: "bad credentials",
      open: () =>
        track(
          new S3Store(`s3://${s3.bucket}/x`, {
            ...s3.storeOptions,
            credentials: { accessKeyId: "wrong-key", secretAccessKey: "wrong-secret-value" },
          }),
        ),
      message: /access denied to bucket filetools-test.*AWS_ACCESS_KEY_ID/,
    },
    {
      label: "unreachable endpoint",
      open: () => track(new S3Store(`s3://${s3.bucket}/x`, { ...s3.storeOptions, endpoint: `http://127.0.0.1:${downPort}`, maxAttempts: 1 })),
      message: /cannot reach http:\/\/127\.0\.0\.1:\d+/,
    },
  ],
});

describe("S3Store specifics", () => {
  it("parses s3:// URLs", () => {
    expect(parseS3Url("s3://bucket")).toEqual({ bucket: "bucket", prefix: "" });
    expect(parseS3Url("s3://bucket/")).toEqual({ bucket: "bucket", prefix: "" });
    expect(parseS3Url("s3://bucket/a/b/")).toEqual({ bucket: "bucket", prefix: "a/b/" });
    expect(parseS3Url("s3://my.bucket-1/snapshots")).toEqual({ bucket: "my.bucket-1", prefix: "snapshots/" });
    for (const bad of ["s3://", "s3:///x", "s3://B/x", "s3://bucket/../x", "file:///x", "s3://a/x"]) {
      expect(() => parseS3Url(bad), bad).toThrow(/--store/);
    }
  });

  it("keeps the store's objects under its prefix", async () => {
    const a = track(new S3Store(`s3://${s3.bucket}/tenant-a`, s3.storeOptions));
    const b = track(new S3Store(`s3://${s3.bucket}/tenant-b/`, s3.storeOptions));
    await a.put("ws/1.json", (async function* () { yield Buffer.from("a"); })());
    expect(await a.list("ws/")).toEqual(["ws/1.json"]);
    expect(await b.list("ws/")).toEqual([]);
    expect(a.description).toBe(`s3://${s3.bucket}/tenant-a/`);
  });

  it("refuses keys that would leave the prefix", async () => {
    const store = track(new S3Store(`s3://${s3.bucket}/p`, s3.storeOptions));
    for (const key of ["", "/abs", "a/../b", "a//b", "./a"]) {
      await expect(store.get(key)).rejects.toMatchObject({ reason: "INVALID_ARGUMENT" });
    }
  });

  it("a failed multipart upload is aborted, not left behind", async () => {
    const store = track(new S3Store(`s3://${s3.bucket}/mpu`, s3.storeOptions));
    async function* body(): AsyncGenerator<Uint8Array> {
      for (let i = 0; i < 3; i++) yield Buffer.alloc(4 * 1024 * 1024, i);
      throw new Error("producer failed");
    }
    await expect(store.put("ws/half.tar.gz", body())).rejects.toThrow("producer failed");
    const client = new S3Client({ ...s3.storeOptions });
    try {
      const uploads = await client.send(new ListMultipartUploadsCommand({ Bucket: s3.bucket, Prefix: "mpu/" }));
      const open = uploads.Uploads ?? [];
      // Clean up anyway so a failure here does not leak into other runs.
      for (const u of open) {
        await client.send(new AbortMultipartUploadCommand({ Bucket: s3.bucket, Key: u.Key!, UploadId: u.UploadId! }));
      }
      expect(open).toEqual([]);
    } finally {
      client.destroy();
    }
  });

  it("a server that stops under a working store: STORE_UNAVAILABLE on every call", async () => {
    const own = await startSeaweedfs();
    try {
      const store = track(new S3Store(`s3://${own.bucket}/down`, { ...own.storeOptions, maxAttempts: 1 }));
      await store.put("ws/a.json", (async function* () { yield Buffer.from("a"); })());
      await own.stop();
      await expect(store.list("ws/")).rejects.toMatchObject({ reason: "STORE_UNAVAILABLE" });
      await expect(store.get("ws/a.json")).rejects.toMatchObject({ reason: "STORE_UNAVAILABLE" });
      await expect(store.put("ws/b.json", (async function* () { yield Buffer.from("b"); })())).rejects.toMatchObject({
        reason: "STORE_UNAVAILABLE",
      });
    } finally {
      await own.stop();
    }
  }, 60_000);
});

describe("an upload body killed mid-way", () => {
  /** 1 MiB chunks, up to `chunks`, counting what was asked for; `closed` once the producer was let go (a pack's walk and files with it). */
  function producer(chunks: number) {
    const state = { produced: 0, closed: false };
    async function* body(): AsyncGenerator<Uint8Array> {
      try {
        for (; state.produced < chunks; state.produced++) yield Buffer.alloc(1024 * 1024, state.produced);
      } finally {
        state.closed = true;
      }
    }
    return { state, body: body() };
  }

  it("a store that fails under a body larger than a part: STORE_UNAVAILABLE (not the abort the SDK throws into the body), the body let go", async () => {
    const health = watchProcess();
    try {
      const store = track(new S3Store(`s3://${s3.bucket}/x`, { ...s3.storeOptions, endpoint: `http://127.0.0.1:${downPort}`, maxAttempts: 1 }));
      const { state, body } = producer(1000);
      await expect(store.put("ws/big.tar.gz", body)).rejects.toMatchObject({ reason: "STORE_UNAVAILABLE" });
      expect(state.closed).toBe(true);
      expect(state.produced).toBeLessThan(1000);
      expect(health.problems).toEqual([]);
    } finally {
      health.stop();
    }
  });

  it("cancelled in the middle of a multipart upload: CANCELLED, the body let go, nothing left behind", async () => {
    const health = watchProcess();
    try {
      const store = track(new S3Store(`s3://${s3.bucket}/cancel`, s3.storeOptions));
      const { state, body } = producer(1000);
      const abort = new AbortController();
      const put = store.put("ws/cancelled.tar.gz", body, abort.signal);
      while (state.produced < 12) await new Promise((resolve) => setTimeout(resolve, 5)); // past two parts
      abort.abort();
      await expect(put).rejects.toMatchObject({ reason: "CANCELLED" });
      expect(state.closed).toBe(true);
      expect(await store.list("ws/")).toEqual([]);
      expect(health.problems).toEqual([]);
    } finally {
      health.stop();
    }
  });
});
