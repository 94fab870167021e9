// The one error type that crosses from domain code to the gRPC layer. Domain
// code throws it with a reason from the closed set (proto ErrorReason); the
// adapter in server/grpc maps it to a status code and a google.rpc.ErrorInfo.
// Messages name workspace paths only, never host paths.

export type ErrorReason =
  | "PATH_ESCAPES_WORKSPACE"
  | "INVALID_PATH"
  | "NOT_FOUND"
  | "WORKSPACE_NOT_FOUND"
  | "ALREADY_EXISTS"
  | "IS_A_DIRECTORY"
  | "NOT_A_DIRECTORY"
  | "BINARY_FILE"
  | "OLD_TEXT_NOT_FOUND"
  | "OLD_TEXT_NOT_UNIQUE"
  | "CONTENT_CHANGED"
  | "LOSSY_ENCODING"
  | "RUN_ACTIVE"
  | "QUOTA_EXCEEDED"
  | "STORE_UNAVAILABLE"
  | "UNSAFE_ARCHIVE"
  | "SEARCH_TIMEOUT"
  | "INVALID_ARGUMENT"
  | "NOT_IMPLEMENTED"
  | "NOT_A_REGULAR_FILE"
  | "WORKSPACE_BOUND"
  | "DIRECTORY_NOT_EMPTY"
  | "INTERNAL"
  | "CANCELLED"
  | "DEADLINE_EXCEEDED"
  | "UNAUTHENTICATED"
  | "WORKSPACE_NOT_ALLOWED"
  | "DATA_LOSS"
  | "ACCESS_DENIED"
  | "IO_ERROR"
  | "SNAPSHOT_WITHOUT_FILE_LIST"
  | "SNAPSHOT_WITHOUT_CONTENTS"
  | "NO_SPACE"
  | "NOT_MEDIA"
  | "MEDIA_UNREADABLE"
  | "CURSOR_OUT_OF_RANGE";

export class FileToolsError extends Error {
  override readonly name = "FileToolsError";
  constructor(
    readonly reason: ErrorReason,
    message: string,
    /** Extra facts for the client (ErrorInfo.metadata), e.g. {count: "3"}. */
    readonly metadata: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** Shorthand for the common case. */
export function fail(reason: ErrorReason, message: string, metadata?: Record<string, string>): never {
  throw new FileToolsError(reason, message, metadata);
}
