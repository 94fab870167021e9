// filetoolsd with an s3:// store against a real S3-compatible server
// (SeaweedFS on loopback): a store that is unusable at start-up (missing
// bucket, bad credentials, unreachable endpoint) stops the daemon with a clear
// message and no fallback to the local disk; a usable one lets it serve, and
// the runs issue's end-to-end scenario passes on it.
import { execFileSync, spawn } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { ListMultipartUploadsCommand, ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSeaweedfs, type Seaweedfs } from "../support/seaweedfs.js";
import { ROOT, collect, ensureBuilt, expectError, startDaemon } from "./daemon.js";
import { exportTarball, runScenario } from "./runs-scenario.js";

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

function useCredentials(server: Seaweedfs): void {
  Object.assign(process.env, { AWS_ACCESS_KEY_ID: server.accessKey, AWS_SECRET_ACCESS_KEY: server.secretKey });
}

describe("the S3 store failing at use", () => {
  it("a server that goes away under a running daemon: UNAVAILABLE / STORE_UNAVAILABLE, the run stays active, the daemon stays up", async () => {
    const own = await startSeaweedfs();
    useCredentials(own);
    const d = await startDaemon({
      args: ["--store", `s3://${own.bucket}/down`, "--s3-endpoint", own.endpoint, "--s3-force-path-style"],
    });
    try {
      const { run } = await d.client.workspaces.startRun({ workspace: "s" });
      await d.client.files.write({ workspace: "s", path: "a.txt", body: { case: "content", value: "a\n" } });
      await own.stop();
      await expectError(d.client.workspaces.finishRun({ workspace: "s", runId: run!.id }), "UNAVAILABLE", "STORE_UNAVAILABLE");
      await expectError(d.client.workspaces.listSnapshots({ workspace: "s" }), "UNAVAILABLE", "STORE_UNAVAILABLE");
      expect((await d.client.files.stat({ workspace: "s", path: "a.txt" })).file?.path).toBe("/a.txt");
      await expectError(d.client.workspaces.startRun({ workspace: "s" }), "FAILED_PRECONDITION", "RUN_ACTIVE");
      expect(d.proc.exitCode).toBeNull();
    } finally {
      await d.stop();
      await own.stop();
    }
  }, 90_000);
});

describe("a crash during an upload to S3", () => {
  it("kill -9 mid-upload: earlier snapshots intact, no partial tarball or manifest visible", async () => {
    useCredentials(s3);
    const prefix = `crash-${randomUUID()}`;
    const args = ["--store", `s3://${s3.bucket}/${prefix}`, "--s3-endpoint", s3.endpoint, "--s3-force-path-style"];
    const dataDir = tempDir();
    const host = path.join(tempDir(), "host");
    mkdirSync(host);
    const client = new S3Client({ ...s3.storeOptions });
    // Snapshot objects only: the killed run's lease object (.leases/) stays until it expires.
    const objects = async () =>
      ((await client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: `${prefix}/` }))).Contents ?? [])
        .map((o) => o.Key!)
        .filter((key) => !key.startsWith(`${prefix}/.leases/`))
        .sort();
    try {
      const a = await startDaemon({ dataDir, args, binds: { big: host } });
      const first = await a.client.workspaces.startRun({ workspace: "big" });
      writeFileSync(path.join(host, "small.txt"), "small\n");
      const s1 = (await a.client.workspaces.finishRun({ workspace: "big", runId: first.run!.id })).snapshot!;
      const before = await objects();
      expect(before.length).toBeGreaterThan(0);
      // ~60 MB of incompressible data: the next snapshot is a multipart upload of several parts.
      for (let i = 0; i < 6; i++) writeFileSync(path.join(host, `blob-${i}.bin`), createRandom(10 * 1024 * 1024));
      const second = await a.client.workspaces.startRun({ workspace: "big" });
      const pending = a.client.workspaces.finishRun({ workspace: "big", runId: second.run!.id }).catch(() => undefined);
      // Wait until a multipart upload is under way, then kill -9.
      const deadline = Date.now() + 30_000;
      let uploading = false;
      while (!uploading && Date.now() < deadline) {
        const uploads = await client.send(new ListMultipartUploadsCommand({ Bucket: s3.bucket, Prefix: `${prefix}/` }));
        uploading = (uploads.Uploads ?? []).length > 0;
        if (!uploading) await new Promise((r) => setTimeout(r, 20));
      }
      expect(uploading).toBe(true);
      a.proc.kill("SIGKILL");
      await new Promise((r) => a.proc.once("exit", r));
      await pending;
      a.client.close();

      // Nothing new is visible: the interrupted upload never completed.
      expect(await objects()).toEqual(before);
      const b = await startDaemon({ dataDir, args, binds: { big: host } });
      try {
        const { snapshots } = await b.client.workspaces.listSnapshots({ workspace: "big" });
        expect(snapshots.map((s) => s.id)).toEqual([s1.id]);
        const exported = await exportTarball(b.client, { workspace: "big", snapshotId: s1.id });
        expect(createHash("sha256").update(exported.bytes).digest("hex")).toBe(s1.sha256);
        await expectError(b.client.workspaces.startRun({ workspace: "big" }), "FAILED_PRECONDITION", "RUN_ACTIVE");
      } finally {
        await b.stop(true);
      }
    } finally {
      client.destroy();
    }
  }, 120_000);
});

/** Incompressible bytes, fast. */
function createRandom(bytes: number): Buffer {
  const block = Buffer.alloc(bytes);
  for (let j = 0; j < block.length; j += 4) block.writeUInt32LE((Math.random() * 2 ** 32) >>> 0, j);
  return block;
}

describe("presigned export", () => {
  it("ExportSnapshot with presign answers a URL that a plain HTTP GET downloads, matching the sha256; not live, not on file://", async () => {
    useCredentials(s3);
    const d = await startDaemon({ args: ["--store", `s3://${s3.bucket}/presign-${randomUUID()}`, "--s3-endpoint", s3.endpoint, "--s3-force-path-style"] });
    const local = await startDaemon();
    try {
      const ws = d.client.workspace("share");
      const run = await ws.startRun();
      await ws.writeText("/report.md", "# Report\n");
      const snapshot = (await ws.finishRun(run.id)).snapshot!;
      const header = await ws.snapshotUrl({ seconds: 120 });
      expect(header).toMatchObject({ size: snapshot.sizeBytes, sha256: snapshot.sha256, fileCount: 1n });
      expect(header.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/.*X-Amz-Signature=/);
      const expires = Number(header.urlExpiresAt!.seconds) * 1000;
      expect(expires).toBeGreaterThan(Date.now() + 60_000);
      expect(expires).toBeLessThanOrEqual(Date.now() + 121_000);

      const response = await fetch(header.url); // no credentials: the signature is the permission
      expect(response.status).toBe(200);
      const bytes = Buffer.from(await response.arrayBuffer());
      expect(createHash("sha256").update(bytes).digest("hex")).toBe(snapshot.sha256);
      expect(BigInt(bytes.length)).toBe(snapshot.sizeBytes);

      await expectError(collect(d.client.workspaces.exportSnapshot({ workspace: "share", presign: true, live: true })), "INVALID_ARGUMENT");
      await expectError(ws.snapshotUrl({ seconds: 604_801 }), "INVALID_ARGUMENT");
      // An incremental snapshot: its whole tree is assembled once into a tarball of its own, which the URL gets.
      const next = await ws.startRun();
      await ws.writeText("/second.md", "# Second\n");
      const incremental = (await ws.finishRun(next.id)).snapshot!;
      expect(incremental.tarballs).toBe(2);
      const whole = await ws.snapshotUrl({ seconds: 120 });
      expect(whole.sha256).not.toBe(incremental.sha256);
      const wholeBytes = Buffer.from(await (await fetch(whole.url)).arrayBuffer());
      expect(createHash("sha256").update(wholeBytes).digest("hex")).toBe(whole.sha256);
      expect(BigInt(wholeBytes.length)).toBe(whole.size);
      expect(execFileSync("tar", ["-tzf", "-"], { input: wholeBytes }).toString().split("\n").filter(Boolean).sort()).toEqual(["report.md", "second.md"]);
      expect((await ws.snapshotUrl({ seconds: 60 })).sha256).toBe(whole.sha256); // reused

      const lw = local.client.workspace("share");
      const localRun = await lw.startRun();
      await lw.finishRun(localRun.id);
      const refused = await expectError(lw.snapshotUrl(), "INVALID_ARGUMENT");
      expect(refused.message).toBe("presigned URLs need an s3:// store; this daemon keeps its snapshots in a local directory");
    } finally {
      await d.stop();
      await local.stop();
    }
  }, 60_000);
});
