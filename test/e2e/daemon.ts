// Shared e2e helper: build dist once (when missing or older than the sources),
// start a real filetoolsd on port 0 with a fresh data dir, and give tests a client.
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { ChannelCredentials } from "@grpc/grpc-js";
import { expect } from "vitest";
import { connect, FileToolsError, type FileToolsClient } from "../../clients/ts/src/client.js";
import { MAIN, ROOT, isDistStale, markDistFresh } from "../support/dist.js";
import { withDirectoryLock } from "../support/lock.js";

export { ROOT };

/** Builds dist when stale; a lock keeps parallel test files from building at once. */
export function ensureBuilt(): void {
  if (!isDistStale()) return;
  withDirectoryLock("filetoolsd-e2e-build.lock", 120_000, () => {
    if (!isDistStale()) return;
    execFileSync("npx", ["tsc", "-p", "gen/ts/tsconfig.json"], { cwd: ROOT, stdio: "inherit" }); // @filetools/proto, which the daemon imports
    execFileSync("npx", ["tsc", "-p", "tsconfig.json"], { cwd: ROOT, stdio: "inherit" });
    markDistFresh();
  });
}

/** How much of a daemon's stderr an unexpected exit shows (its last log lines, a stack trace, V8's fatal error). */
const STDERR_TAIL_CHARS = 4_000;

export interface Daemon {
  client: FileToolsClient;
  address: string;
  dataDir: string;
  proc: ChildProcess;
  /** Host dir of a managed workspace. */
  hostDir(workspace: string): string;
  /** What the daemon wrote to stderr so far (its JSON log lines). */
  logs(): string;
  /** How the daemon ended, with the tail of its stderr, if it ended without the test ending it (stop() or a signal); else undefined. */
  unexpectedExit(): string | undefined;
  /** SIGTERM and wait; removes the data dir this helper created unless keepData. */
  stop(keepData?: boolean): Promise<void>;
}

export async function startDaemon(
  opts: {
    dataDir?: string;
    binds?: Record<string, string>;
    args?: string[];
    /** The client's channel credentials (e.g. TLS); default plain text. */
    credentials?: ChannelCredentials;
    /** Another build's dist/server/main.js (e.g. an older daemon, to see a test fail on it); default this tree's, built when stale. */
    main?: string;
  } = {},
): Promise<Daemon> {
  if (opts.main === undefined) ensureBuilt();
  const ownsDataDir = opts.dataDir === undefined;
  const dataDir = opts.dataDir ?? realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-e2e-")));
  const args = [opts.main ?? MAIN, "--listen", "127.0.0.1:0", "--data-dir", dataDir, "--log-level", "error"];
  for (const [name, dir] of Object.entries(opts.binds ?? {})) args.push("--bind", `${name}=${dir}`);
  args.push(...(opts.args ?? []));
  const proc = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  proc.stderr!.on("data", (d) => (stderr += d));
  const address = await new Promise<string>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`daemon did not start: ${stderr}`)), 20_000);
    proc.stdout!.on("data", (d) => {
      out += d;
      const m = /filetoolsd listening on (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    proc.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`daemon exited ${code}: ${stderr}`));
    });
  });
  // A daemon that dies mid-test fails calls with UNAVAILABLE and says no more: say how it ended, at once.
  // One the test signalled itself (proc.kill: SIGKILL, SIGSTOP…) is the test's doing.
  let stopping = false;
  let unexpectedExit: string | undefined;
  proc.once("close", (code, signal) => {
    if (stopping || proc.killed) return;
    const tail = stderr.slice(-STDERR_TAIL_CHARS) || "(nothing)\n";
    unexpectedExit = `filetoolsd (pid ${proc.pid}) ended while the test still used it, by ${signal ? `signal ${signal}` : `exit code ${code}`}; its stderr ended with:\n${tail}`;
    console.error(unexpectedExit);
  });
  const client = connect(address, { credentials: opts.credentials });
  return {
    client,
    address,
    dataDir,
    proc,
    hostDir: (ws) => path.join(dataDir, "workspaces", ws),
    logs: () => stderr,
    unexpectedExit: () => unexpectedExit,
    async stop(keepData = false) {
      stopping = true;
      client.close();
      // A daemon a test killed has a signalCode and no exitCode: it has exited already.
      if (proc.exitCode === null && proc.signalCode === null) {
        const exited = new Promise((r) => proc.once("exit", r));
        proc.kill("SIGTERM");
        await exited;
      }
      if (ownsDataDir && !keepData) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

let dataDirForErrors = "";
/** Registers the host data dir that no error message may contain. */
export function forbidHostPath(dir: string): void {
  dataDirForErrors = dir;
}

/** Awaits a failure and checks code name, reason and that the message carries no host path. */
export async function expectError(
  promise: Promise<unknown> | (() => Promise<unknown>),
  codeName: string,
  reason?: string,
): Promise<FileToolsError> {
  let error: unknown;
  try {
    await (typeof promise === "function" ? promise() : promise);
  } catch (e) {
    error = e;
  }
  expect(error, "expected the call to fail").toBeInstanceOf(FileToolsError);
  const err = error as FileToolsError;
  if (codeName !== "__any__") expect({ code: err.codeName, reason: err.reason }).toEqual({ code: codeName, reason: reason ?? err.reason });
  assertNoHostPath(err);
  return err;
}

export function assertNoHostPath(err: FileToolsError): void {
  if (!dataDirForErrors) return;
  expect(err.message).not.toContain(dataDirForErrors);
  for (const value of Object.values(err.metadata)) expect(value).not.toContain(dataDirForErrors);
  // the temp root too (e.g. /tmp/ftd-e2e-xxxx)
  expect(err.message).not.toMatch(/ftd-e2e-/);
}

/** Collects an async iterable into an array. */
export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const m of it) out.push(m);
  return out;
}

export interface ReadResult {
  header: any;
  chunks: { firstLine: bigint; text: string }[];
  trailer: any;
  text: string;
}

export async function readAll(client: FileToolsClient, req: Parameters<FileToolsClient["files"]["read"]>[0]): Promise<ReadResult> {
  const msgs = await collect(client.files.read(req));
  const r: ReadResult = { header: undefined, chunks: [], trailer: undefined, text: "" };
  for (const m of msgs) {
    if (m.event.case === "header") r.header = m.event.value;
    else if (m.event.case === "chunk") r.chunks.push(m.event.value);
    else if (m.event.case === "trailer") r.trailer = m.event.value;
  }
  r.text = r.chunks.map((c) => c.text).join("");
  return r;
}

export async function listAll(client: FileToolsClient, req: Parameters<FileToolsClient["files"]["list"]>[0]) {
  const msgs = await collect(client.files.list(req));
  const entries: any[] = [];
  let summary: any;
  for (const m of msgs) {
    if (m.event.case === "entries") entries.push(...m.event.value.entries);
    else if (m.event.case === "summary") summary = m.event.value;
  }
  return { entries, summary, paths: entries.map((e) => e.path as string) };
}

/** Starts a daemon with one managed workspace; for a describe-level beforeAll. */
export async function setup(workspace = "w", opts: Parameters<typeof startDaemon>[0] = {}) {
  const d = await startDaemon(opts);
  forbidHostPath(d.dataDir);
  await d.client.workspaces.createWorkspace({ workspace });
  return { ...d, ws: workspace, root: d.hostDir(workspace) };
}
