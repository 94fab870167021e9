// protobuf-es service → grpc-js service. Requests are decoded by grpc-js with
// fromBinary; responses are encoded here, inside the handler's try, so that
// even an encoding failure goes through the one error mapping.
import { setTimeout as sleep } from "node:timers/promises";
import { create, fromBinary, toBinary, type DescMessage, type DescMethod, type DescService, type Message } from "@bufbuild/protobuf";
import type * as grpc from "@grpc/grpc-js";
import type { StatusObject } from "@grpc/grpc-js";
import { FileToolsError } from "../errors.js";
import { within } from "../tracing/tracing.js";
import { CallScope, methodName, type AdapterOptions } from "./call.js";
import { EncodedMessage, type CallContext, type ServiceHandlers } from "./handlers.js";

/** How long a client stream's end waits for a cancellation that may follow it (see requestsOf). */
const CANCEL_SETTLE_MS = 25;
/** What of a server stream may wait in grpc-js behind the message being sent (see SendQueue): one Read chunk, a few small messages. */
const QUEUED_BYTES = 64 * 1024;
const QUEUED_MESSAGES = 4;

/** Serves `service` on `server` with `handlers`; methods without one answer UNIMPLEMENTED / NOT_IMPLEMENTED. */
export function registerService<S extends DescService>(
  server: grpc.Server,
  service: S,
  handlers: ServiceHandlers<S>,
  options: AdapterOptions,
): void {
  const definition: Record<string, grpc.MethodDefinition<Message, Buffer>> = {};
  const implementation: grpc.UntypedServiceImplementation = {};
  for (const method of service.methods) {
    const handler = handlerOf(method, handlers);
    definition[method.localName] = methodDefinition(method, options);
    implementation[method.localName] = serve(method, handler, options);
  }
  server.addService(definition, implementation);
}

// At run time every handler takes (request or requests, ctx) and returns a
// promise or an async iterable; the kind of the method says which.
type AnyHandler = (input: never, ctx: CallContext) => unknown;

/** `method`'s handler in `handlers`, or one that answers UNIMPLEMENTED / NOT_IMPLEMENTED. */
export function handlerOf(method: DescMethod, handlers: object): AnyHandler {
  return (handlers as Record<string, AnyHandler | undefined>)[method.localName] ?? notImplemented(method);
}

function notImplemented(method: DescMethod): AnyHandler {
  return () => {
    throw new FileToolsError("NOT_IMPLEMENTED", `${method.parent.name}.${method.name} is not implemented yet`);
  };
}

// A server uses only requestDeserialize and responseSerialize; responses reach
// it already encoded (see encode).
function methodDefinition(method: DescMethod, options: AdapterOptions): grpc.MethodDefinition<Message, Buffer> {
  const name = methodName(method);
  const streamsIn = method.methodKind === "client_streaming" || method.methodKind === "bidi_streaming";
  const streamsOut = method.methodKind === "server_streaming" || method.methodKind === "bidi_streaming";
  return {
    path: `/${name}`,
    originalName: method.name,
    requestStream: streamsIn,
    responseStream: streamsOut,
    requestSerialize: (request) => encode(method.input, request),
    // grpc-js answers a request it cannot decode with INTERNAL; the marker lets the handler's scope say INVALID_ARGUMENT.
    requestDeserialize: (bytes) => decodeRequest(method, bytes, options),
    responseSerialize: (bytes) => bytes,
    responseDeserialize: (bytes) => bytes,
  };
}

/**
 * A request's bytes → its message, or a marker that fails the call with
 * INVALID_ARGUMENT once its scope runs (grpc-js would answer a throw here with INTERNAL).
 */
export function decodeRequest(method: DescMethod, bytes: Uint8Array, options: AdapterOptions): Message {
  options.metrics?.bytes(methodName(method), "in", bytes.length);
  try {
    return fromBinary(method.input, bytes);
  } catch (error) {
    return new Undecodable(method.input, error) as unknown as Message;
  }
}

/** A request message that does not decode as its type. */
class Undecodable {
  constructor(
    private readonly schema: DescMessage,
    private readonly cause: unknown,
  ) {}

  fail(): never {
    const why = this.cause instanceof Error ? `: ${this.cause.message}` : "";
    throw new FileToolsError("INVALID_ARGUMENT", `the request is not a valid ${this.schema.typeName}${why}`);
  }
}

/** The request, or INVALID_ARGUMENT for one that did not decode. */
function decoded(request: Message): Message {
  if (request instanceof Undecodable) request.fail();
  return request;
}

function serve(method: DescMethod, handler: AnyHandler, options: AdapterOptions): grpc.UntypedHandleCall {
  switch (method.methodKind) {
    case "unary":
      return serveUnary(method, handler as UnaryFn, options);
    case "server_streaming":
      return serveServerStream(method, handler as ServerStreamFn, options);
    case "client_streaming":
      return serveClientStream(method, handler as ClientStreamFn, options);
    case "bidi_streaming":
      throw new Error(`${method.parent.typeName}.${method.name}: bidirectional streams are not supported`);
  }
}

export type UnaryFn = (request: Message, ctx: CallContext) => Promise<unknown>;
export type ServerStreamFn = (request: Message, ctx: CallContext) => AsyncIterable<unknown>;
type ClientStreamFn = (requests: AsyncIterable<Message>, ctx: CallContext) => Promise<unknown>;

/** How a call ended: its encoded response, or the status to send. */
export type UnaryOutcome = { response: Buffer; status?: undefined } | { response?: undefined; status: StatusObject };

/** Where a server stream's messages go, with backpressure: a grpc-js stream's SendQueue, or a Multiplex stream. */
export interface MessageSink {
  /** The receiver is gone: nothing more goes out. */
  readonly closed: boolean;
  send(message: Buffer): Promise<void>;
}

/** A unary call, whatever carries it (its own HTTP/2 stream or a Multiplex stream); runs inside the call's trace context. */
export function unaryOutcome(scope: CallScope, method: DescMethod, handler: UnaryFn, request: Message, options: AdapterOptions): Promise<UnaryOutcome> {
  return within(scope.traceContext, async (): Promise<UnaryOutcome> => {
    try {
      scope.authenticate();
      const admitted = decoded(request);
      scope.admitWorkspace(admitted);
      const response = encodeFor(method, options, scope)(await handler(admitted, scope.context));
      const status = scope.succeed();
      return status ? { status } : { response };
    } catch (error) {
      return { status: scope.fail(error) };
    }
  });
}

/**
 * A server stream, whatever carries it: its messages go to `sink`; resolves
 * to the status to end with (undefined: OK). Runs inside the call's trace context.
 */
export function streamOutcome(
  scope: CallScope,
  method: DescMethod,
  handler: ServerStreamFn,
  request: Message,
  options: AdapterOptions,
  sink: MessageSink,
): Promise<StatusObject | undefined> {
  return within(scope.traceContext, async () => {
    try {
      scope.authenticate();
      const admitted = decoded(request);
      scope.admitWorkspace(admitted);
      const encodeResponse = encodeFor(method, options, scope);
      for await (const response of handler(admitted, scope.context)) {
        // Leaving the loop calls the generator's return(): its finally blocks run.
        if (sink.closed) break;
        await sink.send(encodeResponse(response));
      }
      return scope.succeed();
    } catch (error) {
      return scope.fail(error);
    }
  });
}

function serveUnary(method: DescMethod, handler: UnaryFn, options: AdapterOptions): grpc.handleUnaryCall<Message, Buffer> {
  return (call, callback) => {
    const scope = new CallScope(call, method, options);
    void unaryOutcome(scope, method, handler, call.request, options).then(({ response, status }) =>
      status ? callback(status) : callback(null, response),
    );
  };
}

function serveServerStream(
  method: DescMethod,
  handler: ServerStreamFn,
  options: AdapterOptions,
): grpc.handleServerStreamingCall<Message, Buffer> {
  return (call) => {
    const scope = new CallScope(call, method, options);
    const queue = new SendQueue(call, scope.context.signal);
    void streamOutcome(scope, method, handler, call.request, options, queue).then((status) => {
      if (status) call.emit("error", status);
      else call.end();
    });
  };
}

function serveClientStream(
  method: DescMethod,
  handler: ClientStreamFn,
  options: AdapterOptions,
): grpc.handleClientStreamingCall<Message, Buffer> {
  return (call, callback) => {
    const scope = new CallScope(call, method, options);
    void within(scope.traceContext, async () => {
      try {
        scope.authenticate();
        const response = encodeFor(method, options, scope)(await handler(requestsOf(call, scope, options.clientStreamIdleMs), scope.context));
        const status = scope.succeed();
        if (status) callback(status);
        else callback(null, response);
      } catch (error) {
        callback(scope.fail(error));
      }
    });
  };
}

/**
 * The client's messages, the first one admitted (its header names the
 * workspace). If the client cancels, iterating throws the abort reason rather
 * than ending: a cut-off upload must not look complete. A client that sends
 * nothing for `idleMs` fails the call (DEADLINE_EXCEEDED): a stalled or
 * trickling client must not hold a call, and what it holds, forever.
 */
async function* requestsOf(call: grpc.ServerReadableStream<Message, Buffer>, scope: CallScope, idleMs: number | undefined): AsyncGenerator<Message> {
  const { signal } = scope.context;
  const messages = (call as AsyncIterable<Message>)[Symbol.asyncIterator]();
  let first = true;
  try {
    for (;;) {
      const next = await withinIdle(messages.next(), idleMs);
      if (next.done) break;
      const request = decoded(next.value);
      if (first) scope.admitWorkspace(request);
      first = false;
      yield request;
    }
  } catch (error) {
    throw signal.aborted ? signal.reason : error;
  } finally {
    // Ended early (failed, idle, or the handler stopped reading): the stream is destroyed, its buffers freed.
    void messages.return?.();
  }
  // A half-close does not yet prove the client sent everything: a grpc-js
  // client that cancels sends END_STREAM and then RST_STREAM (Node's
  // Http2Stream.close ends the writable side first). Give that RST a moment
  // to arrive, so that a cancelled upload fails instead of looking complete.
  await sleep(CANCEL_SETTLE_MS, undefined, { signal }).catch(() => {});
  if (signal.aborted) throw signal.reason;
}

/** `next`, unless `idleMs` passes first (DEADLINE_EXCEEDED naming the flag). */
function withinIdle<T>(next: Promise<T>, idleMs: number | undefined): Promise<T> {
  if (idleMs === undefined) return next;
  let timer: NodeJS.Timeout | undefined;
  const idle = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new FileToolsError("DEADLINE_EXCEEDED", `the client sent nothing for ${idleMs} ms (the daemon's --client-stream-idle-ms)`)),
      idleMs,
    );
  });
  return Promise.race([next, idle]).finally(() => clearTimeout(timer));
}

/**
 * Writes a server stream's messages, with at most QUEUED_MESSAGES or
 * QUEUED_BYTES waiting in grpc-js behind the one being sent: backpressure
 * enough, and a long stream's buffers die young (with grpc-js's own
 * 16-message queue, queued 64 KiB Read chunks often outlived V8's young
 * generation and cost a full collection each few megabytes, see
 * test/bench/README.md). A short stream (a small Read: header, chunk,
 * trailer) goes out whole in one turn of the event loop.
 */
class SendQueue implements MessageSink {
  /** Written, in order; the first is the one being sent. */
  private readonly pending: { bytes: number; sent: Promise<void>; settle: () => void }[] = [];
  private pendingBytes = 0;
  private ended = false;

  constructor(
    private readonly call: grpc.ServerWritableStream<Message, Buffer>,
    signal: AbortSignal,
  ) {
    // Once the stream is closed or cancelled, grpc-js calls no more write callbacks: waiting ends here.
    const end = () => {
      this.ended = true;
      for (const message of this.pending) message.settle();
    };
    call.once("close", end);
    signal.addEventListener("abort", end, { once: true });
    if (signal.aborted) end();
  }

  /** The stream was closed or cancelled: nothing more goes out. */
  get closed(): boolean {
    return this.ended;
  }

  /** Writes `message`; resolves when what waits behind the message being sent is within bounds. */
  async send(message: Buffer): Promise<void> {
    if (this.ended) return;
    let settle!: () => void;
    const sent = new Promise<void>((resolve) => (settle = resolve));
    this.pending.push({ bytes: message.length, sent, settle });
    this.pendingBytes += message.length;
    this.call.write(message, settle);
    while (this.pending.length > QUEUED_MESSAGES + 1 || (this.pending.length > 1 && this.pendingBytes - this.pending[0]!.bytes > QUEUED_BYTES)) {
      // Awaited while still in `pending`, so that the stream's end settles it too: taken out first, a
      // message whose write callback never came (the stream closed under it) held its Read forever.
      const oldest = this.pending[0]!;
      await oldest.sent;
      if (this.ended) return;
      this.pending.shift();
      this.pendingBytes -= oldest.bytes;
    }
  }
}

/** encode for `method`'s responses, counting their bytes for the metrics and the call's span. */
function encodeFor(method: DescMethod, options: AdapterOptions, scope: CallScope): (value: unknown) => Buffer {
  const name = methodName(method);
  return (value) => {
    const bytes = encode(method.output, value);
    options.metrics?.bytes(name, "out", bytes.length);
    scope.sent(bytes.length);
    return bytes;
  };
}

/** A message or init object → wire bytes, as the Buffer grpc-js needs (it calls .copy()). */
function encode(schema: DescMessage, value: unknown): Buffer {
  const bytes = value instanceof EncodedMessage ? value.bytes : toBinary(schema, create(schema, value as never));
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
