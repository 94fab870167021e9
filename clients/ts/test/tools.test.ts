// The tool dispatcher against a real filetoolsd: the definitions are the
// catalogue's, each tool's text is what catalogue/README.md specifies, errors
// come back as text a model can act on, and nothing a model sends throws.
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, startDaemon, type Daemon } from "../../../test/e2e/daemon.js";
import { connect, type FileToolsClient } from "../src/index.js";
import { Ajv } from "ajv";
import { CATALOGUE_FILE, catalogue } from "../src/tools/catalogue.js";
import { ToolDispatcher, type ToolResult } from "../src/tools/dispatcher.js";
import sharp from "sharp";
import { anthropicToolResultContent, openAIToolOutput } from "../src/tools/content.js";
import { solidImage } from "../../../test/support/media.js";

let daemon: Daemon;
let client: FileToolsClient;
let tools: ToolDispatcher;

beforeAll(async () => {
  daemon = await startDaemon();
  client = connect(daemon.address);
  await client.createWorkspace("agent");
  tools = new ToolDispatcher(client.workspace("agent"));
  const lines = Array.from({ length: 9840 }, (_, i) => `line ${i + 1}\n`).join("");
  await client.workspace("agent").writeText("/big.txt", lines);
  await client.workspace("agent").writeText("/src/a.py", "def main():\n    print('hello')\n\nmain()\n");
  await client.workspace("agent").writeText("/src/b.py", "print('hello again')\n");
});

afterAll(async () => {
  client?.close();
  await daemon?.stop();
});

describe("the catalogue", () => {
  it("the package's copy is catalogue/tools.json, byte for byte", () => {
    expect(readFileSync(CATALOGUE_FILE, "utf8")).toBe(readFileSync(path.join(ROOT, "catalogue", "tools.json"), "utf8"));
  });

  it("offers every tool, in the three shapes; read-only offers only those that change nothing", () => {
    expect(tools.definitions().map((t) => t.name)).toEqual(["read", "write", "edit", "apply_patch", "delete", "move", "make_dir", "list", "search", "stat", "changes", "list_snapshots", "export_archive", "import_archive"]);
    expect(tools.openAITools()[0]).toMatchObject({ type: "function", function: { name: "read", parameters: { type: "object", required: ["path"] } } });
    expect(tools.anthropicTools()[0]).toMatchObject({ name: "read", input_schema: { type: "object" } });
    const readOnly = new ToolDispatcher(client.workspace("agent"), { readOnly: true });
    expect(readOnly.definitions().map((t) => t.name)).toEqual(["read", "list", "search", "stat", "changes", "list_snapshots"]);
  });
});

interface ConformanceCall {
  tool: string;
  args: unknown;
  text?: string;
  pattern?: string;
  is_error?: boolean;
  save?: Record<string, string>;
  images?: Array<{ mime_type: string }>;
}

const conformance: {
  files: Record<string, string | { repeat_lines: string; count: number }>;
  snapshot: boolean;
  calls: ConformanceCall[];
  media: { files: Record<string, { base64: string }>; calls: ConformanceCall[] };
} = JSON.parse(
  readFileSync(path.join(ROOT, "catalogue", "conformance.json"), "utf8"),
);

/** "${name}" in string arguments → what an earlier call saved under that name. */
function substitute(args: unknown, saved: Record<string, unknown>): unknown {
  if (typeof args === "string") return args.replace(/^\$\{(\w+)\}$/, (_, name: string) => String(saved[name]));
  if (Array.isArray(args)) return args.map((a) => substitute(a, saved));
  if (args && typeof args === "object") return Object.fromEntries(Object.entries(args).map(([k, v]) => [k, substitute(v, saved)]));
  return args;
}

const ajv = new Ajv({ strict: true });
const outputValidators = new Map(catalogue.tools.map((tool) => [tool.name, ajv.compile(tool.output_schema)]));

describe("the conformance table (catalogue/conformance.json), in order, on a fresh workspace; structured results match the output schemas", () => {
  const saved: Record<string, unknown> = {};
  let table: ToolDispatcher;

  beforeAll(async () => {
    await client.createWorkspace("conformance");
    const ws = client.workspace("conformance");
    for (const [file, content] of Object.entries(conformance.files)) {
      const text = typeof content === "string" ? content : Array.from({ length: content.count }, (_, i) => `${content.repeat_lines.replace("{n}", String(i + 1))}\n`).join("");
      await ws.writeText(file, text);
    }
    if (conformance.snapshot) await ws.finishRun((await ws.startRun()).id);
    table = new ToolDispatcher(ws);
  });

  it.each(conformance.calls.map((call, i) => [i, call.tool, JSON.stringify(call.args), call] as const))("%i %s %s", async (_i, _tool, _args, call) => {
    const result = await table.call(call.tool, substitute(call.args, saved));
    expectConforming(result, call);
    for (const [name, field] of Object.entries(call.save ?? {})) saved[name] = result.structured[field];
  });
});

describe("the conformance table's reads of images and PDFs (its media part), on a second fresh workspace", () => {
  let table: ToolDispatcher;

  beforeAll(async () => {
    await client.createWorkspace("conformance-media");
    const ws = client.workspace("conformance-media");
    for (const [file, { base64 }] of Object.entries(conformance.media.files)) await ws.writeBytes(file, Buffer.from(base64, "base64"));
    table = new ToolDispatcher(ws);
  });

  it.each(conformance.media.calls.map((call, i) => [i, JSON.stringify(call.args), call] as const))("%i read %s", async (_i, _args, call) => {
    const result = await table.call(call.tool, call.args);
    expectConforming(result, call);
    expect((result.images ?? []).map((image) => ({ mime_type: image.mimeType }))).toEqual(call.images ?? []);
    // Each image's bytes decode as the type it names.
    for (const image of result.images ?? []) expect(`image/${(await sharp(Buffer.from(image.data, "base64")).metadata()).format}`).toBe(image.mimeType);
  });
});

function expectConforming(result: ToolResult, call: ConformanceCall): void {
  if (call.text !== undefined) expect(result.text).toBe(call.text);
  else expect(result.text).toMatch(new RegExp(`^${call.pattern}$`));
  expect(result.isError).toBe(call.is_error ?? false);
  if (!result.isError) expect(outputValidators.get(call.tool)!(result.structured), JSON.stringify(result.structured)).toBe(true);
}

describe("an edit whose diff is longer than the daemon sends", () => {
  it("says the diff stops at 1 MiB, after the diff; the structured result has diff_truncated", async () => {
    // The same call as the Python and Go dispatcher tests: 100,000 lines, each changed.
    await client.workspace("agent").writeText("/every.txt", Array.from({ length: 100_000 }, (_, i) => `value ${i}\n`).join(""));
    const result = await tools.call("edit", { path: "/every.txt", edits: [{ old_text: "value", new_text: "VALUE", replace_all: true }] });
    expect(result.isError).toBe(false);
    expect(result.text).toMatch(/^Edited \/every\.txt: 100,000 replacements\. Version [0-9a-f]{16}\.\n\n--- a\/every\.txt\n\+\+\+ b\/every\.txt\n@@ -1,\d+ \+1,\d+ @@\n-value 0\n\+VALUE 0\n/);
    expect(result.text.endsWith("\n(the diff stops here, at 1 MiB; the rest of the change is not shown)\n")).toBe(true);
    expect(result.structured).toMatchObject({ replacements: 100_000, diff_truncated: true });
  });
});

describe("whatever a model sends, a result it can read", () => {
  it("a read-only dispatcher refuses the tools that change things", async () => {
    const readOnly = new ToolDispatcher(client.workspace("agent"), { readOnly: true });
    expect((await readOnly.call("write", { path: "/x", content: "y" })).text).toMatch(/^Error \(UNKNOWN_TOOL\): there is no tool named "write"; the tools are read, list, search, stat, changes, list_snapshots\.$/m);
  });
});

describe("the OpenAI Responses API's built-in apply_patch tool", () => {
  it("applies a response's operations together, in apply_patch's words; a bad or failing set changes nothing", async () => {
    const ws = client.workspace("agent");
    await ws.writeText("/ops/keep.txt", "one\ntwo\n");
    await ws.writeText("/ops/drop.txt", "x\n");
    const applied = await tools.applyPatchOperations([
      { type: "create_file", path: "/ops/new.txt", diff: "+hello\n+world\n" },
      { type: "update_file", path: "/ops/keep.txt", diff: "@@\n one\n-two\n+2\n" },
      { type: "delete_file", path: "/ops/drop.txt" },
    ]);
    expect(applied).toMatchObject({ isError: false, text: "Applied the patch: 3 files changed.\nadded /ops/new.txt\nupdated /ops/keep.txt\ndeleted /ops/drop.txt\n" });
    expect((await ws.readText("/ops/keep.txt")).text).toBe("one\n2\n");
    const failing = await tools.applyPatchOperations([
      { type: "create_file", path: "/ops/other.txt", diff: "+x\n" },
      { type: "update_file", path: "/ops/keep.txt", diff: "@@\n-absent\n+y\n" },
    ]);
    expect(failing.isError).toBe(true);
    expect(failing.text).toMatch(/^Error \(OLD_TEXT_NOT_FOUND\): hunk 1 of \/ops\/keep\.txt/);
    await expect(ws.stat("/ops/other.txt")).rejects.toMatchObject({ reason: "NOT_FOUND" });
    for (const bad of [[], "ops", [{ type: "rename_file", path: "/a" }], [{ type: "update_file", path: "/a" }], [null]]) {
      expect(await tools.applyPatchOperations(bad)).toMatchObject({ isError: true, text: expect.stringMatching(/^Error \(INVALID_ARGUMENT\): invalid apply_patch operations/) });
    }
  });
});

describe("an unreachable daemon", () => {
  it("is a tool result in the catalogue's words, the same in every language (not grpc-js's)", async () => {
    const nowhere = connect("127.0.0.1:1");
    try {
      const result = await new ToolDispatcher(nowhere.workspace("agent")).call("stat", {});
      expect(result).toMatchObject({ isError: true, text: "Error (UNAVAILABLE): the filetools daemon cannot be reached.\nIt is not running, or not at the address this client was given. Nothing was done: tell the operator, or call again once the daemon is back.\n" });
    } finally {
      nowhere.close();
    }
  });
});

describe("changes before any snapshot", () => {
  it("answers that every file is new (the daemon's DiffSnapshots has nothing to compare with)", async () => {
    await client.createWorkspace("fresh");
    const fresh = new ToolDispatcher(client.workspace("fresh"));
    expect((await fresh.call("changes", {})).text).toBe("No snapshot yet (one is taken when a run finishes), and no files yet.\n");
    await client.workspace("fresh").writeText("/a.txt", "abc");
    await client.workspace("fresh").writeText("/b/.hidden", "12");
    const result = await fresh.call("changes", { max_entries: 1 });
    expect(result).toMatchObject({
      isError: false,
      text: "No snapshot yet (one is taken when a run finishes), so every file is new: 2 added.\nadded /a.txt (3 bytes)\n… 1 more change not shown: raise max_entries\n",
      structured: { since: "", added: 2, modified: 0, removed: 0, unchanged: 0, truncated: true },
    });
    expect(outputValidators.get("changes")!(result.structured)).toBe(true);
    expect((await fresh.call("changes", { since: "nope" })).text).toMatch(/^Error \(NOT_FOUND\): snapshot "nope" does not exist/);
  });
});

describe("a read of an image in each model API's shape", () => {
  it("Anthropic tool_result content and an OpenAI Responses function_call_output carry the text and the image; a text result stays text", async () => {
    const png = await solidImage(4, 3, "png");
    await client.workspace("agent").writeBytes("/dot.png", png);
    const result = await tools.call("read", { path: "/dot.png" });
    const text = "Image /dot.png (PNG, 4x3 pixels, 95 bytes).\n";
    expect(anthropicToolResultContent(result)).toEqual([
      { type: "text", text },
      { type: "image", source: { type: "base64", media_type: "image/png", data: png.toString("base64") } },
    ]);
    expect(openAIToolOutput(result)).toEqual([
      { type: "input_text", text },
      { type: "input_image", image_url: `data:image/png;base64,${png.toString("base64")}` },
    ]);
    const plain = await tools.call("read", { path: "/src/b.py" });
    expect([anthropicToolResultContent(plain), openAIToolOutput(plain)]).toEqual([plain.text, plain.text]);
  });
});
