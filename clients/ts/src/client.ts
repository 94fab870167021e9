// A small typed client over the generated code: one method per RPC, promises
// for single responses, async iterables for streams, and errors carrying the
// gRPC code and the daemon's reason (ErrorInfo from grpc-status-details-bin).
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
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import * as grpc from "@grpc/grpc-js";
import type { ErrorReason } from "./gen/filetools/v1/common_pb.js";
import { Files } from "./gen/filetools/v1/files_pb.js";
import { Workspaces } from "./gen/filetools/v1/workspaces_pb.js";
import { ErrorInfoSchema } from "./gen/google/rpc/error_details_pb.js";
import { StatusSchema } from "./gen/google/rpc/status_pb.js";

export interface CallOptions {
  /** Aborting it cancels the call (the daemon stops the work). */
  signal?: AbortSignal;
  /** When the call must be done: a Date, or milliseconds from now. */
  deadline?: Date | number;
  /** Request headers, e.g. {authorization: "Bearer …"}. */
  metadata?: grpc.Metadata | Record<string, string>;
}

export interface ConnectOptions {
  /** Default: plain text (the daemon listens on loopback or a unix socket). */
  credentials?: grpc.ChannelCredentials;
  /** grpc-js channel options; they override the defaults set here. */
  channelOptions?: grpc.ChannelOptions;
}

/** A reason the daemon sends (ErrorReason without its prefix), e.g. "PATH_ESCAPES_WORKSPACE". */
export type ErrorReasonName = Exclude<keyof typeof ErrorReason, "UNSPECIFIED">;

/** A failed call: the gRPC status plus the daemon's ErrorInfo. */
export class FileToolsError extends Error {
  override readonly name = "FileToolsError";
  /** The status code's name, e.g. "NOT_FOUND". */
  readonly codeName: string;

  constructor(
    /** gRPC status code, e.g. 5 (grpc.status.NOT_FOUND). */
    readonly code: grpc.status,
    message: string,
    /**
     * ErrorInfo.reason. When the daemon sent none (the call failed before
     * reaching it), CANCELLED and DEADLINE_EXCEEDED have the reason of that
     * name, any other code "".
     */
    readonly reason: ErrorReasonName | (string & {}),
    /** ErrorInfo.metadata, e.g. {current_version: "…"} for CONTENT_CHANGED. */
    readonly metadata: Record<string, string> = {},
  ) {
    super(message);
    this.codeName = grpc.status[code] ?? String(code);
  }

  /** The error for a grpc-js status (a ServiceError is one). */
  static fromStatus(status: Pick<grpc.StatusObject, "code" | "details" | "metadata">): FileToolsError {
    const info = errorInfoOf(status.metadata);
    const reason =
      info?.reason ??
      (status.code === grpc.status.CANCELLED || status.code === grpc.status.DEADLINE_EXCEEDED ? grpc.status[status.code] : "");
    return new FileToolsError(status.code, status.details, reason, info?.metadata ?? {});
  }
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

export interface FileToolsClient {
  files: ServiceClient<typeof Files>;
  workspaces: ServiceClient<typeof Workspaces>;
  /** Closes the connection; calls in flight fail with CANCELLED or UNAVAILABLE. */
  close(): void;
}

/** Connects to a daemon at "host:port" or "unix:///path" (the connection is made on the first call). */
export function connect(address: string, options: ConnectOptions = {}): FileToolsClient {
  const channel = new grpc.Client(address, options.credentials ?? grpc.credentials.createInsecure(), {
    // Responses are chunked well below this; the grpc-js default of 4 MiB is the daemon's business, not ours.
    "grpc.max_receive_message_length": 64 * 1024 * 1024,
    ...options.channelOptions,
  });
  return {
    files: serviceClient(channel, Files),
    workspaces: serviceClient(channel, Workspaces),
    close: () => channel.close(),
  };
}

function serviceClient<S extends DescService>(channel: grpc.Client, service: S): ServiceClient<S> {
  const client: Record<string, unknown> = {};
  for (const method of service.methods) {
    client[method.localName] = clientMethod(channel, method);
  }
  return client as ServiceClient<S>;
}

function clientMethod(channel: grpc.Client, method: DescMethod) {
  const path = `/${method.parent.typeName}/${method.name}`;
  const serialize = (value: unknown) => encode(method.input, value);
  const deserialize = (bytes: Buffer) => fromBinary(method.output, bytes);
  switch (method.methodKind) {
    case "unary":
      return (request: unknown, options: CallOptions = {}) =>
        new Promise((resolve, reject) => {
          const call = channel.makeUnaryRequest(
            path,
            serialize,
            deserialize,
            request,
            metadataOf(options),
            grpcOptionsOf(options),
            (error, response) => (error ? reject(FileToolsError.fromStatus(error)) : resolve(response)),
          );
          cancelOnAbort(call, options.signal);
        });
    case "server_streaming":
      return (request: unknown, options: CallOptions = {}) =>
        readStream(() =>
          channel.makeServerStreamRequest(path, serialize, deserialize, request, metadataOf(options), grpcOptionsOf(options)),
        options.signal,
        );
    case "client_streaming":
      return (requests: AsyncIterable<unknown> | Iterable<unknown>, options: CallOptions = {}) =>
        new Promise((resolve, reject) => {
          let finished = false;
          const call = channel.makeClientStreamRequest(
            path,
            serialize,
            deserialize,
            metadataOf(options),
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

function metadataOf(options: CallOptions): grpc.Metadata {
  if (options.metadata instanceof grpc.Metadata) return options.metadata;
  const metadata = new grpc.Metadata();
  for (const [key, value] of Object.entries(options.metadata ?? {})) metadata.set(key, value);
  return metadata;
}

function grpcOptionsOf(options: CallOptions): grpc.CallOptions {
  const { deadline } = options;
  if (deadline === undefined) return {};
  return { deadline: typeof deadline === "number" ? new Date(Date.now() + deadline) : deadline };
}

function errorInfoOf(metadata: grpc.Metadata | undefined) {
  const [details] = metadata?.get("grpc-status-details-bin") ?? [];
  if (!(details instanceof Buffer)) return undefined;
  try {
    for (const detail of fromBinary(StatusSchema, details).details) {
      const info = anyUnpack(detail, ErrorInfoSchema);
      if (info) return info;
    }
  } catch {
    // Undecodable details: the code and message still stand.
  }
  return undefined;
}

function isStatus(error: unknown): error is grpc.StatusObject {
  return typeof error === "object" && error !== null && "code" in error && "details" in error && "metadata" in error;
}

/** A message or init object → wire bytes, as the Buffer grpc-js needs. */
function encode(schema: DescMessage, value: unknown): Buffer {
  const bytes = toBinary(schema, create(schema, value as never));
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
