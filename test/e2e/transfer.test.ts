import { createHash, randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, collect, setup } from "./daemon.js";

let d: Awaited<ReturnType<typeof setup>>;
beforeAll(async () => {
  d = await setup();
});
afterAll(() => d?.stop());

const MiB = 1024 * 1024;
const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
function* uploadMessages(workspace: string, p: string, bytes: Buffer, header: Record<string, unknown> = {}) {
  yield { event: { case: "header" as const, value: { workspace, path: p, ...header } } };
  for (let i = 0; i < bytes.length; i += 512 * 1024) {
    yield { event: { case: "chunk" as const, value: { data: bytes.subarray(i, i + 512 * 1024) } } };
  }
}

describe("Upload", () => {
  it("stores several MiB sent in chunks", async () => {
    const bytes = randomBytes(5 * MiB + 123);
    const res = await d.client.files.upload(uploadMessages(d.ws, "up/big.bin", bytes, { sha256: sha(bytes) }));
    expect(res).toMatchObject({ path: "/up/big.bin", size: BigInt(bytes.length), created: true, sha256: sha(bytes) });
    expect(readFileSync(path.join(d.root, "up/big.bin")).equals(bytes)).toBe(true);
  });

  it("a sha256 mismatch writes nothing (INVALID_ARGUMENT)", async () => {
    const bytes = randomBytes(2 * MiB);
    await expectError(
      d.client.files.upload(uploadMessages(d.ws, "up/bad.bin", bytes, { sha256: "0".repeat(64) })),
      "INVALID_ARGUMENT",
      "INVALID_ARGUMENT",
    );
    expect(existsSync(path.join(d.root, "up/bad.bin"))).toBe(false);
  });

  it("a slow upload holds no lock while its bytes arrive: a Write of the same path goes first, the upload then replaces it", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let firstChunkSent!: () => void;
    const sentOne = new Promise<void>((resolve) => (firstChunkSent = resolve));
    async function* slow() {
      yield { event: { case: "header" as const, value: { workspace: d.ws, path: "up/contended.txt" } } };
      yield { event: { case: "chunk" as const, value: { data: Buffer.from("from the ") } } };
      firstChunkSent();
      await released;
      yield { event: { case: "chunk" as const, value: { data: Buffer.from("upload") } } };
    }
    const upload = d.client.files.upload(slow());
    await sentOne;
    // Within its deadline, although the upload to the same path is still receiving.
    await d.client.files.write({ workspace: d.ws, path: "up/contended.txt", body: { case: "content", value: "from the write" } }, { deadline: 10_000 });
    expect(readFileSync(path.join(d.root, "up/contended.txt"), "utf8")).toBe("from the write");
    release();
    expect(await upload).toMatchObject({ created: false });
    expect(readFileSync(path.join(d.root, "up/contended.txt"), "utf8")).toBe("from the upload");
  });

  it("a cancelled upload changes nothing and leaves no staged file", async () => {
    const controller = new AbortController();
    async function* cut() {
      yield { event: { case: "header" as const, value: { workspace: d.ws, path: "up/cut.bin" } } };
      yield { event: { case: "chunk" as const, value: { data: randomBytes(MiB) } } };
      controller.abort();
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    await expectError(d.client.files.upload(cut(), { signal: controller.signal }), "CANCELLED");
    expect(existsSync(path.join(d.root, "up/cut.bin"))).toBe(false);
    const staged = () => readdirSync(d.root).filter((name) => name.startsWith(".filetools-tmp-"));
    for (let i = 0; i < 50 && staged().length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(staged()).toEqual([]);
  });

  it("APPEND mode is INVALID_ARGUMENT", async () => {
    await expectError(d.client.files.upload(uploadMessages(d.ws, "up/app.bin", Buffer.from("abc"), { mode: 4 })), "INVALID_ARGUMENT", "INVALID_ARGUMENT");
  });
});

describe("Download", () => {
  it("streams a header with size and sha256, then chunks of at most 1 MiB matching the bytes", async () => {
    const bytes = randomBytes(3 * MiB + 7);
    await d.client.files.write({ workspace: d.ws, path: "dl.bin", body: { case: "data", value: bytes } });
    const msgs = await collect(d.client.files.download({ workspace: d.ws, path: "dl.bin" }));
    const first = msgs[0]!.event;
    expect(first.case).toBe("header");
    const header = first.value as { size: bigint; sha256: string; file?: { path: string } };
    expect(header.size).toBe(BigInt(bytes.length));
    expect(header.sha256).toBe(sha(bytes));
    expect(header.file?.path).toBe("/dl.bin");
    const chunks = msgs.slice(1).map((m) => (m.event.value as { data: Uint8Array }).data);
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(MiB);
    expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
  });

  it("a missing file is NOT_FOUND", async () => {
    await expectError(collect(d.client.files.download({ workspace: d.ws, path: "nope.bin" })), "NOT_FOUND", "NOT_FOUND");
  });
});

describe("oversized messages", () => {
  it("a 9 MiB Write is RESOURCE_EXHAUSTED and the daemon keeps serving", async () => {
    const err = await expectError(
      d.client.files.write({ workspace: d.ws, path: "huge.txt", body: { case: "content", value: "a".repeat(9 * MiB) } }),
      "RESOURCE_EXHAUSTED",
    );
    expect(err.message).not.toContain("aaaaaaaa");
    expect(existsSync(path.join(d.root, "huge.txt"))).toBe(false);
    expect((await d.client.files.stat({ workspace: d.ws, path: "" })).file?.path).toBe("/");
    expect(d.proc.exitCode).toBeNull();
  });
});
