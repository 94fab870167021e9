// The example finish-run.ts, run as a user would (under tsx) against a real daemon.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
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

it("finish-run.ts shows its progress on a terminal, as one line redrawn", async () => {
  // script(1) gives the example a pseudo-terminal; what it wrote comes back on stdout.
  const command = `${process.execPath} --import tsx ${example} ${daemon.address} ${path.join(dir, "tty.tar.gz")}`;
  const { stdout } = await run("script", ["-qec", command, "/dev/null"], { cwd: ROOT });
  expect(stdout).toMatch(/\r(\d+) of \1 bytes\r?\n/);
});
