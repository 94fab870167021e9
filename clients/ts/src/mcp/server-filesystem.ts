// `filetools mcp --profile server-filesystem`: the tool names, argument shapes
// and result texts of the reference MCP filesystem server
// (@modelcontextprotocol/server-filesystem), so that a host configured for it
// swaps us in without changing a prompt. The workspace is its one allowed
// directory, "/". Where our semantics are stricter (an oldText must occur
// once; move_file never replaces; a whole-file read is capped), the
// descriptions say so. Errors are isError results with the dispatcher's text.
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { status as Code } from "@grpc/grpc-js";
import { Ajv } from "ajv";
import picomatch from "picomatch";
import { FileType, type FileInfo } from "@filetools/proto/filetools/v1/common_pb.js";
import type { WorkspaceClient } from "../workspace.js";
import { FileToolsError } from "../errors.js";
import { schemaViolation, withoutNulls } from "../tools/dispatcher.js";
import { DIFF_CUT, errorText } from "../tools/texts.js";
import type { McpToolSet } from "./server.js";

/** What a whole-file read_text_file returns at most (the reference has no cap; a model's context has). */
export const WHOLE_READ_MAX_BYTES = 1 << 20;
/** Entries a listing, tree or file search walks at most. */
const WALK_MAX_ENTRIES = 100_000;

type Args = Record<string, unknown>;
interface Profiled {
  tool: Tool;
  run(args: Args, signal: AbortSignal): Promise<string>;
}

const text = (description: string) => ({ type: "string", description });
const OUTPUT = { type: "object" as const, properties: { content: { type: "string" } }, required: ["content"] };
const READS = { readOnlyHint: true, openWorldHint: false };

function tool(name: string, title: string, description: string, properties: Record<string, object>, required: string[], annotations: Tool["annotations"]): Tool {
  const inputSchema = { type: "object" as const, properties, required, additionalProperties: false };
  return { name, title, description, inputSchema, outputSchema: OUTPUT, annotations: { title, ...annotations } };
}

export function serverFilesystemToolSet(workspace: WorkspaceClient, options: { readOnly?: boolean } = {}): McpToolSet {
  const profiled = profileTools(workspace).filter((p) => !options.readOnly || p.tool.annotations?.readOnlyHint === true);
  const byName = new Map(profiled.map((p) => [p.tool.name, p]));
  const ajv = new Ajv({ strict: true });
  const validators = new Map(profiled.map((p) => [p.tool.name, ajv.compile(p.tool.inputSchema)]));
  return {
    tools: () => profiled.map((p) => p.tool),
    async call(name, args, signal): Promise<CallToolResult> {
      const entry = byName.get(name);
      try {
        if (!entry) throw new FileToolsError(Code.INVALID_ARGUMENT, `there is no tool named ${JSON.stringify(name)}; the tools are ${[...byName.keys()].join(", ")}`, "UNKNOWN_TOOL");
        const validate = validators.get(name)!;
        const given = withoutNulls(entry.tool.inputSchema, args) as Args;
        if (!validate(given)) throw new FileToolsError(Code.INVALID_ARGUMENT, `invalid arguments for ${name}: ${schemaViolation(validate.errors?.[0])}`, "INVALID_ARGUMENT");
        const content = await entry.run(given, signal);
        return { content: [{ type: "text", text: content }], structuredContent: { content } };
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        if (error instanceof FileToolsError) return { content: [{ type: "text", text: errorText(error) }], isError: true };
        throw error;
      }
    },
  };
}

function profileTools(ws: WorkspaceClient): Profiled[] {
  const readWhole = async (path: string, signal: AbortSignal): Promise<string> => {
    const window = await ws.readText(path, { signal, maxBytes: WHOLE_READ_MAX_BYTES });
    if (window.nextStartLine === undefined) return window.text;
    return `${window.text}\n[filetools: ${path} is longer than ${WHOLE_READ_MAX_BYTES} bytes; this is its beginning (lines 1–${window.lastLine}). Read the rest with head/tail or with the read tool of filetools' own profile.]`;
  };
  const listed = async (path: string, signal: AbortSignal, recursive = false): Promise<FileInfo[]> =>
    (await ws.list(path, { signal, recursive, maxEntries: WALK_MAX_ENTRIES, respectGitignore: false })).entries;

  return [
    {
      tool: tool(
        "read_text_file",
        "Read Text File",
        "Read the contents of a file in the workspace as text. Use the 'head' parameter to read only the first N lines of a file, or the 'tail' parameter to read only the last N lines (never both). Without either, at most the first 1 MiB is returned, with a note when the file is longer. Works on files of any size.",
        { path: text("Workspace path of the file"), head: { type: "integer", minimum: 1, description: "If provided, returns only the first N lines of the file" }, tail: { type: "integer", minimum: 1, description: "If provided, returns only the last N lines of the file" } },
        ["path"],
        READS,
      ),
      async run(args, signal) {
        const path = args.path as string;
        if (args.head !== undefined && args.tail !== undefined) throw new FileToolsError(Code.INVALID_ARGUMENT, "Cannot specify both head and tail parameters simultaneously", "INVALID_ARGUMENT");
        if (args.head !== undefined) return (await ws.readText(path, { signal, lineCount: args.head as number })).text;
        if (args.tail !== undefined) return (await ws.readText(path, { signal, tail: args.tail as number })).text;
        return readWhole(path, signal);
      },
    },
    {
      tool: tool(
        "read_multiple_files",
        "Read Multiple Files",
        "Read the contents of multiple files at once. Each file's content is returned with its path as a reference; a failed read of one file does not stop the others. At most the first 1 MiB of each file.",
        { paths: { type: "array", minItems: 1, maxItems: 100, items: { type: "string" }, description: "Workspace paths of the files" } },
        ["paths"],
        READS,
      ),
      async run(args, signal) {
        const paths = args.paths as string[];
        const results = await Promise.all(
          paths.map((path) =>
            readWhole(path, signal).then(
              (content) => `${path}:\n${content}\n`,
              (error: unknown) => `${path}: Error - ${error instanceof Error ? error.message : String(error)}`,
            ),
          ),
        );
        return results.join("\n---\n");
      },
    },
    {
      tool: tool(
        "write_file",
        "Write File",
        "Create a new file or completely overwrite an existing file with new content, atomically (readers never see half a file). Missing parent directories are created.",
        { path: text("Workspace path of the file"), content: text("The whole new content") },
        ["path", "content"],
        { readOnlyHint: false, idempotentHint: true, destructiveHint: true, openWorldHint: false },
      ),
      async run(args, signal) {
        await ws.writeText(args.path as string, args.content as string, { signal });
        return `Successfully wrote to ${args.path as string}`;
      },
    },
    {
      tool: tool(
        "edit_file",
        "Edit File",
        "Make edits to a text file: each edit replaces exact text with new content, and returns a git-style diff of the changes. Stricter than a first-match replace: each oldText must occur exactly once in the file (add surrounding lines to make it unique), otherwise nothing is written and the error says how many times it occurs or which line is closest. Edits apply in order, all or none. dryRun previews the diff.",
        {
          path: text("Workspace path of the file"),
          edits: {
            type: "array",
            minItems: 1,
            items: {
              type: "object",
              properties: { oldText: text("Text to search for - must match exactly, once"), newText: text("Text to replace with") },
              required: ["oldText", "newText"],
              additionalProperties: false,
            },
          },
          dryRun: { type: "boolean", description: "Preview changes using git-style diff format" },
        },
        ["path", "edits"],
        { readOnlyHint: false, idempotentHint: false, destructiveHint: true, openWorldHint: false },
      ),
      async run(args, signal) {
        const edits = (args.edits as Array<{ oldText: string; newText: string }>).map(({ oldText, newText }) => ({ oldText, newText }));
        const response = await ws.edit(args.path as string, edits, { signal, dryRun: (args.dryRun as boolean | undefined) ?? false });
        let fence = "```";
        while (response.diff.includes(fence)) fence += "`";
        return `${fence}diff\n${response.diff}${response.diff.endsWith("\n") ? "" : "\n"}${fence}\n${response.diffTruncated ? DIFF_CUT : ""}\n`;
      },
    },
    {
      tool: tool(
        "create_directory",
        "Create Directory",
        "Create a new directory or ensure a directory exists, with any missing parents. An existing directory is not an error.",
        { path: text("Workspace path of the directory") },
        ["path"],
        { readOnlyHint: false, idempotentHint: true, destructiveHint: false, openWorldHint: false },
      ),
      async run(args, signal) {
        await ws.mkdir(args.path as string, { signal });
        return `Successfully created directory ${args.path as string}`;
      },
    },
    {
      tool: tool(
        "list_directory",
        "List Directory",
        "Get a listing of all files and directories in a directory, with [FILE] and [DIR] prefixes.",
        { path: text("Workspace path of the directory") },
        ["path"],
        READS,
      ),
      async run(args, signal) {
        return (await listed(args.path as string, signal)).map((e) => `${e.type === FileType.DIRECTORY ? "[DIR]" : "[FILE]"} ${e.name}`).join("\n");
      },
    },
    {
      tool: tool(
        "list_directory_with_sizes",
        "List Directory with Sizes",
        "Get a listing of all files and directories in a directory, with [FILE] and [DIR] prefixes and file sizes, and a summary.",
        { path: text("Workspace path of the directory"), sortBy: { type: "string", enum: ["name", "size"], description: "Sort entries by name or size" } },
        ["path"],
        READS,
      ),
      async run(args, signal) {
        const entries = await listed(args.path as string, signal);
        const sorted = [...entries].sort((a, b) => (args.sortBy === "size" ? Number(b.size - a.size) : a.name.localeCompare(b.name)));
        const isDir = (e: FileInfo) => e.type === FileType.DIRECTORY;
        const lines = sorted.map((e) => `${isDir(e) ? "[DIR]" : "[FILE]"} ${e.name.padEnd(30)} ${isDir(e) ? "" : formatSize(Number(e.size)).padStart(10)}`);
        const files = entries.filter((e) => !isDir(e));
        const total = files.reduce((sum, e) => sum + Number(e.size), 0);
        return [...lines, "", `Total: ${files.length} files, ${entries.length - files.length} directories`, `Combined size: ${formatSize(total)}`].join("\n");
      },
    },
    {
      tool: tool(
        "directory_tree",
        "Directory Tree",
        "Get a recursive tree view of files and directories as JSON: each entry has 'name', 'type' (file/directory) and, for directories, 'children'. excludePatterns are globs matched against paths relative to path.",
        { path: text("Workspace path of the directory"), excludePatterns: { type: "array", items: { type: "string" } } },
        ["path"],
        READS,
      ),
      async run(args, signal) {
        const root = args.path as string;
        const excluded = excluder((args.excludePatterns as string[] | undefined) ?? []);
        const base = root.replace(/\/+$/, "");
        interface Node {
          name: string;
          type: "file" | "directory";
          children?: Node[];
        }
        const top: Node[] = [];
        const directories = new Map<string, Node[]>([[base === "" ? "/" : base, top]]);
        // List yields a directory before its contents, so each entry's parent is already placed (or was excluded).
        for (const entry of await listed(root, signal, true)) {
          const relative = entry.path.slice(base.length + 1);
          if (excluded(relative)) continue;
          const siblings = directories.get(entry.path.slice(0, entry.path.lastIndexOf("/")) || "/");
          if (!siblings) continue;
          const node: Node = { name: entry.name, type: entry.type === FileType.DIRECTORY ? "directory" : "file" };
          if (node.type === "directory") directories.set(entry.path, (node.children = []));
          siblings.push(node);
        }
        return JSON.stringify(top, null, 2);
      },
    },
    {
      tool: tool(
        "move_file",
        "Move File",
        "Move or rename files and directories. If the destination exists, the move fails (nothing is replaced, ever).",
        { source: text("Workspace path to move"), destination: text("Workspace path it will have") },
        ["source", "destination"],
        { readOnlyHint: false, idempotentHint: false, destructiveHint: true, openWorldHint: false },
      ),
      async run(args, signal) {
        await ws.move(args.source as string, args.destination as string, { signal, overwrite: false });
        return `Successfully moved ${args.source as string} to ${args.destination as string}`;
      },
    },
    {
      tool: tool(
        "search_files",
        "Search Files",
        "Recursively search for files and directories whose path matches a glob pattern, relative to path: '*.ext' matches in the directory itself, '**/*.ext' in all subdirectories. Returns their workspace paths. (For content search, use filetools' own profile's search tool.)",
        { path: text("Workspace path of the directory to search"), pattern: text("Glob pattern"), excludePatterns: { type: "array", items: { type: "string" } } },
        ["path", "pattern"],
        READS,
      ),
      async run(args, signal) {
        const base = (args.path as string).replace(/\/+$/, "");
        const matches = picomatch(args.pattern as string, { dot: true });
        const excluded = excluder((args.excludePatterns as string[] | undefined) ?? [], false);
        const found = (await listed(args.path as string, signal, true))
          .filter((entry) => {
            const relative = entry.path.slice(base.length + 1);
            return !excluded(relative) && matches(relative);
          })
          .map((entry) => entry.path);
        return found.length > 0 ? found.join("\n") : "No matches found";
      },
    },
    {
      tool: tool(
        "get_file_info",
        "Get File Info",
        "Retrieve metadata about a file or directory: size, modification time, type and permissions, and filetools' version token (pass it as if_version to the own profile's tools).",
        { path: text("Workspace path") },
        ["path"],
        READS,
      ),
      async run(args, signal) {
        const file = await ws.stat(args.path as string, { signal });
        const modified = file.mtime ? new Date(Number(file.mtime.seconds) * 1000 + Math.floor(file.mtime.nanos / 1e6)) : new Date(0);
        const info = {
          size: Number(file.size),
          modified,
          isDirectory: file.type === FileType.DIRECTORY,
          isFile: file.type === FileType.FILE,
          permissions: file.mode.toString(8).slice(-3),
          version: file.version,
        };
        return Object.entries(info)
          .map(([key, value]) => `${key}: ${String(value)}`)
          .join("\n");
      },
    },
    {
      tool: tool("list_allowed_directories", "List Allowed Directories", "Returns the directories this server may access: the workspace root, \"/\", and everything below it.", {}, [], READS),
      run: async () => "Allowed directories:\n/",
    },
  ];
}

/** A test of relative paths against exclude globs; `bare` also matches a bare name at any depth and below (directory_tree's rule). */
function excluder(patterns: string[], bare = true): (relative: string) => boolean {
  const tests = patterns.flatMap((pattern) =>
    pattern.includes("*") || !bare ? [picomatch(pattern, { dot: true })] : [pattern, `**/${pattern}`, `**/${pattern}/**`].map((p) => picomatch(p, { dot: true })),
  );
  return (relative) => tests.some((test) => test(relative));
}

/** The reference's size format: "1.50 KB". */
function formatSize(bytes: number): string {
  const units = ["B", "KB", "MB", "GB", "TB"];
  if (bytes <= 0) return "0 B";
  const i = Math.floor(Math.log(bytes) / Math.log(1024));
  if (i <= 0) return `${bytes} B`;
  const unit = Math.min(i, units.length - 1);
  return `${(bytes / 1024 ** unit).toFixed(2)} ${units[unit]}`;
}
