// Two FinishRun calls for one run at once (a client retrying after a deadline
// while the first is still packing): the retry gets the first one's outcome,
// not a refusal blaming "another run" and a recovered duplicate.
import { mkdtempSync, readFileSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startDaemon, type Daemon } from "../daemon.js";

const daemons: Daemon[] = [];
afterAll(async () => {
  for (const d of daemons) await d.stop().catch(() => undefined);
});

describe("FinishRun twice at once", () => {
  it("the retry is answered with the published snapshot (or NOT_FOUND), not CONTENT_CHANGED blaming another run", async () => {
    const dir = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-faults-twice-")));
    const d = await startDaemon({ args: ["--store", `file://${dir}`] });
    daemons.push(d);
    let refusedAsOther = 0;
    const N = 10;
    for (let i = 0; i < N; i++) {
      const run = (await d.client.workspaces.startRun({ workspace: "w" })).run!;
      await d.client.files.write({ workspace: "w", path: `/f${i}.txt`, body: { case: "content", value: `${i}\n` } });
      const results = await Promise.allSettled([0, 1].map(() => d.client.workspaces.finishRun({ workspace: "w", runId: run.id })));
      const reasons = results.map((r) => (r.status === "fulfilled" ? "OK" : (r.reason as { reason: string }).reason));
      if (reasons.includes("CONTENT_CHANGED")) refusedAsOther++;
      const record = JSON.parse(readFileSync(path.join(d.dataDir, "runs", `${run.id}.json`), "utf8"));
      if (i === 0) console.log("outcomes:", reasons, "record.snapshotId:", record.snapshotId, "published:", results.find((r) => r.status === "fulfilled")?.value.snapshot?.id);
    }
    const recovered = (await d.client.workspaces.listSnapshots({ workspace: "w", includeRecovered: true })).snapshots.filter((s) => s.recovered);
    console.log(`${refusedAsOther} of ${N} double FinishRuns answered CONTENT_CHANGED; ${recovered.length} recovered duplicates in the store`);
    expect(refusedAsOther).toBe(0);
  }, 60_000);
});
