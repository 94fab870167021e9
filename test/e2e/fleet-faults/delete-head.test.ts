// DeleteWorkspace(delete_snapshots: true) removes the workspace's head with its
// snapshots: a recreated workspace of the same id starts and publishes again
// (a head naming a deleted snapshot would refuse every later publish).
import { existsSync, mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startDaemon, type Daemon } from "../daemon.js";

const daemons: Daemon[] = [];
afterAll(async () => {
  for (const d of daemons) await d.stop().catch(() => undefined);
});

describe("DeleteWorkspace(delete_snapshots) and the head", () => {
  it("a recreated workspace can start and publish runs again", async () => {
    const dir = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-faults-del-")));
    const d = await startDaemon({ args: ["--store", `file://${dir}`] });
    daemons.push(d);
    const ws = "w";
    const r1 = (await d.client.workspaces.startRun({ workspace: ws })).run!;
    await d.client.files.write({ workspace: ws, path: "/a.txt", body: { case: "content", value: "a\n" } });
    const s1 = (await d.client.workspaces.finishRun({ workspace: ws, runId: r1.id })).snapshot!;
    await d.client.workspaces.deleteWorkspace({ workspace: ws, deleteSnapshots: true });
    const head = path.join(dir, ".heads", `${ws}.json`);
    expect(existsSync(head)).toBe(false);
    expect(s1.id).toBeTruthy();
    await d.client.workspaces.createWorkspace({ workspace: ws });
    let latest: unknown;
    try {
      latest = (await d.client.workspaces.startRun({ workspace: ws })).run;
      await d.client.workspaces.finishRun({ workspace: ws, runId: (latest as { id: string }).id, snapshot: false });
    } catch (error) {
      latest = error;
    }
    const r2 = (await d.client.workspaces.startRun({ workspace: ws, restore: "NONE" })).run!;
    await d.client.files.write({ workspace: ws, path: "/b.txt", body: { case: "content", value: "b\n" } });
    let finished: unknown;
    try {
      finished = await d.client.workspaces.finishRun({ workspace: ws, runId: r2.id });
    } catch (error) {
      finished = error;
    }
    expect(latest).not.toBeInstanceOf(Error);
    expect(finished).not.toBeInstanceOf(Error);
  }, 60_000);
});
