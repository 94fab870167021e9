// A lost response to the head's compare-and-swap: the If-Match PUT succeeds,
// its answer is dropped (a proxy resets the connection), the SDK's retry meets
// its own write and gets 412. The publish is still reported and listed as
// published: a refusal is checked by reading the head again.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSeaweedfs, type Seaweedfs } from "../../support/seaweedfs.js";
import { startS3FaultProxy, type S3FaultProxy } from "../../support/s3-fault-proxy.js";
import { ensureBuilt, startDaemon, type Daemon } from "../daemon.js";

const daemons: Daemon[] = [];
let s3: Seaweedfs;
let proxy: S3FaultProxy;
let dropNextHeadSwap = false;
beforeAll(async () => {
  ensureBuilt();
  s3 = await startSeaweedfs();
  Object.assign(process.env, { AWS_ACCESS_KEY_ID: s3.accessKey, AWS_SECRET_ACCESS_KEY: s3.secretKey });
  proxy = await startS3FaultProxy(s3.port, (req) => {
    const drop = dropNextHeadSwap && req.method === "PUT" && /\.heads\//.test(req.url ?? "") && req.headers["if-match"] !== undefined;
    if (drop) dropNextHeadSwap = false;
    return drop ? "drop-answer" : "pass";
  });
}, 120_000);
afterAll(async () => {
  for (const d of daemons) await d.stop().catch(() => undefined);
  proxy?.close();
  await s3?.stop();
});

describe("a lost response to the head's swap", () => {
  it("a publish that the store committed is reported and listed as published", async () => {
    const store = `s3://${s3.bucket}/faults-${randomUUID()}`;
    const d = await startDaemon({ args: ["--store", store, "--s3-endpoint", proxy.endpoint, "--s3-force-path-style", "--lease-ttl-ms", "5000"] });
    daemons.push(d);
    const runOnce = async (p: string) => {
      const run = (await d.client.workspaces.startRun({ workspace: "w" })).run!;
      await d.client.files.write({ workspace: "w", path: p, body: { case: "content", value: p } });
      return d.client.workspaces.finishRun({ workspace: "w", runId: run.id });
    };
    await runOnce("/1.txt"); // creates the head (If-None-Match)
    dropNextHeadSwap = true;
    let second: unknown;
    try {
      second = await runOnce("/2.txt");
    } catch (error) {
      second = error;
    }
    const shown = await d.client.workspaces.getWorkspace({ workspace: "w" });
    const main = (await d.client.workspaces.listSnapshots({ workspace: "w" })).snapshots.map((s) => s.id);
    expect(second).not.toBeInstanceOf(Error);
    expect(main).toContain(shown.newestSnapshot);
    expect((second as { snapshot?: { id: string } }).snapshot?.id).toBe(shown.newestSnapshot);
    expect(main).toHaveLength(2);
  }, 90_000);
});
