// The adapter end to end: a real grpc-js server on a loopback port, test
// handlers for the real Files service, and the TypeScript client.
import { setTimeout as sleep } from "node:timers/promises";
import { Client, credentials, status as Code, type ServiceError } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, FileToolsError as ClientError, type FileToolsClient } from "../../clients/ts/src/client.js";
import { Files, type ReadResponse } from "@filetools/proto/filetools/v1/files_pb.js";
import { Workspaces } from "@filetools/proto/filetools/v1/workspaces_pb.js";
import { FileToolsError } from "../errors.js";
import { createLogger } from "../log.js";
import type { ServiceHandlers } from "./handlers.js";
import { createServer, listen, registerService } from "./index.js";

const logLines: Array<Record<string, unknown>> = [];
const logger = createLogger("info", { write: (line: string) => void logLines.push(JSON.parse(line)) });

/** What the handlers saw, for the tests to inspect. */
const seen = {
  abortReason: undefined as unknown,
  deadline: undefined as Date | undefined,
  produced: 0,
  generatorStopped: false,
  uploadError: undefined as unknown,
};

const aborted = (signal: AbortSignal) =>
  new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));

const files: ServiceHandlers<typeof Files> = {
  async stat(request, ctx) {
    switch (request.path) {
      case "/conflict":
        throw new FileToolsError("CONTENT_CHANGED", "/conflict changed since version v1", { current_version: "v2" });
      case "/crash":
        throw new Error("EACCES: permission denied, open '/home/secret/host/path'");
      case "/slow":
        seen.deadline = ctx.deadline;
        await aborted(ctx.signal);
        seen.abortReason = ctx.signal.reason;
        throw ctx.signal.reason;
    }
    return { file: { path: request.path, size: 42n, isBinary: request.detectBinary } };
  },

  async *read(request, ctx) {
    const count = request.path === "/forever" ? Infinity : Number(request.lineCount ?? 0);
    try {
      yield { event: { case: "header", value: { encoding: "utf-8" } } };
      for (let line = 1; line <= count; line++) {
        seen.produced = line;
        if (request.path === "/forever") await sleep(2);
        yield { event: { case: "chunk", value: { firstLine: BigInt(line), text: "x".repeat(1024) } } };
      }
      yield { event: { case: "trailer", value: { linesReturned: BigInt(count), eof: true } } };
    } finally {
      seen.generatorStopped = true;
      seen.abortReason = ctx.signal.reason;
    }
  },

  async upload(requests) {
    let size = 0;
    let path = "";
    try {
      for await (const request of requests) {
        if (request.event.case === "header") path = request.event.value.path;
        if (request.event.case === "chunk") size += request.event.value.data.length;
      }
    } catch (error) {
      seen.uploadError = error;
      throw error;
    }
    return { path, size: BigInt(size) };
  },
};

let client: FileToolsClient;
let address: string;
let server: ReturnType<typeof createServer>;

beforeAll(async () => {
  server = createServer({ maxMessageBytes: 8 * 1024 * 1024 });
  registerService(server, Files, files, { logger });
  registerService(server, Workspaces, {}, { logger });
  address = await listen(server, "127.0.0.1:0");
  client = connect(address);
});

afterAll(() => {
  client.close();
  server.forceShutdown();
});

async function failure(promise: Promise<unknown>): Promise<ClientError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ClientError);
  return error as ClientError;
}

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await sleep(10);
  expect(condition()).toBe(true);
}

describe("unary", () => {
  it("round-trips typed messages and logs the call with its workspace", async () => {
    const response = await client.files.stat({ workspace: "ws-1", path: "/a.ts", detectBinary: true });
    expect(response.file?.path).toBe("/a.ts");
    expect(response.file?.size).toBe(42n);
    expect(response.file?.isBinary).toBe(true);
    await waitFor(() => logLines.some((l) => l.workspace === "ws-1"));
    const line = logLines.find((l) => l.workspace === "ws-1")!;
    expect(line).toMatchObject({ method: "filetools.v1.Files/Stat", code: "OK", level: "info" });
    expect(typeof line.duration_ms).toBe("number");
  });

  it("sends a FileToolsError as its status code, message, reason and metadata", async () => {
    const error = await failure(client.files.stat({ workspace: "ws-2", path: "/conflict" }));
    expect(error.code).toBe(Code.FAILED_PRECONDITION);
    expect(error.codeName).toBe("FAILED_PRECONDITION");
    expect(error.reason).toBe("CONTENT_CHANGED");
    expect(error.metadata).toEqual({ current_version: "v2" });
    expect(error.message).toBe("/conflict changed since version v1");
    expect(logLines.find((l) => l.workspace === "ws-2")).toMatchObject({ code: "FAILED_PRECONDITION", reason: "CONTENT_CHANGED" });
  });

  it("hides any other error behind INTERNAL and logs the real one", async () => {
    const error = await failure(client.files.stat({ workspace: "ws-3", path: "/crash" }));
    expect(error.code).toBe(Code.INTERNAL);
    expect(error.reason).toBe("INTERNAL");
    expect(error.message).not.toContain("/home/secret");
    const line = logLines.find((l) => l.workspace === "ws-3")!;
    expect(line).toMatchObject({ level: "error", code: "INTERNAL", reason: "INTERNAL" });
    expect(JSON.stringify(line.err)).toContain("/home/secret/host/path");
  });

  it("aborts the handler's signal when the deadline passes", async () => {
    seen.abortReason = undefined;
    const error = await failure(client.files.stat({ workspace: "ws-4", path: "/slow" }, { deadline: 200 }));
    expect(error.code).toBe(Code.DEADLINE_EXCEEDED);
    expect(error.reason).toBe("DEADLINE_EXCEEDED");
    await waitFor(() => seen.abortReason !== undefined);
    expect(seen.deadline).toBeInstanceOf(Date);
    expect(seen.abortReason).toMatchObject({ reason: "DEADLINE_EXCEEDED" });
  });

  it("aborts the handler's signal when the client cancels", async () => {
    seen.abortReason = undefined;
    const controller = new AbortController();
    const call = client.files.stat({ workspace: "ws-5", path: "/slow" }, { signal: controller.signal });
    await sleep(100);
    controller.abort();
    const error = await failure(call);
    expect(error.code).toBe(Code.CANCELLED);
    await waitFor(() => seen.abortReason !== undefined);
    expect(seen.abortReason).toMatchObject({ reason: "CANCELLED" });
    await waitFor(() => logLines.some((l) => l.workspace === "ws-5"));
    expect(logLines.find((l) => l.workspace === "ws-5")).toMatchObject({ code: "CANCELLED", reason: "CANCELLED" });
  });

  it("answers UNIMPLEMENTED / NOT_IMPLEMENTED for a method without a handler", async () => {
    const error = await failure(client.workspaces.startRun({ workspace: "ws-6" }));
    expect(error.code).toBe(Code.UNIMPLEMENTED);
    expect(error.reason).toBe("NOT_IMPLEMENTED");
    expect(error.message).toBe("Workspaces.StartRun is not implemented yet");
    expect((await failure(client.files.write({ workspace: "ws-6", path: "/a" }))).message).toBe(
      "Files.Write is not implemented yet",
    );
  });
});

describe("server streams", () => {
  it("streams every message in order", async () => {
    const events: ReadResponse["event"]["case"][] = [];
    let lines = 0;
    for await (const response of client.files.read({ workspace: "ws-7", path: "/many", lineCount: 100n })) {
      events.push(response.event.case);
      if (response.event.case === "chunk") expect(response.event.value.firstLine).toBe(BigInt(++lines));
    }
    expect(lines).toBe(100);
    expect(events[0]).toBe("header");
    expect(events.at(-1)).toBe("trailer");
  });

  it("stops producing while the client does not read (backpressure)", async () => {
    seen.produced = 0;
    const total = 20_000; // 20 MiB of chunks
    // A client with HTTP/2's default 64 KiB window (ours opens 16 MiB, most of this stream).
    const narrow = connect(address, { channelOptions: { "grpc-node.flow_control_window": 65_535 } });
    const iterator = narrow.files.read({ workspace: "ws-8", path: "/many", lineCount: BigInt(total) })[Symbol.asyncIterator]();
    await iterator.next();
    await sleep(300);
    // Buffers on both sides and the HTTP/2 window hold a few hundred KiB, not the whole file.
    expect(seen.produced).toBeGreaterThan(0);
    expect(seen.produced).toBeLessThan(2_000);
    let received = 0;
    for (let r = await iterator.next(); !r.done; r = await iterator.next()) received++;
    expect(received).toBe(total + 1); // chunks and the trailer
    narrow.close();
  });

  it("stops the generator when the client cancels", async () => {
    seen.generatorStopped = false;
    seen.abortReason = undefined;
    const controller = new AbortController();
    let received = 0;
    const error = await failure(
      (async () => {
        for await (const _ of client.files.read({ workspace: "ws-9", path: "/forever" }, { signal: controller.signal })) {
          if (++received === 5) controller.abort();
        }
      })(),
    );
    expect(error.code).toBe(Code.CANCELLED);
    await waitFor(() => seen.generatorStopped);
    expect(seen.abortReason).toMatchObject({ reason: "CANCELLED" });
  });

  it("stops the generator when the client leaves the loop early", async () => {
    seen.generatorStopped = false;
    for await (const _ of client.files.read({ workspace: "ws-10", path: "/forever" })) break;
    await waitFor(() => seen.generatorStopped);
  });
});

describe("client streams", () => {
  const chunk = (n: number) => ({ event: { case: "chunk" as const, value: { data: new Uint8Array(n) } } });

  it("receives every message and takes the workspace from the header", async () => {
    async function* requests() {
      yield { event: { case: "header" as const, value: { workspace: "ws-11", path: "/up.bin" } } };
      for (let i = 0; i < 100; i++) yield chunk(64 * 1024);
    }
    const response = await client.files.upload(requests());
    expect(response).toMatchObject({ path: "/up.bin", size: BigInt(100 * 64 * 1024) });
    await waitFor(() => logLines.some((l) => l.workspace === "ws-11"));
    expect(logLines.find((l) => l.workspace === "ws-11")).toMatchObject({ method: "filetools.v1.Files/Upload", code: "OK" });
  });

  it("makes a cancelled upload fail in the handler instead of ending early", async () => {
    seen.uploadError = undefined;
    const controller = new AbortController();
    async function* requests() {
      yield { event: { case: "header" as const, value: { workspace: "ws-12", path: "/cut.bin" } } };
      yield chunk(1024);
      await sleep(100);
      controller.abort();
      await sleep(1000);
      yield chunk(1024);
    }
    const error = await failure(client.files.upload(requests(), { signal: controller.signal }));
    expect(error.code).toBe(Code.CANCELLED);
    await waitFor(() => seen.uploadError !== undefined);
    expect(seen.uploadError).toMatchObject({ reason: "CANCELLED" });
  });
});

describe("bad input", () => {
  /** A raw call whose request bytes are not a valid message (a length-delimited field longer than what follows). */
  const garbage = () => Buffer.from([0x12, 0x7f, 0x61]);

  it("answers a request that does not decode with INVALID_ARGUMENT, not INTERNAL", async () => {
    const raw = new Client(address, credentials.createInsecure());
    try {
      const unary = await new Promise<ServiceError>((resolve) =>
        raw.makeUnaryRequest("/filetools.v1.Files/Stat", (b: Buffer) => b, (b: Buffer) => b, garbage(), (error) => resolve(error!)),
      );
      expect({ code: unary.code, details: unary.details }).toMatchObject({ code: Code.INVALID_ARGUMENT, details: expect.stringMatching(/not a valid filetools\.v1\.StatRequest/) });
      const stream = raw.makeServerStreamRequest("/filetools.v1.Files/Read", (b: Buffer) => b, (b: Buffer) => b, garbage());
      const streamed = await new Promise<ServiceError>((resolve) => stream.on("error", resolve).on("data", () => {}));
      expect(streamed.code).toBe(Code.INVALID_ARGUMENT);
      const upload = await new Promise<ServiceError>((resolve) => {
        const call = raw.makeClientStreamRequest("/filetools.v1.Files/Upload", (b: Buffer) => b, (b: Buffer) => b, (error) => resolve(error!));
        call.write(garbage());
        call.end();
      });
      expect(upload.code).toBe(Code.INVALID_ARGUMENT);
      // A string field that is not UTF-8 (a path of the bytes 62 ff): protobuf refuses it, so must we, clearly.
      const notUtf8 = await new Promise<ServiceError>((resolve) =>
        raw.makeUnaryRequest("/filetools.v1.Files/Stat", (b: Buffer) => b, (b: Buffer) => b, Buffer.from([0x12, 0x02, 0x62, 0xff]), (error) => resolve(error!)),
      );
      expect({ code: notUtf8.code, details: notUtf8.details }).toMatchObject({ code: Code.INVALID_ARGUMENT, details: expect.stringContaining("utf-8") });
    } finally {
      raw.close();
    }
  });
});

describe("idle client streams", () => {
  const IDLE_MS = 400;
  let idleServer: ReturnType<typeof createServer>;
  let idleClient: FileToolsClient;

  beforeAll(async () => {
    idleServer = createServer({ maxMessageBytes: 8 * 1024 * 1024 });
    registerService(idleServer, Files, files, { logger, clientStreamIdleMs: IDLE_MS });
    idleClient = connect(await listen(idleServer, "127.0.0.1:0"));
  });

  afterAll(() => {
    idleClient.close();
    idleServer.forceShutdown();
  });

  it("fails a client stream that sends nothing for the idle bound, naming the flag", async () => {
    seen.uploadError = undefined;
    const stalled = new AbortController();
    async function* requests() {
      yield { event: { case: "header" as const, value: { workspace: "ws-13", path: "/stalled.bin" } } };
      await sleep(60_000, undefined, { signal: stalled.signal }).catch(() => {});
    }
    const error = await failure(idleClient.files.upload(requests()));
    stalled.abort();
    expect({ code: error.code, reason: error.reason }).toEqual({ code: Code.DEADLINE_EXCEEDED, reason: "DEADLINE_EXCEEDED" });
    expect(error.message).toContain("--client-stream-idle-ms");
    expect(seen.uploadError).toMatchObject({ reason: "DEADLINE_EXCEEDED" });
  });

  it("does not cut a client that keeps sending, however long the whole stream takes", async () => {
    async function* requests() {
      yield { event: { case: "header" as const, value: { workspace: "ws-14", path: "/steady.bin" } } };
      for (let i = 0; i < 20; i++) {
        await sleep(IDLE_MS / 8);
        yield { event: { case: "chunk" as const, value: { data: new Uint8Array(10) } } };
      }
    }
    expect(await idleClient.files.upload(requests())).toMatchObject({ path: "/steady.bin", size: 200n });
  });
});
