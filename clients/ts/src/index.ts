// The TypeScript client for filetoolsd: connect(), its typed errors, and the
// generated messages and enums of filetools.v1.
export {
  connect,
  FileToolsError,
  type CallOptions,
  type ConnectOptions,
  type ErrorReasonName,
  type FileToolsClient,
  type ServiceClient,
} from "./client.js";
export * from "./gen/filetools/v1/common_pb.js";
export * from "./gen/filetools/v1/files_pb.js";
export * from "./gen/filetools/v1/workspaces_pb.js";
