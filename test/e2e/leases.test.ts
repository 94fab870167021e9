// Run leases across daemons on one bucket of a real S3-compatible server
// (SeaweedFS, which honours If-None-Match and If-Match on PutObject): a race
// for a workspace has one winner, a killed holder's lease expires and the
// next runtime restores the last published snapshot, a holder that was cut
// off past its TTL (SIGSTOP) may not publish over the run that took over, and
// no published snapshot is ever lost.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSeaweedfs, type Seaweedfs } from "../support/seaweedfs.js";
import { ensureBuilt, expectError, startDaemon, type Daemon } from "./daemon.js";

// Long enough that a call made just after a kill still finds the lease live on a loaded machine (2 shared cores).
const TTL_MS = 3000;
let s3: Seaweedfs;
const daemons: Daemon[] = [];

beforeAll(async () => {
  ensureBuilt();
  s3 = await startSeaweedfs();
  Object.assign(process.env, { AWS_ACCESS_KEY_ID: s3.accessKey, AWS_SECRET_ACCESS_KEY: s3.secretKey });
}, 120_000);

afterAll(async () => {
  for (const d of daemons) {
    if (d.proc.exitCode === null && d.proc.signalCode === null) d.proc.kill("SIGCONT"); // one stopped by a test
    await d.stop().catch(() => undefined);
  }
  await s3?.stop();
});

/** A daemon on `store` with a short lease TTL. */
async function daemonOn(store: string): Promise<Daemon> {
  const d = await startDaemon({ args: ["--store", store, "--s3-endpoint", s3.endpoint, "--s3-force-path-style", "--lease-ttl-ms", String(TTL_MS)] });
  daemons.push(d);
  return d;
}

const write = (d: Daemon, path: string, text: string) => d.client.files.write({ workspace: "w", path, body: { case: "content", value: text } });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** StartRun, retried while the workspace is leased to another run; resolves with the run once it starts. */
async function startWhenFree(d: Daemon) {
  for (let attempt = 0; ; attempt++) {
    try {
      return (await d.client.workspaces.startRun({ workspace: "w" })).run!;
    } catch (error) {
      if (attempt > 40 || (error as { reason?: string }).reason !== "RUN_ACTIVE") throw error;
      await sleep(250);
    }
  }
}

describe("run leases on an s3:// store", () => {
  it("two daemons racing for a workspace: exactly one starts, the other is told who holds it until when", async () => {
    const store = `s3://${s3.bucket}/race-${randomUUID()}`;
    const [a, b] = await Promise.all([daemonOn(store), daemonOn(store)]);
    const outcomes = await Promise.allSettled([a.client.workspaces.startRun({ workspace: "w" }), b.client.workspaces.startRun({ workspace: "w" })]);
    const won = outcomes.filter((o) => o.status === "fulfilled");
    expect(won).toHaveLength(1);
    const lost = outcomes.find((o) => o.status === "rejected")!.reason;
    const winner = (won[0] as PromiseFulfilledResult<{ run?: { id: string } }>).value.run!;
    expect(lost).toMatchObject({ codeName: "FAILED_PRECONDITION", reason: "RUN_ACTIVE", metadata: { run_id: winner.id } });
    expect(lost.metadata.lease_expires_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    // Finishing releases the lease: the other daemon starts at once.
    const holder = outcomes[0]!.status === "fulfilled" ? a : b;
    const other = holder === a ? b : a;
    await holder.client.workspaces.finishRun({ workspace: "w", runId: winner.id });
    await other.client.workspaces.startRun({ workspace: "w" });
  }, 60_000);

  it("a holder killed with SIGKILL: its lease expires, and the next runtime restores the last published snapshot", async () => {
    const store = `s3://${s3.bucket}/kill-${randomUUID()}`;
    // B started first: a daemon's start can outlast the TTL on a loaded machine, and the lease must still be live when B asks.
    const [a, b] = await Promise.all([daemonOn(store), daemonOn(store)]);
    const first = await startWhenFree(a);
    await write(a, "/kept.txt", "published\n");
    const published = (await a.client.workspaces.finishRun({ workspace: "w", runId: first.id })).snapshot!;
    const second = await startWhenFree(a);
    await write(a, "/lost.txt", "never published\n");
    a.proc.kill("SIGKILL");

    await expectError(b.client.workspaces.startRun({ workspace: "w" }), "FAILED_PRECONDITION", "RUN_ACTIVE");
    const run = await startWhenFree(b); // once the lease of the killed run has expired
    expect(run.restoredFrom).toBe(published.id);
    expect((await b.client.workspace("w").readText("/kept.txt")).text).toBe("published\n");
    await expectError(b.client.workspace("w").stat("/lost.txt"), "NOT_FOUND");
    expect(second.id).not.toBe(run.id);
  }, 60_000);

  it("a holder whose lease was taken over while it was cut off is refused by the lease check, even before the new holder publishes", async () => {
    const store = `s3://${s3.bucket}/takeover-${randomUUID()}`;
    const a = await daemonOn(store);
    const b = await daemonOn(store);
    const stale = await startWhenFree(a);
    await write(a, "/a.txt", "from a\n");
    a.proc.kill("SIGSTOP");
    const taken = await startWhenFree(b); // B holds the lease, publishes nothing yet
    a.proc.kill("SIGCONT");
    const refused = await expectError(a.client.workspaces.finishRun({ workspace: "w", runId: stale.id }), "FAILED_PRECONDITION", "RUN_ACTIVE");
    expect(refused.message).toMatch(/lost the lease of workspace w|does not hold the lease/);
    expect((await b.client.workspaces.listSnapshots({ workspace: "w" })).snapshots).toEqual([]);
    await b.client.workspaces.finishRun({ workspace: "w", runId: taken.id });
    expect((await b.client.workspaces.listSnapshots({ workspace: "w" })).snapshots).toHaveLength(1);
  }, 60_000);

  it("a holder cut off past its TTL may not publish over the run that took over; no published snapshot is lost", async () => {
    const store = `s3://${s3.bucket}/partition-${randomUUID()}`;
    const a = await daemonOn(store);
    const b = await daemonOn(store);
    const stale = await startWhenFree(a);
    await write(a, "/a.txt", "from a\n");

    a.proc.kill("SIGSTOP"); // a partition: A can neither renew nor notice
    const taken = await startWhenFree(b);
    await write(b, "/b.txt", "from b\n");
    const published = (await b.client.workspaces.finishRun({ workspace: "w", runId: taken.id })).snapshot!;
    a.proc.kill("SIGCONT");

    // The head has moved past A's start (the lease check would refuse too): nothing is published, A's work is kept.
    const refused = await expectError(a.client.workspaces.finishRun({ workspace: "w", runId: stale.id }), "FAILED_PRECONDITION", "CONTENT_CHANGED");
    const snapshots = (await b.client.workspaces.listSnapshots({ workspace: "w" })).snapshots;
    expect(snapshots.map((s) => s.id)).toEqual([published.id]);
    const all = (await b.client.workspaces.listSnapshots({ workspace: "w", includeRecovered: true })).snapshots;
    expect(all.find((s) => s.id === refused.metadata.recovered_snapshot)).toMatchObject({ runId: stale.id, recovered: true });
    // The stale run has ended.
    await expectError(a.client.workspaces.finishRun({ workspace: "w", runId: stale.id, snapshot: false }), "NOT_FOUND");
  }, 60_000);
});
