// Errors of the client: every failed call is a FileToolsError with the gRPC
// code and the daemon's reason (google.rpc.ErrorInfo from grpc-status-details-bin).
import { fromBinary } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import * as grpc from "@grpc/grpc-js";
import type { ErrorReason } from "@filetools/proto/filetools/v1/common_pb.js";
import { ErrorInfoSchema } from "@filetools/proto/google/rpc/error_details_pb.js";
import { StatusSchema, type Status } from "@filetools/proto/google/rpc/status_pb.js";

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
    const [details] = status.metadata?.get("grpc-status-details-bin") ?? [];
    let rpcStatus: Status | undefined;
    try {
      if (details instanceof Buffer) rpcStatus = fromBinary(StatusSchema, details);
    } catch {
      // Undecodable details: as without them.
    }
    return FileToolsError.of(status.code, status.details, rpcStatus);
  }

  /** The error for a google.rpc.Status (a call's end on a Multiplex stream). */
  static fromRpcStatus(status: Status): FileToolsError {
    return FileToolsError.of(status.code, status.message, status);
  }

  private static of(code: grpc.status, message: string, rpcStatus: Status | undefined): FileToolsError {
    const info = rpcStatus && errorInfoOf(rpcStatus);
    const reason = info?.reason ?? (code === grpc.status.CANCELLED || code === grpc.status.DEADLINE_EXCEEDED ? grpc.status[code] : "");
    return new FileToolsError(code, message, reason, info?.metadata ?? {});
  }
}

function errorInfoOf(status: Status) {
  try {
    for (const detail of status.details) {
      const info = anyUnpack(detail, ErrorInfoSchema);
      if (info) return info;
    }
  } catch {
    // An undecodable ErrorInfo: the code and message still stand.
  }
  return undefined;
}

/** A message field the daemon always sets; its absence is a protocol error, not a case for every caller. */
export function present<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`the daemon's answer lacks ${what}`);
  return value;
}
