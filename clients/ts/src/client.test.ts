// Client behaviour the adapter tests do not cover: call options, failures
// that never reach the daemon, and a failing source of requests.
import { status as Code } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, listen, registerService } from "../../../server/grpc/index.js";
import { createLogger } from "../../../server/log.js";
import { connect, FileToolsError, type FileToolsClient } from "./client.js";
import { Files } from "@filetools/proto/filetools/v1/files_pb.js";

let client: FileToolsClient;
const server = createServer({ maxMessageBytes: 8 << 20 });
let uploadedChunks = 0;
let uploadReceived: () => void = () => {};
let uploadFailed: (error: unknown) => void = () => {};

beforeAll(async () => {
  registerService(
    server,
    Files,
    {
      // Echoes what the client sent: the metadata header and the deadline.
      async stat(request, ctx) {
        const header = ctx.metadata.get("x-test")[0];
        return { file: { path: `${request.path} ${String(header)} ${ctx.deadline ? "deadline" : "none"}` } };
      },
      async upload(requests) {
        try {
          for await (const _ of requests) {
            uploadedChunks++;
            uploadReceived();
          }
        } catch (error) {
          uploadFailed(error);
          throw error;
        }
        return {};
      },
    },
    { logger: createLogger("silent") },
  );
  client = connect(await listen(server, "127.0.0.1:0"));
});

afterAll(() => {
  client.close();
  server.forceShutdown();
});

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail("expected a failure"),
    (e: unknown) => e,
  );
}

describe("connect", () => {
  it("sends metadata and a deadline given as a Date", async () => {
    const response = await client.files.stat(
      { workspace: "w", path: "/a" },
      { metadata: { "x-test": "hello" }, deadline: new Date(Date.now() + 5000) },
    );
    expect(response.file?.path).toBe("/a hello deadline");
  });

  it("does not start a call whose signal has already aborted", async () => {
    const error = await failure(client.files.stat({ workspace: "w", path: "/a" }, { signal: AbortSignal.abort() }));
    expect(error).toMatchObject({ code: Code.CANCELLED, codeName: "CANCELLED", reason: "CANCELLED" });
  });

  it("reports an unreachable daemon as UNAVAILABLE without a reason", async () => {
    const nowhere = connect("127.0.0.1:1");
    const error = await failure(nowhere.files.stat({ workspace: "w", path: "/a" }, { deadline: 5000 }));
    nowhere.close();
    expect(error).toBeInstanceOf(FileToolsError);
    expect(error).toMatchObject({ code: Code.UNAVAILABLE, reason: "", metadata: {} });
  });

  it("fails a client stream whose source throws, and cancels the call", async () => {
    const receivedOnServer = new Promise<void>((resolve) => (uploadReceived = resolve));
    const failedOnServer = new Promise((resolve) => (uploadFailed = resolve));
    async function* requests() {
      yield { event: { case: "header" as const, value: { workspace: "w", path: "/a" } } };
      await receivedOnServer; // the daemon's handler is running: the failure must reach it
      throw new Error("source broke");
    }
    const error = await failure(client.files.upload(requests()));
    expect(error).toMatchObject({ message: "source broke" });
    expect(await failedOnServer).toMatchObject({ reason: "CANCELLED" });
  });

  it("accepts a plain array of requests", async () => {
    uploadedChunks = 0;
    await client.files.upload([
      { event: { case: "header", value: { workspace: "w", path: "/a" } } },
      { event: { case: "chunk", value: { data: new Uint8Array([1, 2, 3]) } } },
    ]);
    expect(uploadedChunks).toBe(2);
  });
});
