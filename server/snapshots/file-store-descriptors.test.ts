// A stored object's read stream closes its descriptor once. Closed twice, the
// second close lands on whatever the process opened meanwhile under the same
// number (RestoreSnapshot lost its staging directory's parent that way).
import { fstatSync, mkdtempSync, promises as fsp, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { FileStore } from "./file-store.js";

const scratch = mkdtempSync(path.join(tmpdir(), "filetools-file-store-fds-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

it("a read stream's close never closes a descriptor opened after it was consumed", async () => {
  const store = new FileStore(path.join(scratch, "store"));
  await store.check();
  await store.put("w/object.json", (async function* () {
    yield Buffer.from("{}");
  })());
  const closedUnderUs: number[] = [];
  // Each round races opens against the stream's closing; a double close hits one of them in a few percent of rounds.
  for (let round = 0; round < 300; round++) {
    const stream = (await store.get("w/object.json")) as AsyncIterable<Uint8Array> & NodeJS.EventEmitter;
    const closed = new Promise<void>((resolve) => stream.once("close", () => setImmediate(resolve)));
    let streamClosed = false;
    void closed.then(() => (streamClosed = true));
    for await (const _ of stream);
    const opened: fsp.FileHandle[] = [];
    while (!streamClosed) opened.push(await fsp.open(scratch, "r"));
    await closed;
    for (const handle of opened) {
      try {
        fstatSync(handle.fd);
      } catch {
        closedUnderUs.push(handle.fd);
      }
      await handle.close().catch(() => undefined);
    }
  }
  expect(closedUnderUs).toEqual([]);
});
