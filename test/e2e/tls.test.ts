// TLS and mutual TLS (--tls-cert, --tls-key, --tls-client-ca) against a real
// daemon, with certificates made by openssl for this run only (nothing committed).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect } from "../../clients/ts/src/client.js";
import { makeCa, makeLeaf } from "../support/certs.js";
import { expectError, startDaemon, type Daemon } from "./daemon.js";

const dir = mkdtempSync(path.join(tmpdir(), "ftd-e2e-tls-"));
const file = (name: string) => path.join(dir, name);
makeCa(dir, "ca");
makeCa(dir, "other-ca");
makeLeaf(dir, "server", "ca", "serverAuth");
makeLeaf(dir, "client", "ca", "clientAuth");
makeLeaf(dir, "stranger", "other-ca", "clientAuth");
const pem = (name: string) => readFileSync(file(name));
const serverArgs = ["--tls-cert", file("server.crt"), "--tls-key", file("server.key")];

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A call over `credentials` to the daemon at `address`; closes the connection afterwards. */
async function listOver(address: string, credentials: grpc.ChannelCredentials) {
  const client = connect(address, { credentials });
  try {
    return await client.workspaces.listWorkspaces({}, { deadline: 15_000 });
  } finally {
    client.close();
  }
}

describe("--tls-cert / --tls-key", () => {
  let d: Daemon;
  beforeAll(async () => {
    d = await startDaemon({ args: serverArgs, credentials: grpc.credentials.createSsl(pem("ca.crt")) });
  });
  afterAll(() => d?.stop());

  it("serves a client that trusts the CA", async () => {
    await d.client.workspaces.createWorkspace({ workspace: "w" });
    await d.client.files.write({ workspace: "w", path: "a.txt", body: { case: "content", value: "over TLS\n" } });
    expect((await d.client.files.stat({ workspace: "w", path: "a.txt" })).file?.size).toBe(9n);
  });

  it("refuses a plain-text client and a client that does not trust the CA", async () => {
    await expectError(listOver(d.address, grpc.credentials.createInsecure()), "UNAVAILABLE");
    await expectError(listOver(d.address, grpc.credentials.createSsl(pem("other-ca.crt"))), "UNAVAILABLE");
  });
});

describe("--tls-client-ca (mutual TLS)", () => {
  let d: Daemon;
  beforeAll(async () => {
    d = await startDaemon({
      args: [...serverArgs, "--tls-client-ca", file("ca.crt")],
      credentials: grpc.credentials.createSsl(pem("ca.crt"), pem("client.key"), pem("client.crt")),
    });
  });
  afterAll(() => d?.stop());

  it("serves a client with a certificate the CA signed", async () => {
    await d.client.workspaces.createWorkspace({ workspace: "m" });
    expect((await d.client.workspaces.listWorkspaces({})).workspaces.map((w) => w.id)).toEqual(["m"]);
  });

  it("refuses a client without a certificate, or with one another CA signed", async () => {
    await expectError(listOver(d.address, grpc.credentials.createSsl(pem("ca.crt"))), "UNAVAILABLE");
    await expectError(listOver(d.address, grpc.credentials.createSsl(pem("ca.crt"), pem("stranger.key"), pem("stranger.crt"))), "UNAVAILABLE");
  });
});

describe("TLS files the daemon cannot use", () => {
  it.each([
    ["a missing key file", ["--tls-cert", file("server.crt"), "--tls-key", file("missing.key")], /--tls-key .*missing\.key: cannot read it \(ENOENT\)/],
    ["a key that is not the certificate's", ["--tls-cert", file("server.crt"), "--tls-key", file("client.key")], /unusable/],
    ["a client CA without a certificate", ["--tls-client-ca", file("ca.crt")], /--tls-client-ca needs --tls-cert and --tls-key/],
    ["a client CA file that holds no certificate", [...serverArgs, "--tls-client-ca", file("ca.key")], /--tls-client-ca .*ca\.key: unusable/],
  ])("refuses to start with %s, saying why", async (_what, args, message) => {
    const failure = startDaemon({ args });
    await expect(failure).rejects.toThrow(/daemon exited 2/);
    await expect(failure).rejects.toThrow(message);
  });
});
