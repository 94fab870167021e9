// The connection and the raw layer over the generated code: one method per
// RPC, promises for single responses, async iterables for streams, failures as
// FileToolsError. The conveniences per workspace are in workspace.ts.
import {
  create,
  fromBinary,
  toBinary,
  type DescMessage,
  type DescMethod,
  type DescService,
  type MessageInitShape,
  type MessageShape,
} from "@bufbuild/protobuf";
import type { GenService, GenServiceMethods } from "@bufbuild/protobuf/codegenv2";
import * as grpc from "@grpc/grpc-js";
import { FileToolsError, present } from "./errors.js";
import { Files } from "@filetools/proto/filetools/v1/files_pb.js";
import { Workspaces, type Workspace } from "@filetools/proto/filetools/v1/workspaces_pb.js";
import { Daemon } from "@filetools/proto/filetools/v1/daemon_pb.js";
import { Journal } from "@filetools/proto/filetools/v1/journal_pb.js";
import { SharedStream, type SharedCallOptions } from "./multiplex.js";
import { WorkspaceClient } from "./workspace.js";
import { withTraceContext } from "./trace-context.js";

export { FileToolsError, type ErrorReasonName } from "./errors.js";

export interface CallOptions {
  /** Aborting it cancels the call (the daemon stops the work). */
  signal?: AbortSignal;
  /** When the call must be done: a Date, or milliseconds from now. */
  deadline?: Date | number;
  /** Request headers, e.g. {authorization: "Bearer …"}. A call with its own headers goes on a stream of its own. */
  metadata?: grpc.Metadata | Record<string, string>;
  /**
   * For a Read: the caller takes each message as it comes and never waits
   * while holding the stream, so the call may share the connection's stream
   * of small calls (see ConnectOptions.shareStream). That stream gives one
   * call no backpressure: a Read that is consumed slowly must not set this.
   */
  eager?: boolean;
}

export interface ConnectOptions {
  /** Sent as `authorization: Bearer TOKEN` on every call (a daemon started with --tokens wants one). */
  token?: string;
  /**
   * TLS to the daemon: true trusts the system's roots; `ca` trusts the given
   * certificate(s) instead; `cert` and `key` add a client certificate for
   * mutual TLS. PEM text or bytes. Default: plain text (a loopback address or
   * a unix socket).
   */
  tls?: boolean | TlsOptions;
  /** grpc-js channel credentials, for anything `tls` does not cover; they win over `tls`. */
  credentials?: grpc.ChannelCredentials;
  /** grpc-js channel options; they override the defaults set here. */
  channelOptions?: grpc.ChannelOptions;
  /**
   * Unary calls and eager Reads share one Multiplex.Calls stream, opened with
   * the first and ended 200 ms after the last (one more message on an open
   * stream costs a fraction of a new HTTP/2 stream). Default true; false gives every call a stream of its own,
   * as do grpc-js interceptors in channelOptions (so that they see each call).
   */
  shareStream?: boolean;
}

export interface TlsOptions {
  /** PEM of the certificate authority that signed the daemon's certificate. Default: the system's roots. */
  ca?: string | Buffer;
  /** PEM of this client's certificate (mutual TLS; needs `key`). */
  cert?: string | Buffer;
  /** PEM of this client's private key (mutual TLS; needs `cert`). */
  key?: string | Buffer;
}

type MethodsOf<S> = S extends GenService<infer M extends GenServiceMethods> ? M : never;

type ClientMethod<M> = M extends { methodKind: "unary"; input: infer I extends DescMessage; output: infer O extends DescMessage }
  ? (request: MessageInitShape<I>, options?: CallOptions) => Promise<MessageShape<O>>
  : M extends { methodKind: "server_streaming"; input: infer I extends DescMessage; output: infer O extends DescMessage }
    ? (request: MessageInitShape<I>, options?: CallOptions) => AsyncIterable<MessageShape<O>>
    : M extends { methodKind: "client_streaming"; input: infer I extends DescMessage; output: infer O extends DescMessage }
      ? (
          requests: AsyncIterable<MessageInitShape<I>> | Iterable<MessageInitShape<I>>,
          options?: CallOptions,
        ) => Promise<MessageShape<O>>
      : never;

/** One method per RPC of a generated service, by localName (`files.read`, `workspaces.startRun`, …). */
export type ServiceClient<S> = { [K in keyof MethodsOf<S>]: ClientMethod<MethodsOf<S>[K]> };

/** The raw services: one method per RPC, taking and returning the generated messages. */
export interface RawClient {
  files: ServiceClient<typeof Files>;
  workspaces: ServiceClient<typeof Workspaces>;
  daemon: ServiceClient<typeof Daemon>;
  journal: ServiceClient<typeof Journal>;
}

export interface FileToolsClient extends RawClient {
  /** The calls on one workspace: readText, writeText, edit, search, runs, snapshots, … */
  workspace(id: string): WorkspaceClient;
  /** The workspaces the caller may use (with --tokens, those its token allows), managed and bound, sorted by id. */
  listWorkspaces(options?: CallOptions): Promise<Workspace[]>;
  /** Creates a managed workspace (ALREADY_EXISTS if it exists; StartRun creates one too). */
  createWorkspace(id: string, options?: CallOptions): Promise<Workspace>;
  /** Closes the connection; calls in flight fail with CANCELLED or UNAVAILABLE. */
  close(): void;
}

/** Connects to a daemon at "host:port" or "unix:///path" (the connection is made on the first call). */
export function connect(address: string, options: ConnectOptions = {}): FileToolsClient {
  const channel = new grpc.Client(address, options.credentials ?? channelCredentials(options.tls), {
    // Responses are chunked well below this; the grpc-js default of 4 MiB is the daemon's business, not ours.
    "grpc.max_receive_message_length": 64 * 1024 * 1024,
    // HTTP/2 flow-control window (grpc-js's default is 64 KiB, less than one Read chunk with its framing:
    // a long Read stalled on a WINDOW_UPDATE round trip per chunk). 16 MiB, as far as grpc-go's and
    // grpc-core's clients grow theirs; it bounds what a stalled stream holds here.
    "grpc-node.flow_control_window": 16 * 1024 * 1024,
    ...options.channelOptions,
  });
  // A header on every call rather than call credentials, which grpc-js refuses on a plain-text channel.
  const sentOnEveryCall: Record<string, string> = options.token ? { authorization: `Bearer ${options.token}` } : {};
  // Interceptors must see every call: with any, calls get streams of their own.
  const intercepted = options.channelOptions?.interceptors !== undefined || options.channelOptions?.interceptor_providers !== undefined;
  const shared = options.shareStream === false || intercepted ? undefined : new SharedStream(channel, () => callMetadata(sentOnEveryCall, undefined));
  const raw: RawClient = {
    files: serviceClient(channel, Files, sentOnEveryCall, shared),
    workspaces: serviceClient(channel, Workspaces, sentOnEveryCall, shared),
    daemon: serviceClient(channel, Daemon, sentOnEveryCall, shared),
    journal: serviceClient(channel, Journal, sentOnEveryCall, shared),
  };
  return {
    ...raw,
    workspace: (id) => new WorkspaceClient(raw, id),
    listWorkspaces: async (callOptions) => (await raw.workspaces.listWorkspaces({}, callOptions)).workspaces,
    createWorkspace: async (id, callOptions) =>
      present((await raw.workspaces.createWorkspace({ workspace: id }, callOptions)).workspace, "CreateWorkspace: workspace"),
    close: () => {
      shared?.close();
      channel.close();
    },
  };
}

function channelCredentials(tls: ConnectOptions["tls"]): grpc.ChannelCredentials {
  if (!tls) return grpc.credentials.createInsecure();
  const { ca, cert, key } = tls === true ? {} : tls;
  return grpc.credentials.createSsl(bufferOf(ca), bufferOf(key), bufferOf(cert));
}

function bufferOf(pem: string | Buffer | undefined): Buffer | null {
  return pem === undefined ? null : Buffer.from(pem);
}

function serviceClient<S extends DescService>(
  channel: grpc.Client,
  service: S,
  sentOnEveryCall: Record<string, string>,
  shared: SharedStream | undefined,
): ServiceClient<S> {
  const client: Record<string, unknown> = {};
  for (const method of service.methods) {
    client[method.localName] = clientMethod(channel, method, sentOnEveryCall, shared);
  }
  return client as ServiceClient<S>;
}

/** Server streams the daemon carries on a Multiplex stream (see multiplex.proto). */
const SHARED_STREAMS = new Set(["/filetools.v1.Files/Read"]);

/** The "serializer" of a request already encoded. */
const asEncoded = (bytes: Buffer) => bytes;

function clientMethod(channel: grpc.Client, method: DescMethod, sentOnEveryCall: Record<string, string>, shared: SharedStream | undefined) {
  const path = `/${method.parent.typeName}/${method.name}`;
  const serialize = (value: unknown) => encode(method.input, value);
  const deserialize = (bytes: Buffer) => fromBinary(method.output, bytes);
  const metadataOf = (options: CallOptions) => callMetadata(sentOnEveryCall, options.metadata);
  /**
   * The request's bytes, encoded once, when the call may go on the shared
   * stream; a request that does not encode fails on a stream of its own, as
   * grpc-js reports it (INTERNAL).
   */
  const encodedForSharing = (request: unknown, options: CallOptions): Buffer | undefined => {
    if (!shared || options.metadata !== undefined) return undefined;
    try {
      return serialize(request);
    } catch {
      return undefined;
    }
  };
  switch (method.methodKind) {
    case "unary":
      return (request: unknown, callOptions: CallOptions = {}) => {
        const options = withTraceContext(callOptions);
        const bytes = encodedForSharing(request, options);
        if (!bytes) return ownUnary(request, serialize, options);
        // Too large for the stream, or the stream is full: its own stream, with the bytes already encoded.
        const own = () => ownUnary(bytes, asEncoded, options);
        return shared!.takes(bytes) ? sharedUnary(shared!, path, bytes, options, (answer) => deserialize(Buffer.from(answer)), own) : own();
      };
    case "server_streaming":
      return (request: unknown, callOptions: CallOptions = {}) => {
        const options = withTraceContext(callOptions);
        const bytes = options.eager && SHARED_STREAMS.has(path) ? encodedForSharing(request, options) : undefined;
        if (!bytes) return ownServerStream(request, serialize, options);
        const own = () => ownServerStream(bytes, asEncoded, options);
        return shared!.takes(bytes) ? sharedServerStream(shared!, path, bytes, options, deserialize, own) : own();
      };
    case "client_streaming":
      return (requests: AsyncIterable<unknown> | Iterable<unknown>, options: CallOptions = {}) =>
        new Promise((resolve, reject) => {
          let finished = false;
          const call = channel.makeClientStreamRequest(
            path,
            serialize,
            deserialize,
            metadataOf(withTraceContext(options)),
            grpcOptionsOf(options),
            (error, response) => {
              finished = true;
              if (error) reject(FileToolsError.fromStatus(error));
              else resolve(response);
            },
          );
          cancelOnAbort(call, options.signal);
          writeAll(call, requests, () => finished).catch((error: unknown) => {
            // The requests' source failed: the call must not look complete to the daemon.
            call.cancel();
            reject(error);
          });
        });
    case "bidi_streaming":
      throw new Error(`${method.parent.typeName}.${method.name}: bidirectional streams are not supported`);
  }

  // `request` with the function that encodes it: the message and `serialize`, or its bytes and `asEncoded`.
  function ownUnary<R>(request: R, encodeRequest: (request: R) => Buffer, options: CallOptions) {
    return new Promise((resolve, reject) => {
      const call = channel.makeUnaryRequest(
        path,
        encodeRequest,
        deserialize,
        request,
        metadataOf(options),
        grpcOptionsOf(options),
        (error, response) => (error ? reject(FileToolsError.fromStatus(error)) : resolve(response)),
      );
      cancelOnAbort(call, options.signal);
    });
  }

  function ownServerStream<R>(request: R, encodeRequest: (request: R) => Buffer, options: CallOptions) {
    return readStream(
      () => channel.makeServerStreamRequest(path, encodeRequest, deserialize, request, metadataOf(options), grpcOptionsOf(options)),
      options.signal,
    );
  }
}

/** A unary call on the shared stream; `own` makes it on a stream of its own if the daemon has no Multiplex service. */
function sharedUnary<T>(shared: SharedStream, path: string, request: Uint8Array, options: CallOptions, decode: (bytes: Uint8Array) => T, own: () => Promise<unknown>) {
  return new Promise((resolve, reject) => {
    let response: Uint8Array | undefined;
    shared.start(path, request, sharedOptionsOf(options), {
      message: (bytes) => (response = bytes),
      end: (error) => {
        if (error) reject(error);
        else if (response === undefined) reject(new Error(`the daemon's answer to ${path.slice(1)} lacks its message`));
        else resolve(decode(response));
      },
      fallBack: () => own().then(resolve, reject),
    });
  });
}

/** A server stream on the shared stream, taken message by message as it comes; leaving the loop early cancels it. */
async function* sharedServerStream<T>(
  shared: SharedStream,
  path: string,
  request: Uint8Array,
  options: CallOptions,
  decode: (bytes: Buffer) => T,
  own: () => AsyncIterable<T>,
): AsyncGenerator<T> {
  const inbox = new Inbox<Uint8Array>();
  let fellBack = false;
  const cancel = shared.start(path, request, sharedOptionsOf(options), {
    message: (bytes) => inbox.push(bytes),
    end: (error) => inbox.end(error),
    fallBack: () => {
      fellBack = true;
      inbox.end(undefined);
    },
  });
  try {
    for await (const bytes of inbox) yield decode(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  } finally {
    cancel(); // a no-op once the call has ended
  }
  if (fellBack) yield* own();
}

/** Messages pushed by the shared stream, taken by one async iteration. */
class Inbox<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private done = false;
  private error: unknown;
  private wake: (() => void) | undefined;

  push(item: T): void {
    this.items.push(item);
    this.wake?.();
  }

  end(error: unknown): void {
    this.done = true;
    this.error = error;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for (;;) {
      const item = this.items.shift();
      if (item !== undefined) {
        yield item;
        continue;
      }
      if (this.done) {
        if (this.error) throw this.error;
        return;
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }
}

function sharedOptionsOf(options: CallOptions): SharedCallOptions {
  const { deadline } = options;
  return { signal: options.signal, deadline: deadline === undefined ? undefined : typeof deadline === "number" ? Date.now() + deadline : deadline.getTime() };
}

/** Starts the call when iteration starts; leaving the loop early cancels it. */
async function* readStream<T>(start: () => grpc.ClientReadableStream<T>, signal: AbortSignal | undefined): AsyncGenerator<T> {
  const call = start();
  cancelOnAbort(call, signal);
  try {
    for await (const message of call as AsyncIterable<T>) yield message;
  } catch (error) {
    throw isStatus(error) ? FileToolsError.fromStatus(error) : error;
  } finally {
    call.cancel(); // a no-op once the call has ended
  }
}

/** Writes every request with backpressure, then half-closes; stops early if the call has already ended. */
async function writeAll(
  call: grpc.ClientWritableStream<unknown>,
  requests: AsyncIterable<unknown> | Iterable<unknown>,
  finished: () => boolean,
): Promise<void> {
  for await (const request of requests) {
    if (finished()) return;
    if (!call.write(request) && !finished()) {
      await new Promise<void>((resolve) => {
        const done = () => {
          call.off("drain", done);
          call.off("status", done);
          resolve();
        };
        call.on("drain", done);
        call.on("status", done);
      });
    }
  }
  call.end();
}

/** Cancels `call` when `signal` aborts, and forgets the signal once the call has its status. */
function cancelOnAbort(call: grpc.Call, signal: AbortSignal | undefined): void {
  if (!signal) return;
  if (signal.aborted) {
    call.cancel();
    return;
  }
  const cancel = () => call.cancel();
  signal.addEventListener("abort", cancel, { once: true });
  call.on("status", () => signal.removeEventListener("abort", cancel));
}

/** The call's own headers, plus the connection's where the call does not set them. */
function callMetadata(sentOnEveryCall: Record<string, string>, own: CallOptions["metadata"]): grpc.Metadata {
  let metadata: grpc.Metadata;
  if (own instanceof grpc.Metadata) {
    metadata = own.clone();
  } else {
    metadata = new grpc.Metadata();
    for (const [key, value] of Object.entries(own ?? {})) metadata.set(key, value);
  }
  for (const [key, value] of Object.entries(sentOnEveryCall)) {
    if (metadata.get(key).length === 0) metadata.set(key, value);
  }
  return metadata;
}

function grpcOptionsOf(options: CallOptions): grpc.CallOptions {
  const { deadline } = options;
  if (deadline === undefined) return {};
  return { deadline: typeof deadline === "number" ? new Date(Date.now() + deadline) : deadline };
}

function isStatus(error: unknown): error is grpc.StatusObject {
  return typeof error === "object" && error !== null && "code" in error && "details" in error && "metadata" in error;
}

/** A message or init object → wire bytes, as the Buffer grpc-js needs. */
function encode(schema: DescMessage, value: unknown): Buffer {
  const bytes = toBinary(schema, create(schema, value as never));
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
