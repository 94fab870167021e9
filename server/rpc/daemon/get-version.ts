import { Daemon } from "@filetools/proto/filetools/v1/daemon_pb.js";
import type { HandlerFor, MethodsOf } from "../../grpc/index.js";
import { VERSION } from "../../version.js";

export function getVersionHandler(): HandlerFor<MethodsOf<typeof Daemon>["getVersion"]> {
  return async () => ({ version: VERSION, api: Daemon.file.proto.package, runtime: `node ${process.version}` });
}
