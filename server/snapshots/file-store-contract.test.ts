// The store contract (store-contract.ts) on the file:// store, as the S3 store
// runs it on SeaweedFS (s3-store.test.ts): the same behaviour from both.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FileStore } from "./file-store.js";
import { storeContract } from "./store-contract.js";

const scratch = mkdtempSync(path.join(tmpdir(), "filetools-file-store-"));
// A regular file where the store's directory should be: unusable at start-up and at use.
const blocker = path.join(scratch, "not-a-directory");
writeFileSync(blocker, "x");
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

storeContract("file://", {
  open: () => new FileStore(path.join(scratch, "store")),
  openDown: () => new FileStore(path.join(blocker, "store")),
  unusable: [{ label: "a file where the directory should be", open: () => new FileStore(path.join(blocker, "store")), message: /not usable/ }],
});

describe("file:// objects another process put there", () => {
  it("a directory where an object should be is DATA_LOSS, not a read error", async () => {
    const root = path.join(scratch, "odd");
    mkdirSync(path.join(root, "w", "20200101T000000000Z-00000000.tar.gz"), { recursive: true });
    const store = new FileStore(root);
    await expect(store.get("w/20200101T000000000Z-00000000.tar.gz")).rejects.toMatchObject({ reason: "DATA_LOSS" });
  });
});
