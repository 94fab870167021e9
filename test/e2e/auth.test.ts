// Token auth (--tokens) against a real daemon: every kind of call needs a
// known bearer token and an allowed workspace; health needs none.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  HealthCheckRequestSchema,
  HealthCheckResponse_ServingStatus as ServingStatus,
  HealthCheckResponseSchema,
  type HealthCheckRequest,
  type HealthCheckResponse,
} from "@filetools/proto/grpc/health/v1/health_pb.js";
import { collect, expectError, ROOT, startDaemon, type Daemon } from "./daemon.js";

const ADMIN = "admin-token-0123";
const CREW = "crew-token-4567";
const dir = mkdtempSync(path.join(tmpdir(), "ftd-e2e-auth-"));
const tokensFile = path.join(dir, "tokens.json");
writeFileSync(
  tokensFile,
  JSON.stringify({
    tokens: [
      { name: "admin", token: ADMIN, workspaces: ["*"] },
      { name: "crew-a", token: CREW, workspaces: ["reports", "team-*"] },
    ],
  }),
);

const as = (token: string) => ({ metadata: { authorization: `Bearer ${token}` } });
const upload = (workspace: string, filePath: string, data: string) => [
  { event: { case: "header" as const, value: { workspace, path: filePath } } },
  { event: { case: "chunk" as const, value: { data: Buffer.from(data) } } },
];

let d: Daemon;
beforeAll(async () => {
  d = await startDaemon({ args: ["--tokens", tokensFile, "--log-level", "info"] });
  for (const workspace of ["reports", "team-a", "secret"]) await d.client.workspaces.createWorkspace({ workspace }, as(ADMIN));
  await d.client.files.write({ workspace: "secret", path: "plans.md", body: { case: "content", value: "top secret\n" } }, as(ADMIN));
});
afterAll(async () => {
  await d?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("--tokens: authentication", () => {
  it("a call without a token is UNAUTHENTICATED: unary, server stream and client stream", async () => {
    await expectError(d.client.workspaces.listWorkspaces({}), "UNAUTHENTICATED", "UNAUTHENTICATED");
    await expectError(collect(d.client.files.read({ workspace: "reports", path: "a.md" })), "UNAUTHENTICATED", "UNAUTHENTICATED");
    await expectError(d.client.files.upload(upload("reports", "a.md", "x")), "UNAUTHENTICATED", "UNAUTHENTICATED");
    await expectError(d.client.files.stat({ workspace: "reports", path: "a.md" }, as(ADMIN)), "NOT_FOUND");
  });

  it("an unknown or malformed token is UNAUTHENTICATED", async () => {
    for (const authorization of [`Bearer ${CREW}x`, `Bearer ${CREW.slice(0, -1)}`, `Basic ${CREW}`, CREW, "Bearer "]) {
      const err = await expectError(d.client.workspaces.listWorkspaces({}, { metadata: { authorization } }), "UNAUTHENTICATED", "UNAUTHENTICATED");
      expect(err.message).not.toContain(CREW);
    }
    await expectError(d.client.files.upload(upload("reports", "a.md", "x"), as("wrong")), "UNAUTHENTICATED", "UNAUTHENTICATED");
  });

  it("a known token works on its workspaces, whatever the case of the scheme", async () => {
    await d.client.files.upload(upload("team-a", "up.txt", "uploaded\n"), as(CREW));
    await d.client.files.write({ workspace: "reports", path: "q3.md", body: { case: "content", value: "# Q3\n" } }, { metadata: { authorization: `bearer ${CREW}` } });
    const read = await collect(d.client.files.read({ workspace: "team-a", path: "up.txt" }, as(CREW)));
    expect(read.find((m) => m.event.case === "chunk")?.event.value).toMatchObject({ text: "uploaded\n" });
    expect((await d.client.files.stat({ workspace: "reports", path: "q3.md" }, as(CREW))).file?.size).toBe(5n);
  });

  it("logs the token's name with each call, never the token", () => {
    const calls = d
      .logs()
      .split("\n")
      .filter((line) => line.includes('"token_name"'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(calls).toContainEqual(expect.objectContaining({ method: "filetools.v1.Files/Upload", workspace: "team-a", token_name: "crew-a", code: "OK" }));
    expect(d.logs()).not.toContain(CREW);
    expect(d.logs()).not.toContain(ADMIN);
  });
});

describe("--tokens: workspaces", () => {
  it("a workspace the token is not allowed is PERMISSION_DENIED, for every kind of call", async () => {
    const denied = (call: Promise<unknown>) => expectError(call, "PERMISSION_DENIED", "WORKSPACE_NOT_ALLOWED");
    await denied(d.client.files.stat({ workspace: "secret", path: "plans.md" }, as(CREW)));
    await denied(d.client.files.write({ workspace: "secret", path: "new.md", body: { case: "content", value: "x" } }, as(CREW)));
    await denied(d.client.workspaces.deleteWorkspace({ workspace: "secret" }, as(CREW)));
    await denied(collect(d.client.files.read({ workspace: "secret", path: "plans.md" }, as(CREW))));
    await denied(collect(d.client.files.list({ workspace: "secret" }, as(CREW))));
    await denied(collect(d.client.workspaces.exportSnapshot({ workspace: "secret", live: true }, as(CREW))));
    await denied(d.client.files.upload(upload("secret", "up.txt", "x"), as(CREW)));
    // Refused at the header: the bytes after it (not a tar) are never looked at.
    await denied(
      d.client.workspaces.importArchive(
        [{ event: { case: "header", value: { workspace: "secret" } } }, { event: { case: "chunk", value: { data: Buffer.from("not a tar") } } }],
        as(CREW),
      ),
    );
    // Nothing was changed, and a workspace that does not exist is refused the same way (no existence probe).
    expect((await d.client.workspaces.getWorkspace({ workspace: "secret" }, as(ADMIN))).workspace?.id).toBe("secret");
    await expectError(d.client.files.stat({ workspace: "secret", path: "new.md" }, as(ADMIN)), "NOT_FOUND");
    await expectError(d.client.files.stat({ workspace: "secret", path: "up.txt" }, as(ADMIN)), "NOT_FOUND");
    await denied(d.client.workspaces.createWorkspace({ workspace: "elsewhere" }, as(CREW)));
  });

  it("a token may create a workspace its globs match", async () => {
    expect((await d.client.workspaces.createWorkspace({ workspace: "team-b" }, as(CREW))).workspace?.id).toBe("team-b");
  });

  it("ListWorkspaces lists only the token's workspaces", async () => {
    const ids = async (token: string) => (await d.client.workspaces.listWorkspaces({}, as(token))).workspaces.map((w) => w.id);
    expect(await ids(CREW)).toEqual(["reports", "team-a", "team-b"]);
    expect(await ids(ADMIN)).toEqual(["reports", "secret", "team-a", "team-b"]);
  });
});

describe("--tokens: probes and tooling", () => {
  it("gRPC health answers without a token", async () => {
    const channel = new grpc.Client(d.address, grpc.credentials.createInsecure());
    try {
      const response = await new Promise<HealthCheckResponse>((resolve, reject) =>
        channel.makeUnaryRequest(
          "/grpc.health.v1.Health/Check",
          (request: HealthCheckRequest) => Buffer.from(toBinary(HealthCheckRequestSchema, request)),
          (bytes: Buffer) => fromBinary(HealthCheckResponseSchema, bytes),
          create(HealthCheckRequestSchema, { service: "filetools.v1.Files" }),
          (error, res) => (error || !res ? reject(error) : resolve(res)),
        ),
      );
      expect(response.status).toBe(ServingStatus.SERVING);
    } finally {
      channel.close();
    }
  });

  it("reflection answers without a token", async () => {
    const { stdout } = await promisify(execFile)(
      path.join(ROOT, "node_modules/.bin/buf"),
      ["curl", "--protocol", "grpc", "--http2-prior-knowledge", "--list-services", `http://${d.address}`],
      { cwd: ROOT },
    );
    expect(stdout.split("\n")).toEqual(expect.arrayContaining(["filetools.v1.Files", "filetools.v1.Workspaces"]));
  });
});

describe("--tokens: a file the daemon cannot use", () => {
  it.each([
    ["malformed JSON", "{tokens: [", /not valid JSON/],
    ["an empty token", JSON.stringify({ tokens: [{ name: "a", token: "", workspaces: ["*"] }] }), /tokens\[0\] \(a\): token must be a non-empty string/],
    [
      "a duplicate token",
      JSON.stringify({ tokens: [{ name: "a", token: "same-token", workspaces: ["*"] }, { name: "b", token: "same-token", workspaces: ["x"] }] }),
      /tokens\[1\] \(b\): the same token is listed twice/,
    ],
  ])("refuses to start with %s, saying why", async (_what, text, message) => {
    const file = path.join(dir, "bad.json");
    writeFileSync(file, text);
    const failure = startDaemon({ args: ["--tokens", file] });
    await expect(failure).rejects.toThrow(/daemon exited 2/);
    await expect(failure).rejects.toThrow(message);
  });

  it("refuses to start when the file cannot be read", async () => {
    await expect(startDaemon({ args: ["--tokens", path.join(dir, "missing.json")] })).rejects.toThrow(/--tokens .*missing\.json: cannot read it \(ENOENT\)/);
  });
});

describe("SIGHUP reloads the tokens file", () => {
  const reloadFile = path.join(dir, "reload.json");
  const OLD = "old-token-0001";
  const NEW = "new-token-0002";
  const tokensOf = (...entries: Array<[string, string]>) => JSON.stringify({ tokens: entries.map(([name, token]) => ({ name, token, workspaces: ["*"] })) });
  let r: Daemon;

  /** Sends SIGHUP and waits until the daemon has logged the outcome (the `count`-th such line). */
  async function hangUp(message: RegExp, count: number): Promise<void> {
    r.proc.kill("SIGHUP");
    for (let i = 0; i < 200 && (r.logs().match(new RegExp(message, "g")) ?? []).length < count; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect((r.logs().match(new RegExp(message, "g")) ?? []).length).toBe(count);
  }

  beforeAll(async () => {
    writeFileSync(reloadFile, tokensOf(["old", OLD]));
    r = await startDaemon({ args: ["--tokens", reloadFile, "--log-level", "info"] });
    await r.client.workspaces.createWorkspace({ workspace: "w" }, as(OLD));
  });
  afterAll(() => r?.stop());

  it("new calls use the new tokens; a call in flight keeps its grant; a bad file keeps the tokens in force", async () => {
    // In flight across the reload: an upload admitted with OLD that finishes after OLD is gone.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    async function* slowUpload() {
      yield { event: { case: "header" as const, value: { workspace: "w", path: "/inflight.txt" } } };
      await released;
      yield { event: { case: "chunk" as const, value: { data: Buffer.from("done") } } };
    }
    const inFlight = r.client.files.upload(slowUpload(), as(OLD));
    await new Promise((resolve) => setTimeout(resolve, 200));

    writeFileSync(reloadFile, tokensOf(["new", NEW]));
    await hangUp(/"msg":"tokens file reloaded"/, 1);
    await expectError(r.client.files.stat({ workspace: "w", path: "/" }, as(OLD)), "UNAUTHENTICATED");
    await r.client.files.stat({ workspace: "w", path: "/" }, as(NEW));
    release();
    expect(await inFlight).toMatchObject({ path: "/inflight.txt" });

    writeFileSync(reloadFile, "{ not json");
    await hangUp(/"msg":"tokens file not reloaded: the tokens in force stay"/, 1);
    await r.client.files.stat({ workspace: "w", path: "/" }, as(NEW));
    expect(r.logs()).toMatch(/"reason":"--tokens [^"]*reload\.json: not valid JSON/);
  });
});
