// The examples, run as a user would (under tsx) against a real daemon: finish-run.ts and agent-loop.ts.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ROOT, startDaemon, type Daemon } from "../../../test/e2e/daemon.js";

const run = promisify(execFile);
let daemon: Daemon;
const dir = mkdtempSync(path.join(tmpdir(), "ftc-ts-example-"));

beforeAll(async () => {
  daemon = await startDaemon();
});

afterAll(async () => {
  await daemon?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const example = path.join(ROOT, "clients/ts/examples/finish-run.ts");

it("finish-run.ts finishes a run and downloads its snapshot, with no progress on a stderr that is not a terminal", async () => {
  const output = path.join(dir, "snapshot.tar.gz");
  const { stdout, stderr } = await run(process.execPath, ["--import", "tsx", example, daemon.address, output], { cwd: ROOT });

  const [snapshot] = await daemon.client.workspaces.listSnapshots({ workspace: "reports" }).then((r) => r.snapshots);
  expect(snapshot).toBeDefined();
  expect(stdout).toContain(`snapshot ${snapshot!.id}: 1 file; 1 created`);
  expect(stderr).toBe("");
  expect(createHash("sha256").update(readFileSync(output)).digest("hex")).toBe(snapshot!.sha256);
  const members = (await run("tar", ["-tzf", output])).stdout;
  expect(members).toMatch(/summary\.md/);
});

it("finish-run.ts without an output path saves into the temporary directory, not where it runs", async () => {
  const cwd = mkdtempSync(path.join(dir, "cwd-"));
  const tmp = mkdtempSync(path.join(dir, "tmp-"));
  // tsx by its path: `--import tsx` resolves from the working directory, which has no node_modules.
  const tsx = path.join(ROOT, "node_modules/tsx/dist/loader.mjs");
  const { stdout } = await run(process.execPath, ["--import", tsx, example, daemon.address], { cwd, env: { ...process.env, TMPDIR: tmp } });
  expect(stdout).toContain(`saved ${path.join(tmp, "reports-snapshot.tar.gz")}`);
  expect(readdirSync(tmp)).toContain("reports-snapshot.tar.gz"); // beside tsx's cache
  expect(readdirSync(cwd)).toEqual([]);
});

it("finish-run.ts shows its progress on a terminal, as one line redrawn", async () => {
  // script(1) gives the example a pseudo-terminal; what it wrote comes back on stdout.
  const command = `${process.execPath} --import tsx ${example} ${daemon.address} ${path.join(dir, "tty.tar.gz")}`;
  const { stdout } = await run("script", ["-qec", command, "/dev/null"], { cwd: ROOT });
  expect(stdout).toMatch(/\r(\d+) of \1 bytes\r?\n/);
});

it("agent-loop.ts: a scripted model (the AI SDK's MockLanguageModelV3) reads, searches, recovers from a stale edit, and the run finishes", async () => {
  const agentLoop = path.join(ROOT, "clients/ts/examples/agent-loop.ts");
  const { stdout } = await run(process.execPath, ["--import", "tsx", agentLoop, daemon.address], { cwd: ROOT });
  // What the model was given: the window it asked for with the paging hint, the search, the error naming the version, the diff.
  expect(stdout).toContain("  5001\t2026-12-03T10:00:20Z line 5001 ERROR request timed out\n");
  expect(stdout).toContain("… call read with start_line 5003 for more; 10,000 lines in all\n");
  expect(stdout).toContain("/src/config.py\n1:timeout = 5\n(1 matching line in 1 file; 1 file searched)\n");
  expect(stdout).toMatch(/Error \(CONTENT_CHANGED\): \/src\/config\.py changed: its version is (\w+), not 0{16}\.\nRead the file again, then retry with if_version \1 if your change still applies\.\n/);
  expect(stdout).toContain("-timeout = 5\n+timeout = 30\n");
  expect(stdout).toContain("--- tool errors: edit\n"); // the stale edit, reported to the SDK as a tool error
  expect(stdout).toMatch(/--- run run-\S+ finished: 2 created, 1 modified\n/);
  const config = await daemon.client.workspace("agent-loop").readText("/src/config.py");
  expect(config.text).toBe("timeout = 30\nretries = 3\n");
  const [snapshot] = (await daemon.client.workspaces.listSnapshots({ workspace: "agent-loop" })).snapshots;
  expect(snapshot).toBeDefined();
});
