// The two other ways to run the daemon (deploy/): the systemd unit, checked
// by systemd-analyze (verify, and the offline security review), and the
// compose file, whose daemon settings must be ones filetoolsd accepts.
// Neither is run here: no systemd as PID 1, no image registry for SeaweedFS's
// image (the image itself is built and run by test/image).
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { parseConfig, readTokensFile } from "../../server/config.js";
import { ROOT } from "../support/dist.js";

const scratch = mkdtempSync(path.join(tmpdir(), "filetools-deploy-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const UNIT = readFileSync(path.join(ROOT, "deploy/filetoolsd.service"), "utf8");

/** systemd-analyze on `unit` installed from this tree (the unit's /opt/filetools is the repository). */
function analyze(args: string[], unit = UNIT): { code: number; out: string; err: string } {
  const file = path.join(scratch, "filetoolsd.service");
  writeFileSync(file, unit.replaceAll("/opt/filetools", ROOT));
  const result = spawnSync("systemd-analyze", [...args, file], { encoding: "utf8" });
  return { code: result.status ?? -1, out: result.stdout, err: result.stderr };
}

/** The values of `key=` lines in the unit, in order. */
function settings(key: string): string[] {
  return [...UNIT.matchAll(new RegExp(`^${key}=(.*)$`, "gm"))].map((m) => m[1]!);
}

describe("deploy/filetoolsd.service", () => {
  it("passes systemd-analyze verify without a word", () => {
    expect(analyze(["verify"])).toMatchObject({ code: 0, err: "", out: "" });
  });

  // verify exits 0 on a directive it ignores: the check is that it says nothing.
  it.each([
    ["a misspelt value", "ProtectSystem=strict", "ProtectSystem=strictly"],
    ["an unknown key", "Restart=on-failure", "Restartt=on-failure"],
    ["a missing program", "/opt/filetools/bin/filetoolsd", "/opt/filetools/bin/nope"],
  ])("would report %s", (_, from, to) => {
    const result = analyze(["verify"], UNIT.replace(from, to));
    expect(result.err.length + result.out.length).toBeGreaterThan(0);
  });

  it("writes only to its data directory, with systemd's hardening (exposure 'OK' in systemd-analyze security)", () => {
    const dataDir = /--data-dir (\S+)/.exec(settings("ExecStart")[0]!)?.[1];
    expect(dataDir).toBe("/var/lib/filetools");
    expect(settings("ReadWritePaths")).toEqual([dataDir]);
    expect(settings("StateDirectory")).toEqual(["filetools"]);
    expect(settings("ProtectSystem")).toEqual(["strict"]);
    const review = analyze(["security", "--offline=yes"]);
    const exposure = Number(/Overall exposure level for filetoolsd\.service: ([\d.]+)/.exec(review.out)?.[1]);
    expect(exposure, review.out).toBeLessThanOrEqual(2);
  });

  it("starts the daemon with settings it accepts", () => {
    const env = Object.fromEntries(settings("Environment").map((line) => line.split("=", 2) as [string, string]));
    const argv = settings("ExecStart")[0]!.split(" ").slice(1);
    expect(parseConfig(argv, env)).toMatchObject({ listen: "127.0.0.1:7447", dataDir: "/var/lib/filetools" });
  });
});

describe("deploy/compose/compose.yaml", () => {
  const dir = path.join(ROOT, "deploy/compose");
  const compose = parse(readFileSync(path.join(dir, "compose.yaml"), "utf8")) as {
    services: Record<string, { build?: { context: string; dockerfile: string }; environment?: Record<string, string>; read_only?: boolean; ports?: string[] }>;
    secrets: Record<string, { file: string }>;
  };
  const daemon = compose.services.filetoolsd!;

  it("builds the daemon from deploy/Containerfile and runs it on a read-only root, published on loopback only", () => {
    expect(path.resolve(dir, daemon.build!.context, daemon.build!.dockerfile)).toBe(path.join(ROOT, "deploy/Containerfile"));
    expect(daemon.read_only).toBe(true);
    expect(daemon.ports).toEqual(["127.0.0.1:7447:7447"]);
  });

  it("gives the daemon settings it accepts, an s3:// store on the SeaweedFS service, and a tokens file that parses", () => {
    const tokens = path.join(dir, "tokens.example.json");
    const env = { ...daemon.environment, FILETOOLS_TOKENS: tokens, FILETOOLS_LISTEN: "0.0.0.0:7447" };
    const config = parseConfig([], env);
    expect(config.store).toBe("s3://filetools/snapshots");
    expect(config.s3.endpoint).toBe("http://seaweedfs:8333");
    expect(Object.keys(compose.services)).toContain("seaweedfs");
    expect(readTokensFile(tokens).size).toBeGreaterThan(0);
    // Every secret the file names is made from an example beside it.
    expect(Object.values(compose.secrets).map((s) => s.file).sort()).toEqual(["./s3-config.json", "./tokens.json"]);
    JSON.parse(readFileSync(path.join(dir, "s3-config.example.json"), "utf8"));
  });
});
