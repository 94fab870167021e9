// Daemon configuration: command-line flags, each also read from a FILETOOLS_*
// environment variable (a flag given on the command line wins). Every value is
// validated here, so the rest of the daemon can trust DaemonConfig.
import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createSecureContext } from "node:tls";
import { Command, CommanderError } from "commander";
import { TokenTable } from "./auth/tokens.js";
import { parseByteSize } from "./byte-size.js";
import type { QuotaLimits } from "./quotas/quotas.js";
import { LOG_LEVELS, type LogLevel } from "./log.js";
import { VERSION } from "./version.js";
import { WORKSPACE_ID_PATTERN } from "./workspace/registry.js";

export interface Bind {
  /** Workspace id the host directory is served as. */
  name: string;
  /** Absolute host directory. */
  dir: string;
}

export interface DaemonConfig {
  /** "host:port" (port 0 = any free port) or "unix:///absolute/path". */
  listen: string;
  /** Absolute data directory (managed workspaces, default snapshot store). */
  dataDir: string;
  binds: readonly Bind[];
  logLevel: LogLevel;
  /** Server maximum for Read's max_bytes. */
  maxReadBytes: number;
  /** gRPC maximum message size, received and sent. */
  maxMessageBytes: number;
  /** Allow a non-loopback listen address without tokens or TLS. */
  insecure: boolean;
  /** The tokens file's table (--tokens); when set, every call needs a bearer token. */
  tokens?: TokenTable;
  /** The tokens file itself, read again on SIGHUP (see readTokensFile). */
  tokensFile?: string;
  /** TLS certificate and key (--tls-cert, --tls-key), and the CA that client certificates must chain to (--tls-client-ca). */
  tls?: TlsFiles;
  /** Search worker threads (default: the core count). */
  workers: number;
  /** Snapshot store URL: file://DIR or s3://BUCKET/PREFIX (default file://DATA_DIR/snapshots). */
  store: string;
  /** Snapshots kept per workspace; older ones are pruned after a successful snapshot. */
  keepSnapshots: number;
  /** Base URL of an OTLP/HTTP collector that traces go to (--otlp-endpoint); undefined: no traces. */
  otlpEndpoint?: string;
  /** gzip level of the snapshots' tarballs (1–9; README "Incremental snapshots"). */
  snapshotGzipLevel: number;
  /** A snapshot whose base reads from this many tarballs is written whole (compaction). */
  snapshotMaxTarballs: number;
  /** Where to serve Prometheus metrics (--metrics-listen HOST:PORT); undefined: not served. */
  metricsListen?: { host: string; port: number };
  /** How long a run's lease on an s3:// store lasts without renewal, in ms (renewed every third of it). */
  leaseTtlMs: number;
  /** This daemon in leases, manifests and heads, for operators (default: host name and pid). */
  nodeName: string;
  /** How long a client stream (Upload, ImportArchive) may send nothing before it fails, in ms. */
  clientStreamIdleMs: number;
  /** Settings of an s3:// store (credentials come from the AWS SDK's default chain, never from here). */
  s3: S3Settings;
  /** Per-workspace limits (--quota-bytes, --quota-files; 0 = none); a token's own limits replace them for its calls. */
  quota: QuotaLimits;
  /** The journal of changes: entries kept per workspace at least, and for how long (README "Watch and the journal"). */
  journal: { maxEntries: number; maxAgeMs: number };
  /** Entries a slow watcher may have waiting before it is told it missed some. */
  watchQueue: number;
  /** How often a bound workspace is stat-scanned for outside changes when the kernel's notifications are unavailable, in ms. */
  outsideScanMs: number;
  /** With notifications: how often a bound workspace is also scanned for changes they missed, in ms (0: never). */
  outsideVerifyMs: number;
  /** How outside changes to bound workspaces are found: the kernel's notifications (scan where they fail), a scan, or not at all. */
  outsideWatch: "notify" | "scan" | "off";
}

export interface TlsFiles {
  /** PEM certificate chain. */
  cert: Buffer;
  /** PEM private key of the certificate. */
  key: Buffer;
  /** PEM CA certificates; when set, clients must present a certificate signed by one (mutual TLS). */
  clientCa?: Buffer;
}

export interface S3Settings {
  /** Endpoint URL of an S3-compatible server (default: AWS S3 for the region). */
  endpoint?: string;
  /** Region (default: AWS_REGION, else us-east-1). */
  region?: string;
  /** Path-style addressing (http://host/bucket/key), for most S3-compatible servers. */
  forcePathStyle: boolean;
}

/** A configuration that must stop the daemon: print `message` (if any) and exit with `exitCode`. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super(message);
  }
}


const MiB = 1024 * 1024;
// Download and export chunks carry up to 1 MiB of data, so messages must fit that and some framing.
const MIN_MESSAGE_BYTES = 2 * MiB;
// grpc-js keeps message limits in a 32-bit int.
const MAX_MESSAGE_BYTES = 2 ** 31 - 1;

/** Parses flags (`argv` without the node and script entries) and FILETOOLS_* variables from `env`. */
export function parseConfig(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): DaemonConfig {
  const program = new Command("filetoolsd")
    .description("Safe file tools for AI agents, over gRPC.")
    .version(VERSION, "--version", "print the version and exit")
    .option("--listen <address>", "host:port or unix:///path (env FILETOOLS_LISTEN)", "127.0.0.1:7447")
    .option("--data-dir <dir>", "data directory (env FILETOOLS_DATA_DIR)", "./.filetools")
    .option(
      "--bind <name=dir>",
      "serve an absolute host directory as workspace NAME; repeatable (env FILETOOLS_BIND, comma-separated)",
      (value: string, previous: string[]) => [...previous, value],
      [],
    )
    .option("--log-level <level>", `${LOG_LEVELS.join(", ")} (env FILETOOLS_LOG_LEVEL)`, "info")
    .option("--max-read-bytes <bytes>", "server maximum for Read max_bytes (env FILETOOLS_MAX_READ_BYTES)", "64MiB")
    .option("--max-message-bytes <bytes>", "gRPC maximum message size (env FILETOOLS_MAX_MESSAGE_BYTES)", "8MiB")
    .option("--metrics-listen <host:port>", "serve Prometheus metrics at http://HOST:PORT/metrics (env FILETOOLS_METRICS_LISTEN; default: off)")
    .option("--otlp-endpoint <url>", "send OpenTelemetry traces to this OTLP/HTTP collector, e.g. http://127.0.0.1:4318 (env FILETOOLS_OTLP_ENDPOINT; default: off)")
    .option("--lease-ttl-ms <ms>", "how long a run's lease on an s3:// store outlives its daemon (env FILETOOLS_LEASE_TTL_MS)", "60000")
    .option("--node-name <name>", "this daemon in run leases and snapshots, for operators (env FILETOOLS_NODE_NAME; default: HOST-PID)")
    .option("--client-stream-idle-ms <ms>", "an upload or import that sends nothing this long fails (env FILETOOLS_CLIENT_STREAM_IDLE_MS)", "30000")
    .option("--quota-bytes <bytes>", "per-workspace limit on the bytes of its files, e.g. 10GiB (env FILETOOLS_QUOTA_BYTES; 0: none)", "0")
    .option("--quota-files <n>", "per-workspace limit on its entries: files, directories, links (env FILETOOLS_QUOTA_FILES; 0: none)", "0")
    .option("--journal-max-entries <n>", "journal entries kept per workspace (env FILETOOLS_JOURNAL_MAX_ENTRIES)", "100000")
    .option("--journal-max-age-ms <ms>", "journal entries older than this are dropped (env FILETOOLS_JOURNAL_MAX_AGE_MS; default 7 days)", String(7 * 24 * 3600 * 1000))
    .option("--watch-queue <n>", "entries a slow watcher may have waiting before it misses some (env FILETOOLS_WATCH_QUEUE)", "1024")
    .option("--outside-scan-ms <ms>", "stat-scan interval of bound workspaces without kernel notifications (env FILETOOLS_OUTSIDE_SCAN_MS)", "2000")
    .option("--outside-verify-ms <ms>", "with notifications, how often bound workspaces are also stat-scanned for changes they missed (a queue overflow; at least 50x the scan's duration; env FILETOOLS_OUTSIDE_VERIFY_MS; 0: never)", "60000")
    .option("--outside-watch <mode>", "how changes made behind the daemon's back in bound workspaces are journaled: notify, scan or off (env FILETOOLS_OUTSIDE_WATCH)", "notify")
    .option("--insecure", "allow a non-loopback listen address without tokens or TLS (env FILETOOLS_INSECURE)")
    .option("--tokens <file>", "JSON tokens file; every call then needs authorization: Bearer TOKEN (env FILETOOLS_TOKENS)")
    .option("--tls-cert <file>", "PEM certificate chain: serve TLS (with --tls-key; env FILETOOLS_TLS_CERT)")
    .option("--tls-key <file>", "PEM private key of --tls-cert (env FILETOOLS_TLS_KEY)")
    .option("--tls-client-ca <file>", "PEM CA certificates: require client certificates signed by them (mutual TLS; env FILETOOLS_TLS_CLIENT_CA)")
    .option("--workers <n>", "search worker threads (env FILETOOLS_WORKERS; default: the core count)")
    .option("--store <url>", "snapshot store: file://DIR or s3://BUCKET/PREFIX (env FILETOOLS_STORE; default file://DATA_DIR/snapshots)")
    .option("--keep-snapshots <n>", "snapshots kept per workspace (env FILETOOLS_KEEP_SNAPSHOTS)", "20")
    .option("--snapshot-gzip-level <n>", "gzip level of snapshot tarballs, 1 (fastest) to 9 (smallest) (env FILETOOLS_SNAPSHOT_GZIP_LEVEL)", "4")
    .option("--snapshot-max-tarballs <n>", "a snapshot whose base reads from this many tarballs is written whole (env FILETOOLS_SNAPSHOT_MAX_TARBALLS)", "32")
    .option("--s3-endpoint <url>", "endpoint of an S3-compatible server for an s3:// store (env FILETOOLS_S3_ENDPOINT)")
    .option("--s3-region <region>", "region of an s3:// store (env FILETOOLS_S3_REGION; default AWS_REGION, else us-east-1)")
    .option("--s3-force-path-style", "path-style S3 addressing, for most S3-compatible servers (env FILETOOLS_S3_FORCE_PATH_STYLE)")
    .exitOverride()
    // Errors are reported once, by the caller of parseConfig; help still goes to stdout.
    .configureOutput({ outputError: () => {} });
  try {
    program.parse(argv, { from: "user" });
  } catch (error) {
    if (error instanceof CommanderError) {
      throw new ConfigError(error.exitCode === 0 ? "" : error.message.replace(/^error: /, ""), error.exitCode === 0 ? 0 : 2);
    }
    throw error;
  }

  /** The flag when given on the command line, else the environment variable, else the default. */
  const setting = (key: string): unknown => {
    const envName = "FILETOOLS_" + key.replace(/[A-Z]/g, (c) => "_" + c).toUpperCase();
    const fromEnv = env[envName];
    return program.getOptionValueSource(key) === "cli" || fromEnv === undefined ? program.getOptionValue(key) : fromEnv;
  };

  const listen = parseListen(String(setting("listen")));
  const insecure = parseBoolean("insecure", setting("insecure"));
  const tokensFile = given(setting("tokens")) ? String(setting("tokens")) : undefined;
  const tokens = tokensFile === undefined ? undefined : readTokensFile(tokensFile);
  const tls = readTls(setting("tlsCert"), setting("tlsKey"), setting("tlsClientCa"));
  if (!insecure && !tokens && !tls && !isLocalAddress(listen)) {
    throw new ConfigError(
      `refusing to listen on ${listen}: it is not a loopback address and neither --tokens nor TLS is configured; ` +
        "listen on 127.0.0.1 or a unix socket, set --tokens and/or --tls-cert/--tls-key, " +
        "or pass --insecure to accept that anyone who can reach it has full access",
    );
  }
  const bindValue = setting("bind");
  const dataDir = path.resolve(String(setting("dataDir")));
  const storeValue = setting("store");
  return {
    store: storeValue === undefined || storeValue === "" ? `file://${path.join(dataDir, "snapshots")}` : parseStore(String(storeValue)),
    keepSnapshots: parseCount("--keep-snapshots", String(setting("keepSnapshots")), 1),
    snapshotGzipLevel: parseGzipLevel(String(setting("snapshotGzipLevel"))),
    snapshotMaxTarballs: parseCount("--snapshot-max-tarballs", String(setting("snapshotMaxTarballs")), 1),
    listen,
    dataDir,
    binds: parseBinds(typeof bindValue === "string" ? bindValue.split(",") : (bindValue as string[])),
    logLevel: parseLogLevel(String(setting("logLevel"))),
    workers: parseWorkers(setting("workers")),
    maxReadBytes: parseBytes("--max-read-bytes", String(setting("maxReadBytes")), 1, Number.MAX_SAFE_INTEGER),
    maxMessageBytes: parseBytes(
      "--max-message-bytes",
      String(setting("maxMessageBytes")),
      MIN_MESSAGE_BYTES,
      MAX_MESSAGE_BYTES,
    ),
    metricsListen: given(setting("metricsListen")) ? parseHostPort("--metrics-listen", String(setting("metricsListen"))) : undefined,
    otlpEndpoint: given(setting("otlpEndpoint")) ? parseHttpUrl("--otlp-endpoint", String(setting("otlpEndpoint"))) : undefined,
    leaseTtlMs: parseCount("--lease-ttl-ms", String(setting("leaseTtlMs")), 300),
    nodeName: parseNodeName(setting("nodeName")),
    clientStreamIdleMs: parseCount("--client-stream-idle-ms", String(setting("clientStreamIdleMs")), 1),
    insecure,
    tokens,
    tokensFile,
    tls,
    s3: parseS3Settings(setting("s3Endpoint"), setting("s3Region"), setting("s3ForcePathStyle")),
    quota: {
      bytes: parseBytes("--quota-bytes", String(setting("quotaBytes")), 0, Number.MAX_SAFE_INTEGER),
      files: parseFileLimit(String(setting("quotaFiles"))),
    },
    journal: {
      maxEntries: parseCount("--journal-max-entries", String(setting("journalMaxEntries")), 1, 100_000_000),
      maxAgeMs: parseCount("--journal-max-age-ms", String(setting("journalMaxAgeMs")), 1000, 10 * 365 * 24 * 3600 * 1000),
    },
    watchQueue: parseCount("--watch-queue", String(setting("watchQueue")), 1),
    outsideScanMs: parseCount("--outside-scan-ms", String(setting("outsideScanMs")), 50),
    outsideVerifyMs: parseCount("--outside-verify-ms", String(setting("outsideVerifyMs")), 0, 24 * 3600 * 1000),
    outsideWatch: parseOutsideWatch(String(setting("outsideWatch"))),
  };
}

/** An http:// or https:// URL without credentials (its string as given), else a ConfigError naming `flag`. */
function parseHttpUrl(flag: string, value: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || !["http:", "https:"].includes(url.protocol) || url.username !== "" || url.password !== "") {
    throw new ConfigError(`${flag}: expected an http:// or https:// URL without credentials`);
  }
  return value;
}

/** Given is a flag or variable set to a non-empty value. */
function given(value: unknown): value is string {
  return value !== undefined && String(value) !== "";
}

function readFlagFile(flag: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new ConfigError(`${flag} ${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}

/** The table of a tokens file (at start-up, and again on SIGHUP); ConfigError says what is wrong with it. */
export function readTokensFile(file: string): TokenTable {
  try {
    return TokenTable.parse(readFlagFile("--tokens", file).toString("utf8"));
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(`--tokens ${file}: ${(error as Error).message}`);
  }
}

/** Reads the TLS files and checks that they parse and that the key belongs to the certificate. */
function readTls(certFile: unknown, keyFile: unknown, clientCaFile: unknown): TlsFiles | undefined {
  if (!given(certFile) && !given(keyFile)) {
    if (given(clientCaFile)) throw new ConfigError("--tls-client-ca needs --tls-cert and --tls-key (the daemon's own certificate)");
    return undefined;
  }
  if (!given(certFile) || !given(keyFile)) throw new ConfigError("--tls-cert and --tls-key go together");
  const tls: TlsFiles = { cert: readFlagFile("--tls-cert", certFile), key: readFlagFile("--tls-key", keyFile) };
  if (given(clientCaFile)) tls.clientCa = readCaCertificates(clientCaFile);
  try {
    createSecureContext({ cert: tls.cert, key: tls.key, ca: tls.clientCa });
  } catch (error) {
    throw new ConfigError(`--tls-cert ${certFile}, --tls-key ${keyFile}${tls.clientCa ? `, --tls-client-ca ${clientCaFile}` : ""}: unusable (${(error as Error).message})`);
  }
  return tls;
}

// Node's TLS ignores CA text that is not a certificate, which would refuse every client: check it here.
const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g;

function readCaCertificates(file: string): Buffer {
  const pem = readFlagFile("--tls-client-ca", file);
  const certificates = pem.toString("latin1").match(PEM_CERTIFICATE) ?? [];
  try {
    if (certificates.length === 0) throw new Error("no PEM certificate in it");
    for (const certificate of certificates) new X509Certificate(certificate);
  } catch (error) {
    throw new ConfigError(`--tls-client-ca ${file}: unusable (${(error as Error).message})`);
  }
  return pem;
}

function parseS3Settings(endpoint: unknown, region: unknown, forcePathStyle: unknown): S3Settings {
  const settings: S3Settings = { forcePathStyle: parseBoolean("s3ForcePathStyle", forcePathStyle) };
  if (endpoint !== undefined && String(endpoint) !== "") {
    settings.endpoint = parseHttpUrl("--s3-endpoint", String(endpoint));
  }
  if (region !== undefined && String(region) !== "") {
    if (!/^[a-z0-9-]{1,64}$/.test(String(region))) throw new ConfigError(`--s3-region ${String(region)}: expected a region name such as us-east-1`);
    settings.region = String(region);
  }
  return settings;
}

function parseStore(value: string): string {
  if (!/^(file|s3):\/\/./.test(value)) throw new ConfigError(`--store ${value}: expected file://DIR or s3://BUCKET/PREFIX`);
  return value;
}

function parseHostPort(flag: string, value: string): { host: string; port: number } {
  const match = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(value.trim());
  const port = Number(match?.[2]);
  if (!match || !(port >= 0 && port <= 65535)) throw new ConfigError(`${flag} ${value}: expected HOST:PORT, e.g. 127.0.0.1:9464`);
  return { host: match[1]!.replace(/^\[|\]$/g, ""), port };
}

function parseGzipLevel(value: string): number {
  const n = /^\d$/.test(value.trim()) ? Number(value) : NaN;
  if (!(n >= 1 && n <= 9)) throw new ConfigError(`--snapshot-gzip-level ${value}: expected a whole number between 1 and 9`);
  return n;
}

function parseCount(flag: string, value: string, min: number, max = 1_000_000): number {
  const n = /^\d+$/.test(value.trim()) ? Number(value) : NaN;
  if (!(n >= min && n <= max)) throw new ConfigError(`${flag} ${value}: expected a whole number between ${min} and ${max}`);
  return n;
}

function parseListen(value: string): string {
  if (value.startsWith("unix:")) {
    const socketPath = value.slice("unix://".length);
    if (!value.startsWith("unix://") || !path.isAbsolute(socketPath)) {
      throw new ConfigError(`--listen ${value}: a unix socket must be written unix:///absolute/path`);
    }
    return value;
  }
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]\s]+):(\d{1,5})$/.exec(value);
  if (!match || Number(match[2]) > 65535) {
    throw new ConfigError(`--listen ${value}: expected host:port (e.g. 127.0.0.1:7447, [::1]:7447) or unix:///path`);
  }
  return value;
}

function isLocalAddress(listen: string): boolean {
  if (listen.startsWith("unix://")) return true;
  const host = listen.slice(0, listen.lastIndexOf(":"));
  return host === "localhost" || host === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

function parseBinds(values: readonly string[]): Bind[] {
  const binds: Bind[] = [];
  for (const value of values.map((v) => v.trim()).filter((v) => v !== "")) {
    const eq = value.indexOf("=");
    const name = value.slice(0, eq);
    const dir = value.slice(eq + 1);
    if (eq < 0 || !WORKSPACE_ID_PATTERN.test(name)) {
      throw new ConfigError(`--bind ${value}: expected NAME=/abs/dir with NAME matching ${WORKSPACE_ID_PATTERN.source}`);
    }
    if (!path.isAbsolute(dir)) {
      throw new ConfigError(`--bind ${value}: the directory must be an absolute path`);
    }
    if (binds.some((b) => b.name === name)) {
      throw new ConfigError(`--bind ${value}: workspace ${name} is bound twice`);
    }
    binds.push({ name, dir: path.resolve(dir) });
  }
  return binds;
}

/** The search pool's thread count: 1 to 256, default the core count. */
function parseWorkers(value: unknown): number {
  if (value === undefined || value === "") return os.availableParallelism();
  const n = /^\d+$/.test(String(value).trim()) ? Number(value) : NaN;
  if (!(n >= 1 && n <= 256)) throw new ConfigError(`--workers ${String(value)}: expected a whole number between 1 and 256`);
  return n;
}

function parseLogLevel(value: string): LogLevel {
  const level = LOG_LEVELS.find((l) => l === value);
  if (!level) throw new ConfigError(`--log-level ${value}: expected one of ${LOG_LEVELS.join(", ")}`);
  return level;
}

/** "1048576", "512KiB", "64MiB" or "1GiB" → bytes, within [min, max]. */
function parseBytes(flag: string, value: string, min: number, max: number): number {
  const bytes = parseByteSize(value) ?? NaN;
  if (!(bytes >= min && bytes <= max)) {
    throw new ConfigError(`${flag} ${value}: expected a byte count between ${min} and ${max} (suffixes KiB, MiB, GiB, TiB)`);
  }
  return bytes;
}

/** --quota-files: a whole number, 0 for none. */
function parseFileLimit(value: string): number {
  const n = /^\d+$/.test(value.trim()) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n)) throw new ConfigError(`--quota-files ${value}: expected a whole number (0: no limit)`);
  return n;
}

function parseBoolean(key: string, value: unknown): boolean {
  if (value === undefined || value === false) return false;
  if (value === true) return true;
  const text = String(value).trim().toLowerCase();
  if (["1", "true", "yes", "on"].includes(text)) return true;
  if (["", "0", "false", "no", "off"].includes(text)) return false;
  throw new ConfigError(
    `FILETOOLS_${key.replace(/[A-Z]/g, (c) => "_" + c).toUpperCase()}=${String(value)}: expected true or false`,
  );
}

/** --node-name: printable, at most 128 characters; unset: the host name and the process id. */
function parseNodeName(value: unknown): string {
  if (!given(value)) return `${os.hostname()}-${process.pid}`;
  const name = String(value);
  if (!/^[\x21-\x7e][\x20-\x7e]{0,127}$/.test(name)) throw new ConfigError(`--node-name ${JSON.stringify(name.slice(0, 40))}: expected 1 to 128 printable ASCII characters`);
  return name;
}

function parseOutsideWatch(value: string): DaemonConfig["outsideWatch"] {
  if (value === "notify" || value === "scan" || value === "off") return value;
  throw new ConfigError(`--outside-watch ${value}: expected notify, scan or off`);
}
