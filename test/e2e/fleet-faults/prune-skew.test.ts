// Clock skew: snapshot ids start with their writer's clock, so prune counts
// the main line along the chain from the head, never by id. A daemon 30 s
// behind publishes and prunes (--keep-snapshots 2) without deleting its head.
import { existsSync, mkdtempSync, readFileSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ensureBuilt, startDaemon, type Daemon } from "../daemon.js";

const daemons: Daemon[] = [];
afterAll(async () => {
  for (const d of daemons) await d.stop().catch(() => undefined);
});
const SKEWED = path.join(import.meta.dirname, "bin", "skewed-main.mjs");

async function runOnce(d: Daemon, ws: string, p: string, text: string) {
  const run = (await d.client.workspaces.startRun({ workspace: ws })).run!;
  await d.client.files.write({ workspace: ws, path: p, body: { case: "content", value: text } });
  return (await d.client.workspaces.finishRun({ workspace: ws, runId: run.id })).snapshot!;
}

describe("prune and clock skew", () => {
  it("a daemon 30 s behind publishes and prunes (--keep-snapshots 2) without deleting its head", async () => {
    ensureBuilt();
    const dir = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-faults-skew-")));
    const args = ["--store", `file://${dir}`, "--keep-snapshots", "2"];
    const a = await startDaemon({ args });
    daemons.push(a);
    process.env.FILETOOLS_TEST_CLOCK_SKEW_MS = "-30000";
    const b = await startDaemon({ args, main: SKEWED });
    delete process.env.FILETOOLS_TEST_CLOCK_SKEW_MS;
    daemons.push(b);
    await runOnce(a, "w", "/one.txt", "1\n");
    await runOnce(a, "w", "/two.txt", "2\n");
    const s3 = await runOnce(b, "w", "/three.txt", "3\n"); // B starts from s2 and publishes s3 (acknowledged)
    const head = JSON.parse(readFileSync(path.join(dir, ".heads", "w.json"), "utf8"));
    expect(head.snapshot).toBe(s3.id);
    // Every daemon can start from it.
    const next = (await a.client.workspaces.startRun({ workspace: "w" })).run!;
    expect(next.restoredFrom).toBe(s3.id);
    expect(existsSync(path.join(dir, "w", `${s3.id}.tar.gz`))).toBe(true);
  }, 60_000);
});
