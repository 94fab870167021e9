// The life of one call on the server side: its CallContext (an AbortSignal fed
// by client cancellation, the deadline and daemon shutdown), who calls (the
// token's grant) and on which workspace, and the one log line written when it ends.
import type { DescMethod } from "@bufbuild/protobuf";
import { status as Code, type Metadata, type StatusObject } from "@grpc/grpc-js";
import { SpanStatusCode, type Context, type Span } from "@opentelemetry/api";
import type { Grant, TokenTable } from "../auth/tokens.js";
import { fail, FileToolsError } from "../errors.js";
import type { Logger } from "../log.js";
import type { CallMetrics } from "../metrics/metrics.js";
import { startCallSpan } from "../tracing/tracing.js";
import { authenticate } from "./auth.js";
import type { CallContext } from "./handlers.js";
import { publicError, statusOf } from "./status.js";

/** How close to the deadline a cancellation counts as the deadline passing (see the constructor). */
const DEADLINE_TOLERANCE_MS = 100;

export interface AdapterOptions {
  logger: Logger;
  /** The calls in flight: shutdown waits until none is left, and past its grace period aborts them. */
  inFlight?: InFlightCalls;
  /** How long a client stream may send nothing before it fails (--client-stream-idle-ms); undefined: no bound. */
  clientStreamIdleMs?: number;
  /** Told of every call's start, end and status code (--metrics-listen). */
  metrics?: CallMetrics;
  /** With a tokens table, every call needs a bearer token, and its grant decides which workspaces it may touch. */
  tokens?: TokenTable;
  /**
   * Methods whose streams never end by themselves ("filetools.v1.Journal/Watch"):
   * a shutdown cancels them at once rather than after its grace period (a
   * client that does not read would hold it that long).
   */
  endlessMethods?: ReadonlySet<string>;
}

/**
 * The calls in flight, each with the function that aborts it; a promise for
 * the moment there is none. One set rather than a listener per call on a
 * shared shutdown signal: an EventTarget warns past ten listeners.
 */
export class InFlightCalls {
  private readonly aborts = new Set<() => void>();
  /** The aborts of calls that never end by themselves (see AdapterOptions.endlessMethods). */
  private readonly endless = new Set<() => void>();
  private waiters: Array<() => void> = [];
  private abortingAll = false;
  /** Shutdown has begun: calls that would start on an open stream (Multiplex) are refused. */
  closing = false;

  /** A call started; `abort` cancels it (once shutdown aborts all, at once). Returns what to call when it ends. */
  started(abort: () => void, endless = false): () => void {
    this.aborts.add(abort);
    if (endless) this.endless.add(abort);
    if (this.abortingAll || (endless && this.closing)) abort();
    return () => {
      this.endless.delete(abort);
      if (this.aborts.delete(abort) && this.aborts.size === 0) for (const wake of this.waiters.splice(0)) wake();
    };
  }

  /** Shutdown has begun: calls that never end by themselves are cancelled now, and from now on as they start. */
  abortEndless(): void {
    this.closing = true;
    for (const abort of [...this.endless]) abort();
  }

  /** Aborts every call in flight, and every call that starts from now on. */
  abortAll(): void {
    this.abortingAll = true;
    for (const abort of [...this.aborts]) abort();
  }

  none(): Promise<void> {
    return this.aborts.size === 0 ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }
}

/** What every kind of grpc-js server call offers (grpc-js does not export its ServerSurfaceCall type). */
interface ServerCall {
  readonly metadata: Metadata;
  getDeadline(): Date | number;
  once(event: "cancelled", listener: () => void): unknown;
  off(event: "cancelled", listener: () => void): unknown;
}

export class CallScope {
  readonly context: CallContext;
  /** The call's trace context (its span, child of the caller's): the handler runs inside it. */
  readonly traceContext: Context;
  private readonly span: Span;
  /** Bytes of the responses encoded so far, for the span. */
  private bytesSent = 0;
  private readonly controller = new AbortController();
  private readonly started = performance.now();
  private readonly method: string;
  private workspace: string | undefined;
  /** The caller's grant once authenticated; undefined when the daemon has no tokens file. */
  private grant: Grant | undefined;
  /** Ends the call's bookkeeping once (`code`: how it ended, for the metrics). */
  private readonly detach: (code: string) => void;
  /** Set by CallContext.committed: a later abort no longer changes the outcome. */
  private isCommitted = false;

  constructor(
    private readonly call: ServerCall,
    method: DescMethod,
    private readonly options: AdapterOptions,
  ) {
    this.method = methodName(method);
    ({ span: this.span, context: this.traceContext } = startCallSpan(this.method, call.metadata, {
      "rpc.system": "grpc",
      "rpc.service": method.parent.typeName,
      "rpc.method": method.name,
    }));
    const grpcDeadline = call.getDeadline();
    const deadlineMs = grpcDeadline instanceof Date ? grpcDeadline.getTime() : grpcDeadline;
    const deadline = Number.isFinite(deadlineMs) ? new Date(deadlineMs) : undefined;

    // grpc-js reports both a client cancellation and its own deadline expiry as
    // 'cancelled'; the clock tells them apart. The client's deadline timer
    // started before ours, so its cancellation may arrive just before our
    // deadline: that one is the deadline too.
    const onCancelled = () =>
      this.abort(
        deadline && Date.now() >= deadline.getTime() - DEADLINE_TOLERANCE_MS
          ? new FileToolsError("DEADLINE_EXCEEDED", "the call's deadline passed")
          : new FileToolsError("CANCELLED", "the client cancelled the call"),
      );
    const onShutdown = () => this.abort(new FileToolsError("CANCELLED", "the daemon is shutting down"));
    call.once("cancelled", onCancelled);
    const ended = options.inFlight?.started(onShutdown, options.endlessMethods?.has(this.method) ?? false);
    const measured = options.metrics?.started(this.method);
    let detached = false;
    this.detach = (code) => {
      if (detached) return;
      detached = true;
      ended?.();
      measured?.(code);
      call.off("cancelled", onCancelled);
      this.endSpan(code);
    };

    this.context = {
      signal: this.controller.signal,
      deadline,
      metadata: call.metadata,
      setWorkspace: (id) => {
        this.workspace = id;
      },
      mayAccess: (id) => this.grant?.allows(id) ?? true,
      tokenQuota: () => this.grant?.quota,
      committed: () => {
        this.isCommitted = true;
      },
      caller: () => ({ token: this.grant?.name ?? "", rpc: method.name, callId: callIdOf(call.metadata) }),
    };
  }

  /** With a tokens table: the call's bearer token must be known (else UNAUTHENTICATED). Run before the handler. */
  authenticate(): void {
    if (this.options.tokens) this.grant = authenticate(this.call.metadata, this.options.tokens);
  }

  /**
   * Takes the workspace from a request's `workspace` field, or from a client
   * stream's header: it names the call in the log line, and a token not
   * allowed it fails the call (PERMISSION_DENIED / WORKSPACE_NOT_ALLOWED).
   */
  admitWorkspace(request: object): void {
    const id = workspaceOf(request);
    if (id === undefined) return;
    this.workspace = id;
    if (this.grant && !this.grant.allows(id)) fail("WORKSPACE_NOT_ALLOWED", `token ${this.grant.name} may not use workspace ${id}`);
  }

  /**
   * The handler completed: returns undefined when the call may end OK, else
   * the status to send. An abort that came meanwhile fails the call, unless
   * the handler had committed (its change is in place: see CallContext.committed).
   */
  succeed(): StatusObject | undefined {
    const { signal } = this.controller;
    if (signal.aborted && !this.isCommitted) return this.fail(signal.reason);
    this.detach("OK");
    this.options.logger.info({ ...this.logFields(), code: "OK", ...(signal.aborted ? { committed_after_abort: true } : {}) }, "call");
    return undefined;
  }

  /**
   * The handler failed: returns the status to send. Once the signal has
   * aborted, the abort reason is the call's outcome, whatever the handler made of it.
   */
  fail(error: unknown): StatusObject {
    const { signal } = this.controller;
    const cause = signal.aborted ? signal.reason : error;
    const shown = publicError(cause);
    const status = statusOf(shown);
    this.detach(Code[status.code]);
    const fields = { ...this.logFields(), code: Code[status.code], reason: shown.reason };
    if (shown === cause) this.options.logger.info(fields, "call failed");
    else this.options.logger.error({ ...fields, err: cause }, "call failed");
    return status;
  }

  /** A response of `bytes` was encoded (the span's count of bytes sent). */
  sent(bytes: number): void {
    this.bytesSent += bytes;
  }

  private endSpan(code: string): void {
    this.span.setAttributes({
      "rpc.grpc.status_code": Code[code as keyof typeof Code],
      "filetools.bytes_sent": this.bytesSent,
      ...(this.workspace === undefined ? {} : { "filetools.workspace": this.workspace }),
    });
    if (code !== "OK") this.span.setStatus({ code: SpanStatusCode.ERROR, message: code });
    this.span.end();
  }

  private logFields() {
    return {
      method: this.method,
      workspace: this.workspace,
      token_name: this.grant?.name,
      duration_ms: Math.round((performance.now() - this.started) * 100) / 100,
    };
  }

  private abort(reason: FileToolsError): void {
    if (!this.controller.signal.aborted) this.controller.abort(reason);
  }
}

/** The metadata a client names its call with, for the journal; at most 128 characters are kept. */
export const CALL_ID_METADATA = "filetools-call-id";

function callIdOf(metadata: Metadata): string {
  const value = metadata.get(CALL_ID_METADATA)[0];
  return typeof value === "string" ? value.slice(0, 128) : "";
}

/** "filetools.v1.Files/Read": a method in logs and metrics (its gRPC path without the leading "/"). */
export function methodName(method: DescMethod): string {
  return `${method.parent.typeName}/${method.name}`;
}

/** A request's `workspace` field, or its header's (Upload, ImportArchive); undefined when empty or absent. */
function workspaceOf(request: object): string | undefined {
  if ("workspace" in request) return typeof request.workspace === "string" && request.workspace !== "" ? request.workspace : undefined;
  if ("event" in request) {
    const event = request.event as { case?: string; value?: object };
    if (event.case === "header" && event.value) return workspaceOf(event.value);
  }
  return undefined;
}
