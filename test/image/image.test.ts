// The OCI image (deploy/Containerfile), built here from Debian's packages
// (scripts/image/build-base.sh: no image registry is reachable) with
// buildah, then run with podman the way an operator would: read-only root
// file system, a volume for the data directory, published port, its
// HEALTHCHECK; called from outside with the TypeScript client, stopped with
// SIGTERM (exit 0, the active run snapshotted), and run again on the same
// volume to find the snapshot there.
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, type FileToolsClient } from "../../clients/ts/src/client.js";
import { ROOT } from "../support/dist.js";

const IMAGE = "localhost/filetoolsd:test";
const VOLUME = `filetools-image-test-${process.pid}`;
const VERSION = (JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { version: string }).version;
// containers/storage on vfs and chroot isolation: no overlay mounts or user namespaces needed.
const env = { ...process.env, STORAGE_DRIVER: "vfs", BUILDAH_ISOLATION: "chroot" };
// This project's test machines have hybrid cgroups (crun refuses them) and may not raise RLIMIT_NPROC:
// runc with cgroupfs, and limits no higher than the host's.
const PODMAN = ["--runtime", "runc", "--cgroup-manager", "cgroupfs"];
const LIMITS = ["--ulimit", "nofile=16384:16384", "--ulimit", "nproc=4096:4096"];

function sh(cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { cwd: ROOT, env, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }).trim();
}

function podman(...args: string[]): { code: number; out: string } {
  const result = spawnSync("podman", [...PODMAN, ...args], { cwd: ROOT, env, encoding: "utf8" });
  return { code: result.status ?? -1, out: `${result.stdout}${result.stderr}`.trim() };
}

/** Starts a container of the image on the test's volume; returns its name and published address. */
function runDaemon(name: string): string {
  const started = podman(
    "run", "-d", "--name", name, "--read-only", "-v", `${VOLUME}:/data`, "-p", "127.0.0.1::7447",
    ...LIMITS, "-e", "FILETOOLS_INSECURE=true", IMAGE,
  );
  expect(started.code, started.out).toBe(0);
  const port = podman("port", name, "7447/tcp");
  expect(port.code, port.out).toBe(0);
  return port.out.split("\n")[0]!.replace("0.0.0.0", "127.0.0.1");
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

let client: FileToolsClient | undefined;

beforeAll(() => {
  const started = Date.now();
  const base = sh(path.join(ROOT, "scripts/image/build-base.sh"), []);
  const baseBuilt = Date.now();
  // A TLS-inspecting proxy's CA (this machine's npm uses one) reaches the build's npm ci as a secret, never a layer.
  const ca = process.env.NODE_EXTRA_CA_CERTS;
  sh("buildah", [
    "bud", "--layers", "--format", "docker", "-f", "deploy/Containerfile", "--build-arg", `BASE=${base}`,
    ...(ca ? ["--secret", `id=npm_ca,src=${ca}`] : []), "-t", IMAGE, ".",
  ]);
  console.log(`image: base ${((baseBuilt - started) / 1000).toFixed(0)} s, build ${((Date.now() - baseBuilt) / 1000).toFixed(0)} s`);
}, 1_800_000);

afterAll(() => {
  client?.close();
  for (const name of ["ft-image-a", "ft-image-b"]) podman("rm", "-f", name);
  podman("volume", "rm", "-f", VOLUME);
});

describe("the image", () => {
  it("runs as a non-root user on a read-only root, serves, passes its HEALTHCHECK and stops cleanly on SIGTERM", async () => {
    const address = runDaemon("ft-image-a");
    client = connect(address);
    const version = await until("GetVersion", () => client!.daemon.getVersion({}).catch(() => undefined));
    expect(version.version).toBe(VERSION);

    const ws = client.workspace("demo");
    const run = await ws.startRun();
    await ws.writeText("/notes/a.txt", "written in a container\n");
    expect((await ws.readText("/notes/a.txt")).text).toBe("written in a container\n");

    const health = await until("HEALTHCHECK", () => (podman("healthcheck", "run", "ft-image-a").code === 0 ? true : undefined));
    expect(health).toBe(true);
    expect(podman("exec", "ft-image-a", "id", "-u").out).toBe("10001");
    const write = podman("exec", "ft-image-a", "touch", "/app/x");
    expect(write.code).not.toBe(0);
    expect(write.out).toMatch(/Read-only file system/);
    expect(podman("exec", "ft-image-a", "filetools", "--version").out).toBe(VERSION);

    const stopped = podman("stop", "-t", "30", "ft-image-a");
    expect(stopped.code, stopped.out).toBe(0);
    expect(podman("inspect", "ft-image-a", "--format", "{{.State.ExitCode}}").out).toBe("0");
    expect(podman("logs", "ft-image-a").out).toMatch(/"msg":"stopped"/);
    client.close();

    // The same volume under a new container: the run SIGTERM snapshotted is there, and resumes.
    client = connect(runDaemon("ft-image-b"));
    const again = await until("the second container", () => client!.workspace("demo").listSnapshots().catch(() => undefined));
    expect(again.length).toBeGreaterThan(0);
    expect((await client.workspace("demo").readText("/notes/a.txt")).text).toBe("written in a container\n");
    expect((await client.workspaces.listRuns({})).runs.map((r) => r.runId)).toContain(run.id);
  });
});
