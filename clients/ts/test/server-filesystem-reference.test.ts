// `filetools mcp --profile server-filesystem` against the reference server
// itself (@modelcontextprotocol/server-filesystem, pinned, installed from the
// npm registry into .tools/ on first run), tool by tool, on two copies of the
// same files: the same tool names, the same required arguments, the same text
// for the same successful call, except where README.md lists a difference
// (KNOWN_DIFFERENCES: each must still differ, so the list stays true).
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, startDaemon, type Daemon } from "../../../test/e2e/daemon.js";
import { MCP_SERVER, ensureMcpServer } from "../../../test/bench/clients/mcp.js";
import { CLI, ensureCliBuilt } from "./cli-build.js";

/** Tools (or one call: "TOOL ARGS") whose text differs from the reference's, and why (README.md, "A drop-in for …"). */
const KNOWN_DIFFERENCES: Record<string, string> = {
  'read_text_file {"path":"a.txt","tail":1}': 'the reference counts the empty string after the final newline as a line (tail 1 answers ""); ours answers the last N lines',
  'read_text_file {"path":"a.txt","tail":2}': "the same: the reference's tail 2 is the last line only",
  edit_file: "our diff is the daemon's (--- a/PATH +++ b/PATH), the reference's names the host file (Index:, original/modified)",
  search_files: "we answer workspace paths, the reference host paths",
  get_file_info: "we give size, modified, type, permissions and a version; the reference also created and accessed times",
  list_allowed_directories: 'ours is "/", the reference\'s a host directory',
};

const PNG = Buffer.from("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8ffff3f0005fe02fe0def46b80000000049454e44ae426082", "hex");
const FILES: Record<string, string | Buffer> = {
  "a.txt": "one\ntwo\nthree\nfour\n",
  "b.md": "# b\n",
  "sub/deep.txt": "deep\n",
  "dot.png": PNG,
};

/** Successful calls, in order, run on both (paths relative: the reference resolves them in its directory, we in the workspace). */
const CALLS: Array<[string, Record<string, unknown>]> = [
  ["read_file", { path: "a.txt" }],
  ["read_text_file", { path: "a.txt" }],
  ["read_text_file", { path: "a.txt", head: 2 }],
  ["read_text_file", { path: "a.txt", head: 9 }],
  ["read_text_file", { path: "a.txt", tail: 1 }],
  ["read_text_file", { path: "a.txt", tail: 2 }],
  ["read_text_file", { path: "a.txt", head: 0 }],
  ["read_media_file", { path: "dot.png" }],
  ["read_multiple_files", { paths: ["a.txt", "b.md"] }],
  ["write_file", { path: "c.txt", content: "see\n" }],
  ["edit_file", { path: "c.txt", edits: [{ oldText: "see", newText: "sea" }] }],
  ["create_directory", { path: "made/deeper" }],
  ["list_directory", { path: "sub" }],
  ["list_directory_with_sizes", { path: "sub" }],
  ["directory_tree", { path: "sub" }],
  ["move_file", { source: "c.txt", destination: "d.txt" }],
  ["search_files", { path: ".", pattern: "**/*.txt" }],
  ["get_file_info", { path: "a.txt" }],
  ["list_allowed_directories", {}],
];

let daemon: Daemon;
let scratch: string;
let reference: Client;
let ours: Client;

async function connectStdio(command: string, args: string[]): Promise<Client> {
  const client = new Client({ name: "filetools-reference-test", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command, args, stderr: "pipe" }));
  return client;
}

beforeAll(async () => {
  const entry = ensureMcpServer(path.join(ROOT, ".tools", "server-filesystem"), () => {});
  ensureCliBuilt();
  scratch = realpathSync(mkdtempSync(path.join(tmpdir(), "ft-reference-")));
  const seed = path.join(scratch, "seed");
  for (const [file, content] of Object.entries(FILES)) {
    mkdirSync(path.dirname(path.join(seed, file)), { recursive: true });
    writeFileSync(path.join(seed, file), content);
  }
  for (const copy of ["theirs", "ours"]) cpSync(seed, path.join(scratch, copy), { recursive: true });
  daemon = await startDaemon({ binds: { same: path.join(scratch, "ours") } });
  reference = await connectStdio(process.execPath, [entry, path.join(scratch, "theirs")]);
  ours = await connectStdio(process.execPath, [CLI, "--address", daemon.address, "mcp", "--workspace", "same", "--profile", "server-filesystem"]);
}, 300_000);

afterAll(async () => {
  await reference?.close();
  await ours?.close();
  await daemon?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe(`the server-filesystem profile against ${MCP_SERVER}`, () => {
  let theirTools: Tool[];
  let ourTools: Tool[];
  beforeAll(async () => {
    theirTools = (await reference.listTools()).tools;
    ourTools = (await ours.listTools()).tools;
  });

  it("offers the same tools, in the same order, with the same required arguments and annotations", () => {
    expect(ourTools.map((t) => t.name)).toEqual(theirTools.map((t) => t.name));
    for (const theirs of theirTools) {
      const mine = ourTools.find((t) => t.name === theirs.name)!;
      expect([theirs.name, mine.inputSchema.required ?? []]).toEqual([theirs.name, theirs.inputSchema.required ?? []]);
      // Every argument of theirs is one of ours (ours may take more: encoding).
      expect([theirs.name, Object.keys(theirs.inputSchema.properties ?? {}).filter((p) => !(p in (mine.inputSchema.properties ?? {})))]).toEqual([theirs.name, []]);
      expect([theirs.name, mine.annotations?.readOnlyHint]).toEqual([theirs.name, theirs.annotations?.readOnlyHint]);
      expect(mine.outputSchema === undefined).toBe(theirs.outputSchema === undefined);
    }
  });

  it("answers each successful call with the same content, except the differences the README lists", async () => {
    const differing = new Set<string>();
    for (const [name, args] of CALLS) {
      const theirs = (await reference.callTool({ name, arguments: args })) as CallToolResult;
      const mine = (await ours.callTool({ name, arguments: args })) as CallToolResult;
      expect([name, args, theirs.isError ?? false, mine.isError ?? false]).toEqual([name, args, false, false]);
      const known = [name, `${name} ${JSON.stringify(args)}`].find((key) => key in KNOWN_DIFFERENCES);
      if (known) {
        if (JSON.stringify(mine.content) !== JSON.stringify(theirs.content)) differing.add(known);
      } else {
        expect([name, args, mine.content]).toEqual([name, args, theirs.content]);
      }
    }
    expect([...differing].sort()).toEqual(Object.keys(KNOWN_DIFFERENCES).sort());
  });
});
