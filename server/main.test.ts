// The built daemon as an operator runs it (bin/filetoolsd): start-up line,
// node flags, health, reflection (through buf curl, a Go gRPC client), error
// details, clean SIGTERM.
import { execFile, spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { fromBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorInfoSchema } from "@filetools/proto/google/rpc/error_details_pb.js";
import { LAUNCHER as launcher } from "../test/support/dist.js";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "..");
const buf = path.join(root, "node_modules/.bin/buf");
const packageVersion = (JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { version: string }).version;

let dataDir: string;
let daemon: ChildProcessWithoutNullStreams;
let stderr = "";
let url: string;

/** buf curl over plain HTTP/2, with the daemon's reflection; returns stdout, or stderr when it fails. */
async function bufCurl(...args: string[]): Promise<{ ok: boolean; output: string }> {
  try {
    const { stdout } = await run(buf, ["curl", "--protocol", "grpc", "--http2-prior-knowledge", ...args]);
    return { ok: true, output: stdout };
  } catch (error) {
    return { ok: false, output: String((error as { stderr?: string }).stderr) };
  }
}

beforeAll(async () => {
  await run("npx", ["tsc", "-p", "tsconfig.json"], { cwd: root });
  dataDir = mkdtempSync(path.join(tmpdir(), "filetoolsd-"));
  daemon = spawn(launcher, ["--listen", "127.0.0.1:0", "--data-dir", dataDir]);
  daemon.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const [firstLine] = (await once(createInterface({ input: daemon.stdout }), "line")) as [string];
  const match = /^filetoolsd listening on (127\.0\.0\.1:\d+)$/.exec(firstLine);
  expect(match, `stdout: ${firstLine}\nstderr: ${stderr}`).not.toBeNull();
  expect(match![1]).not.toBe("127.0.0.1:0");
  url = `http://${match![1]}`;
}, 120_000);

afterAll(() => {
  daemon?.kill("SIGKILL");
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe("filetoolsd", () => {
  it("runs as node with the launcher's V8 flags (exec: the launcher's process is the daemon)", () => {
    const argv = readFileSync(`/proc/${daemon.pid}/cmdline`, "utf8").split("\0");
    expect(argv).toContain("--initial-old-space-size=64");
    expect(argv).toContain("--expose-gc"); // the gzip pool's threads collect after each task (gzip-worker.ts)
    expect(argv.some((arg) => arg.endsWith("/dist/server/main.js"))).toBe(true);
  });

  it("reports SERVING for the server and both services", async () => {
    for (const service of ["", "filetools.v1.Files", "filetools.v1.Workspaces"]) {
      const { ok, output } = await bufCurl("-d", JSON.stringify({ service }), `${url}/grpc.health.v1.Health/Check`);
      expect(ok, output).toBe(true);
      expect(JSON.parse(output)).toEqual({ status: "SERVING" });
    }
  });

  it("lists both services through reflection", async () => {
    const { ok, output } = await bufCurl("--list-methods", url);
    expect(ok, output).toBe(true);
    const methods = output.trim().split("\n");
    expect(methods).toContain("filetools.v1.Files/Stat");
    expect(methods).toContain("filetools.v1.Files/Read");
    expect(methods).toContain("filetools.v1.Workspaces/StartRun");
    expect(methods).toContain("grpc.health.v1.Health/Check");
  });

  it("sends errors with an ErrorInfo detail that a Go client decodes", async () => {
    const { ok, output } = await bufCurl("-d", '{"workspace":"no-such-workspace","path":"/a"}', `${url}/filetools.v1.Files/Stat`);
    expect(ok).toBe(false);
    const error = JSON.parse(output) as { details: Array<{ type: string; value: string }> };
    expect(error.details[0]?.type).toBe("google.rpc.ErrorInfo");
    const info = fromBinary(ErrorInfoSchema, Buffer.from(error.details[0]!.value, "base64"));
    expect(info.domain).toBe("filetools");
    expect(info.reason).not.toBe("");
  });

  it("answers Daemon/GetVersion with package.json's version, and serves it in health and reflection", async () => {
    const { ok, output } = await bufCurl("-d", "{}", `${url}/filetools.v1.Daemon/GetVersion`);
    expect(ok, output).toBe(true);
    expect(JSON.parse(output)).toEqual({ version: packageVersion, api: "filetools.v1", runtime: `node ${process.version}` });
    const health = await bufCurl("-d", JSON.stringify({ service: "filetools.v1.Daemon" }), `${url}/grpc.health.v1.Health/Check`);
    expect(JSON.parse(health.output)).toEqual({ status: "SERVING" });
    expect((await bufCurl("--list-methods", url)).output.split("\n")).toContain("filetools.v1.Daemon/GetVersion");
  });

  it("writes the version as its log's first line", () => {
    const first = JSON.parse(stderr.split("\n")[0]!) as Record<string, unknown>;
    expect(first).toMatchObject({ msg: "filetoolsd starting", version: packageVersion, node: process.version });
  });

  it("logs one JSON line per call on stderr", async () => {
    const lines = stderr.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.some((l) => l.method === "filetools.v1.Files/Stat" && l.workspace === "no-such-workspace")).toBe(true);
  });

  it("exits 0 on SIGTERM", async () => {
    daemon.kill("SIGTERM");
    const [code] = (await once(daemon, "exit")) as [number | null];
    expect(code).toBe(0);
  });
});

describe("filetoolsd configuration", () => {
  it("prints its version with --version and exits 0 without starting", async () => {
    const { stdout, stderr: errors } = await run(launcher, ["--version", "--data-dir", path.join(dataDir, "never-made")]);
    expect(stdout).toBe(`${packageVersion}\n`);
    expect(errors).toBe("");
    expect(existsSync(path.join(dataDir, "never-made"))).toBe(false);
  });

  it("refuses a non-loopback address without --insecure, with exit code 2", async () => {
    const failure = await run(launcher, ["--listen", "0.0.0.0:0", "--data-dir", dataDir]).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(2);
    expect(failure?.stderr).toMatch(/^filetoolsd: refusing to listen on 0\.0\.0\.0:0.*--insecure/);
  });
});
