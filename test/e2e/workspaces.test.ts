import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, setup } from "./daemon.js";

let d: Awaited<ReturnType<typeof setup>>;
const boundDir = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-e2e-bound-")));
writeFileSync(path.join(boundDir, "hello.txt"), "hi\n");

beforeAll(async () => {
  d = await setup("w", { binds: { bound: boundDir } });
});
afterAll(async () => {
  await d?.stop();
  rmSync(boundDir, { recursive: true, force: true });
});

describe("CreateWorkspace / GetWorkspace / ListWorkspaces / DeleteWorkspace", () => {
  it("creates a workspace and gets it back", async () => {
    const created = await d.client.workspaces.createWorkspace({ workspace: "alpha" });
    expect(created.workspace?.id).toBe("alpha");
    expect(created.workspace?.bound).toBe(false);
    const got = await d.client.workspaces.getWorkspace({ workspace: "alpha" });
    expect(got.workspace?.id).toBe("alpha");
  });

  it("creating an existing workspace is ALREADY_EXISTS", async () => {
    await expectError(d.client.workspaces.createWorkspace({ workspace: "w" }), "ALREADY_EXISTS", "ALREADY_EXISTS");
  });

  it("an invalid id is INVALID_ARGUMENT", async () => {
    await expectError(d.client.workspaces.createWorkspace({ workspace: "../Bad" }), "INVALID_ARGUMENT");
  });

  it("lists workspaces sorted by id, including bound ones", async () => {
    const { workspaces } = await d.client.workspaces.listWorkspaces({});
    const ids = workspaces.map((w) => w.id);
    expect(ids).toEqual([...ids].sort());
    expect(ids).toEqual(expect.arrayContaining(["w", "alpha", "bound"]));
    expect(workspaces.find((w) => w.id === "bound")?.bound).toBe(true);
  });

  it("deletes a managed workspace; afterwards it is WORKSPACE_NOT_FOUND", async () => {
    await d.client.workspaces.createWorkspace({ workspace: "gone" });
    const res = await d.client.workspaces.deleteWorkspace({ workspace: "gone" });
    expect(res.workspace).toBe("gone");
    await expectError(d.client.workspaces.getWorkspace({ workspace: "gone" }), "NOT_FOUND", "WORKSPACE_NOT_FOUND");
  });

  it("deleting a bound workspace is WORKSPACE_BOUND and keeps its files", async () => {
    await expectError(d.client.workspaces.deleteWorkspace({ workspace: "bound" }), "FAILED_PRECONDITION", "WORKSPACE_BOUND");
    const stat = await d.client.files.stat({ workspace: "bound", path: "hello.txt" });
    expect(stat.file?.size).toBe(3n);
  });

  it("a file RPC on an unknown workspace is WORKSPACE_NOT_FOUND", async () => {
    await expectError(d.client.files.stat({ workspace: "nope", path: "a" }), "NOT_FOUND", "WORKSPACE_NOT_FOUND");
  });
});

describe("runs (served since the runs issue; details in runs.test.ts)", () => {
  it("StartRun answers a run; a second one on the same workspace is RUN_ACTIVE", async () => {
    const { run } = await d.client.workspaces.startRun({ workspace: "w" });
    expect(run?.id).toMatch(/^run-/);
    await expectError(d.client.workspaces.startRun({ workspace: "w" }), "FAILED_PRECONDITION", "RUN_ACTIVE");
    await d.client.workspaces.finishRun({ workspace: "w", runId: run!.id, snapshot: false });
  });
});
