// The documentation's code blocks, run against a real daemon so that they
// cannot drift from what the daemon, the CLI and the clients do.
//
// Documents: README.md, docs/*.md and clients/*/README.md. Each document gets
// a daemon of its own (fresh data dir) and a sandbox, and its blocks run in
// document order, each in a process of its own (a block's shell variables do
// not reach the next; what it did on the daemon does).
//
// The convention, in a block's info string (the text after the opening ```):
//   - `sh`, `bash`, `shell`: run with `bash -eu` (a failed command fails the
//     block; a command expected to fail says so, e.g. `|| echo "exit $?"`),
//     with `filetools` and `filetoolsd` (the built ones) on PATH;
//   - `ts`, `typescript`: run with tsx as an ES module (top-level await);
//   - `python`, `py`: run with the repository's .venv (the Python client installed);
//   - `go`: a whole program (`package main`) runs as it is; a fragment runs in
//     a block of `func run(ctx context.Context) error` after its prelude, its
//     own `import` lines hoisted, `context`, `errors`, `fmt`, `os`, `strings`
//     and the client imported for it;
//     either in a module that uses clients/go through a `replace`;
//   - any other language (json, yaml, text, none) is not run;
//   - `norun: REASON` after the language: not run, and the reason is required
//     (e.g. ```` ```sh norun: starts a daemon that runs until stopped ````).
// An HTML comment right before a block, `<!-- doc-test prelude: CODE -->`,
// gives code that runs before the block without being shown (what an earlier
// fragment set up, such as a connected client).
//
// The sandbox is a directory of symbolic links to the repository's top-level
// entries (so `bin/filetoolsd`, `npx filetools`, `clients/…` work as from a
// clone) in which files a block writes stay; TMPDIR is inside it too. `npx`
// there runs only the repository's own commands (node_modules/.bin), never a
// download. A block must not reinstall or rebuild the repository (`npm ci`
// would empty its node_modules through the link): such a block is `norun`.
// `127.0.0.1:7447` in a block is replaced by the test daemon's address, and
// FILETOOLS_ADDRESS is set to it.
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, startDaemon, type Daemon } from "../e2e/daemon.js";

const RUNNERS = { sh: "sh", bash: "sh", shell: "sh", ts: "ts", typescript: "ts", python: "py", py: "py", go: "go" } as const;
type Runner = (typeof RUNNERS)[keyof typeof RUNNERS];

interface Block {
  line: number;
  runner: Runner | undefined;
  norun: string | undefined;
  prelude: string;
  code: string;
}

const GO = process.env.GO ?? (existsSync("/usr/local/go/bin/go") ? "/usr/local/go/bin/go" : "go");
const VENV_PYTHON = path.join(ROOT, ".venv/bin/python");
const DEFAULT_ADDRESS = /127\.0\.0\.1:7447/g;

/** The fenced blocks of a Markdown text (indented ones too, as in a list item). */
function blocksOf(markdown: string): Block[] {
  const lines = markdown.split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,})(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, info] = open as unknown as [string, string, string, string];
    const end = lines.findIndex((l, j) => j > i && l.trimStart().startsWith(fence) && l.trim() === fence);
    if (end < 0) throw new Error(`line ${i + 1}: a block that is never closed`);
    const code = lines
      .slice(i + 1, end)
      .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l.trimStart()))
      .join("\n");
    const [language = "", ...rest] = info.trim().split(/\s+/);
    const flags = rest.join(" ");
    const norun = /^norun\b:?\s*(.*)$/.exec(flags);
    blocks.push({
      line: i + 1,
      runner: RUNNERS[language as keyof typeof RUNNERS],
      norun: norun ? norun[1]!.trim() : undefined,
      prelude: preludeBefore(lines, i),
      code: `${code}\n`,
    });
    i = end;
  }
  return blocks;
}

function preludeBefore(lines: string[], fenceIndex: number): string {
  let j = fenceIndex - 1;
  while (j >= 0 && lines[j]!.trim() === "") j--;
  if (j < 0 || !lines[j]!.trim().endsWith("-->")) return "";
  let k = j;
  while (k >= 0 && !lines[k]!.includes("<!--")) k--;
  const comment = /<!--\s*doc-test prelude:([\s\S]*?)-->/.exec(lines.slice(k, j + 1).join("\n"));
  return comment ? `${comment[1]!.trim()}\n` : "";
}

function documents(): string[] {
  const docs = readdirSync(path.join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`);
  const clients = readdirSync(path.join(ROOT, "clients"))
    .map((c) => `clients/${c}/README.md`)
    .filter((f) => existsSync(path.join(ROOT, f)));
  return ["README.md", ...docs.sort(), ...clients.sort()];
}

/** A directory of links to the repository's top-level entries, with bin/ for the commands and tmp/ for TMPDIR. */
function sandbox(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "filetools-doc-"));
  for (const entry of readdirSync(ROOT)) if (entry !== ".git") symlinkSync(path.join(ROOT, entry), path.join(dir, entry));
  mkdirSync(path.join(dir, ".doc-bin"));
  symlinkSync(path.join(ROOT, "clients/ts/bin/filetools.js"), path.join(dir, ".doc-bin/filetools"));
  symlinkSync(path.join(ROOT, "bin/filetoolsd"), path.join(dir, ".doc-bin/filetoolsd"));
  // npx runs the repository's own commands only: a block must never download one from the registry.
  writeFileSync(
    path.join(dir, ".doc-bin/npx"),
    `#!/usr/bin/env bash\nbin="${ROOT}/node_modules/.bin/$1"\n[ -x "$bin" ] || { echo "npx $1: not a command of the repository" >&2; exit 127; }\nshift\nexec "$bin" "$@"\n`,
    { mode: 0o755 },
  );
  mkdirSync(path.join(dir, ".doc-tmp"));
  return dir;
}

const GO_IMPORTS = ['"context"', '"errors"', '"fmt"', '"os"', '"strings"', 'filetools "github.com/filetools/filetools/clients/go"'];

/** A Go fragment as a program: its body in run(ctx), its own imports hoisted, the usual ones blank-used. */
function goProgram(prelude: string, code: string): string {
  if (/^package\s/m.test(code)) return code;
  const own: string[] = [];
  const hoist = (text: string) => text.replace(/^import\s+(.+)$/gm, (_, spec: string) => (own.push(spec.trim()), ""));
  // The block in a scope of its own: its `:=` may declare again what the prelude declared.
  const body = `${hoist(prelude)}{\n${hoist(code)}}\n`;
  const imports = [...new Set([...GO_IMPORTS, ...own])];
  return [
    "package main",
    `import (\n${imports.map((i) => `\t${i}`).join("\n")}\n)`,
    "var _, _, _, _, _ = errors.Is, fmt.Print, os.Exit, strings.Repeat, filetools.Dial",
    "func main() {\n\tif err := run(context.Background()); err != nil {\n\t\tfmt.Fprintln(os.Stderr, err)\n\t\tos.Exit(1)\n\t}\n}",
    `func run(ctx context.Context) error {\n${body}\treturn nil\n}`,
  ].join("\n\n");
}

function goModule(dir: string): void {
  const client = path.join(ROOT, "clients/go");
  const goMod = readFileSync(path.join(client, "go.mod"), "utf8");
  const goVersion = /^go\s+(\S+)/m.exec(goMod)![1];
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, "go.mod"),
    `module doctest\n\ngo ${goVersion}\n\nrequire github.com/filetools/filetools/clients/go v0.0.0\n\nreplace github.com/filetools/filetools/clients/go => ${client}\n`,
  );
  copyFileSync(path.join(client, "go.sum"), path.join(dir, "go.sum"));
}

function run(block: Block, dir: string, address: string, n: number): { status: number | null; output: string } {
  const code = block.code.replace(DEFAULT_ADDRESS, address);
  const prelude = block.prelude.replace(DEFAULT_ADDRESS, address);
  const env = {
    ...process.env,
    FILETOOLS_ADDRESS: address,
    TMPDIR: path.join(dir, ".doc-tmp"),
    PATH: [path.join(dir, ".doc-bin"), path.join(ROOT, ".venv/bin"), path.dirname(process.execPath), path.dirname(GO), process.env.PATH].join(":"),
    // Offline: the Go module cache (filled by `go mod download` in clients/go) has what the client needs.
    GOFLAGS: "-mod=mod",
    GOPROXY: "off",
    GOTOOLCHAIN: "local",
  };
  let command: string[];
  let cwd = dir;
  switch (block.runner) {
    case "sh":
      writeFileSync(path.join(dir, `.doc-${n}.sh`), `${prelude}${code}`);
      command = ["bash", "-eu", `.doc-${n}.sh`];
      break;
    case "ts":
      writeFileSync(path.join(dir, `.doc-${n}.ts`), `${prelude}${code}\nexport {};\n`);
      command = [process.execPath, path.join(ROOT, "node_modules/tsx/dist/cli.mjs"), `.doc-${n}.ts`];
      break;
    case "py":
      writeFileSync(path.join(dir, `.doc-${n}.py`), `${prelude}${code}`);
      command = [VENV_PYTHON, `.doc-${n}.py`];
      break;
    case "go":
      cwd = path.join(dir, `.doc-go-${n}`);
      goModule(cwd);
      writeFileSync(path.join(cwd, "main.go"), goProgram(prelude, code));
      command = [GO, "run", "."];
      break;
    default:
      throw new Error("not a runnable block");
  }
  const result = spawnSync(command[0]!, command.slice(1), { cwd, env, encoding: "utf8", timeout: 120_000 });
  return { status: result.status, output: `${result.stdout}${result.stderr}${result.error ? String(result.error) : ""}` };
}

for (const doc of documents()) {
  const blocks = blocksOf(readFileSync(path.join(ROOT, doc), "utf8"));
  describe(doc, () => {
    let daemon: Daemon;
    let dir: string;
    beforeAll(async () => {
      dir = sandbox();
      daemon = await startDaemon();
    });
    afterAll(async () => {
      await daemon?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    });

    it("every block not run says why", () => {
      expect(blocks.filter((b) => b.norun === "").map((b) => `line ${b.line}: norun without a reason`)).toEqual([]);
    });

    blocks.forEach((block, n) => {
      if (!block.runner || block.norun !== undefined) return;
      it(`line ${block.line} (${block.runner})`, () => {
        const { status, output } = run(block, dir, daemon.address, n);
        expect(status, output).toBe(0);
      }, 180_000);
    });
  });
}

describe("the README", () => {
  it("is a guide of at most ~300 lines", () => {
    expect(readFileSync(path.join(ROOT, "README.md"), "utf8").split("\n").length).toBeLessThanOrEqual(300);
  });
});
