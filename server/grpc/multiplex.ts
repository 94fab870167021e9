// Multiplex.Calls: many unary calls and Reads over one bidirectional stream
// (proto/filetools/v1/multiplex.proto says why and what). Each call runs
// through the same CallScope and handler as on a stream of its own; only the
// framing differs.
import { EventEmitter } from "node:events";
import { create, fromBinary, toBinary, type DescMethod, type DescService } from "@bufbuild/protobuf";
import type * as grpc from "@grpc/grpc-js";
import { Metadata, status as Code, type StatusObject } from "@grpc/grpc-js";
import { CallsRequestSchema, CallsResponseSchema, Multiplex, type CallStart, type CallsRequest } from "@filetools/proto/filetools/v1/multiplex_pb.js";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { StatusSchema } from "@filetools/proto/google/rpc/status_pb.js";
import { FileToolsError } from "../errors.js";
import { decodeRequest, handlerOf, streamOutcome, unaryOutcome, type MessageSink, type ServerStreamFn, type UnaryFn } from "./adapter.js";
import { CallScope, methodName, type AdapterOptions } from "./call.js";
import { statusOf } from "./status.js";

/** Server streams a Multiplex stream carries: those whose whole answer the daemon bounds (Read: --max-read-bytes). */
const CARRIED_STREAMS = new Set(["filetools.v1.Files/Read"]);
/**
 * Calls open at once on one stream, as many as HTTP/2 streams on one
 * connection (createServer). A call counts until its status is handed to the
 * stream's writer: from then on the client may see it and start another call
 * in its place (grpc-js's write callback can come after the client has the
 * status: on Node 22 it often does). What the writer holds that has not gone
 * out is bounded by PAUSE_READING_BYTES, past which no request is read.
 */
const MAX_OPEN_CALLS = 64;
/** What may wait in grpc-js to go out on one stream before a Read waits (as SendQueue allows one stream). */
const QUEUED_BYTES = 64 * 1024;
/**
 * Past this, the stream reads no more requests until its answers have gone
 * out: a client that starts calls and does not take their answers must not
 * pile them up in the daemon (HTTP/2 flow control then holds its requests).
 */
const PAUSE_READING_BYTES = 256 * 1024;

/** The longest delay setTimeout takes. */
const MAX_TIMER_MS = 2 ** 31 - 1;

interface Carried {
  method: DescMethod;
  handler: UnaryFn | ServerStreamFn;
}

/** Serves Multiplex.Calls for the unary methods and CARRIED_STREAMS of `services`. */
export function registerMultiplex(server: grpc.Server, services: Array<[DescService, object]>, options: AdapterOptions): void {
  const carried = new Map<string, Carried>();
  for (const [service, handlers] of services) {
    for (const method of service.methods) {
      if (method.methodKind === "unary" || CARRIED_STREAMS.has(methodName(method))) {
        carried.set(methodName(method), { method, handler: handlerOf(method, handlers) as Carried["handler"] });
      }
    }
  }
  const calls = Multiplex.method.calls;
  server.addService(
    {
      calls: {
        path: `/${methodName(calls)}`,
        originalName: calls.name,
        requestStream: true,
        responseStream: true,
        requestSerialize: (request: CallsRequest) => Buffer.from(toBinary(CallsRequestSchema, request)),
        requestDeserialize: (bytes: Buffer) => {
          try {
            return fromBinary(CallsRequestSchema, bytes);
          } catch {
            return undefined;
          }
        },
        responseSerialize: (bytes: Buffer) => bytes,
        responseDeserialize: (bytes: Buffer) => bytes,
      },
    },
    { calls: (stream: grpc.ServerDuplexStream<CallsRequest | undefined, Buffer>) => new CallsStream(stream, carried, options) },
  );
}

/** One Multiplex.Calls stream: its open calls by id, and the writer they share. */
class CallsStream implements MessageSink {
  private readonly open = new Map<bigint, CarriedCall>();
  /** Calls started whose status has not been handed to the writer yet. */
  private unsent = 0;
  private queuedBytes = 0;
  private waiting: Array<() => void> = [];
  private halfClosed = false;
  private ended = false;

  constructor(
    private readonly stream: grpc.ServerDuplexStream<CallsRequest | undefined, Buffer>,
    private readonly carried: Map<string, Carried>,
    private readonly options: AdapterOptions,
  ) {
    stream.on("data", (request: CallsRequest | undefined) => this.receive(request));
    stream.on("end", () => {
      this.halfClosed = true;
      this.endIfDone();
    });
    // The client cancelled the stream, or the connection went: every open call is cancelled.
    stream.once("cancelled", () => this.close());
    stream.once("close", () => this.close());
    stream.on("error", () => this.close());
  }

  get closed(): boolean {
    return this.ended;
  }

  /** Writes one response; resolves once what waits in grpc-js is within QUEUED_BYTES (a Read's backpressure). */
  send(bytes: Buffer): Promise<void> {
    if (this.ended) return Promise.resolve();
    this.queuedBytes += bytes.length;
    if (this.queuedBytes > PAUSE_READING_BYTES) this.stream.pause();
    this.stream.write(bytes, () => {
      this.queuedBytes -= bytes.length;
      if (this.queuedBytes > QUEUED_BYTES) return;
      for (const wake of this.waiting.splice(0)) wake();
      if (this.stream.isPaused()) this.stream.resume();
    });
    return this.queuedBytes <= QUEUED_BYTES ? Promise.resolve() : new Promise((resolve) => this.waiting.push(resolve));
  }

  private receive(request: CallsRequest | undefined): void {
    if (this.ended) return;
    if (request === undefined) return this.fail("a CallsRequest that does not decode");
    const { id, event } = request;
    switch (event.case) {
      case "start":
        if (this.open.has(id)) return this.fail(`call id ${id} is already open on this stream`);
        return this.start(id, event.value);
      case "cancel":
        this.open.get(id)?.cancel();
        return;
      default:
        return this.fail(`CallsRequest ${id} has neither a start nor a cancel`);
    }
  }

  private start(id: bigint, start: CallStart): void {
    const entry = this.carried.get(start.method);
    if (!entry) {
      return this.finish(id, statusOf(new FileToolsError("INVALID_ARGUMENT", `${start.method || "an unnamed method"} cannot be called on a Multiplex stream: only the unary RPCs and Files/Read; call it on its own`)));
    }
    if (this.options.inFlight?.closing) {
      // As a new HTTP/2 stream is refused then: UNAVAILABLE, and the client tries another daemon or later.
      return this.finish(id, { code: Code.UNAVAILABLE, details: "the daemon is shutting down", metadata: new Metadata() });
    }
    if (this.unsent >= MAX_OPEN_CALLS) {
      return this.finish(id, statusOf(new FileToolsError("QUOTA_EXCEEDED", `at most ${MAX_OPEN_CALLS} calls may be open on one Multiplex stream`)));
    }
    const call = new CarriedCall(this.stream.metadata, this.stream.getDeadline(), start.timeoutMs);
    this.open.set(id, call);
    this.unsent++;
    const scope = new CallScope(call, entry.method, this.options);
    const request = decodeRequest(entry.method, start.request, this.options);
    const ended = (status: StatusObject | undefined) => {
      call.dispose();
      this.open.delete(id);
      this.unsent--;
      this.finish(id, status);
    };
    if (entry.method.methodKind === "unary") {
      void unaryOutcome(scope, entry.method, entry.handler as UnaryFn, request, this.options).then(({ response, status }) => {
        if (response) void this.send(frame(id, { case: "message", value: response }));
        ended(status);
      });
    } else {
      const sink = new CallSink(this, id, call, scope.context.signal);
      void streamOutcome(scope, entry.method, entry.handler as ServerStreamFn, request, this.options, sink).then(ended);
    }
  }

  /** The call's status goes out (OK when undefined); the stream ends if the client is done and nothing is open. */
  private finish(id: bigint, status: StatusObject | undefined): void {
    void this.send(frame(id, { case: "status", value: rpcStatusOf(status) }));
    this.endIfDone();
  }

  private endIfDone(): void {
    if (this.halfClosed && this.open.size === 0 && !this.ended) {
      this.ended = true;
      this.stream.end();
    }
  }

  /** A client's bug: the whole stream fails with INVALID_ARGUMENT and its calls are cancelled. */
  private fail(message: string): void {
    this.stream.emit("error", statusOf(new FileToolsError("INVALID_ARGUMENT", message)));
    this.close();
  }

  private close(): void {
    if (this.ended && this.open.size === 0) return;
    this.ended = true;
    for (const call of this.open.values()) call.cancel();
    for (const wake of this.waiting.splice(0)) wake();
  }
}

/** Where one carried Read's messages go: its stream's shared writer, while the call and the stream are open. */
class CallSink implements MessageSink {
  /** Ends the wait for room on the stream: the call was cancelled or its deadline passed. */
  private wake: (() => void) | undefined;

  constructor(
    private readonly stream: CallsStream,
    private readonly id: bigint,
    private readonly call: CarriedCall,
    signal: AbortSignal,
  ) {
    signal.addEventListener("abort", () => this.wake?.(), { once: true });
  }

  get closed(): boolean {
    return this.call.cancelled || this.stream.closed;
  }

  /** Waits for room on the stream, but no longer than the call lives: a cancelled Read lets go of its file at once. */
  async send(message: Buffer): Promise<void> {
    const room = this.stream.send(frame(this.id, { case: "message", value: message }));
    await new Promise<void>((resolve) => {
      this.wake = resolve;
      void room.then(resolve);
      if (this.closed) resolve();
    });
    this.wake = undefined;
  }
}

/** A CallsResponse's wire bytes: its head written here, a message's bytes copied once after it. */
function frame(id: bigint, event: { case: "message" | "status"; value: Uint8Array }): Buffer {
  const head = new BinaryWriter()
    .tag(CallsResponseSchema.field.id!.number, WireType.Varint)
    .uint64(id)
    .tag(CallsResponseSchema.field[event.case]!.number, WireType.LengthDelimited)
    .uint32(event.value.byteLength);
  return Buffer.concat([head.finish(), event.value]);
}

/** The google.rpc.Status a call's trailers would carry, as bytes: grpc-status-details-bin when it has one. */
function rpcStatusOf(status: StatusObject | undefined): Uint8Array {
  const [details] = status?.metadata.get("grpc-status-details-bin") ?? [];
  if (details instanceof Buffer) return details;
  return status ? toBinary(StatusSchema, create(StatusSchema, { code: status.code, message: status.details })) : new Uint8Array();
}

/**
 * What CallScope needs of a call, for one carried on a Multiplex stream: the
 * stream's metadata, the nearer of the stream's and the call's deadlines, and
 * 'cancelled' when the client cancels it, the stream goes, or the deadline passes.
 */
class CarriedCall extends EventEmitter {
  cancelled = false;
  private readonly deadline: number;
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(
    readonly metadata: grpc.Metadata,
    streamDeadline: Date | number,
    timeoutMs: number,
  ) {
    super();
    const own = timeoutMs > 0 ? Date.now() + timeoutMs : Infinity;
    const shared = streamDeadline instanceof Date ? streamDeadline.getTime() : streamDeadline;
    this.deadline = Math.min(own, shared);
    // A deadline further than a timer reaches (~24.8 days; a longer delay would fire at once) is as good as none.
    const delay = Math.max(0, this.deadline - Date.now());
    if (delay <= MAX_TIMER_MS) this.timer = setTimeout(() => this.cancel(), delay);
  }

  getDeadline(): number {
    return this.deadline;
  }

  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.emit("cancelled");
  }

  dispose(): void {
    clearTimeout(this.timer);
  }
}
