// The tool dispatcher against a real filetoolsd: the definitions are the
// catalogue's, each tool's text is what catalogue/README.md specifies, errors
// come back as text a model can act on, and nothing a model sends throws.
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, startDaemon, type Daemon } from "../../../test/e2e/daemon.js";
import { connect, type FileToolsClient } from "../src/index.js";
import { CATALOGUE_FILE } from "../src/tools/catalogue.js";
import { ToolDispatcher } from "../src/tools/dispatcher.js";

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
    expect(tools.definitions().map((t) => t.name)).toEqual(["read", "write", "edit", "delete", "move", "make_dir", "list", "search", "stat"]);
    expect(tools.openAITools()[0]).toMatchObject({ type: "function", function: { name: "read", parameters: { type: "object", required: ["path"] } } });
    expect(tools.anthropicTools()[0]).toMatchObject({ name: "read", input_schema: { type: "object" } });
    const readOnly = new ToolDispatcher(client.workspace("agent"), { readOnly: true });
    expect(readOnly.definitions().map((t) => t.name)).toEqual(["read", "list", "search", "stat"]);
  });
});

describe("texts", () => {
  it("read: cat -n lines and the paging hint", async () => {
    const result = await tools.call("read", { path: "/big.txt", start_line: 149, line_count: 2 });
    expect(result).toMatchObject({ isError: false, structured: { first_line: 149, last_line: 150, next_start_line: 151 } });
    expect(result.text).toBe("   149\tline 149\n   150\tline 150\n… call read with start_line 151 for more; 9,840 lines in all\n");
    const end = await tools.call("read", { path: "/big.txt", tail: 1 });
    expect(end.text).toBe("  9840\tline 9840\n");
  });

  it("search: grouped by file, with a summary", async () => {
    const result = await tools.call("search", { pattern: "hello", path: "/src" });
    expect(result.text).toBe("/src/a.py\n2:    print('hello')\n\n/src/b.py\n1:print('hello again')\n(2 matching lines in 2 files; 2 files searched)\n");
    expect((await tools.call("search", { pattern: "hello", output_mode: "count" })).text).toBe("/src/a.py:1\n/src/b.py:1\n(2 matching lines in 2 files; 3 files searched)\n");
    expect((await tools.call("search", { pattern: "absent" })).text).toBe("No matches (3 files searched).\n");
  });

  it("edit: a unified diff; a stale version: CONTENT_CHANGED with the new version and what to do", async () => {
    const { structured } = await tools.call("read", { path: "/src/b.py" });
    const edited = await tools.call("edit", { path: "/src/b.py", edits: [{ old_text: "again", new_text: "once more" }], if_version: structured.version });
    expect(edited.isError).toBe(false);
    expect(edited.text).toContain("Edited /src/b.py: 1 replacement. Version ");
    expect(edited.text).toContain("-print('hello again')\n+print('hello once more')\n");
    const stale = await tools.call("edit", { path: "/src/b.py", edits: [{ old_text: "once", new_text: "twice" }], if_version: structured.version });
    expect(stale.isError).toBe(true);
    expect(stale.text).toMatch(/^Error \(CONTENT_CHANGED\): \/src\/b\.py changed: its version is (\w+), not \w+\.\nRead the file again, then retry with if_version \1 if your change still applies\.\n$/);
  });

  it("edit: old text not found names the closest line", async () => {
    const result = await tools.call("edit", { path: "/src/a.py", edits: [{ old_text: "print('helo')", new_text: "x" }] });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/^Error \(OLD_TEXT_NOT_FOUND\): .*the closest line is 2: "    print\('hello'\)"\.\nRead the file again and copy old_text exactly/);
  });

  it("write, list, stat, move, make_dir, delete", async () => {
    expect((await tools.call("write", { path: "/notes/todo.md", content: "- one\n" })).text).toMatch(/^Wrote \/notes\/todo\.md \(created\): 6 bytes now\. Version \w+\.\n$/);
    expect((await tools.call("list", { path: "/notes" })).text).toBe("/notes/todo.md (6 bytes)\n");
    expect((await tools.call("stat", { path: "/notes/todo.md", count_lines: true })).text).toMatch(/^\/notes\/todo\.md: file, 6 bytes, mode 0644, modified \d{4}-\d\d-\d\dT[\d:.]+Z, version \w+\n1 line\n$/);
    expect((await tools.call("move", { source: "/notes/todo.md", destination: "/notes/done.md" })).text).toBe("Moved /notes/todo.md to /notes/done.md.\n");
    expect((await tools.call("make_dir", { path: "/notes" })).text).toBe("Directory /notes already exists.\n");
    expect((await tools.call("delete", { path: "/notes", recursive: true })).text).toBe("Deleted /notes.\n");
    expect((await tools.call("delete", { path: "/notes" })).text).toBe("/notes did not exist; nothing was deleted.\n");
  });
});

describe("whatever a model sends, a result it can read", () => {
  const cases: Array<[string, unknown, RegExp]> = [
    ["read", { path: "/../../etc/passwd" }, /^Error \(PATH_ESCAPES_WORKSPACE\): .*\nUse a path inside the workspace/],
    ["read", { path: 42 }, /^Error \(INVALID_ARGUMENT\): invalid arguments for read: path must be a string\.\n/],
    ["read", {}, /^Error \(INVALID_ARGUMENT\): invalid arguments for read: missing required argument path\.\n/],
    ["read", { path: "/big.txt", line_count: 10 ** 12 }, /line_count must be at most 100000/],
    ["read", { path: "/big.txt", colour: "red" }, /unknown argument colour/],
    ["read", "{not json", /the arguments are not valid JSON/],
    ["read", '{"path": "/big.txt", "line_count": 1}', /^     1\tline 1\n/],
    ["search", { pattern: "(" }, /^Error \(INVALID_ARGUMENT\)/],
    ["write", { path: "/x", content: "y", mode: "clobber" }, /mode must be one of create_or_replace, create_only, replace_only, append/],
    ["no_such_tool", {}, /^Error \(UNKNOWN_TOOL\): there is no tool named "no_such_tool"; the tools are read, write/],
    ["read", null, /missing required argument path/],
    ["edit", { path: "/src/a.py", edits: [] }, /edits must have at least 1 items/],
  ];
  it.each(cases)("%s %j", async (name, args, expected) => {
    const result = await tools.call(name, args);
    expect(result.text).toMatch(expected);
  });

  it("a read-only dispatcher refuses the tools that change things", async () => {
    const readOnly = new ToolDispatcher(client.workspace("agent"), { readOnly: true });
    expect((await readOnly.call("write", { path: "/x", content: "y" })).text).toMatch(/^Error \(UNKNOWN_TOOL\): there is no tool named "write"; the tools are read, list, search, stat/);
  });
});
