// The grpc-js server: hardening options, binding (plain text, TLS or mutual
// TLS), and graceful shutdown.
import type { InFlightCalls } from "./call.js";
import { lstat, unlink } from "node:fs/promises";
import { EventEmitter } from "node:events";
import { connect } from "node:net";
import { Server, ServerCredentials, ServerInterceptingCall, type ServerInterceptor } from "@grpc/grpc-js";
import type { TlsFiles } from "../config.js";


/**
 * Passes every call through as it is; its point is grpc-js's listener wrapper
 * that comes with any interceptor, which drops a request's end once the call
 * is cancelled. Without one, a client that sends a request and resets the
 * stream at once (a cancellation storm) could have its reset handled first
 * and its request's end after it: the handler then started on a call that
 * grpc-js had already reported cancelled, to nobody, and a Read waited for
 * its first message to go out, holding its file, forever (97 of 1,154
 * reads in one storm of 3,000).
 */
const dropEventsAfterCancel: ServerInterceptor = (_method, call) => new ServerInterceptingCall(call);

/** A server with explicit limits (see notes/security.md, "gRPC server hardening"). */
export function createServer(limits: { maxMessageBytes: number }): Server {
  return new Server({
    interceptors: [dropEventsAfterCancel],
    // grpc-js checks both limits; without an explicit send limit a huge response would go out.
    "grpc.max_receive_message_length": limits.maxMessageBytes,
    "grpc.max_send_message_length": limits.maxMessageBytes,
    // Node checks this limit against the streams it has not yet freed, not those open: on Node 22 a stream that
    // ended (or was reset) while its connection's socket was backed up stays counted until it is garbage
    // collected, and the next call's stream is refused (ENHANCE_YOUR_CALM → RESOURCE_EXHAUSTED) though the client,
    // counting it closed, kept within the limit. At 128 a client with 128 calls open was refused 64 of them
    // (test/e2e/multiplex.test.ts); 1024 leaves that room. What each stream may queue is bounded (below).
    "grpc.max_concurrent_streams": 1024,
    // No channelz service is served: its bookkeeping cost ~10 % of a small Read's CPU.
    "grpc.enable_channelz": 0,
    // No cap on a connection's HTTP/2 session memory. Node counts the data
    // queued for a stream that the client reset (RST_STREAM CANCEL) against
    // the session until the session ends, so with a cap a few hundred
    // cancelled Downloads leave the connection refusing every new stream
    // (ENHANCE_YOUR_CALM → RESOURCE_EXHAUSTED). What a stream may queue is
    // bounded by us instead (SendQueue: one message and 64 KiB behind it) and
    // the streams per connection by max_concurrent_streams.
    "grpc-node.max_session_memory": Number.MAX_SAFE_INTEGER,
    "grpc.keepalive_time_ms": 60_000,
    "grpc.keepalive_timeout_ms": 20_000,
    "grpc.max_connection_idle_ms": 600_000,
    // No max_connection_age: it would cut long streams (exports of big snapshots) on a timer.
  });
}

/** TLS with the daemon's certificate; with a client CA, clients must present a certificate it signed. */
export function credentialsOf(tls: TlsFiles | undefined): ServerCredentials {
  if (!tls) return ServerCredentials.createInsecure();
  return ServerCredentials.createSsl(tls.clientCa ?? null, [{ private_key: tls.key, cert_chain: tls.cert }], tls.clientCa !== undefined);
}

/**
 * Binds `address` ("host:port" or "unix:///path") and returns where the server
 * actually listens: the real port when 0 was asked for.
 */
export async function listen(server: Server, address: string, credentials = ServerCredentials.createInsecure(), onListenerError: (error: Error) => void = () => undefined): Promise<string> {
  const isUnix = address.startsWith("unix:");
  if (isUnix) await removeStaleSocket(address.slice("unix://".length));
  // A socket created under umask 077 is usable by its owner only (no chmod race after bind).
  const previousUmask = isUnix ? process.umask(0o077) : undefined;
  try {
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(address, credentials, (error, boundPort) =>
        error ? reject(error) : resolve(boundPort),
      ),
    );
    hearListenerErrors(server, onListenerError);
    return isUnix ? address : `${address.slice(0, address.lastIndexOf(":"))}:${port}`;
  } finally {
    if (previousUmask !== undefined) process.umask(previousUmask);
  }
}

/**
 * grpc-js removes its own 'error' listener from each listening HTTP/2 server
 * once it is bound, so an error the server emits later (net.Server emits a
 * failed accept) would have no listener and end the process. Its servers are
 * a private map of grpc-js 1.14 (pinned); if that changes, nothing is added.
 */
function hearListenerErrors(server: Server, onError: (error: Error) => void): void {
  const listening = (server as unknown as { http2Servers?: unknown }).http2Servers;
  if (!(listening instanceof Map)) return;
  for (const http2Server of listening.keys()) {
    if (http2Server instanceof EventEmitter && http2Server.listenerCount("error") === 0) http2Server.on("error", onError);
  }
}

/** A socket file left by a daemon that died would make bind fail; one that still answers is left alone. */
async function removeStaleSocket(socketPath: string): Promise<void> {
  const stat = await lstat(socketPath).catch(() => undefined);
  if (!stat?.isSocket()) return;
  const answers = await new Promise<boolean>((resolve) => {
    const probe = connect(socketPath)
      .once("connect", () => {
        probe.destroy();
        resolve(true);
      })
      .once("error", () => resolve(false));
  });
  if (!answers) await unlink(socketPath);
}

/** Time for the last statuses to reach their clients once no call is in flight. */
const FLUSH_MS = 100;

/**
 * Stops accepting calls and waits up to `graceMs` for those in flight; past
 * that, `abortCalls()` aborts their signals and the connections are closed.
 * Once no call is in flight, idle client connections are closed too: a
 * client that keeps its connection open must not hold the daemon for the
 * whole grace period.
 */
export async function shutDown(server: Server, graceMs: number, abortCalls: () => void, inFlight: InFlightCalls): Promise<void> {
  inFlight.abortEndless();
  let timer: NodeJS.Timeout | undefined;
  const drained = new Promise<"drained">((resolve) => server.tryShutdown(() => resolve("drained")));
  const idle = inFlight.none().then(() => new Promise<"idle">((resolve) => setTimeout(resolve, FLUSH_MS, "idle")));
  const graceOver = new Promise<"grace over">((resolve) => {
    timer = setTimeout(resolve, graceMs, "grace over");
  });
  const outcome = await Promise.race([drained, idle, graceOver]);
  if (outcome === "grace over") abortCalls();
  if (outcome !== "drained") server.forceShutdown();
  clearTimeout(timer);
}
