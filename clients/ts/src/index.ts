// The TypeScript client for filetoolsd: connect(), the calls per workspace,
// typed errors, and the generated messages and enums of filetools.v1.
export {
  connect,
  type CallOptions,
  type ConnectOptions,
  type FileToolsClient,
  type RawClient,
  type ServiceClient,
  type TlsOptions,
} from "./client.js";
export { FileToolsError, type ErrorReasonName } from "./errors.js";
export { VERSION } from "./version.js";
export { headerThenData, receiveVerified, saveVerified, type HeaderThenData, type OnProgress, type Progress } from "./byte-streams.js";
export { numberLines, type NumberLinesOptions } from "./format.js";
export { catalogue, type Catalogue, type ToolAnnotations, type ToolDefinition } from "./tools/catalogue.js";
export { ToolDispatcher, type DispatcherOptions, type ImageContent, type ToolResult } from "./tools/dispatcher.js";
export { anthropicToolResultContent, openAIToolOutput } from "./tools/content.js";
export {
  SearchResults,
  WorkspaceClient,
  type AtSnapshotOption,
  type EditOptions,
  type ExportOptions,
  type Listing,
  type ListOptions,
  type MediaRead,
  type ReadMediaOptions,
  type ReadTextOptions,
  type ReadWindow,
  type SearchOptions,
  type TextEditInit,
  type TextWindow,
  type TransferOptions,
  type WriteTextOptions,
} from "./workspace.js";
export * from "@filetools/proto/filetools/v1/common_pb.js";
export * from "@filetools/proto/filetools/v1/files_pb.js";
export * from "@filetools/proto/filetools/v1/workspaces_pb.js";
export * from "@filetools/proto/filetools/v1/daemon_pb.js";
export * from "@filetools/proto/filetools/v1/journal_pb.js";
export { watchChanges, type WatchOptions } from "./watch.js";
