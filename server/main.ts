#!/usr/bin/env node
// filetoolsd: parse the configuration, serve Files and Workspaces (plus health
// and reflection) over gRPC, print where it listens, and stop cleanly on
// SIGTERM/SIGINT.
import { HealthImplementation } from "grpc-health-check";
import { Files } from "@filetools/proto/filetools/v1/files_pb.js";
import { Workspaces } from "@filetools/proto/filetools/v1/workspaces_pb.js";
import { Multiplex } from "@filetools/proto/filetools/v1/multiplex_pb.js";
import { Daemon } from "@filetools/proto/filetools/v1/daemon_pb.js";
import { Journal } from "@filetools/proto/filetools/v1/journal_pb.js";
import { file_google_rpc_error_details } from "@filetools/proto/google/rpc/error_details_pb.js";
import { Health } from "@filetools/proto/grpc/health/v1/health_pb.js";
import { ConfigError, parseConfig, readTokensFile, type DaemonConfig } from "./config.js";
import { InFlightCalls, addReflection, type AdapterOptions, createServer, credentialsOf, listen, registerMultiplex, registerService, shutDown } from "./grpc/index.js";
import { createLogger, type Logger } from "./log.js";
import { DaemonMetrics } from "./metrics/metrics.js";
import { createHandlers } from "./rpc/index.js";
import { getVersionHandler } from "./rpc/daemon/get-version.js";
import { VERSION } from "./version.js";
import { inSpan, startTracing } from "./tracing/tracing.js";

/** How long calls in flight may run on after SIGTERM/SIGINT before their signals abort. */
const SHUTDOWN_GRACE_MS = 10_000;

async function main(): Promise<void> {
  const config = configOrExit();
  const logger = createLogger(config.logLevel);
  // The first line of every log: which daemon wrote what follows.
  logger.info({ version: VERSION, node: process.version }, "filetoolsd starting");
  const stopTracing = config.otlpEndpoint ? startTracing(config.otlpEndpoint, VERSION) : undefined;
  // A promise nobody awaited failed: a bug to fix, but one call's bug must not
  // take down every other call, so log it loudly and keep serving.
  process.on("unhandledRejection", (reason) => logger.error({ err: reason }, "unhandled rejection"));
  const metrics = config.metricsListen ? new DaemonMetrics() : undefined;
  const handlers = await createHandlers(config, logger, metrics);

  const server = createServer(config);
  const inFlight = new InFlightCalls();
  // Health and reflection are served outside the adapter, so they need no token (probes and tooling).
  // One options object for both services: SIGHUP swaps its tokens table (see reloadTokensOnHangup).
  const endlessMethods = new Set([`${Journal.typeName}/Watch`]);
  const adapterOptions: AdapterOptions = { logger, inFlight, tokens: config.tokens, clientStreamIdleMs: config.clientStreamIdleMs, metrics, endlessMethods };
  registerService(server, Files, handlers.files, adapterOptions);
  registerService(server, Workspaces, handlers.workspaces, adapterOptions);
  registerService(server, Journal, handlers.journal, adapterOptions);
  const daemonHandlers = { getVersion: getVersionHandler() };
  registerService(server, Daemon, daemonHandlers, adapterOptions);
  registerMultiplex(server, [[Files, handlers.files], [Workspaces, handlers.workspaces], [Daemon, daemonHandlers]], adapterOptions);
  new HealthImplementation({ "": "SERVING", [Files.typeName]: "SERVING", [Workspaces.typeName]: "SERVING", [Multiplex.typeName]: "SERVING", [Daemon.typeName]: "SERVING", [Journal.typeName]: "SERVING" }).addToServer(
    server,
  );
  // google.rpc.ErrorInfo too, so that reflection clients such as grpcurl can decode error details.
  addReflection(server, [Files.file, Workspaces.file, Multiplex.file, Daemon.file, Journal.file, Health.file, file_google_rpc_error_details]);

  const address = await listen(server, config.listen, credentialsOf(config.tls), (error) => logger.error({ err: error }, "the listening socket reported an error; serving on"));
  process.stdout.write(`filetoolsd listening on ${address}\n`);
  if (metrics && config.metricsListen) {
    const { url } = await metrics.listen(config.metricsListen.host, config.metricsListen.port);
    process.stdout.write(`filetoolsd metrics on ${url}\n`);
  }
  logger.info(
    {
      address,
      data_dir: config.dataDir,
      binds: config.binds.map((b) => b.name),
      tls: config.tls ? (config.tls.clientCa ? "mutual" : "server") : "off",
      tokens: config.tokens !== undefined,
    },
    "listening",
  );

  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, grace_ms: SHUTDOWN_GRACE_MS }, "shutting down");
    await shutDown(server, SHUTDOWN_GRACE_MS, () => {
      logger.warn("grace period over: cancelling the calls still running");
      inFlight.abortAll();
    }, inFlight);
    // Every active run is snapshotted (and stays active: the next daemon resumes it).
    // One span for the shutdown's snapshots, so that their store operations form one trace.
    for (const failure of await inSpan("filetoolsd.shutdown_snapshots", {}, () => handlers.snapshotActiveRuns())) {
      logger.error({ workspace: failure.workspace, err: failure.error }, "snapshot of an active run at shutdown failed");
    }
    await handlers.close();
    // The last spans (the shutdown's snapshots among them) are sent before the process ends.
    await stopTracing?.().catch((error: unknown) => logger.warn({ err: error }, "traces not flushed"));
    logger.info("stopped");
    process.exit(0);
  };
  reloadTokensOnHangup(config.tokensFile, adapterOptions, logger);
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.on(signal, () => void stop(signal).catch(fatal));
  }
}

function configOrExit(): DaemonConfig {
  try {
    return parseConfig(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    if (error.message) process.stderr.write(`filetoolsd: ${error.message}\n`);
    process.exit(error.exitCode);
  }
}

function fatal(error: unknown): never {
  process.stderr.write(`filetoolsd: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}

main().catch(fatal);

/**
 * SIGHUP reads the tokens file again: calls that start from then on use the
 * new table, calls in flight keep the grant they were admitted with. A file
 * that does not parse leaves the old tokens in force, and the log says why.
 */
function reloadTokensOnHangup(file: string | undefined, options: AdapterOptions, logger: Logger): void {
  process.on("SIGHUP", () => {
    if (file === undefined) return logger.warn("SIGHUP: the daemon has no --tokens file to reload");
    try {
      const tokens = readTokensFile(file);
      options.tokens = tokens;
      logger.info({ tokens: tokens.size }, "tokens file reloaded");
    } catch (error) {
      logger.error({ reason: (error as Error).message }, "tokens file not reloaded: the tokens in force stay");
    }
  });
}
