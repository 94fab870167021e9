// `filetools mcp` driven by the official MCP SDK's client, over stdio (the
// built CLI as a child process, as a host starts it) and over Streamable
// HTTP, against a real daemon: the catalogue's tools with annotations and
// output schemas, texts and structured content, errors as tool results, MCP
// cancellation cancelling the gRPC call, progress of exports and imports, and
// --read-only.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, ErrorCode, ListPromptsResultSchema, type CallToolResult, type Progress } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDaemon, type Daemon } from "../../../test/e2e/daemon.js";
import { connect, type FileToolsClient } from "../src/index.js";
import { MEDIA_MAX_BYTES, WHOLE_READ_MAX_BYTES } from "../src/mcp/server-filesystem.js";
import { catalogue } from "../src/tools/catalogue.js";
import { foreignWords } from "./tool-set-words.js";
import { CLI, ensureCliBuilt } from "./cli-build.js";
import { makePdf, solidImage } from "../../../test/support/media.js";
import sharp from "sharp";

let daemon: Daemon;
let client: FileToolsClient;

beforeAll(async () => {
  ensureCliBuilt();
  daemon = await startDaemon({ args: ["--log-level", "info"] });
  client = connect(daemon.address);
  await client.createWorkspace("agent");
  const ws = client.workspace("agent");
  await ws.writeText("/notes.md", "# Notes\n\nfirst\nsecond\n");
  // A search of it with a catastrophic pattern that has a backreference (only the backtracking engine runs it) goes on until its time budget: a cancel finds it running.
  await ws.writeText("/slow.txt", `${"a".repeat(40_000)}!\n`.repeat(50));
  await ws.writeBytes("/pics/dot.png", await solidImage(4, 3, "png"));
  await ws.writeBytes("/pics/big.jpg", await solidImage(3000, 1500, "jpeg"));
  await ws.writeBytes("/doc.pdf", makePdf(["First page", "Second page"]));
});

afterAll(async () => {
  client?.close();
  await daemon?.stop();
});

/** A connected SDK client on `filetools mcp` over stdio, with extra CLI arguments. */
async function stdioClient(...extra: string[]): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "--address", daemon.address, "mcp", "--workspace", "agent", ...extra],
    stderr: "pipe",
  });
  const mcp = new Client({ name: "filetools-test", version: "1.0.0" });
  await mcp.connect(transport);
  return mcp;
}

const textOf = (result: unknown) => ((result as CallToolResult).content[0] as { text: string }).text;

describe("at start", () => {
  it("a workspace that does not exist stops the server before it serves, with the CLI's error and exit code", async () => {
    for (const profile of ["filetools", "server-filesystem"]) {
      const proc = spawn(process.execPath, [CLI, "--address", daemon.address, "mcp", "--workspace", "nosuch", "--profile", profile], { stdio: ["pipe", "pipe", "pipe"] });
      let stderr = "";
      proc.stderr!.on("data", (d) => (stderr += d));
      const code = await new Promise<number | null>((resolve) => proc.once("exit", resolve));
      expect([profile, code, stderr]).toEqual([profile, 3, "filetools: workspace nosuch does not exist (WORKSPACE_NOT_FOUND)\n"]);
    }
  });
});

describe("over stdio", () => {
  let mcp: Client;
  beforeAll(async () => {
    mcp = await stdioClient();
  });
  afterAll(() => mcp?.close());

  it("lists the catalogue's tools with their annotations and output schemas", async () => {
    const { tools } = await mcp.listTools();
    // The catalogue's, then MCP's own wait_for_change.
    expect(tools.map((t) => t.name)).toEqual([...catalogue.tools.map((t) => t.name), "wait_for_change"]);
    const read = tools.find((t) => t.name === "read")!;
    expect(read.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true });
    expect(read.outputSchema).toMatchObject({ type: "object" });
    expect(tools.find((t) => t.name === "delete")!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
  });

  it("wait_for_change blocks until a matching change (or its timeout) and gives the cursor to go on from", async () => {
    await client.workspace("agent").mkdir("/waited"); // made before: the change waited for is the file alone
    const quiet = await mcp.callTool({ name: "wait_for_change", arguments: { globs: ["*.nothing"], timeout_seconds: 1 } });
    expect(textOf(quiet)).toMatch(/^No change matching \*\.nothing within 1 s\. Call again with since \d+ to keep waiting without missing any\.$/);
    expect(quiet.structuredContent).toMatchObject({ changed: false, changes: [] });
    const since = (quiet.structuredContent as { cursor: number }).cursor;
    const waiting = mcp.callTool({ name: "wait_for_change", arguments: { globs: ["waited/**"], since, timeout_seconds: 60 } });
    await client.workspace("agent").writeText("/elsewhere.txt", "not this one");
    await client.workspace("agent").writeText("/waited/a.txt", "this one");
    const changed = await waiting;
    expect(changed.isError).toBeFalsy();
    expect(textOf(changed)).toMatch(/^\d+\tcreated\t\/waited\/a\.txt\nCall again with since \d+ to wait for the next one\.$/);
    expect(changed.structuredContent).toMatchObject({ changed: true, changes: [{ kind: "created", path: "/waited/a.txt", from_path: "", outside: false }] });
    const bad = await mcp.callTool({ name: "wait_for_change", arguments: { timeout_seconds: 0 } });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/^Error \(INVALID_ARGUMENT\): invalid arguments for wait_for_change: timeout_seconds/);
  });

  it("resources/subscribe on a file or directory: notifications/resources/updated when it changes; resources/read reads it", async () => {
    const updated: string[] = [];
    const { ResourceUpdatedNotificationSchema } = await import("@modelcontextprotocol/sdk/types.js");
    mcp.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification: { params: { uri: string } }) => void updated.push(notification.params.uri));
    await client.workspace("agent").mkdir("/docs"); // before: a write that made it would be two changes under it
    await mcp.subscribeResource({ uri: "filetools://agent/subscribed.md" });
    await mcp.subscribeResource({ uri: "filetools://agent/docs" });
    await client.workspace("agent").writeText("/subscribed.md", "v1\n");
    await client.workspace("agent").writeText("/other.md", "not subscribed\n");
    await client.workspace("agent").writeText("/docs/inner.md", "in a subscribed directory\n");
    while (updated.length < 2) await new Promise((r) => setTimeout(r, 20));
    expect(updated).toEqual(["filetools://agent/subscribed.md", "filetools://agent/docs"]);
    const read = await mcp.readResource({ uri: "filetools://agent/subscribed.md" });
    expect(read.contents).toEqual([{ uri: "filetools://agent/subscribed.md", mimeType: "text/plain", text: "v1\n" }]);
    await mcp.unsubscribeResource({ uri: "filetools://agent/subscribed.md" });
    await mcp.unsubscribeResource({ uri: "filetools://agent/docs" });
    await expect(mcp.subscribeResource({ uri: "file:///etc/passwd" })).rejects.toThrow(/not a resource of this server/);
  });

  it("answers a read with the dispatcher's text and structured content (checked by the SDK against the output schema)", async () => {
    const result = await mcp.callTool({ name: "read", arguments: { path: "/notes.md", start_line: 3, line_count: 1 } });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe("     3\tfirst\n… call read with start_line 4 for more\n");
    expect(result.structuredContent).toMatchObject({ path: "/notes.md", first_line: 3, next_start_line: 4 });
    // The window goes out once: as the text content, not again in structuredContent.
    expect(result.structuredContent).not.toHaveProperty("text");
    // A strict-mode model sends null for each argument it leaves out.
    const nulls = await mcp.callTool({ name: "read", arguments: { path: "/notes.md", start_line: 3, line_count: 1, tail: null } });
    expect(textOf(nulls)).toBe(textOf(result));
  });

  it("a read of an image answers MCP image content (the image's bytes, base64) beside the text; a large one downscaled", async () => {
    const result = await mcp.callTool({ name: "read", arguments: { path: "/pics/dot.png" } });
    expect(result.isError).toBeFalsy();
    const [text, image] = result.content as [{ type: string; text: string }, { type: string; data: string; mimeType: string }];
    expect(text).toEqual({ type: "text", text: "Image /pics/dot.png (PNG, 4x3 pixels, 95 bytes).\n" });
    expect([image.type, image.mimeType]).toEqual(["image", "image/png"]);
    expect(Buffer.from(image.data, "base64").equals(await solidImage(4, 3, "png"))).toBe(true);
    expect(result.structuredContent).toMatchObject({ path: "/pics/dot.png", media_type: "image/png", image: { width: 4, height: 3, downscaled: false } });
    const big = await mcp.callTool({ name: "read", arguments: { path: "/pics/big.jpg" } });
    const shown = (big.content as Array<{ type: string; data?: string }>)[1]!;
    expect(await sharp(Buffer.from(shown.data!, "base64")).metadata()).toMatchObject({ format: "jpeg", width: 2000, height: 1000 });
  });

  it("a read of a PDF answers its pages' text, in windows of pages", async () => {
    const result = await mcp.callTool({ name: "read", arguments: { path: "/doc.pdf", line_count: 1 } });
    expect(result.content).toEqual([{ type: "text", text: "--- page 1 of 2 ---\nFirst page\n… call read with start_line 2 for the next pages (in a PDF, start_line and line_count count pages); 2 pages in all\n" }]);
    expect(result.structuredContent).toMatchObject({ path: "/doc.pdf", media_type: "application/pdf", first_line: 1, last_line: 1, total_lines: 2, next_start_line: 2, eof: false });
    expect(textOf(await mcp.callTool({ name: "read", arguments: { path: "/doc.pdf", start_line: 2 } }))).toBe("--- page 2 of 2 ---\nSecond page\n");
  });

  it("edits, then a stale edit is a tool error a model can act on", async () => {
    const { structuredContent } = await mcp.callTool({ name: "read", arguments: { path: "/notes.md" } });
    const version = (structuredContent as { version: string }).version;
    const edited = await mcp.callTool({ name: "edit", arguments: { path: "/notes.md", edits: [{ old_text: "first", new_text: "1st" }], if_version: version } });
    expect(textOf(edited)).toContain("+1st\n");
    const stale = await mcp.callTool({ name: "edit", arguments: { path: "/notes.md", edits: [{ old_text: "second", new_text: "2nd" }], if_version: version } });
    expect(stale.isError).toBe(true);
    expect(textOf(stale)).toMatch(/^Error \(CONTENT_CHANGED\): .*\nRead the file again, then retry with if_version \w+/);
  });

  it.each([
    ["a path out of the workspace", "read", { path: "/../../etc/passwd" }, /^Error \(PATH_ESCAPES_WORKSPACE\)/],
    ["a wrong type", "read", { path: 42 }, /^Error \(INVALID_ARGUMENT\): invalid arguments for read: path must be a string/],
    ["a huge value", "search", { pattern: "x", max_results: 1e15 }, /max_results must be at most 10000/],
    ["an unknown tool", "rm_rf", {}, /^Error \(UNKNOWN_TOOL\)/],
  ])("%s is a tool result with isError, and the server keeps serving", async (_what, name, args, expected) => {
    const result = await mcp.callTool({ name, arguments: args });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(expected);
    expect((await mcp.callTool({ name: "stat", arguments: { path: "/notes.md" } })).isError).toBeFalsy();
  });

  it("a tools/call that is not one (no tool name, arguments not an object) is a protocol error, and an unknown method too", async () => {
    await expect(mcp.request({ method: "tools/call", params: { name: 5 } } as never, CallToolResultSchema)).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
    await expect(mcp.request({ method: "tools/call", params: { name: "stat", arguments: [1] } } as never, CallToolResultSchema)).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
    await expect(mcp.request({ method: "prompts/list" }, ListPromptsResultSchema)).rejects.toMatchObject({ code: ErrorCode.MethodNotFound });
    expect((await mcp.callTool({ name: "stat", arguments: { path: "/notes.md" } })).isError).toBeFalsy();
  });

  it("an MCP cancellation cancels the daemon's call", async () => {
    const controller = new AbortController();
    const call = mcp.callTool({ name: "search", arguments: { pattern: "^(a|aa)+\\1$", path: "/slow.txt" } }, undefined, { signal: controller.signal });
    setTimeout(() => controller.abort(), 300);
    await expect(call).rejects.toThrow();
    await waitFor(() => /"method":"filetools\.v1\.Files\/Search"[^\n]*"code":"CANCELLED"/.test(daemon.logs()));
    expect(daemon.logs()).toMatch(/"method":"filetools\.v1\.Files\/Search"[^\n]*"code":"CANCELLED"/);
  });
});

describe("at_snapshot over stdio", () => {
  let mcp: Client;
  let snapshot: string;
  beforeAll(async () => {
    const ws = client.workspace("history");
    const run = await ws.startRun();
    await ws.writeText("/notes.md", "as it was\n");
    snapshot = (await ws.finishRun(run.id)).snapshot!.id;
    await ws.writeText("/notes.md", "as it is\n");
    await ws.writeText("/later.md", "new\n");
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, "--address", daemon.address, "mcp", "--workspace", "history"], stderr: "pipe" });
    mcp = new Client({ name: "filetools-test", version: "1.0.0" });
    await mcp.connect(transport);
  });
  afterAll(() => mcp?.close());

  it("reads, lists and stats the workspace as it was at a snapshot", async () => {
    const read = await mcp.callTool({ name: "read", arguments: { path: "/notes.md", at_snapshot: snapshot } });
    expect(textOf(read)).toBe("     1\tas it was\n");
    expect(textOf(await mcp.callTool({ name: "read", arguments: { path: "/notes.md" } }))).toBe("     1\tas it is\n");
    expect(textOf(await mcp.callTool({ name: "list", arguments: { at_snapshot: snapshot } }))).toBe("/notes.md (10 bytes)\n");
    const stat = await mcp.callTool({ name: "stat", arguments: { path: "/notes.md", at_snapshot: snapshot } });
    expect(stat.structuredContent).toMatchObject({ path: "/notes.md", size: 10 });
    const missing = await mcp.callTool({ name: "read", arguments: { path: "/later.md", at_snapshot: snapshot } });
    expect(missing.isError).toBe(true);
  });
});

describe("export_archive and import_archive over stdio: progress, cancellation, bad arguments", () => {
  const BLOB_BYTES = 24 << 20;
  let mcp: Client;
  beforeAll(async () => {
    // Random bytes do not compress: the archive is as big as the file, 24 chunks of 1 MiB.
    async function* blob() {
      for (let i = 0; i < 24; i++) yield randomBytes(1 << 20);
    }
    await client.workspace("agent").upload(blob(), "/big/blob.bin");
    mcp = await stdioClient();
  });
  afterAll(() => mcp?.close());

  /** Progress of the call: several notifications, increasing, the last one at the total. */
  function expectProgress(progress: Progress[], atLeast: number): void {
    expect(progress.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < progress.length; i++) expect(progress[i]!.progress).toBeGreaterThan(progress[i - 1]!.progress);
    const last = progress.at(-1)!;
    expect(last.total).toBeGreaterThanOrEqual(atLeast);
    expect(last.progress).toBe(last.total);
  }

  it("an export sends progress notifications as the archive's bytes move, then an import of it does too", async () => {
    const exported: Progress[] = [];
    const result = await mcp.callTool({ name: "export_archive", arguments: { path: "/big", destination: "/out/big.tar.gz" } }, undefined, { onprogress: (p) => void exported.push(p) });
    expect(textOf(result)).toMatch(/^Exported \/big to \/out\/big\.tar\.gz: 1 file, [\d,]+ bytes\. Version \w+\.\n$/);
    expectProgress(exported, BLOB_BYTES);

    const imported: Progress[] = [];
    const unpacked = await mcp.callTool({ name: "import_archive", arguments: { archive: "/out/big.tar.gz", destination: "/copy" } }, undefined, { onprogress: (p) => void imported.push(p) });
    expect(textOf(unpacked)).toBe(`Imported /out/big.tar.gz into /copy: 1 file, ${BLOB_BYTES.toLocaleString("en-US")} bytes written.\n`);
    expectProgress(imported, BLOB_BYTES);
    expect((await client.workspace("agent").stat("/copy/big/blob.bin")).size).toBe(BigInt(BLOB_BYTES));
  });

  it("a cancellation mid-export cancels both streams and leaves no archive, whole or partial", async () => {
    const controller = new AbortController();
    const call = mcp.callTool({ name: "export_archive", arguments: { path: "/big", destination: "/out/cancelled.tar.gz" } }, undefined, {
      signal: controller.signal,
      onprogress: () => controller.abort(), // the first notification: bytes are moving
    });
    await expect(call).rejects.toThrow();
    const cancelled = (method: string) => new RegExp(`"method":"filetools\\.v1\\.${method}"[^\n]*"code":"CANCELLED"`);
    await waitFor(() => cancelled("Files/Upload").test(daemon.logs()) && cancelled("Workspaces/ExportSnapshot").test(daemon.logs()));
    expect(daemon.logs()).toMatch(cancelled("Files/Upload"));
    expect(daemon.logs()).toMatch(cancelled("Workspaces/ExportSnapshot"));
    // On the daemon's disk: no archive and no temp file of the upload (the daemon never lists those).
    expect(readdirSync(`${daemon.hostDir("agent")}/out`).sort()).toEqual(["big.tar.gz"]);
  });

  it.each([
    ["a wrong type", "export_archive", { destination: 5 }, /^Error \(INVALID_ARGUMENT\): invalid arguments for export_archive: destination must be a string/],
    ["an archive out of the workspace", "import_archive", { archive: "/../../etc/passwd" }, /^Error \(PATH_ESCAPES_WORKSPACE\)/],
    ["a file that is no archive", "import_archive", { archive: "/notes.md", destination: "/x" }, /^Error \(UNSAFE_ARCHIVE\)/],
    ["a missing directory to pack", "export_archive", { path: "/none", destination: "/out/none.tar.gz" }, /^Error \(NOT_FOUND\)/],
  ])("%s is a tool result with isError", async (_what, name, args, expected) => {
    const result = await mcp.callTool({ name, arguments: args });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(expected);
  });
});

describe("--read-only", () => {
  it("offers only the tools that change nothing, and refuses the others", async () => {
    const mcp = await stdioClient("--read-only");
    try {
      expect((await mcp.listTools()).tools.map((t) => t.name)).toEqual(["read", "list", "search", "stat", "changes", "list_snapshots", "wait_for_change"]);
      const write = await mcp.callTool({ name: "write", arguments: { path: "/x", content: "y" } });
      expect(write.isError).toBe(true);
      expect(textOf(write)).toMatch(/^Error \(UNKNOWN_TOOL\)/);
    } finally {
      await mcp.close();
    }
  });
});

describe("over Streamable HTTP", () => {
  let server: ChildProcess;
  let url: string;

  beforeAll(async () => {
    server = spawn(process.execPath, [CLI, "--address", daemon.address, "mcp", "--workspace", "agent", "--http", "127.0.0.1:0"], { stdio: ["ignore", "ignore", "pipe"] });
    url = await new Promise<string>((resolve, reject) => {
      let stderr = "";
      server.stderr!.on("data", (chunk) => {
        stderr += chunk;
        const found = /listening on (\S+)/.exec(stderr);
        if (found) resolve(found[1]!);
      });
      server.once("exit", (code) => reject(new Error(`filetools mcp exited ${code}: ${stderr}`)));
    });
  });

  afterAll(() => {
    server?.kill("SIGINT");
  });

  it("serves the same tools and texts to two clients", async () => {
    for (let i = 0; i < 2; i++) {
      const mcp = new Client({ name: `filetools-test-${i}`, version: "1.0.0" });
      await mcp.connect(new StreamableHTTPClientTransport(new URL(url)));
      try {
        expect((await mcp.listTools()).tools).toHaveLength(catalogue.tools.length + 1) // and wait_for_change;
        expect(textOf(await mcp.callTool({ name: "list", arguments: { pattern: "slow*" } }))).toBe("/slow.txt (2,000,100 bytes)\n");
      } finally {
        await mcp.close();
      }
    }
  });

  it("refuses a request whose Host header is not the server's (DNS rebinding)", async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const request = httpRequest(url, {
        method: "POST",
        headers: { host: "evil.example", "content-type": "application/json", accept: "application/json, text/event-stream" },
      });
      request.once("response", (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      request.once("error", reject);
      request.end(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }));
    });
    expect(status).toBe(403);
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 50));
}

describe("--profile server-filesystem: the reference server's tools, stricter where it says so", () => {
  let mcp: Client;
  beforeAll(async () => {
    const ws = client.workspace("agent");
    await ws.writeText("/fs/a.txt", "one\ntwo\nthree\nfour\n");
    await ws.writeText("/fs/dup.txt", "x\nx\n");
    await ws.writeText("/fs/sub/deep.md", "deep\n");
    await ws.writeText("/fs/node_modules/skip.js", "skip\n");
    mcp = await stdioClient("--profile", "server-filesystem");
  });
  afterAll(() => mcp?.close());

  const call = async (name: string, args: Record<string, unknown>) => {
    const result = await mcp.callTool({ name, arguments: args });
    return { text: textOf(result), isError: result.isError === true, structured: result.structuredContent };
  };

  it("offers the reference's tool names, annotated, with output schemas", async () => {
    const { tools } = await mcp.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      "read_file",
      "read_text_file",
      "read_media_file",
      "read_multiple_files",
      "write_file",
      "edit_file",
      "create_directory",
      "list_directory",
      "list_directory_with_sizes",
      "directory_tree",
      "move_file",
      "search_files",
      "get_file_info",
      "list_allowed_directories",
    ]);
    expect(tools.every((t) => t.annotations?.readOnlyHint !== undefined && t.outputSchema)).toBe(true);
    expect(tools.find((t) => t.name === "edit_file")!.description).toContain("exactly once");
  });

  it("reads whole, head and tail, several at once; both head and tail is an error", async () => {
    expect(await call("read_text_file", { path: "/fs/a.txt" })).toMatchObject({ text: "one\ntwo\nthree\nfour\n", structured: { content: "one\ntwo\nthree\nfour\n" } });
    expect((await call("read_text_file", { path: "/fs/a.txt", head: 2 })).text).toBe("one\ntwo"); // as the reference joins them
    expect((await call("read_text_file", { path: "/fs/a.txt", tail: 1 })).text).toBe("four\n");
    expect((await call("read_text_file", { path: "/fs/a.txt", head: null, tail: 1 })).text).toBe("four\n");
    expect(await call("read_text_file", { path: "/fs/a.txt", head: 1, tail: 1 })).toMatchObject({ isError: true, text: expect.stringContaining("Cannot specify both head and tail") });
    const several = await call("read_multiple_files", { paths: ["/fs/sub/deep.md", "/fs/none.txt"] });
    expect(several.text).toMatch(/^\/fs\/sub\/deep\.md:\ndeep\n\n\n---\n\/fs\/none\.txt: Error - \/fs\/none\.txt does not exist$/);
  });

  it("accepts what the reference accepts: read_file (its deprecated alias), head: 0 and tail: 0 as not given, an encoding, no edits", async () => {
    expect(await call("read_file", { path: "/fs/a.txt", head: 2 })).toMatchObject({ text: "one\ntwo", structured: { content: "one\ntwo" } });
    expect((await call("read_text_file", { path: "/fs/a.txt", head: 0 })).text).toBe("one\ntwo\nthree\nfour\n");
    expect((await call("read_text_file", { path: "/fs/a.txt", head: 0, tail: 1 })).text).toBe("four\n");
    expect((await call("read_text_file", { path: "/fs/a.txt", encoding: "utf-8" })).text).toBe("one\ntwo\nthree\nfour\n");
    await client.workspace("agent").writeBytes("/more/latin1.txt", Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    expect((await call("read_text_file", { path: "/more/latin1.txt", encoding: "latin1" })).text).toBe("café\n");
    expect(await call("read_text_file", { path: "/fs/a.txt", encoding: "klingon" })).toMatchObject({ isError: true, text: expect.stringMatching(/^Error \(INVALID_ARGUMENT\): unsupported encoding "klingon"/) });
    const version = (await client.workspace("agent").stat("/fs/a.txt")).version;
    expect(await call("edit_file", { path: "/fs/a.txt", edits: [] })).toMatchObject({ isError: false, text: "```diff\n```\n\n" });
    expect((await client.workspace("agent").stat("/fs/a.txt")).version).toBe(version);
    expect(await call("edit_file", { path: "/fs/missing.txt", edits: [] })).toMatchObject({ isError: true, text: expect.stringMatching(/^Error \(NOT_FOUND\)/) });
  });

  it("caps every read that could return a whole file, and says which lines it gave and how to see more", async () => {
    const ws = client.workspace("agent");
    const line = `${"x".repeat(99)}\n`; // 100 bytes: 20,000 lines are 2,000,000 bytes
    await ws.writeText("/more/huge.txt", line.repeat(20_000));
    for (const args of [{}, { head: 150_005 }, { tail: 15_000 }]) {
      const { text, isError } = await call("read_text_file", { path: "/more/huge.txt", ...args });
      expect(isError).toBe(false);
      expect(text.length).toBeLessThan(WHOLE_READ_MAX_BYTES + 400);
      expect(text).toMatch(/\n\[filetools: \/more\/huge\.txt is cut at 1,048,576 bytes of text per read: this is lines \d+–\d+( of 20000)?\. Ask for fewer lines with head or tail to see the rest of the beginning or the end\.\]$/);
      expect(foreignWords(text.slice(text.lastIndexOf("\n[filetools")), "server-filesystem")).toEqual([]);
    }
    expect((await call("read_text_file", { path: "/more/huge.txt", tail: 1 })).text).toBe(line);
    const several = await call("read_multiple_files", { paths: ["/more/huge.txt", "/more/huge.txt", "/fs/a.txt"] });
    expect(several.text.length).toBeLessThan(WHOLE_READ_MAX_BYTES + 1000);
    expect(several.text.match(/is cut at 349,525 bytes/g)).toHaveLength(2);
    expect(several.text).toContain("/fs/a.txt:\none\ntwo\nthree\nfour\n");
  });

  it("read_media_file returns an image or audio file as MCP content, base64, anything else as a resource named by its workspace path; a file too large is refused", async () => {
    const ws = client.workspace("agent");
    const png = Buffer.from("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8ffff3f0005fe02fe0def46b80000000049454e44ae426082", "hex");
    await ws.writeBytes("/more/dot.png", png);
    await ws.writeBytes("/more/beep.wav", Buffer.from("RIFF0000WAVE"));
    await ws.writeBytes("/more/blob.bin", Buffer.from([0, 1, 2, 255]));
    const image = await mcp.callTool({ name: "read_media_file", arguments: { path: "/more/dot.png" } });
    expect(image.content).toEqual([{ type: "image", data: png.toString("base64"), mimeType: "image/png" }]);
    expect(image.structuredContent).toEqual({ content: image.content });
    expect((await mcp.callTool({ name: "read_media_file", arguments: { path: "/more/beep.wav" } })).content).toEqual([{ type: "audio", data: Buffer.from("RIFF0000WAVE").toString("base64"), mimeType: "audio/wav" }]);
    expect((await mcp.callTool({ name: "read_media_file", arguments: { path: "/more/blob.bin" } })).content).toEqual([
      { type: "resource", resource: { uri: "filetools:/more/blob.bin", mimeType: "application/octet-stream", blob: "AAEC/w==" } },
    ]);
    await ws.writeBytes("/more/big.png", Buffer.alloc(MEDIA_MAX_BYTES + 1));
    expect(await call("read_media_file", { path: "/more/big.png" })).toMatchObject({ isError: true, text: `Error (FILE_TOO_LARGE): /more/big.png is ${MEDIA_MAX_BYTES + 1} bytes, more than the ${MEDIA_MAX_BYTES} that can be read at once.\n` });
    expect(await call("read_media_file", { path: "/fs" })).toMatchObject({ isError: true, text: expect.stringMatching(/^Error \(IS_A_DIRECTORY\)/) });
  });

  it("every error names only this tool set's tools and arguments (what the reference's model has)", async () => {
    await client.workspace("agent").writeBytes("/more/bytes.bin", Buffer.from([0, 1, 2, 3, 0, 0, 7]));
    const failures = [
      ["read_text_file", { path: "/fs/missing.txt" }, "NOT_FOUND"],
      ["read_text_file", { path: "/fs/sub" }, "IS_A_DIRECTORY"],
      ["read_text_file", { path: "/more/bytes.bin" }, "BINARY_FILE"],
      ["edit_file", { path: "/fs/a.txt", edits: [{ oldText: "nine", newText: "9" }] }, "OLD_TEXT_NOT_FOUND"],
      ["edit_file", { path: "/fs/dup.txt", edits: [{ oldText: "x", newText: "y" }] }, "OLD_TEXT_NOT_UNIQUE"],
      ["edit_file", { path: "/fs/a.txt", edits: [{ oldText: "one", newText: "one" }] }, "INVALID_ARGUMENT"],
      ["move_file", { source: "/fs/dup.txt", destination: "/fs/a.txt" }, "ALREADY_EXISTS"],
      ["move_file", { source: "/fs/missing.txt", destination: "/fs/b.txt" }, "NOT_FOUND"],
      ["get_file_info", { path: "/../x" }, "PATH_ESCAPES_WORKSPACE"],
    ] as const;
    for (const [name, args, reason] of failures) {
      const { text, isError } = await call(name, args);
      expect([name, isError, text.slice(0, text.indexOf(")") + 1)]).toEqual([name, true, `Error (${reason})`]);
      expect([name, text, foreignWords(text, "server-filesystem")]).toEqual([name, text, []]);
    }
    const several = await call("read_multiple_files", { paths: ["/more/bytes.bin", "/fs/sub"] });
    expect(foreignWords(several.text, "server-filesystem")).toEqual([]);
    expect((await call("move_file", { source: "/fs/dup.txt", destination: "/fs/a.txt" })).text).toBe(
      "Error (ALREADY_EXISTS): /fs/a.txt already exists: move_file never replaces.\nChoose another destination, or move the existing file away first.\n",
    );
  });

  it("writes, edits with a diff, and refuses an oldText that is not unique (the reference would edit the first)", async () => {
    expect((await call("write_file", { path: "/fs/new.txt", content: "hello\n" })).text).toBe("Successfully wrote to /fs/new.txt");
    const edited = await call("edit_file", { path: "/fs/new.txt", edits: [{ oldText: "hello", newText: "bye" }] });
    expect(edited.text).toMatch(/^```diff\n--- a\/fs\/new\.txt\n\+\+\+ b\/fs\/new\.txt\n@@ -1,1 \+1,1 @@\n-hello\n\+bye\n```\n\n$/);
    const dup = await call("edit_file", { path: "/fs/dup.txt", edits: [{ oldText: "x", newText: "y" }] });
    expect(dup).toMatchObject({ isError: true, text: "Error (OLD_TEXT_NOT_UNIQUE): edits[0].oldText occurs 2 times in /fs/dup.txt; include more surrounding text to make it unique.\nMake oldText unique by adding the lines around it; it occurs 2 times.\n" });
    expect((await call("read_text_file", { path: "/fs/dup.txt" })).text).toBe("x\nx\n");
  });

  it("lists, with sizes, as a tree (excludePatterns), and searches names by glob", async () => {
    expect((await call("list_directory", { path: "/fs" })).text).toBe("[FILE] a.txt\n[FILE] dup.txt\n[FILE] new.txt\n[DIR] node_modules\n[DIR] sub");
    expect((await call("list_directory_with_sizes", { path: "/fs/sub" })).text).toBe(`[FILE] ${"deep.md".padEnd(30)} ${"5 B".padStart(10)}\n\nTotal: 1 files, 0 directories\nCombined size: 5 B`);
    const tree = JSON.parse((await call("directory_tree", { path: "/fs", excludePatterns: ["node_modules"] })).text);
    expect(tree).toEqual([
      { name: "a.txt", type: "file" },
      { name: "dup.txt", type: "file" },
      { name: "new.txt", type: "file" },
      { name: "sub", type: "directory", children: [{ name: "deep.md", type: "file" }] },
    ]);
    expect((await call("search_files", { path: "/fs", pattern: "**/*.md" })).text).toBe("/fs/sub/deep.md");
    expect((await call("search_files", { path: "/fs", pattern: "*.none" })).text).toBe("No matches found");
  });

  it("moves without ever replacing, describes files, and names the one allowed directory", async () => {
    expect((await call("move_file", { source: "/fs/new.txt", destination: "/fs/moved.txt" })).text).toBe("Successfully moved /fs/new.txt to /fs/moved.txt");
    expect(await call("move_file", { source: "/fs/moved.txt", destination: "/fs/a.txt" })).toMatchObject({ isError: true, text: expect.stringMatching(/^Error \(ALREADY_EXISTS\)/) });
    expect((await call("get_file_info", { path: "/fs/a.txt" })).text).toMatch(/^size: 19\nmodified: .+\nisDirectory: false\nisFile: true\npermissions: 644\nversion: \w+$/);
    expect((await call("list_allowed_directories", {})).text).toBe("Allowed directories:\n/");
    expect((await call("create_directory", { path: "/fs/made/deeper" })).text).toBe("Successfully created directory /fs/made/deeper");
  });

  it("bad input is a tool error: a path out of the workspace, a wrong type, an unknown tool", async () => {
    expect(await call("read_text_file", { path: "/../../../etc/passwd" })).toMatchObject({ isError: true, text: expect.stringMatching(/^Error \(PATH_ESCAPES_WORKSPACE\)/) });
    expect(await call("read_text_file", { path: 7 as never })).toMatchObject({ isError: true, text: expect.stringMatching(/invalid arguments for read_text_file: path must be a string/) });
    expect(await call("nope", {})).toMatchObject({ isError: true, text: expect.stringMatching(/^Error \(UNKNOWN_TOOL\)/) });
  });
});
