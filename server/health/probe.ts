#!/usr/bin/env node
// The image's HEALTHCHECK (and any probe without grpcurl): asks the daemon's
// standard grpc.health.v1 service whether it serves. Usage:
//   node dist/server/health/probe.js [ADDRESS]   (default $FILETOOLS_LISTEN, else 127.0.0.1:7447)
// Exit 0 when SERVING; 1 otherwise, with the reason on stderr. Plain text
// only: a daemon serving TLS is probed by its orchestrator's own gRPC probe.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import {
  HealthCheckRequestSchema,
  HealthCheckResponseSchema,
  HealthCheckResponse_ServingStatus as Serving,
} from "@filetools/proto/grpc/health/v1/health_pb.js";

const TIMEOUT_MS = 3_000;

const listen = process.argv[2] ?? process.env.FILETOOLS_LISTEN ?? "127.0.0.1:7447";
// A daemon listening on every interface is probed on loopback.
const address = listen.replace(/^0\.0\.0\.0:/, "127.0.0.1:").replace(/^\[::\]:/, "[::1]:");
const client = new grpc.Client(address, grpc.credentials.createInsecure());
client.makeUnaryRequest(
  "/grpc.health.v1.Health/Check",
  (request: Uint8Array) => Buffer.from(request),
  (bytes: Buffer) => fromBinary(HealthCheckResponseSchema, bytes),
  toBinary(HealthCheckRequestSchema, create(HealthCheckRequestSchema, { service: "" })),
  { deadline: Date.now() + TIMEOUT_MS },
  (error, response) => {
    client.close();
    const status = response ? Serving[response.status] : undefined;
    if (status === "SERVING") process.exit(0);
    process.stderr.write(`filetoolsd at ${address}: ${error ? error.message : `health status ${status}`}\n`);
    process.exit(1);
  },
);
