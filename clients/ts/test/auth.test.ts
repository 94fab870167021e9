// connect({token, tls}) against a real filetoolsd started with --tokens and
// with --tls-cert/--tls-key/--tls-client-ca (certificates made by openssl for this run).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { status as Code } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDaemon, type Daemon } from "../../../test/e2e/daemon.js";
import { makeCa, makeLeaf } from "../../../test/support/certs.js";
import { connect, FileToolsError, type ConnectOptions } from "../src/index.js";

const dir = mkdtempSync(path.join(tmpdir(), "ftc-ts-auth-"));
const file = (name: string) => path.join(dir, name);
const pemText = (name: string) => readFileSync(file(name), "utf8");

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The outcome of listing the workspaces over a fresh connection: their ids, or the error. */
async function listWorkspaces(address: string, options: ConnectOptions): Promise<string[] | FileToolsError> {
  const client = connect(address, options);
  try {
    return (await client.listWorkspaces({ deadline: 15_000 })).map((w) => w.id);
  } catch (error) {
    if (error instanceof FileToolsError) return error;
    throw error;
  } finally {
    client.close();
  }
}

describe("token", () => {
  let daemon: Daemon;
  beforeAll(async () => {
    writeFileSync(file("tokens.json"), JSON.stringify({ tokens: [{ name: "crew-a", token: "s3cret", workspaces: ["reports", "team-*"] }] }));
    daemon = await startDaemon({ args: ["--tokens", file("tokens.json")] });
  });
  afterAll(() => daemon?.stop());

  it("is sent on every call, and decides which workspaces the caller may use", async () => {
    const client = connect(daemon.address, { token: "s3cret" });
    try {
      const team = client.workspace("team-1");
      const run = await team.startRun();
      await team.writeText("a.txt", "hello\n");
      expect((await team.readText("a.txt")).text).toBe("hello\n");
      expect((await team.finishRun(run.id)).snapshot?.fileCount).toBe(1n);
      expect((await client.listWorkspaces()).map((w) => w.id)).toEqual(["team-1"]);

      const denied = await client.workspace("other").startRun().catch((e: unknown) => e);
      expect(denied).toBeInstanceOf(FileToolsError);
      expect(denied).toMatchObject({ code: Code.PERMISSION_DENIED, reason: "WORKSPACE_NOT_ALLOWED" });
    } finally {
      client.close();
    }
  });

  it("missing or unknown is UNAUTHENTICATED", async () => {
    expect(await listWorkspaces(daemon.address, {})).toMatchObject({ code: Code.UNAUTHENTICATED, reason: "UNAUTHENTICATED" });
    expect(await listWorkspaces(daemon.address, { token: "wrong" })).toMatchObject({ code: Code.UNAUTHENTICATED, reason: "UNAUTHENTICATED" });
  });
});

describe("tls", () => {
  beforeAll(() => {
    makeCa(dir, "ca");
    makeLeaf(dir, "server", "ca", "serverAuth");
    makeLeaf(dir, "client", "ca", "clientAuth");
  });
  const serverArgs = () => ["--tls-cert", file("server.crt"), "--tls-key", file("server.key")];

  it("connects with the CA's PEM text, and not in plain text", async () => {
    const daemon = await startDaemon({ args: serverArgs() });
    try {
      expect(await listWorkspaces(daemon.address, { tls: { ca: pemText("ca.crt") } })).toEqual([]);
      expect(await listWorkspaces(daemon.address, {})).toMatchObject({ code: Code.UNAVAILABLE });
      // tls: true trusts only the system's roots, which did not sign this daemon's certificate.
      expect(await listWorkspaces(daemon.address, { tls: true })).toMatchObject({ code: Code.UNAVAILABLE });
    } finally {
      await daemon.stop();
    }
  });

  it("presents a client certificate for mutual TLS, with a token too", async () => {
    writeFileSync(file("all.json"), JSON.stringify({ tokens: [{ name: "crew-a", token: "s3cret", workspaces: ["*"] }] }));
    const daemon = await startDaemon({ args: [...serverArgs(), "--tls-client-ca", file("ca.crt"), "--tokens", file("all.json")] });
    try {
      const tls = { ca: pemText("ca.crt"), cert: readFileSync(file("client.crt")), key: readFileSync(file("client.key")) };
      const client = connect(daemon.address, { tls, token: "s3cret" });
      await client.createWorkspace("m");
      expect((await client.workspace("m").writeText("x.txt", "over mutual TLS\n")).created).toBe(true);
      client.close();
      expect(await listWorkspaces(daemon.address, { tls: { ca: pemText("ca.crt") }, token: "s3cret" })).toMatchObject({ code: Code.UNAVAILABLE });
    } finally {
      await daemon.stop();
    }
  });
});
