// Small calls over one Multiplex.Calls stream (proto/filetools/v1/multiplex.proto):
// a gRPC call opens an HTTP/2 stream of its own, which costs a small Read
// most of its time; a message on an open stream costs a tenth of that. The
// stream opens with the first call and ends after IDLE_MS without one (an open
// stream would keep the process alive). A daemon without the service answers
// UNIMPLEMENTED: its calls, and every later one, then go on streams of their own.
import { fromBinary } from "@bufbuild/protobuf";
import { BinaryReader, BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import * as grpc from "@grpc/grpc-js";
import { CallStartSchema, CallsRequestSchema, CallsResponseSchema, Multiplex } from "@filetools/proto/filetools/v1/multiplex_pb.js";
import { StatusSchema, type Status } from "@filetools/proto/google/rpc/status_pb.js";
import { FileToolsError } from "./errors.js";

/** Calls open at once on the stream (the daemon's limit); more go on streams of their own. */
const MAX_OPEN_CALLS = 64;
/**
 * Larger requests (a Write's content) go on streams of their own: the gain is
 * in small calls, and one request over the daemon's message limit would fail
 * the whole stream rather than the one call.
 */
const MAX_REQUEST_BYTES = 64 * 1024;
/** How long the stream stays open without a call. */
const IDLE_MS = 200;
/** The longest delay setTimeout takes (a longer one fires at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;
const PATH = `/${Multiplex.typeName}/${Multiplex.method.calls.name}`;

/** What the stream tells one call. */
export interface CallReceiver {
  message(bytes: Uint8Array): void;
  /** The call ended: OK when `error` is undefined. */
  end(error: FileToolsError | undefined): void;
  /** The daemon has no Multiplex service: the call must be made on a stream of its own (nothing of it ran). */
  fallBack(): void;
}

export interface SharedCallOptions {
  signal?: AbortSignal;
  /** Milliseconds since the epoch; undefined: none. */
  deadline?: number;
}

/** One Multiplex.Calls stream and the calls open on it. */
interface Line {
  stream: grpc.ClientDuplexStream<Buffer, Answer>;
  open: Map<bigint, CallReceiver>;
  /**
   * Calls given up here (cancelled, past their deadline) whose status has not
   * come yet: the daemon counts them against its 64 until it has sent it.
   */
  abandoned: Set<bigint>;
  /** The daemon has answered on it (so it has the service). */
  answered: boolean;
  /** After the idle half-close: cancels the stream if the daemon does not end it. */
  ending?: NodeJS.Timeout;
}

export class SharedStream {
  /** The stream new calls go on; undefined until the first call, and after it ended or went idle. */
  private line: Line | undefined;
  private nextId = 0n;
  private unsupported = false;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly channel: grpc.Client,
    private readonly metadata: () => grpc.Metadata,
  ) {}

  /** Whether a call with a request of `bytes` may go on the stream now. */
  takes(request: Uint8Array): boolean {
    const counted = this.line ? this.line.open.size + this.line.abandoned.size : 0;
    return !this.unsupported && counted < MAX_OPEN_CALLS && request.byteLength <= MAX_REQUEST_BYTES;
  }

  /** Starts `path` with the request's bytes; the answer goes to `receiver`. Returns what cancels the call (a no-op once it has ended). */
  start(path: string, request: Uint8Array, options: SharedCallOptions, receiver: CallReceiver): () => void {
    const { signal, deadline } = options;
    const remainingMs = deadline === undefined ? Infinity : Math.ceil(deadline - Date.now());
    if (signal?.aborted || remainingMs <= 0) {
      receiver.end(localError(signal?.aborted ? grpc.status.CANCELLED : grpc.status.DEADLINE_EXCEEDED));
      return () => {};
    }
    // A deadline further than a timer reaches (~24.8 days) is as good as none.
    const timeoutMs = remainingMs <= MAX_TIMER_MS ? remainingMs : 0;

    clearTimeout(this.idleTimer);
    const line = this.line ?? this.openLine();
    const id = ++this.nextId;
    // The call's own end (its status, a local cancel or deadline, the stream's end) lets go of its timer and listener once.
    let timer: NodeJS.Timeout | undefined;
    const giveUp = (code: grpc.status.CANCELLED | grpc.status.DEADLINE_EXCEEDED) => {
      if (!line.open.has(id)) return;
      line.stream.write(cancelFrame(id));
      line.abandoned.add(id);
      this.settle(line, id, localError(code));
    };
    const onAbort = () => giveUp(grpc.status.CANCELLED);
    const release = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    };
    line.open.set(id, {
      message: (bytes) => receiver.message(bytes),
      end: (error) => {
        release();
        receiver.end(error);
      },
      fallBack: () => {
        release();
        receiver.fallBack();
      },
    });
    signal?.addEventListener("abort", onAbort, { once: true });
    if (timeoutMs > 0) timer = setTimeout(() => giveUp(grpc.status.DEADLINE_EXCEEDED), timeoutMs);
    line.stream.write(startFrame(id, path, request, timeoutMs));
    return onAbort;
  }

  /** Cancels the stream and its open calls. */
  close(): void {
    clearTimeout(this.idleTimer);
    this.line?.stream.cancel();
  }

  private openLine(): Line {
    const stream = this.channel.makeBidiStreamRequest(PATH, (bytes: Buffer) => bytes, readResponse, this.metadata(), {});
    const line: Line = { stream, open: new Map(), abandoned: new Set(), answered: false };
    stream.on("data", (response: Answer) => {
      line.answered = true;
      this.receive(line, response);
    });
    // Every end comes as a status; 'error' repeats a failed one (and would throw without a listener).
    stream.on("error", () => {});
    stream.on("status", (status: grpc.StatusObject) => this.ended(line, status));
    this.line = line;
    return line;
  }

  private receive(line: Line, { id, message, status }: Answer): void {
    if (status) line.abandoned.delete(id);
    const receiver = line.open.get(id);
    if (!receiver) return; // given up here already
    if (message) receiver.message(message);
    else if (status) this.settle(line, id, status.code === 0 ? undefined : FileToolsError.fromRpcStatus(status));
  }

  private settle(line: Line, id: bigint, error: FileToolsError | undefined): void {
    const receiver = line.open.get(id);
    if (!receiver) return;
    line.open.delete(id);
    if (line.open.size === 0 && line === this.line) this.armIdle();
    receiver.end(error);
  }

  /**
   * Ends the stream IDLE_MS after its last call: a half-close, after which the
   * daemon ends it; cancelled outright when calls given up here are still
   * unanswered or the daemon has not ended it within IDLE_MS more (a stalled
   * daemon must not keep the stream, and with it the process, alive).
   */
  private armIdle(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      const line = this.line;
      if (!line || line.open.size > 0) return;
      this.line = undefined;
      if (line.abandoned.size > 0) return line.stream.cancel();
      line.stream.end();
      line.ending = setTimeout(() => line.stream.cancel(), IDLE_MS);
    }, IDLE_MS);
  }

  private ended(line: Line, status: grpc.StatusObject): void {
    clearTimeout(line.ending);
    if (this.line === line) {
      this.line = undefined;
      clearTimeout(this.idleTimer);
    }
    const receivers = [...line.open.values()];
    line.open.clear();
    if (status.code === grpc.status.UNIMPLEMENTED && !line.answered) {
      this.unsupported = true;
      for (const receiver of receivers) receiver.fallBack();
      return;
    }
    for (const receiver of receivers) receiver.end(streamEndError(status));
  }
}

// The frames are written and read by hand: protobuf-es's reflection cost a
// call more than the rest of this file (a profile of the MCP server's reads).

/** A CallsResponse: its id, and a message's bytes or the call's status. */
interface Answer {
  id: bigint;
  message?: Uint8Array;
  status?: Status;
}

function readResponse(bytes: Buffer): Answer {
  const reader = new BinaryReader(bytes);
  const answer: Answer = { id: 0n };
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === RESPONSE.id) answer.id = BigInt(reader.uint64());
    else if (field === RESPONSE.message) answer.message = reader.bytes();
    else if (field === RESPONSE.status) answer.status = fromBinary(StatusSchema, reader.bytes());
    else reader.skip(wireType);
  }
  return answer;
}

function startFrame(id: bigint, path: string, request: Uint8Array, timeoutMs: number): Buffer {
  const start = new BinaryWriter().tag(START.method, WireType.LengthDelimited).string(path.slice(1)).tag(START.request, WireType.LengthDelimited).bytes(request);
  if (timeoutMs > 0) start.tag(START.timeoutMs, WireType.Varint).uint32(timeoutMs);
  return frame(id, REQUEST.start, start.finish());
}

function cancelFrame(id: bigint): Buffer {
  return frame(id, REQUEST.cancel, new Uint8Array());
}

function frame(id: bigint, field: number, event: Uint8Array): Buffer {
  const bytes = new BinaryWriter().tag(REQUEST.id, WireType.Varint).uint64(id).tag(field, WireType.LengthDelimited).bytes(event).finish();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

const fieldNumbers = <K extends string>(schema: { field: Record<string, { number: number } | undefined> }, names: K[]) =>
  Object.fromEntries(names.map((name) => [name, schema.field[name]!.number])) as Record<K, number>;
const REQUEST = fieldNumbers(CallsRequestSchema, ["id", "start", "cancel"]);
const START = fieldNumbers(CallStartSchema, ["method", "request", "timeoutMs"]);
const RESPONSE = fieldNumbers(CallsResponseSchema, ["id", "message", "status"]);

/**
 * What a call still open learns when its stream ends: the daemon's own
 * refusal of the stream (a token, a malformed message) as it is, this
 * client's close() as CANCELLED, and anything else — the daemon going away,
 * the connection dropped (grpc-js may say INTERNAL: "Received RST_STREAM") —
 * as UNAVAILABLE: the call may or may not have run.
 */
function streamEndError(status: grpc.StatusObject): FileToolsError {
  const { code } = status;
  if (code === grpc.status.INVALID_ARGUMENT || code === grpc.status.UNAUTHENTICATED || code === grpc.status.CANCELLED || code === grpc.status.UNAVAILABLE) {
    return FileToolsError.fromStatus(status);
  }
  const why = code === grpc.status.OK ? "the daemon ended the stream of calls" : status.details;
  return new FileToolsError(grpc.status.UNAVAILABLE, `${why} before this call's answer`, "");
}

/** What grpc-js says of a call cancelled, or past its deadline, on the client's side. */
function localError(code: grpc.status.CANCELLED | grpc.status.DEADLINE_EXCEEDED): FileToolsError {
  return FileToolsError.fromStatus({ code, details: code === grpc.status.CANCELLED ? "Cancelled on client" : "Deadline exceeded", metadata: new grpc.Metadata() });
}
