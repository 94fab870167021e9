// The gRPC layer's public surface: handler types for server/rpc, and what
// server/main.ts needs to assemble the daemon.
export type {
  CallContext,
  ClientStreamHandler,
  HandlerFor,
  MethodsOf,
  ServerStreamHandler,
  ServiceHandlers,
  UnaryHandler,
} from "./handlers.js";
export { EncodedMessage } from "./handlers.js";
export { registerService } from "./adapter.js";
export { registerMultiplex } from "./multiplex.js";
export { InFlightCalls, type AdapterOptions } from "./call.js";
export { addReflection } from "./reflection.js";
export { createServer, credentialsOf, listen, shutDown } from "./server.js";
