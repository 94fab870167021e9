import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "./config.js";

function configError(argv: string[], env: NodeJS.ProcessEnv = {}): ConfigError {
  try {
    parseConfig(argv, env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

describe("parseConfig", () => {
  it("has embedded defaults", () => {
    expect(parseConfig([], {})).toEqual({
      listen: "127.0.0.1:7447",
      dataDir: path.resolve(".filetools"),
      binds: [],
      logLevel: "info",
      maxReadBytes: 64 * 1024 * 1024,
      maxMessageBytes: 8 * 1024 * 1024,
      insecure: false,
      s3: { forcePathStyle: false },
      store: `file://${path.resolve(".filetools", "snapshots")}`,
      keepSnapshots: 20,
      snapshotGzipLevel: 4,
      snapshotMaxTarballs: 32,
      clientStreamIdleMs: 30_000,
      leaseTtlMs: 60_000,
      nodeName: `${os.hostname()}-${process.pid}`,
      workers: os.availableParallelism(),
      quota: { bytes: 0, files: 0 },
      journal: { maxEntries: 100_000, maxAgeMs: 7 * 24 * 3600 * 1000 },
      watchQueue: 1024,
      outsideScanMs: 2000,
      outsideVerifyMs: 60000,
      outsideWatch: "notify",
    });
  });

  it("reads the journal's retention and the watch queue (--journal-max-entries, --journal-max-age-ms, --watch-queue)", () => {
    const config = parseConfig(["--journal-max-entries", "500", "--journal-max-age-ms", "60000", "--watch-queue", "8"], {});
    expect(config.journal).toEqual({ maxEntries: 500, maxAgeMs: 60_000 });
    expect(config.watchQueue).toBe(8);
    expect(parseConfig([], { FILETOOLS_WATCH_QUEUE: "16" }).watchQueue).toBe(16);
    expect(configError(["--journal-max-entries", "0"]).message).toMatch(/--journal-max-entries/);
    expect(configError(["--watch-queue", "-1"]).message).toMatch(/--watch-queue/);
    expect(parseConfig(["--outside-watch", "scan"], {}).outsideWatch).toBe("scan");
    expect(configError(["--outside-watch", "poll"]).message).toMatch(/notify, scan or off/);
  });

  it("reads --node-name (printable, at most 128 characters)", () => {
    expect(parseConfig(["--node-name", "runtime-7"], {}).nodeName).toBe("runtime-7");
    expect(parseConfig([], { FILETOOLS_NODE_NAME: "pod a" }).nodeName).toBe("pod a");
    expect(configError(["--node-name", "x".repeat(129)]).message).toMatch(/--node-name/);
    expect(configError(["--node-name", "bad\nname"]).message).toMatch(/printable/);
  });

  it("reads --quota-bytes (human sizes) and --quota-files, 0 for none", () => {
    expect(parseConfig(["--quota-bytes", "10GiB", "--quota-files", "100000"], {}).quota).toEqual({ bytes: 10 * 2 ** 30, files: 100_000 });
    expect(parseConfig([], { FILETOOLS_QUOTA_BYTES: "2TiB", FILETOOLS_QUOTA_FILES: "0" }).quota).toEqual({ bytes: 2 * 2 ** 40, files: 0 });
    expect(configError(["--quota-bytes", "-1"]).message).toMatch(/--quota-bytes -1: expected a byte count/);
    expect(configError(["--quota-bytes", "1.5GiB"]).message).toMatch(/byte count/);
    expect(configError(["--quota-files", "many"]).message).toMatch(/--quota-files many: expected a whole number/);
  });

  it("reads --metrics-listen HOST:PORT (off by default)", () => {
    expect(parseConfig([], {}).metricsListen).toBeUndefined();
    expect(parseConfig(["--metrics-listen", "127.0.0.1:9464"], {}).metricsListen).toEqual({ host: "127.0.0.1", port: 9464 });
    expect(parseConfig([], { FILETOOLS_METRICS_LISTEN: "[::1]:0" }).metricsListen).toEqual({ host: "::1", port: 0 });
    expect(configError(["--metrics-listen", "9464"]).message).toMatch(/--metrics-listen 9464: expected HOST:PORT/);
  });

  it("reads --client-stream-idle-ms and FILETOOLS_CLIENT_STREAM_IDLE_MS (at least 1 ms)", () => {
    expect(parseConfig(["--client-stream-idle-ms", "500"], {}).clientStreamIdleMs).toBe(500);
    expect(parseConfig([], { FILETOOLS_CLIENT_STREAM_IDLE_MS: "90000" }).clientStreamIdleMs).toBe(90_000);
    expect(configError(["--client-stream-idle-ms", "0"]).message).toMatch(/--client-stream-idle-ms/);
  });

  it("reads --workers and FILETOOLS_WORKERS (1 to 256)", () => {
    expect(parseConfig(["--workers", "3"], {}).workers).toBe(3);
    expect(parseConfig([], { FILETOOLS_WORKERS: "5" }).workers).toBe(5);
    expect(configError(["--workers", "0"]).message).toMatch(/--workers/);
    expect(configError(["--workers", "two"]).message).toMatch(/--workers/);
  });

  it("reads --store and --keep-snapshots, refusing unknown schemes and bad counts", () => {
    expect(parseConfig(["--store", "s3://bucket/prefix", "--keep-snapshots", "3"], {})).toMatchObject({ store: "s3://bucket/prefix", keepSnapshots: 3 });
    expect(parseConfig([], { FILETOOLS_STORE: "file:///srv/snaps", FILETOOLS_KEEP_SNAPSHOTS: "5" })).toMatchObject({ store: "file:///srv/snaps", keepSnapshots: 5 });
    expect(configError(["--store", "ftp://x"]).message).toMatch(/--store/);
    expect(configError(["--keep-snapshots", "0"]).message).toMatch(/--keep-snapshots/);
  });

  it("reads the s3:// store settings from flags and FILETOOLS_S3_* variables", () => {
    const env = { FILETOOLS_S3_ENDPOINT: "http://127.0.0.1:8333", FILETOOLS_S3_REGION: "eu-west-1", FILETOOLS_S3_FORCE_PATH_STYLE: "true" };
    expect(parseConfig([], env).s3).toEqual({ endpoint: "http://127.0.0.1:8333", region: "eu-west-1", forcePathStyle: true });
    expect(parseConfig(["--s3-endpoint", "https://s3.example.com", "--s3-region", "us-west-2", "--s3-force-path-style"], {}).s3).toEqual({
      endpoint: "https://s3.example.com",
      region: "us-west-2",
      forcePathStyle: true,
    });
    expect(configError(["--s3-endpoint", "ftp://x"]).message).toMatch(/--s3-endpoint/);
    // The URL, which may carry credentials, is not echoed back.
    expect(configError(["--s3-endpoint", "http://key:secret@host"]).message).not.toContain("secret");
    expect(configError(["--s3-region", "Not A Region"]).message).toMatch(/--s3-region/);
    expect(configError([], { FILETOOLS_S3_FORCE_PATH_STYLE: "maybe" }).message).toMatch(/FILETOOLS_S3_FORCE_PATH_STYLE/);
  });

  it("reads --otlp-endpoint (off by default), an http(s) URL without credentials", () => {
    expect(parseConfig([], {}).otlpEndpoint).toBeUndefined();
    expect(parseConfig(["--otlp-endpoint", "http://127.0.0.1:4318"], {}).otlpEndpoint).toBe("http://127.0.0.1:4318");
    expect(parseConfig([], { FILETOOLS_OTLP_ENDPOINT: "https://otel.example.com/" }).otlpEndpoint).toBe("https://otel.example.com/");
    for (const bad of ["127.0.0.1:4318", "grpc://collector:4317", "file:///tmp/x", "http://", ""]) {
      if (bad === "") expect(parseConfig(["--otlp-endpoint", bad], {}).otlpEndpoint).toBeUndefined();
      else expect(configError(["--otlp-endpoint", bad]).message, bad).toMatch(/--otlp-endpoint: expected an http/);
    }
    expect(configError(["--otlp-endpoint", "http://user:token@collector:4318"]).message).not.toContain("token");
  });

  it("answers --version with package.json's version, exit code 0", async () => {
    const { version } = JSON.parse(readFileSync(path.join(import.meta.dirname, "..", "package.json"), "utf8")) as { version: string };
    const written: string[] = [];
    const write = process.stdout.write;
    process.stdout.write = ((text: string) => written.push(text) > 0) as typeof process.stdout.write;
    try {
      expect(configError(["--version"]).exitCode).toBe(0);
    } finally {
      process.stdout.write = write;
    }
    expect(written.join("")).toBe(`${version}\n`);
    expect(version).toMatch(/^\d+\.\d+\.\d+(-[\w.]+)?$/);
  });

  it("reads FILETOOLS_* variables, and flags win over them", () => {
    const env = {
      FILETOOLS_LISTEN: "127.0.0.1:9000",
      FILETOOLS_LOG_LEVEL: "debug",
      FILETOOLS_MAX_READ_BYTES: "1MiB",
      FILETOOLS_BIND: "a=/srv/a,b=/srv/b",
    };
    const config = parseConfig(["--listen", "unix:///run/filetools.sock", "--bind", "c=/srv/c/"], env);
    expect(config.listen).toBe("unix:///run/filetools.sock");
    expect(config.logLevel).toBe("debug");
    expect(config.maxReadBytes).toBe(1024 * 1024);
    expect(config.binds).toEqual([{ name: "c", dir: "/srv/c" }]);
    expect(parseConfig([], env).binds).toEqual([
      { name: "a", dir: "/srv/a" },
      { name: "b", dir: "/srv/b" },
    ]);
  });

  it("refuses a non-loopback address unless told --insecure", () => {
    expect(configError(["--listen", "0.0.0.0:7447"]).message).toMatch(/--insecure/);
    expect(parseConfig(["--listen", "0.0.0.0:7447", "--insecure"], {}).insecure).toBe(true);
    expect(parseConfig(["--listen", "0.0.0.0:7447"], { FILETOOLS_INSECURE: "true" }).insecure).toBe(true);
    expect(configError(["--listen", "0.0.0.0:7447"], { FILETOOLS_INSECURE: "0" }).message).toMatch(/--insecure/);
    expect(parseConfig(["--listen", "[::1]:0"], {}).listen).toBe("[::1]:0");
  });

  describe("--tokens and TLS", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "ftd-config-"));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const write = (name: string, text: string) => {
      writeFileSync(path.join(dir, name), text);
      return path.join(dir, name);
    };
    const tokens = write("tokens.json", JSON.stringify({ tokens: [{ name: "crew-a", token: "s3cret", workspaces: ["team-*"] }] }));

    it("reads a tokens file from --tokens or FILETOOLS_TOKENS", () => {
      expect(parseConfig(["--tokens", tokens], {}).tokens?.find("s3cret")?.name).toBe("crew-a");
      expect(parseConfig([], { FILETOOLS_TOKENS: tokens }).tokens?.find("s3cret")?.allows("team-x")).toBe(true);
    });

    it("refuses a tokens file it cannot read or use, naming the file and never the token", () => {
      expect(configError(["--tokens", path.join(dir, "missing.json")]).message).toMatch(/--tokens .*missing\.json: cannot read it \(ENOENT\)/);
      const duplicate = write("dup.json", JSON.stringify({ tokens: [{ name: "a", token: "tok-1", workspaces: ["*"] }, { name: "b", token: "tok-1", workspaces: ["*"] }] }));
      const error = configError(["--tokens", duplicate]);
      expect(error.message).toMatch(/dup\.json: tokens\[1\] \(b\): the same token is listed twice/);
      expect(error.message).not.toContain("tok-1");
    });

    it("allows a non-loopback address with tokens", () => {
      expect(parseConfig(["--listen", "0.0.0.0:7447", "--tokens", tokens], {}).insecure).toBe(false);
    });

    it("refuses incomplete or unreadable TLS settings", () => {
      const pem = write("not-a-cert.pem", "not a certificate\n");
      expect(configError(["--tls-cert", pem]).message).toMatch(/go together/);
      expect(configError(["--tls-client-ca", pem]).message).toMatch(/needs --tls-cert and --tls-key/);
      expect(configError(["--tls-cert", path.join(dir, "none.pem"), "--tls-key", pem]).message).toMatch(/--tls-cert .*none\.pem: cannot read it/);
      expect(configError(["--tls-cert", pem, "--tls-key", pem]).message).toMatch(/unusable/);
      expect(configError(["--tls-cert", pem, "--tls-key", pem, "--tls-client-ca", pem]).message).toMatch(/--tls-client-ca .*not-a-cert\.pem: unusable \(no PEM certificate in it\)/);
    });
  });

  it.each([
    [["--listen", "7447"], /host:port/],
    [["--listen", "unix:relative.sock"], /unix:\/\/\/absolute/],
    [["--bind", "Bad=/srv"], /NAME=\/abs\/dir/],
    [["--bind", "ok=relative/dir"], /absolute/],
    [["--bind", "a=/x", "--bind", "a=/y"], /bound twice/],
    [["--log-level", "loud"], /expected one of/],
    [["--max-message-bytes", "1KiB"], /between/],
    [["--max-read-bytes", "lots"], /byte count/],
    [["--no-such-flag"], /unknown option/],
  ])("stops with exit code 2 on %j", (argv, message) => {
    const error = configError(argv);
    expect(error.exitCode).toBe(2);
    expect(error.message).toMatch(message);
  });
});
