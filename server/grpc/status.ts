// The one mapping from errors to gRPC statuses. A FileToolsError becomes its
// reason's status code and message, plus a google.rpc.Status carrying an
// ErrorInfo{reason, domain: "filetools", metadata} in the
// grpc-status-details-bin trailer, which grpcio-status and Go's status package
// decode (buf curl prints it as base64). Anything else becomes a generic INTERNAL: its
// message may hold a host path, so it is only logged.
import { create, toBinary } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { Metadata, status as Code, type StatusObject } from "@grpc/grpc-js";
import { ErrorInfoSchema } from "@filetools/proto/google/rpc/error_details_pb.js";
import { StatusSchema } from "@filetools/proto/google/rpc/status_pb.js";
import { FileToolsError, type ErrorReason } from "../errors.js";

export const ERROR_DOMAIN = "filetools";

/** The gRPC status code of each reason, as documented on the proto enum ErrorReason. */
export const STATUS_CODE_OF: Record<ErrorReason, Code> = {
  PATH_ESCAPES_WORKSPACE: Code.PERMISSION_DENIED,
  INVALID_PATH: Code.INVALID_ARGUMENT,
  INVALID_ARGUMENT: Code.INVALID_ARGUMENT,
  NOT_FOUND: Code.NOT_FOUND,
  WORKSPACE_NOT_FOUND: Code.NOT_FOUND,
  ALREADY_EXISTS: Code.ALREADY_EXISTS,
  IS_A_DIRECTORY: Code.FAILED_PRECONDITION,
  NOT_A_DIRECTORY: Code.FAILED_PRECONDITION,
  BINARY_FILE: Code.FAILED_PRECONDITION,
  OLD_TEXT_NOT_FOUND: Code.FAILED_PRECONDITION,
  OLD_TEXT_NOT_UNIQUE: Code.FAILED_PRECONDITION,
  CONTENT_CHANGED: Code.FAILED_PRECONDITION,
  LOSSY_ENCODING: Code.FAILED_PRECONDITION,
  RUN_ACTIVE: Code.FAILED_PRECONDITION,
  UNSAFE_ARCHIVE: Code.FAILED_PRECONDITION,
  NOT_A_REGULAR_FILE: Code.FAILED_PRECONDITION,
  WORKSPACE_BOUND: Code.FAILED_PRECONDITION,
  DIRECTORY_NOT_EMPTY: Code.FAILED_PRECONDITION,
  QUOTA_EXCEEDED: Code.RESOURCE_EXHAUSTED,
  STORE_UNAVAILABLE: Code.UNAVAILABLE,
  SEARCH_TIMEOUT: Code.DEADLINE_EXCEEDED,
  DEADLINE_EXCEEDED: Code.DEADLINE_EXCEEDED,
  NOT_IMPLEMENTED: Code.UNIMPLEMENTED,
  CANCELLED: Code.CANCELLED,
  INTERNAL: Code.INTERNAL,
  UNAUTHENTICATED: Code.UNAUTHENTICATED,
  WORKSPACE_NOT_ALLOWED: Code.PERMISSION_DENIED,
  DATA_LOSS: Code.DATA_LOSS,
  ACCESS_DENIED: Code.PERMISSION_DENIED,
  IO_ERROR: Code.UNAVAILABLE,
  SNAPSHOT_WITHOUT_FILE_LIST: Code.FAILED_PRECONDITION,
  SNAPSHOT_WITHOUT_CONTENTS: Code.FAILED_PRECONDITION,
  NO_SPACE: Code.RESOURCE_EXHAUSTED,
  NOT_MEDIA: Code.FAILED_PRECONDITION,
  MEDIA_UNREADABLE: Code.FAILED_PRECONDITION,
  CURSOR_OUT_OF_RANGE: Code.OUT_OF_RANGE,
};

/** What the client sees of an error: the FileToolsError itself, or a generic INTERNAL. */
export function publicError(error: unknown): FileToolsError {
  return error instanceof FileToolsError
    ? error
    : new FileToolsError("INTERNAL", "internal error: the daemon's log has the details");
}

/** The grpc-js status for a FileToolsError, with the ErrorInfo detail in the trailers. */
export function statusOf(error: FileToolsError): StatusObject {
  const code = STATUS_CODE_OF[error.reason];
  const errorInfo = create(ErrorInfoSchema, { reason: error.reason, domain: ERROR_DOMAIN, metadata: error.metadata });
  const details = toBinary(
    StatusSchema,
    create(StatusSchema, { code, message: error.message, details: [anyPack(ErrorInfoSchema, errorInfo)] }),
  );
  const metadata = new Metadata();
  metadata.set("grpc-status-details-bin", Buffer.from(details.buffer, details.byteOffset, details.byteLength));
  return { code, details: error.message, metadata };
}
