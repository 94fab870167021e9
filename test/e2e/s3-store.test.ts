// filetoolsd with an s3:// store against a real S3-compatible server
// (SeaweedFS on loopback): a store that is unusable at start-up (missing
// bucket, bad credentials, unreachable endpoint) stops the daemon with a clear
// message and no fallback to the local disk; a usable one lets it serve, and
// the runs issue's end-to-end scenario passes on it.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, realpathSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSeaweedfs, type Seaweedfs } from "../support/seaweedfs.js";
import { ROOT, ensureBuilt, startDaemon } from "./daemon.js";
import { runScenario } from "./runs-scenario.js";

const MAIN = path.join(ROOT, "dist/server/main.js");
let s3: Seaweedfs;
const dirs: string[] = [];

beforeAll(async () => {
  ensureBuilt();
  s3 = await startSeaweedfs();
}, 120_000);

afterAll(async () => {
  await s3?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-s3-e2e-")));
  dirs.push(dir);
  return dir;
}

/** Runs filetoolsd until it exits (or 30 s); a daemon that starts listening is killed and reported. */
function runDaemon(args: string[], env: Record<string, string | undefined>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [MAIN, "--listen", "127.0.0.1:0", ...args], {
      stdio: ["ignore", "pipe", "pipe"],
      env: Object.fromEntries(Object.entries({ ...process.env, ...env }).filter(([, v]) => v !== undefined)),
    });
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(() => {
      proc.kill("SIGKILL");
      reject(new Error(`filetoolsd neither started nor exited within 30 s: ${stderr}`));
    }, 30_000);
    proc.stdout!.on("data", (d) => {
      stdout += d;
      if (/listening on/.test(stdout)) proc.kill("SIGKILL");
    });
    proc.stderr!.on("data", (d) => (stderr += d));
    proc.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

/** Nothing was written under the data directory's snapshot store (no silent fallback to local disk). */
function expectNoLocalSnapshots(dataDir: string): void {
  const local = path.join(dataDir, "snapshots");
  if (existsSync(local)) expect(readdirSync(local)).toEqual([]);
}

describe("filetoolsd --store s3:// refuses to start on an unusable store", () => {
  it("a missing bucket", async () => {
    const dataDir = tempDir();
    const r = await runDaemon(["--data-dir", dataDir, "--store", "s3://missing-bucket/x"], s3.env);
    expect(r.stdout).not.toMatch(/listening on/);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/missing-bucket does not exist/);
    expectNoLocalSnapshots(dataDir);
  });

  it("bad credentials, without echoing them", async () => {
    const dataDir = tempDir();
    const secret = "definitely-wrong-secret-0123456789";
    const r = await runDaemon(["--data-dir", dataDir, "--store", `s3://${s3.bucket}/x`], {
      ...s3.env,
      AWS_ACCESS_KEY_ID: "wrong-access-key",
      AWS_SECRET_ACCESS_KEY: secret,
    });
    expect(r.stdout).not.toMatch(/listening on/);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/access denied to bucket filetools-test/);
    expect(r.stderr + r.stdout).not.toContain(secret);
    expectNoLocalSnapshots(dataDir);
  });

  it("no credentials at all", async () => {
    const dataDir = tempDir();
    const r = await runDaemon(["--data-dir", dataDir, "--store", `s3://${s3.bucket}/x`], {
      ...s3.env,
      AWS_ACCESS_KEY_ID: undefined,
      AWS_SECRET_ACCESS_KEY: undefined,
      AWS_SESSION_TOKEN: undefined,
      AWS_PROFILE: undefined,
      AWS_SHARED_CREDENTIALS_FILE: path.join(dataDir, "no-credentials"),
      AWS_CONFIG_FILE: path.join(dataDir, "no-config"),
      AWS_EC2_METADATA_DISABLED: "true",
    });
    expect(r.stdout).not.toMatch(/listening on/);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/no AWS credentials found/);
    expectNoLocalSnapshots(dataDir);
  });

  it("an endpoint that does not answer", async () => {
    const dataDir = tempDir();
    const port = await closedPort();
    const r = await runDaemon(["--data-dir", dataDir, "--store", `s3://${s3.bucket}/x`], {
      ...s3.env,
      FILETOOLS_S3_ENDPOINT: `http://127.0.0.1:${port}`,
    });
    expect(r.stdout).not.toMatch(/listening on/);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(new RegExp(`cannot reach http://127\\.0\\.0\\.1:${port}`));
    expectNoLocalSnapshots(dataDir);
  }, 60_000);
});

describe("filetoolsd --store s3:// on a usable bucket", () => {
  it("starts and serves, with the settings from flags", async () => {
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: s3.accessKey, AWS_SECRET_ACCESS_KEY: s3.secretKey });
    const daemon = await startDaemon({
      args: ["--store", `s3://${s3.bucket}/e2e-start`, "--s3-endpoint", s3.endpoint, "--s3-region", "us-east-1", "--s3-force-path-style"],
    });
    try {
      await daemon.client.workspaces.createWorkspace({ workspace: "w" });
      expectNoLocalSnapshots(daemon.dataDir);
    } finally {
      await daemon.stop();
    }
  });
});

describe("the end-to-end scenario", () => {
  it("s3:// store on SeaweedFS: daemon B with an empty data dir restores what daemon A's run wrote", async () => {
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: s3.accessKey, AWS_SECRET_ACCESS_KEY: s3.secretKey });
    await runScenario(`s3://${s3.bucket}/scenario-${randomUUID()}`, ["--s3-endpoint", s3.endpoint, "--s3-force-path-style"]);
  }, 90_000);
});
