// A daemon restarted while the store answers errors for a moment (503 on the
// heads and leases for its first seconds) does not leave its old run unheld
// for good: it asks again until the store answers, then resumes the run (its
// lease still names it) or ends it.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSeaweedfs, type Seaweedfs } from "../../support/seaweedfs.js";
import { startS3FaultProxy, type S3FaultProxy } from "../../support/s3-fault-proxy.js";
import { ensureBuilt, startDaemon, type Daemon } from "../daemon.js";

const daemons: Daemon[] = [];
let s3: Seaweedfs;
let proxy: S3FaultProxy;
let failing = false;
beforeAll(async () => {
  ensureBuilt();
  s3 = await startSeaweedfs();
  Object.assign(process.env, { AWS_ACCESS_KEY_ID: s3.accessKey, AWS_SECRET_ACCESS_KEY: s3.secretKey });
  proxy = await startS3FaultProxy(s3.port, (req) => (failing && /\.(heads|leases)/.test(req.url ?? "") ? "unavailable" : "pass"));
}, 120_000);
afterAll(async () => {
  for (const d of daemons) await d.stop().catch(() => undefined);
  proxy?.close();
  await s3?.stop();
});

const TTL = 2000;
async function daemon(store: string, node: string, dataDir?: string): Promise<Daemon> {
  const endpoint = proxy.endpoint;
  const d = await startDaemon({ dataDir, args: ["--store", store, "--s3-endpoint", endpoint, "--s3-force-path-style", "--lease-ttl-ms", String(TTL), "--node-name", node] });
  daemons.push(d);
  return d;
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("restart during a store blip", () => {
  it("a run whose resume check met a store error is checked again, and resumed once the store answers (its lease still names it)", async () => {
    const store = `s3://${s3.bucket}/faults-${randomUUID()}`;
    const a = await daemon(store, "a");
    const ghost = (await a.client.workspaces.startRun({ workspace: "w" })).run!;
    await a.client.files.write({ workspace: "w", path: "/a.txt", body: { case: "content", value: "a\n" } });
    a.proc.kill("SIGKILL");
    await new Promise((r) => a.proc.once("exit", r));
    failing = true;
    const a2 = await daemon(store, "a", a.dataDir);
    failing = false;
    // The store answers again: the daemon asks again and resumes the run (nobody took its lease).
    const b = await daemon(store, "b");
    await b.client.workspaces.createWorkspace({ workspace: "w" });
    let resumed = false;
    for (let i = 0; i < 50 && !resumed; i++) {
      const { activeRun } = await b.client.workspaces.getWorkspace({ workspace: "w" }).catch(() => ({ activeRun: undefined }));
      resumed = activeRun?.runId === ghost.id && activeRun.node === "a" && Number(activeRun.leaseExpiresAt?.seconds ?? 0) * 1000 > Date.now() - 1000;
      if (!resumed) await sleep(200);
    }
    expect(resumed).toBe(true);
    await expect(b.client.workspaces.startRun({ workspace: "w" })).rejects.toMatchObject({ reason: "RUN_ACTIVE" });
    const published = (await a2.client.workspaces.finishRun({ workspace: "w", runId: ghost.id })).snapshot!;
    expect(published.runId).toBe(ghost.id);
  }, 120_000);
});
