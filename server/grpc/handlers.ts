// The shapes of RPC handlers: plain typed functions over protobuf-es messages,
// free of grpc-js call objects. The adapter (adapter.ts) turns them into a
// grpc-js service implementation.
import type { DescMessage, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import type { GenService, GenServiceMethods } from "@bufbuild/protobuf/codegenv2";
import type { Metadata } from "@grpc/grpc-js";
import type { QuotaOverride } from "../quotas/quotas.js";

export interface CallContext {
  /**
   * Aborts when the client cancels, when the deadline passes, or when the
   * daemon shuts down past its grace period. `signal.reason` is then a
   * FileToolsError (CANCELLED or DEADLINE_EXCEEDED). Pass it to every I/O.
   */
  signal: AbortSignal;
  /** The client's deadline, when it set one. */
  deadline?: Date;
  /** Request metadata (headers). */
  metadata: Metadata;
  /** Names the workspace in the call's log line when the request has no `workspace` field. */
  setWorkspace(id: string): void;
  /**
   * Whether the caller's token may touch workspace `id` (always true without
   * a tokens file). The adapter already refuses a request's own workspace;
   * this is for calls that return other workspaces (ListWorkspaces).
   */
  mayAccess(id: string): boolean;
  /** The caller's token's own quota limits (tokens file), undefined without one: they replace the daemon's for this call. */
  tokenQuota(): QuotaOverride | undefined;
  /**
   * The call's change is in place (it passed its commit point, after its last
   * look at `signal`): the call now ends OK even if the signal aborts later.
   * The caller may then already have given up and seen CANCELLED or
   * DEADLINE_EXCEEDED from its own side; the log line says OK with
   * `committed_after_abort`, so an operator can tell.
   */
  committed(): void;
  /**
   * Who calls, for the journal: the token's name ("" without a tokens file),
   * the RPC's name ("Write"), and the client's call id (the
   * `filetools-call-id` metadata, "" when not sent).
   */
  caller(): { token: string; rpc: string; callId: string };
}

export type UnaryHandler<I extends DescMessage, O extends DescMessage> = (
  request: MessageShape<I>,
  ctx: CallContext,
) => Promise<MessageInitShape<O>>;

/** An async generator: each yielded message is sent with backpressure; the generator is stopped when the client goes away. */
export type ServerStreamHandler<I extends DescMessage, O extends DescMessage> = (
  request: MessageShape<I>,
  ctx: CallContext,
) => AsyncIterable<MessageInitShape<O> | EncodedMessage>;

/**
 * A response message a handler encoded itself (its wire bytes), sent as is:
 * for a hot path that already holds a field's bytes (Read's UTF-8 text),
 * which a message would decode into a string only to encode it again.
 */
export class EncodedMessage {
  constructor(readonly bytes: Uint8Array) {}
}

/**
 * Iterating `requests` throws the abort reason if the client cancels, so a
 * cut-off stream does not look complete. (A cancellation that reaches the
 * daemon only after the client's end of stream cannot be told apart: a
 * checksum in the request, e.g. UploadHeader.sha256, is the real guarantee.)
 */
export type ClientStreamHandler<I extends DescMessage, O extends DescMessage> = (
  requests: AsyncIterable<MessageShape<I>>,
  ctx: CallContext,
) => Promise<MessageInitShape<O>>;

/** The handler type for one method of a generated service. (No RPC of ours is bidirectional.) */
export type HandlerFor<M> = M extends { methodKind: "unary"; input: infer I extends DescMessage; output: infer O extends DescMessage }
  ? UnaryHandler<I, O>
  : M extends { methodKind: "server_streaming"; input: infer I extends DescMessage; output: infer O extends DescMessage }
    ? ServerStreamHandler<I, O>
    : M extends { methodKind: "client_streaming"; input: infer I extends DescMessage; output: infer O extends DescMessage }
      ? ClientStreamHandler<I, O>
      : never;

export type MethodsOf<S> = S extends GenService<infer M extends GenServiceMethods> ? M : never;

/**
 * Handlers for a generated service (`ServiceHandlers<typeof Files>`), keyed by
 * the method's localName (`read`, `makeDir`, ...). A method without a handler
 * answers UNIMPLEMENTED / NOT_IMPLEMENTED.
 */
export type ServiceHandlers<S> = { [K in keyof MethodsOf<S>]?: HandlerFor<MethodsOf<S>[K]> };
