// The built `filetools` command line against a real daemon: every command at
// least once, text and --json output, stdin, export and import, progress on a
// terminal, --help, and each exit code. One daemon; the steps run in order.
import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDaemon, type Daemon } from "../../../test/e2e/daemon.js";
import { makeCa, makeLeaf } from "../../../test/support/certs.js";
import { numberLines } from "../src/format.js";
import { CLI, PACKAGE, ensureCliBuilt } from "./cli-build.js";


interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
  bytes: Buffer;
}

let daemon: Daemon;
let dir: string; // local files of the test
const TOKEN = "cli-test-token";

/**
 * What every run of the CLI gets: the daemon's address, a token allowed every
 * workspace, and the CA and client certificate of the daemon's mutual TLS.
 */
function cliEnv(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    FILETOOLS_ADDRESS: daemon.address,
    FILETOOLS_TOKEN: TOKEN,
    FILETOOLS_CA: path.join(dir, "ca.crt"),
    FILETOOLS_CLIENT_CERT: path.join(dir, "client.crt"),
    FILETOOLS_CLIENT_KEY: path.join(dir, "client.key"),
  };
}

/** Runs the CLI with FILETOOLS_ADDRESS pointing at the daemon. */
function cli(args: string[], options: { input?: string | Buffer; env?: Record<string, string>; cwd?: string } = {}): Promise<Result> {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: options.cwd ?? dir,
    env: { ...cliEnv(), ...options.env },
  });
  child.stdin.end(options.input ?? "");
  return finished(child);
}

function finished(child: ReturnType<typeof spawn>): Promise<Result> {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout!.on("data", (d: Buffer) => out.push(d));
  child.stderr!.on("data", (d: Buffer) => err.push(d));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      const bytes = Buffer.concat(out);
      resolve({ code, stdout: bytes.toString("utf8"), stderr: Buffer.concat(err).toString("utf8"), bytes });
    });
  });
}

/** Runs and expects exit 0, returning stdout. */
async function ok(args: string[], options?: Parameters<typeof cli>[1]): Promise<string> {
  const result = await cli(args, options);
  expect(result.stderr + (result.code === 0 ? "" : `\n(exit ${result.code})`)).not.toContain("(exit");
  return result.stdout;
}

async function json(args: string[], options?: Parameters<typeof cli>[1]): Promise<any> {
  return JSON.parse(await ok(["--json", ...args], options));
}

const sha256 = (bytes: Buffer | string) => createHash("sha256").update(bytes).digest("hex");

beforeAll(async () => {
  ensureCliBuilt();
  dir = mkdtempSync(path.join(tmpdir(), "filetools-cli-"));
  const tokens = [
    { name: "cli", token: TOKEN, workspaces: ["*"] },
    { name: "other", token: "other-token", workspaces: ["elsewhere"] },
  ];
  writeFileSync(path.join(dir, "tokens.json"), JSON.stringify({ tokens }));
  makeCa(dir, "ca");
  makeLeaf(dir, "server", "ca", "serverAuth");
  makeLeaf(dir, "client", "ca", "clientAuth");
  const files = (...names: string[]) => names.map((name) => path.join(dir, name));
  const [tokensFile, cert, key, ca] = files("tokens.json", "server.crt", "server.key", "ca.crt");
  daemon = await startDaemon({ args: ["--tokens", tokensFile!, "--tls-cert", cert!, "--tls-key", key!, "--tls-client-ca", ca!] });
});

afterAll(async () => {
  await daemon?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// Each test runs the command line a dozen times or more, a fresh Node process each: ~27 s at a load of 12 on 2 cores.
describe("filetools", { timeout: 120_000 }, () => {
  it("--help: the program's lists commands, exit codes and environment; every command has its own", async () => {
    const help = await cli(["--help"]);
    expect(help.code).toBe(0);
    for (const text of ["read", "grep", "snapshots", "import", "FILETOOLS_ADDRESS", "Exit codes:", "130"]) expect(help.stdout).toContain(text);
    const commands = [
      "read", "write", "edit", "rm", "mv", "mkdir", "stat", "ls", "grep", "upload", "download", "import",
      "workspaces", "workspaces ls", "workspaces show", "workspaces create", "workspaces delete",
      "runs", "runs start", "runs finish", "runs changes", "snapshots", "snapshots ls", "snapshots diff", "snapshots export", "snapshots restore", "version", "watch",
    ];
    const helps = await Promise.all(commands.map((command) => cli([...command.split(" "), "--help"])));
    helps.forEach((result, i) => {
      expect({ command: commands[i], code: result.code }).toEqual({ command: commands[i], code: 0 });
      expect(result.stdout).toContain(`Usage: filetools ${commands[i]}`);
    });
    expect(helps[0]!.stdout).toContain("--tail <lines>");
  });

  it("watch: the changes after --since, then live, filtered by globs, text and --json; SIGINT ends it (130)", async () => {
    await ok(["workspaces", "create", "watched"]);
    await ok(["write", "watched", "a.txt", "-"], { input: "a\n" });
    await ok(["write", "watched", "b.md", "-"], { input: "b\n" });
    await ok(["mv", "watched", "a.txt", "c.txt"]);
    const child = spawn(process.execPath, [CLI, "--json", "watch", "watched", "*.txt", "--since", "0"], { cwd: dir, env: cliEnv() });
    const result = finished(child);
    let seen = "";
    child.stdout!.on("data", (d: Buffer) => {
      seen += d.toString("utf8");
      if (seen.split("\n").length > 2) child.kill("SIGINT");
    });
    const { code, stdout } = await result;
    expect(code).toBe(130);
    const entries = stdout.trim().split("\n").map((line) => JSON.parse(line));
    expect(entries.map((e) => [e.cursor, e.kind, e.path, e.fromPath, e.actor.rpc, e.actor.tokenName])).toEqual([
      ["1", "JOURNAL_KIND_CREATED", "/a.txt", "", "Write", "cli"],
      ["3", "JOURNAL_KIND_MOVED", "/c.txt", "/a.txt", "Move", "cli"],
    ]);
    const text = spawn(process.execPath, [CLI, "watch", "watched", "--since", "2"], { cwd: dir, env: cliEnv() });
    const textResult = finished(text);
    text.stdout!.on("data", () => text.kill("SIGINT"));
    expect((await textResult).stdout).toMatch(/^3 \S+ moved \/a\.txt -> \/c\.txt \(Move, token cli\)\n/);
    expect((await cli(["watch", "watched", "--since", "x"])).code).toBe(2);
    await ok(["workspaces", "delete", "watched"]); // the listings of the tests after this one name their own workspaces only
  });

  it("npx filetools from the repository root runs this command line, not the root package's bin", async () => {
    const npx = spawn("npx", ["filetools", "--help"], { cwd: path.resolve(PACKAGE, "../.."), env: cliEnv() });
    npx.stdin.end();
    const help = await finished(npx);
    expect({ code: help.code, stderr: help.stderr }).toEqual({ code: 0, stderr: "" });
    expect(help.stdout).toMatch(/^Usage: filetools \[options\] \[command\]\n/);
  });

  it("--version prints this command line's version; version adds the daemon's (text and --json)", async () => {
    const { version } = JSON.parse(readFileSync(path.join(PACKAGE, "../../package.json"), "utf8")) as { version: string };
    expect(await cli(["--version"])).toMatchObject({ code: 0, stdout: `${version}\n` });
    expect(await ok(["version"])).toMatch(new RegExp(`^filetools ${version}\nfiletoolsd ${version} \\(filetools\\.v1, node v\\d+\\.\\d+\\.\\d+\\)\n$`));
    expect(await json(["version"])).toEqual({ client: version, daemon: { version, api: "filetools.v1", runtime: `node ${process.version}` } });
  });

  it("workspaces create, show, ls (text and --json)", async () => {
    expect(await ok(["workspaces", "create", "demo"])).toBe("created workspace demo\n");
    expect((await json(["workspaces", "show", "demo"])).workspace.id).toBe("demo");
    const listing = await ok(["workspaces", "ls"]);
    expect(listing.split("\n")[0]).toMatch(/^ID\s+KIND\s+CREATED$/);
    expect(listing).toMatch(/^demo\s+managed\s+\d{4}-\d\d-\d\d \d\d:\d\d$/m);
    const { workspaces } = JSON.parse(await ok(["workspaces", "ls", "--json"])); // global options after the command too
    expect(workspaces.map((w: { id: string }) => w.id)).toEqual(["demo"]);
  });

  const lines = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join("\n") + "\n";

  it("write from stdin, then read: numbered like cat -n, windows, tail, raw, --json", async () => {
    const written = await json(["write", "demo", "notes/a.txt", "-"], { input: lines });
    expect(written).toMatchObject({ path: "/notes/a.txt", created: true, size: String(lines.length), sha256: sha256(lines) });

    const whole = await cli(["read", "demo", "notes/a.txt"]);
    expect(whole).toMatchObject({ code: 0, stdout: numberLines(lines), stderr: "" });
    expect(whole.stdout.split("\n")[9]).toBe("    10\tline 10");

    const window = await cli(["read", "demo", "notes/a.txt", "--start", "5", "--count", "3"]);
    expect(window.stdout).toBe("     5\tline 5\n     6\tline 6\n     7\tline 7\n");
    expect(window.stderr).toMatch(/^filetools: lines 5-7( of 30)?; continue with --start 8\n$/); // the total once the daemon knows it

    expect(await ok(["read", "demo", "notes/a.txt", "--tail", "2", "--raw"])).toBe("line 29\nline 30\n");
    const capped = await cli(["read", "demo", "notes/a.txt", "--max-bytes", "20", "--raw"]);
    expect(capped.stdout).toBe("line 1\nline 2\n"); // a third line would make 21 bytes
    expect(capped.stderr).toMatch(/^filetools: lines 1-2( of 30)? \(--max-bytes reached\); continue with --start 3\n$/);

    const doc = await json(["read", "demo", "/notes/a.txt", "--start", "29"]);
    expect(doc).toMatchObject({ text: "line 29\nline 30\n", firstLine: 29, lastLine: 30, totalLines: 30, eof: true, truncated: false });
    expect(doc).not.toHaveProperty("nextStartLine");
    expect(doc).toMatchObject({ version: written.version, encoding: "utf-8" });
    expect(doc.file).toMatchObject({ path: "/notes/a.txt", type: "FILE_TYPE_FILE", size: String(lines.length) });
    const middle = await json(["read", "demo", "notes/a.txt", "--start", "3", "--count", "2"]);
    expect(middle).toMatchObject({ text: "line 3\nline 4\n", firstLine: 3, lastLine: 4, nextStartLine: 5, eof: false });
  });

  it("write: from a file, modes, newline, refuses non-UTF-8 unless --binary", async () => {
    writeFileSync(path.join(dir, "crlf.txt"), "a\nb\n");
    const crlf = await json(["write", "demo", "crlf.txt", "crlf.txt", "--newline", "crlf"]);
    expect(crlf.sha256).toBe(sha256("a\r\nb\r\n"));
    await ok(["write", "demo", "crlf.txt", "-", "--mode", "append"], { input: "c\n" });
    expect(await ok(["read", "demo", "crlf.txt", "--raw"])).toBe("a\r\nb\r\nc\r\n"); // the file's CRLF style is preserved

    const exists = await cli(["write", "demo", "crlf.txt", "-", "--mode", "create-only"], { input: "x" });
    expect(exists.code).toBe(1);
    expect(exists.stderr).toMatch(/^filetools: .* \(ALREADY_EXISTS\)\n$/);

    const binary = Buffer.from([0xff, 0xfe, 0x00, 0x80, 0x41]);
    writeFileSync(path.join(dir, "blob.bin"), binary);
    const refused = await cli(["write", "demo", "blob.bin", "blob.bin"]);
    expect(refused).toMatchObject({ code: 2, stderr: "filetools: blob.bin is not UTF-8 text; use --binary to write its bytes as they are (USAGE)\n" });
    expect((await json(["write", "demo", "blob.bin", "blob.bin", "--binary"])).sha256).toBe(sha256(binary));
    expect((await cli(["download", "demo", "blob.bin", "-"])).bytes).toEqual(binary);
  });

  it("edit: the diff, --json, --all, --dry-run, and the failures with their details", async () => {
    const edited = await ok(["edit", "demo", "notes/a.txt", "--old", "line 10\n", "--new", "line ten\n"]);
    expect(edited).toContain("-line 10\n+line ten\n");
    expect(edited).toMatch(/^edited \/notes\/a\.txt: 1 replacement, version [0-9a-f]{16}$/m);

    const dry = await json(["edit", "demo", "notes/a.txt", "--old", "line 2", "--new", "LINE 2", "--all", "--dry-run"]);
    expect(dry.replacements).toBe("11"); // line 2, line 20 … line 29
    expect(await ok(["read", "demo", "notes/a.txt", "--start", "2", "--count", "1", "--raw"])).toBe("line 2\n");

    const twoEdits = await json(["edit", "demo", "notes/a.txt", "--old", "line 1\n", "--new", "one\n", "--old", "line 3\n", "--new", "three\n"]);
    expect(twoEdits.replacements).toBe("2");

    const missing = await cli(["edit", "demo", "notes/a.txt", "--old", "line 1O", "--new", "x"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/\(OLD_TEXT_NOT_FOUND\)\n  edit_index: 0\n/);
    expect(missing.stderr).toContain("closest_line: ");

    const stale = await cli(["edit", "demo", "notes/a.txt", "--old", "one", "--new", "1", "--expect-version", "0000000000000000"]);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(/\(CONTENT_CHANGED\)\n  current_version: [0-9a-f]{16}\n$/);

    const unpaired = await cli(["edit", "demo", "notes/a.txt", "--old", "x"]);
    expect(unpaired).toMatchObject({ code: 2, stderr: "filetools: give --old and --new in pairs (at least one) (USAGE)\n" });
  });

  it("mkdir, mv, stat, ls (table, -r, -g, --json)", async () => {
    expect(await ok(["mkdir", "demo", "src/lib", "-p"])).toBe("created /src/lib\n");
    expect(await ok(["mkdir", "demo", "src/lib", "-p"])).toBe("/src/lib already exists\n");
    expect((await cli(["mkdir", "demo", "x/y"])).code).toBe(3); // no -p: the parent must exist
    await ok(["write", "demo", "src/lib/util.ts", "-"], { input: "export const answer = 42;\n// TODO: more\n" });
    await ok(["write", "demo", "src/main.ts", "-"], { input: "import { answer } from './lib/util';\nconsole.log(answer);\n// TODO later\n" });
    expect(await ok(["mv", "demo", "crlf.txt", "src/crlf.txt"])).toBe("moved /crlf.txt -> /src/crlf.txt\n");
    const clash = await cli(["mv", "demo", "src/crlf.txt", "src/main.ts"]);
    expect(clash.code).toBe(1);
    expect(clash.stderr).toContain("(ALREADY_EXISTS)");

    const stat = await ok(["stat", "demo", "src/main.ts", "--lines", "--binary"]);
    expect(stat).toMatch(/^path: +\/src\/main\.ts\ntype: +file\nsize: +\d+\nmode: +0644 \(-rw-r--r--\)\n/);
    expect(stat).toMatch(/^lines: +3\nbinary: +no\n$/m);
    expect(await json(["stat", "demo", "src"])).toMatchObject({ path: "/src", type: "FILE_TYPE_DIRECTORY" });

    const listing = await ok(["ls", "demo", "src", "-r"]);
    expect(listing.trimEnd().split("\n").map((l) => l.split(/\s+/).at(-1))).toEqual(["/src/crlf.txt", "/src/lib/", "/src/lib/util.ts", "/src/main.ts"]);
    expect(listing).toMatch(/^drwxr-xr-x +\d+ +\d{4}-\d\d-\d\d \d\d:\d\d +\/src\/lib\/$/m);
    const ts = await json(["ls", "demo", "src", "-r", "-g", "**/*.ts"]);
    expect(ts.entries.map((e: { path: string }) => e.path)).toEqual(["/src/lib/util.ts", "/src/main.ts"]);
    expect(ts.truncated).toBe(false);
    const capped = await cli(["ls", "demo", "-r", "--max-entries", "1"]);
    expect(capped.stderr).toBe("filetools: listing stopped at 1 entries (raise --max-entries)\n");
  });

  it("grep: grep -rn style with context, -l, -c, -i, globs, JSON Lines", async () => {
    const found = await ok(["grep", "demo", "TODO", "src"]);
    expect(found).toBe("/src/lib/util.ts:2:// TODO: more\n/src/main.ts:3:// TODO later\n");
    const context = await ok(["grep", "demo", "answer", "src", "-B", "1", "-g", "main.ts"]);
    expect(context).toBe("/src/main.ts:1:import { answer } from './lib/util';\n/src/main.ts:2:console.log(answer);\n");
    const separated = await ok(["grep", "demo", "-F", "TODO", "-A", "1"]);
    expect(separated).toBe("/src/lib/util.ts:2:// TODO: more\n--\n/src/main.ts:3:// TODO later\n");
    expect(await ok(["grep", "demo", "todo", "-i", "-l"])).toBe("/src/lib/util.ts\n/src/main.ts\n");
    expect(await ok(["grep", "demo", "line [0-9]+", "-c", "--exclude", "src"])).toBe("/notes/a.txt:27\n");
    // --sort none: the same lines, in the order found (here a directory's own order).
    const unsorted = await ok(["grep", "demo", "todo", "-i", "-l", "--sort", "none"]);
    expect(unsorted.split("\n").sort()).toEqual("/src/lib/util.ts\n/src/main.ts\n".split("\n").sort());
    const badSort = await cli(["grep", "demo", "TODO", "--sort", "size"]);
    expect(badSort.code).toBe(2);
    expect(badSort.stderr).toMatch(/--sort.*size.*path, none/);

    const jsonLines = (await ok(["--json", "grep", "demo", "TODO", "-m", "1"])).trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(jsonLines).toHaveLength(2);
    expect(jsonLines[0].match).toMatchObject({ path: "/src/lib/util.ts", lineNumber: "2", column: 4, line: "// TODO: more" });
    expect(jsonLines[1].summary).toMatchObject({ truncated: true, matches: "1" });
    const truncated = await cli(["grep", "demo", "TODO", "-m", "1"]);
    expect(truncated.stderr).toBe("filetools: stopped after 1 results (raise --max-results)\n");

    const badRegex = await cli(["grep", "demo", "("]);
    expect(badRegex.code).toBe(2);
    expect(badRegex.stderr).toMatch(/^filetools: .*\(INVALID_ARGUMENT\)\n$/);
  });

  it("upload and download: bytes and sha256 round trip, stdin and stdout, a file only once complete", async () => {
    const bytes = Buffer.alloc(3 * 1024 * 1024 + 5);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919) % 251;
    writeFileSync(path.join(dir, "source.bin"), bytes);
    const uploaded = await json(["upload", "demo", "source.bin", "data/big.bin"]);
    expect(uploaded).toMatchObject({ path: "/data/big.bin", size: String(bytes.length), sha256: sha256(bytes), created: true });
    expect(await ok(["upload", "demo", "-", "data/small.txt"], { input: "small\n" })).toMatch(/^created \/data\/small\.txt: 6 bytes, sha256 /);
    const wrongSha = await cli(["upload", "demo", "source.bin", "data/checked.bin", "--sha256", sha256("other")]);
    expect(wrongSha.code).toBe(2);
    expect(wrongSha.stderr).toContain("(INVALID_ARGUMENT)");
    expect((await cli(["stat", "demo", "data/checked.bin"])).code).toBe(3); // nothing written
    await ok(["upload", "demo", "source.bin", "data/checked.bin", "--sha256", sha256(bytes)]);

    expect(existsSync(path.join(dir, "big.bin"))).toBe(false);
    expect(await ok(["download", "demo", "data/big.bin"])).toBe(`saved /data/big.bin to big.bin: ${bytes.length} bytes, sha256 ${sha256(bytes)}\n`);
    expect(sha256(readFileSync(path.join(dir, "big.bin")))).toBe(sha256(bytes)); // (toEqual on megabytes is slow)
    const header = await json(["download", "demo", "data/big.bin", "copy.bin"]);
    expect(header).toMatchObject({ size: String(bytes.length), sha256: sha256(bytes) });
    expect(sha256(readFileSync(path.join(dir, "copy.bin")))).toBe(sha256(bytes));
    expect((await cli(["download", "demo", "data/small.txt", "-"])).stdout).toBe("small\n");

    const missing = await cli(["download", "demo", "data/none.bin", "none.bin"]);
    expect(missing.code).toBe(3);
    expect(existsSync(path.join(dir, "none.bin"))).toBe(false);
    expect(readdirSync(dir).filter((name) => name.endsWith(".tmp"))).toEqual([]); // no temp file left
  });

  it("rm: a directory needs -r; nothing there is not an error", async () => {
    const dirRefused = await cli(["rm", "demo", "data"]);
    expect(dirRefused.code).toBe(1);
    expect(dirRefused.stderr).toContain("(IS_A_DIRECTORY)");
    expect(await ok(["rm", "demo", "data", "-r"])).toBe("removed /data\n");
    expect(await json(["rm", "demo", "data"])).toEqual({ path: "/data", existed: false });
  });

  let runId = "";
  let snapshotSha = "";

  it("runs start, changes (text and JSON Lines), finish", async () => {
    const started = await json(["runs", "start", "demo", "--label", "crew=alpha"]);
    runId = started.run.id;
    expect(started.run).toMatchObject({ workspace: "demo", labels: { crew: "alpha" } });
    const again = await cli(["runs", "start", "demo"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("(RUN_ACTIVE)");

    await ok(["write", "demo", "report.md", "-"], { input: "# Report\n" });
    await ok(["mv", "demo", "report.md", "reports/q3.md"]);
    const changes = await ok(["runs", "changes", "demo", runId]);
    expect(changes).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d  create  \/report\.md\n.*  move    \/report\.md -> \/reports\/q3\.md\n$/);
    const changeLines = (await ok(["--json", "runs", "changes", "demo", runId])).trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(changeLines.map((c) => [c.kind, c.path])).toEqual([
      ["CHANGE_KIND_CREATE", "/report.md"],
      ["CHANGE_KIND_MOVE", "/reports/q3.md"],
    ]);

    const finished = await ok(["runs", "finish", "demo", runId, "--label", "note=cli"]);
    expect(finished).toMatch(new RegExp(`^finished ${runId}: 1 created, 0 modified, 0 deleted, 1 moved\\nsnapshot \\S+: (1 file|\\d+ files), `));
    expect((await cli(["runs", "finish", "demo", runId])).code).toBe(3); // no longer the active run
  });

  it("snapshots ls, export to a file (tar lists it, sha256 as listed), export --live to stdout, restore", async () => {
    const { snapshots } = await json(["snapshots", "ls", "demo"]);
    expect(snapshots).toHaveLength(1);
    expect(snapshots[0]).toMatchObject({ runId, labels: { crew: "alpha", note: "cli" }, changes: { created: "1", moved: "1" } });
    snapshotSha = snapshots[0].sha256;
    const table = await ok(["snapshots", "ls", "demo"]);
    expect(table.split("\n")[0]).toMatch(/^ID\s+CREATED\s+SIZE\s+FILES\s+RUN\s+CHANGES$/);
    expect(table).toContain(snapshots[0].id);

    const saved = await cli(["snapshots", "export", "demo", "demo.tar.gz"]);
    expect(saved).toMatchObject({ code: 0, stderr: "" }); // not a terminal: no progress bar
    expect(saved.stdout).toContain(`sha256 ${snapshotSha}`);
    const tarball = readFileSync(path.join(dir, "demo.tar.gz"));
    expect(sha256(tarball)).toBe(snapshotSha);
    const members = execFileSync("tar", ["-tzf", "demo.tar.gz"], { cwd: dir, encoding: "utf8" }).split("\n");
    expect(members).toEqual(expect.arrayContaining(["notes/a.txt", "src/main.ts", "reports/q3.md"]));

    const live = await cli(["snapshots", "export", "demo", "-", "--live", "--include", "src/**"]);
    expect(live.code).toBe(0);
    const liveMembers = execFileSync("tar", ["-tzf", "-"], { input: live.bytes, encoding: "utf8" }).trimEnd().split("\n");
    expect(liveMembers.sort()).toEqual(["src/crlf.txt", "src/lib/util.ts", "src/main.ts"]);

    await ok(["rm", "demo", "reports", "-r"]);
    expect(await ok(["snapshots", "restore", "demo", snapshots[0].id])).toBe(`restored demo from snapshot ${snapshots[0].id}\n`);
    expect(await ok(["read", "demo", "reports/q3.md", "--raw"])).toBe("# Report\n");
  });

  it("snapshots diff against the live workspace (text and JSON Lines); snapshots ls --label, --after, --before", async () => {
    const { snapshots } = await json(["snapshots", "ls", "demo"]);
    const id: string = snapshots[0].id;
    await ok(["write", "demo", "diffed.txt", "-"], { input: "new\n" });
    await ok(["write", "demo", "reports/q3.md", "-"], { input: "# Report, revised\n" });
    const text = (await ok(["snapshots", "diff", "demo", id])).trimEnd().split("\n");
    expect(text).toEqual(expect.arrayContaining(["A /diffed.txt  4 B 644", "M /reports/q3.md  9 B 644 → 18 B 644"]));
    expect(text.at(-1)).toMatch(new RegExp(`^1 added, 0 removed, 1 modified, \\d+ unchanged \\(${id} → live\\)$`));
    const lines = (await ok(["--json", "snapshots", "diff", "demo", id, "--live"])).trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(lines.slice(0, -1).map((e) => [e.kind, e.path]).sort()).toEqual([
      ["DIFF_KIND_ADDED", "/diffed.txt"],
      ["DIFF_KIND_MODIFIED", "/reports/q3.md"],
    ]);
    expect(lines.find((e) => e.path === "/reports/q3.md")).toMatchObject({ sizeBefore: "9", sizeAfter: "18", sha256Before: sha256("# Report\n"), sha256After: sha256("# Report, revised\n") });
    expect(lines.at(-1)).toMatchObject({ summary: { from: id, added: "1", modified: "1" } });
    const both = await cli(["snapshots", "diff", "demo", id, id, "--live"]);
    expect({ code: both.code, stderr: both.stderr }).toEqual({ code: 2, stderr: "filetools: name a second snapshot or --live, not both (USAGE)\n" });
    const unknown = await cli(["snapshots", "diff", "demo", "20200101T000000000Z-00000000"]);
    expect(unknown.code).toBe(3);
    // --at: the file, its entry, the listing and the bytes as they were at the snapshot, the live ones changed since.
    expect(await ok(["read", "demo", "reports/q3.md", "--raw", "--at", id])).toBe("# Report\n");
    expect(await json(["stat", "demo", "reports/q3.md", "--at", id])).toMatchObject({ path: "/reports/q3.md", size: "9" });
    const listed = await ok(["ls", "demo", "/", "--at", id]);
    expect(listed).toContain("/reports/");
    expect(listed).not.toContain("diffed.txt");
    expect((await cli(["download", "demo", "reports/q3.md", "-", "--at", id])).stdout).toBe("# Report\n");
    expect((await cli(["read", "demo", "diffed.txt", "--at", id])).code).toBe(3);
    await ok(["rm", "demo", "diffed.txt"]);
    await ok(["snapshots", "restore", "demo", id]);

    const ids = async (...args: string[]) => (await json(["snapshots", "ls", "demo", ...args])).snapshots.map((s: { id: string }) => s.id);
    expect(await ids("--label", "crew=alpha", "--label", "note=cli")).toEqual([id]);
    expect(await ids("--label", "crew=beta")).toEqual([]);
    expect(await ids("--after", "2999-01-01")).toEqual([]);
    expect(await ids("--before", "2999-01-01T00:00:00Z", "--after", "2000-01-01")).toEqual([id]);
    expect((await cli(["snapshots", "ls", "demo", "--after", "someday"])).code).toBe(2);
  });

  it("shows a progress bar on stderr only when it is a terminal, leaving the data intact", async () => {
    // script(1) gives the command a pseudo-terminal; the tarball still goes to a file.
    const command = `${process.execPath} ${CLI} snapshots export demo tty.tar.gz`;
    const child = spawn("script", ["-qec", command, "/dev/null"], {
      cwd: dir,
      env: cliEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    const result = await finished(child);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/export \[.*\] 100% \| .* of /);
    expect(sha256(readFileSync(path.join(dir, "tty.tar.gz")))).toBe(snapshotSha);
  });

  it("import: a tarball from a file and from stdin; an unsafe one changes nothing", async () => {
    const tree = path.join(dir, "tree");
    mkdirSync(path.join(tree, "docs"), { recursive: true });
    writeFileSync(path.join(tree, "docs/readme.md"), "# Imported\n");
    writeFileSync(path.join(tree, "top.txt"), "top\n");
    execFileSync("tar", ["-czf", "tree.tar.gz", "-C", tree, "."], { cwd: dir });
    expect(await ok(["import", "demo", "tree.tar.gz", "--path", "imported"])).toBe("imported 2 files (15 B) into imported\n");
    expect(await ok(["read", "demo", "imported/docs/readme.md", "--raw"])).toBe("# Imported\n");
    execFileSync("tar", ["-czf", "one.tar.gz", "-C", tree, "top.txt"], { cwd: dir });
    expect(await ok(["import", "demo", "one.tar.gz", "--path", "one"])).toBe("imported 1 file (4 B) into one\n");
    const fromStdin = await json(["import", "demo", "-"], { input: readFileSync(path.join(dir, "tree.tar.gz")) });
    expect(fromStdin).toEqual({ fileCount: "2", sizeBytes: "15" });
    expect(await ok(["read", "demo", "top.txt", "--raw"])).toBe("top\n");

    // A member named ../escape.
    writeFileSync(path.join(dir, "escape"), "out\n");
    execFileSync("tar", ["-cf", "evil.tar", "-P", "--transform", "s,^,../,", "escape"], { cwd: dir });
    const unsafe = await cli(["import", "demo", "evil.tar"]);
    expect(unsafe.code).toBe(1);
    expect(unsafe.stderr).toContain("(UNSAFE_ARCHIVE)");
  });

  it("messages name the flags and commands the user typed, not the request's fields and RPCs", async () => {
    await ok(["write", "demo", "words/twice.md", "-"], { input: "same\nsame\n" });
    await ok(["upload", "demo", "-", "words/bytes.bin"], { input: Buffer.from([0, 1, 2, 0]) });
    const error = async (args: string[]) => (await cli(args)).stderr;

    expect(await error(["edit", "demo", "words/twice.md", "--old", "absent", "--new", "x"])).toMatch(/^filetools: --old #1 not found in \/words\/twice\.md/);
    // Edits apply in order: the first takes both lines, so the second finds nothing.
    expect(await error(["edit", "demo", "words/twice.md", "--old", "same\nsame\n", "--new", "one\n", "--old", "same", "--new", "y"])).toMatch(
      /^filetools: --old #2 not found in \/words\/twice\.md/,
    );
    expect(await error(["edit", "demo", "words/twice.md", "--old", "same", "--new", "other"])).toMatch(
      /^filetools: --old #1 occurs 2 times in \/words\/twice\.md; include more surrounding text to make it unique, or add --all \(OLD_TEXT_NOT_UNIQUE\)\n/,
    );
    expect(await error(["edit", "demo", "words/twice.md", "--old", "same", "--new", "same"])).toMatch(
      /^filetools: edit #1: --new is the same as --old \(INVALID_ARGUMENT\)\n/,
    );
    expect(await error(["read", "demo", "words/bytes.bin"])).toBe(
      "filetools: /words/bytes.bin is a binary file; use `filetools download` for its bytes (BINARY_FILE)\n",
    );
    expect(await error(["grep", "demo", "a(b"])).toBe("filetools: invalid regular expression /a(b/: Unterminated group (INVALID_ARGUMENT)\n");
    expect(await error(["grep", "demo", "same", "-C", "5000"])).toBe("filetools: -B/-C must be at most 1000 (got 5000) (INVALID_ARGUMENT)\n");
    expect(await error(["ls", "demo", "--max-entries", "100000000"])).toBe(
      "filetools: --max-entries must be at most 100000 (got 100000000) (INVALID_ARGUMENT)\n",
    );

    const intoMissing = await cli(["download", "demo", "words/twice.md", "no-such-dir/twice.md"]);
    expect(intoMissing).toMatchObject({
      code: 3,
      stderr: "filetools: cannot save no-such-dir/twice.md: directory no-such-dir does not exist (ENOENT)\n",
    });
    mkdirSync(path.join(dir, "a-dir"));
    const ontoDirectory = await cli(["download", "demo", "words/twice.md", "a-dir"]);
    expect(ontoDirectory).toMatchObject({ code: 1, stderr: "filetools: cannot save a-dir: it is a directory (EISDIR)\n" });
    expect(readdirSync(dir).filter((name) => name.endsWith(".tmp"))).toEqual([]); // the temp file went
  });

  it("exit codes: 2 usage, 3 not found, 4 denied (path, token, workspace), 5 unavailable (no daemon, TLS refused), 130 interrupted", async () => {
    const unknownOption = await cli(["ls", "demo", "--bogus"]);
    expect(unknownOption.code).toBe(2);
    expect(unknownOption.stderr).toMatch(/^filetools: unknown option '--bogus' \(USAGE\)\n/);
    expect((await cli(["read", "demo", "notes/a.txt", "--count", "-3"])).code).toBe(2);
    expect((await cli(["read", "demo", "notes/a.txt", "--tail", "1", "--start", "2"])).code).toBe(2);
    expect((await cli(["read", "demo", "bad\u0001name"])).code).toBe(2); // INVALID_PATH from the daemon
    expect((await cli([])).code).toBe(2);

    const noFile = await cli(["read", "demo", "nope.txt"]);
    expect(noFile).toMatchObject({ code: 3, stderr: "filetools: /nope.txt does not exist (NOT_FOUND)\n" });
    const noWorkspace = await cli(["stat", "nowhere"]);
    expect(noWorkspace.code).toBe(3);
    expect(noWorkspace.stderr).toContain("(WORKSPACE_NOT_FOUND)");
    const noLocal = await cli(["upload", "demo", "no-such-local-file", "x"]);
    expect(noLocal.code).toBe(3);
    expect(noLocal.stderr).toMatch(/^filetools: .*no-such-local-file.* \(ENOENT\)\n$/);

    const escape = await cli(["read", "demo", "../etc/passwd"]);
    expect(escape.code).toBe(4);
    expect(escape.stderr).toMatch(/^filetools: .* \(PATH_ESCAPES_WORKSPACE\)\n$/);

    const noToken = await cli(["ls", "demo"], { env: { FILETOOLS_TOKEN: "" } });
    expect(noToken.code).toBe(4);
    expect(noToken.stderr).toMatch(/^filetools: .* \(UNAUTHENTICATED\)\n$/);
    const notAllowed = await cli(["--token", "other-token", "ls", "demo"]); // --token wins over FILETOOLS_TOKEN
    expect(notAllowed.code).toBe(4);
    expect(notAllowed.stderr).toMatch(/^filetools: .* \(WORKSPACE_NOT_ALLOWED\)\n$/);

    const closedPort = await freePort();
    const down = await cli(["--address", `127.0.0.1:${closedPort}`, "ls", "demo"]);
    expect(down.code).toBe(5);
    expect(down.stderr).toMatch(new RegExp(`^filetools: cannot reach filetoolsd at 127\\.0\\.0\\.1:${closedPort}: .*\\(UNAVAILABLE\\)\\n$`));
    const late = await cli(["--timeout", "0.001", "ls", "demo"]); // no call (TLS handshake included) takes under a millisecond
    expect(late.code).toBe(5);
    expect(late.stderr).toContain("(DEADLINE_EXCEEDED)");
    // --address wins over FILETOOLS_ADDRESS.
    expect(await ok(["--address", daemon.address, "stat", "demo"], { env: { FILETOOLS_ADDRESS: `127.0.0.1:${closedPort}` } })).toContain("type:      directory");

    // TLS: the flags work as the environment does; without --ca, the default roots (grpc-js reads them from
    // GRPC_DEFAULT_SSL_ROOTS_FILE_PATH when set, else Node's).
    const noTlsEnv = { FILETOOLS_CA: "", FILETOOLS_CLIENT_CERT: "", FILETOOLS_CLIENT_KEY: "" };
    const client = ["--client-cert", path.join(dir, "client.crt"), "--client-key", path.join(dir, "client.key")];
    expect(await ok(["--ca", path.join(dir, "ca.crt"), ...client, "stat", "demo"], { env: noTlsEnv })).toContain("directory");
    expect(await ok(["--tls", ...client, "stat", "demo"], { env: { ...noTlsEnv, GRPC_DEFAULT_SSL_ROOTS_FILE_PATH: path.join(dir, "ca.crt") } })).toContain("directory");
    const noClientCert = await cli(["--ca", path.join(dir, "ca.crt"), "stat", "demo"], { env: noTlsEnv });
    expect(noClientCert.code).toBe(5);
    const plainText = await cli(["stat", "demo"], { env: noTlsEnv });
    expect(plainText.code).toBe(5);
    const untrusted = await cli(["--tls", ...client, "stat", "demo"], { env: noTlsEnv }); // the test CA is no system root
    expect(untrusted.code).toBe(5);

    // Ctrl-C while an upload waits for more of stdin: the call is cancelled and nothing is written.
    const child = spawn(process.execPath, [CLI, "upload", "demo", "-", "interrupted.bin"], { env: cliEnv() });
    const result = finished(child);
    // Once the CLI has read most of a 1 MiB write, it is running (its SIGINT handler is set before anything is read).
    await new Promise<void>((resolve) => child.stdin!.write(Buffer.alloc(1024 * 1024), () => resolve()));
    child.kill("SIGINT");
    const interrupted = await result;
    expect(interrupted).toMatchObject({ code: 130, stderr: "filetools: interrupted; the call was cancelled (CANCELLED)\n" });
    expect((await cli(["stat", "demo", "interrupted.bin"])).code).toBe(3);
  });

  it("runs ls, workspaces show, runs abandon (the run's work kept as a recovered snapshot), snapshots ls --recovered", async () => {
    await ok(["workspaces", "create", "stuck"]);
    expect(await json(["runs", "ls"])).toEqual({ runs: [] });
    const { run } = await json(["runs", "start", "stuck"]);
    await ok(["write", "stuck", "half.txt", "-"], { input: "half done\n" });
    const shown = await ok(["workspaces", "show", "stuck"]);
    expect(shown).toContain(`active run ${run.id} on node ${run.node} (this daemon)`);
    expect(shown).toContain("this copy is of: no snapshot, with unpublished changes");
    const listed = await ok(["runs", "ls"]);
    expect(listed.split("\n")[0]).toMatch(/^WORKSPACE\s+RUN\s+NODE\s+STARTED\s+LEASE UNTIL\s+HERE$/);
    expect(listed).toContain(run.id);
    const abandoned = await ok(["runs", "abandon", "stuck", "--reason", "agent hung"]);
    expect(abandoned).toMatch(new RegExp(`^abandoned ${run.id} on stuck: its work is kept as recovered snapshot \\S+\\n$`));
    expect((await cli(["runs", "abandon", "stuck"])).code).toBe(3); // no active run
    expect((await json(["snapshots", "ls", "stuck"])).snapshots).toEqual([]);
    const { snapshots } = await json(["snapshots", "ls", "stuck", "--recovered"]);
    expect(snapshots).toHaveLength(1);
    expect(snapshots[0]).toMatchObject({ runId: run.id, recovered: true });
    expect(snapshots[0].recoveredReason).toContain("abandoned by an operator: agent hung");
  });

  it("workspaces delete", async () => {
    expect(await ok(["workspaces", "delete", "demo", "--snapshots"])).toBe("deleted workspace demo and its snapshots\n");
    expect((await cli(["workspaces", "show", "demo"])).code).toBe(3);
  });
});

describe("numberLines", () => {
  it("numbers lines as cat -n, from any first line, keeping endings", () => {
    expect(numberLines("")).toBe("");
    expect(numberLines("a\r\nb")).toBe("     1\ta\r\n     2\tb");
    expect(numberLines("x\n", { firstLine: 1_234_567n, width: 3 })).toBe("1234567\tx\n");
    expect(numberLines("x\ny\n", { firstLine: 9, width: 2 })).toBe(" 9\tx\n10\ty\n");
    expect(numberLines("a\nb\n", { firstLine: -2 })).toBe("    -2\ta\n    -1\tb\n"); // a tail numbered from the end
  });
});

/** A port nothing listens on (taken from the OS, then released). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
