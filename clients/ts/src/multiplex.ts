// Small calls over one Multiplex.Calls stream (proto/filetools/v1/multiplex.proto):
// a gRPC call opens an HTTP/2 stream of its own, which costs a small Read
// most of its time; a message on an open stream costs a tenth of that. The
// stream opens with the first call and ends after IDLE_MS without one (an open
// stream would keep the process alive). A daemon without the service answers
// UNIMPLEMENTED: its calls, and every later one, then go on streams of their own.
import { create, fromBinary, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { CallsRequestSchema, CallsResponseSchema, Multiplex, type CallsResponse } from "@filetools/proto/filetools/v1/multiplex_pb.js";
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
  stream: grpc.ClientDuplexStream<Buffer, CallsResponse>;
  open: Map<bigint, CallReceiver>;
  /** The daemon has answered on it (so it has the service). */
  answered: boolean;
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
    return !this.unsupported && (this.line?.open.size ?? 0) < MAX_OPEN_CALLS && request.byteLength <= MAX_REQUEST_BYTES;
  }

  /** Starts `path` with the request's bytes; the answer goes to `receiver`. */
  start(path: string, request: Uint8Array, options: SharedCallOptions, receiver: CallReceiver): void {
    const { signal, deadline } = options;
    if (signal?.aborted) return receiver.end(localError(grpc.status.CANCELLED));
    const remainingMs = deadline === undefined ? Infinity : Math.ceil(deadline - Date.now());
    if (remainingMs <= 0) return receiver.end(localError(grpc.status.DEADLINE_EXCEEDED));
    // A deadline further than a timer reaches (~24.8 days) is as good as none.
    const timeoutMs = remainingMs <= MAX_TIMER_MS ? remainingMs : 0;

    clearTimeout(this.idleTimer);
    const line = this.line ?? this.openLine();
    const id = ++this.nextId;
    // The call's own end (its status, a local cancel or deadline, the stream's end) lets go of its timer and listener once.
    let timer: NodeJS.Timeout | undefined;
    const giveUp = (code: grpc.status.CANCELLED | grpc.status.DEADLINE_EXCEEDED) => {
      if (!line.open.has(id)) return;
      write(line, id, { case: "cancel", value: {} });
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
    write(line, id, { case: "start", value: { method: path.slice(1), request, timeoutMs } });
  }

  /** Cancels the stream and its open calls. */
  close(): void {
    clearTimeout(this.idleTimer);
    this.line?.stream.cancel();
  }

  private openLine(): Line {
    const stream = this.channel.makeBidiStreamRequest(
      PATH,
      (bytes: Buffer) => bytes,
      (bytes: Buffer) => fromBinary(CallsResponseSchema, bytes),
      this.metadata(),
      {},
    );
    const line: Line = { stream, open: new Map(), answered: false };
    stream.on("data", (response: CallsResponse) => {
      line.answered = true;
      this.receive(line, response);
    });
    // Every end comes as a status; 'error' repeats a failed one (and would throw without a listener).
    stream.on("error", () => {});
    stream.on("status", (status: grpc.StatusObject) => this.ended(line, status));
    this.line = line;
    return line;
  }

  private receive(line: Line, { id, event }: CallsResponse): void {
    const receiver = line.open.get(id);
    if (!receiver) return; // given up here already
    if (event.case === "message") receiver.message(event.value);
    else if (event.case === "status") this.settle(line, id, event.value.code === 0 ? undefined : FileToolsError.fromRpcStatus(event.value));
  }

  private settle(line: Line, id: bigint, error: FileToolsError | undefined): void {
    const receiver = line.open.get(id);
    if (!receiver) return;
    line.open.delete(id);
    if (line.open.size === 0 && line === this.line) this.armIdle();
    receiver.end(error);
  }

  private armIdle(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      const line = this.line;
      if (!line || line.open.size > 0) return;
      this.line = undefined;
      line.stream.end();
    }, IDLE_MS);
  }

  private ended(line: Line, status: grpc.StatusObject): void {
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
    const error =
      status.code === grpc.status.OK
        ? new FileToolsError(grpc.status.UNAVAILABLE, "the daemon ended the stream of calls before this call's answer", "")
        : FileToolsError.fromStatus(status);
    for (const receiver of receivers) receiver.end(error);
  }
}

function write(line: Line, id: bigint, event: MessageInitShape<typeof CallsRequestSchema>["event"]): void {
  const bytes = toBinary(CallsRequestSchema, create(CallsRequestSchema, { id, event }));
  line.stream.write(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
}

/** What grpc-js says of a call cancelled, or past its deadline, on the client's side. */
function localError(code: grpc.status.CANCELLED | grpc.status.DEADLINE_EXCEEDED): FileToolsError {
  return FileToolsError.fromStatus({ code, details: code === grpc.status.CANCELLED ? "Cancelled on client" : "Deadline exceeded", metadata: new grpc.Metadata() });
}
