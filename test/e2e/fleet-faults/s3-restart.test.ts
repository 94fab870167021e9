// A graceful stop on s3:// (SIGTERM) snapshots every active run and keeps its
// lease: the runs stay active, and the restarted daemon resumes them.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSeaweedfs, type Seaweedfs } from "../../support/seaweedfs.js";
import { ensureBuilt, startDaemon, type Daemon } from "../daemon.js";

const daemons: Daemon[] = [];
let s3: Seaweedfs;
beforeAll(async () => {
  ensureBuilt();
  s3 = await startSeaweedfs();
  Object.assign(process.env, { AWS_ACCESS_KEY_ID: s3.accessKey, AWS_SECRET_ACCESS_KEY: s3.secretKey });
}, 120_000);
afterAll(async () => {
  for (const d of daemons) await d.stop().catch(() => undefined);
  await s3?.stop();
});

async function daemon(store: string, dataDir?: string): Promise<Daemon> {
  const d = await startDaemon({ dataDir, args: ["--store", store, "--s3-endpoint", s3.endpoint, "--s3-force-path-style", "--lease-ttl-ms", "3000", "--node-name", `n${daemons.length}`] });
  daemons.push(d);
  return d;
}

describe("graceful restart on s3://", () => {
  it("SIGTERM snapshots every active run and the runs stay active, so the restarted daemon resumes them", async () => {
    const store = `s3://${s3.bucket}/faults-${randomUUID()}`;
    const d1 = await daemon(store);
    const run = (await d1.client.workspaces.startRun({ workspace: "w" })).run!;
    await d1.client.files.write({ workspace: "w", path: "/a.txt", body: { case: "content", value: "a\n" } });
    await d1.stop(true); // SIGTERM: the shutdown snapshot; the lease stays the run's
    const d2 = await daemon(store, d1.dataDir);
    const runs = (await d2.client.workspaces.listRuns({})).runs;
    expect(runs.map((r) => r.runId)).toContain(run.id);
    const finished = (await d2.client.workspaces.finishRun({ workspace: "w", runId: run.id })).snapshot!;
    expect(finished.runId).toBe(run.id);
  }, 90_000);
});
