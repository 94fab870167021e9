import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { connect, FileToolsError } from "../../clients/ts/src/client.js";
import { Files } from "@filetools/proto/filetools/v1/files_pb.js";
import { createLogger } from "../log.js";
import { InFlightCalls, createServer, listen, registerService, shutDown } from "./index.js";

const logger = createLogger("silent");
const cleanups: Array<() => void> = [];
afterEach(() => cleanups.splice(0).forEach((cleanup) => cleanup()));

describe("listen", () => {
  it("reports the actual port when asked for port 0", async () => {
    const server = createServer({ maxMessageBytes: 8 << 20 });
    cleanups.push(() => server.forceShutdown());
    expect(await listen(server, "127.0.0.1:0")).toMatch(/^127\.0\.0\.1:[1-9]\d*$/);
  });

  it("an error the listening socket reports once bound (a failed accept) is heard, not thrown", async () => {
    const server = createServer({ maxMessageBytes: 8 << 20 });
    cleanups.push(() => server.forceShutdown());
    const heard: string[] = [];
    await listen(server, "127.0.0.1:0", undefined, (error) => heard.push(error.message));
    // grpc-js's own listening server (a private field): what net.Server emits on an accept that fails.
    const [http2Server] = (server as unknown as { http2Servers: Map<NodeJS.EventEmitter, unknown> }).http2Servers.keys();
    expect(() => http2Server!.emit("error", Object.assign(new Error("accept EMFILE"), { code: "EMFILE" }))).not.toThrow();
    expect(heard).toEqual(["accept EMFILE"]);
  });

  it("serves on a unix socket only its owner can open", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "filetoolsd-sock-"));
    const server = createServer({ maxMessageBytes: 8 << 20 });
    registerService(server, Files, { stat: async (request) => ({ file: { path: request.path } }) }, { logger });
    const address = `unix://${dir}/d.sock`;
    expect(await listen(server, address)).toBe(address);
    const client = connect(address);
    cleanups.push(() => {
      client.close();
      server.forceShutdown();
      rmSync(dir, { recursive: true, force: true });
    });
    expect(statSync(`${dir}/d.sock`).mode & 0o077).toBe(0); // no access for group or others
    expect((await client.files.stat({ workspace: "w", path: "/x" })).file?.path).toBe("/x");
  });

  it("takes over the socket file of a daemon that died, not of one that runs", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "filetoolsd-sock-"));
    const socketPath = `${dir}/d.sock`;
    const other = spawn(process.execPath, ["-e", LISTEN_ON_ARGV1, socketPath]);
    await once(other.stdout, "data");
    const [first, second] = [createServer({ maxMessageBytes: 8 << 20 }), createServer({ maxMessageBytes: 8 << 20 })];
    cleanups.push(() => {
      other.kill("SIGKILL");
      first.forceShutdown();
      second.forceShutdown();
      rmSync(dir, { recursive: true, force: true });
    });
    await expect(listen(first, `unix://${socketPath}`)).rejects.toThrow(/EADDRINUSE/);
    other.kill("SIGKILL"); // dies without removing its socket file
    await once(other, "exit");
    expect(statSync(socketPath).isSocket()).toBe(true);
    expect(await listen(second, `unix://${socketPath}`)).toBe(`unix://${socketPath}`);
  });
});

/** A process that listens on the unix socket named by its first argument, then says so. */
const LISTEN_ON_ARGV1 = "require('node:net').createServer().listen(process.argv[1], () => console.log('up'))";

describe("shutDown", () => {
  it("lets calls finish within the grace period, then aborts their signals", async () => {
    const server = createServer({ maxMessageBytes: 8 << 20 });
    const inFlight = new InFlightCalls();
    let reason: unknown;
    registerService(
      server,
      Files,
      {
        async stat(request, ctx) {
          if (request.path === "/quick") return { file: { path: "/quick" } };
          await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
          reason = ctx.signal.reason;
          throw reason;
        },
      },
      { logger, inFlight },
    );
    const client = connect(await listen(server, "127.0.0.1:0"));
    cleanups.push(() => client.close());
    await client.files.stat({ workspace: "w", path: "/quick" }); // connected

    const stuck = client.files.stat({ workspace: "w", path: "/stuck" }).catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();
    await shutDown(server, 300, () => inFlight.abortAll(), inFlight);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(reason).toMatchObject({ reason: "CANCELLED", message: "the daemon is shutting down" });
    expect(await stuck).toBeInstanceOf(FileToolsError);
  });

  it("does not wait for idle client connections once no call is in flight", async () => {
    const server = createServer({ maxMessageBytes: 8 << 20 });
    const inFlight = new InFlightCalls();
    registerService(server, Files, { stat: async (request) => ({ file: { path: request.path } }) }, { logger, inFlight });
    const client = connect(await listen(server, "127.0.0.1:0"));
    cleanups.push(() => client.close());
    await client.files.stat({ workspace: "w", path: "/quick" }); // the connection stays open
    const graceMs = 20_000;
    const started = Date.now();
    await shutDown(server, graceMs, () => undefined, inFlight);
    expect(Date.now() - started).toBeLessThan(graceMs / 2);
  });
});
