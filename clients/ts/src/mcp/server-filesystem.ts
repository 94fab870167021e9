// `filetools mcp --profile server-filesystem`: the tool names, argument shapes
// and result texts of the reference MCP filesystem server
// (@modelcontextprotocol/server-filesystem), so that a host configured for it
// swaps us in without changing a prompt. The workspace is its one allowed
// directory, "/". Where our semantics are stricter (an oldText must occur
// once; move_file never replaces; a read is capped), the descriptions say so.
// Errors are isError results with the dispatcher's text in this tool set's
// words (the catalogue's tool_sets["server-filesystem"]).
import { extname } from "node:path";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { status as Code } from "@grpc/grpc-js";
import { Ajv } from "ajv";
import picomatch from "picomatch";
import { FileType, type FileInfo } from "@filetools/proto/filetools/v1/common_pb.js";
import type { WorkspaceClient } from "../workspace.js";
import { FileToolsError } from "../errors.js";
import { schemaViolation, withoutNulls } from "../tools/dispatcher.js";
import { DIFF_CUT, errorText, inWords } from "../tools/texts.js";
import type { McpToolSet } from "./server.js";

/** The text a read_text_file (whole, head or tail) returns at most, and read_multiple_files in all (the reference has no cap; a model's context has). */
export const WHOLE_READ_MAX_BYTES = 1 << 20;
/** The bytes of a file read_media_file returns at most (base64 makes them a third more). */
export const MEDIA_MAX_BYTES = 5 << 20;
/** The tool set these tools are, for the words of their error texts. */
const TOOL_SET = "server-filesystem";
/** Entries a listing, tree or file search walks at most. */
const WALK_MAX_ENTRIES = 100_000;

type Args = Record<string, unknown>;
type Media = { type: "image" | "audio"; data: string; mimeType: string } | { type: "resource"; resource: { uri: string; mimeType: string; blob: string } };
interface Profiled {
  tool: Tool;
  /** The text of the result, or (read_media_file) its one content block. */
  run(args: Args, signal: AbortSignal): Promise<string | Media>;
}

const text = (description: string) => ({ type: "string", description });
const OUTPUT = { type: "object" as const, properties: { content: { type: "string" } }, required: ["content"] };
const MEDIA_OUTPUT = {
  type: "object" as const,
  properties: {
    content: {
      type: "array",
      items: {
        anyOf: [
          { type: "object", properties: { type: { enum: ["image", "audio"] }, data: { type: "string" }, mimeType: { type: "string" } }, required: ["type", "data", "mimeType"] },
          { type: "object", properties: { type: { const: "resource" }, resource: { type: "object", properties: { uri: { type: "string" }, mimeType: { type: "string" }, blob: { type: "string" } }, required: ["uri", "blob"] } }, required: ["type", "resource"] },
        ],
      },
    },
  },
  required: ["content"],
};
/** The reference's MIME types, by extension; any other file is application/octet-stream. */
const MEDIA_TYPES: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".bmp": "image/bmp",
  ".svg": "image/svg+xml",
  ".mp3": "audio/mpeg",
  ".wav": "audio/wav",
  ".ogg": "audio/ogg",
  ".flac": "audio/flac",
};
const READS = { readOnlyHint: true, openWorldHint: false };

function tool(name: string, title: string, description: string, properties: Record<string, object>, required: string[], annotations: Tool["annotations"], outputSchema: Tool["outputSchema"] = OUTPUT): Tool {
  const inputSchema = { type: "object" as const, properties, required, additionalProperties: false };
  return { name, title, description, inputSchema, outputSchema, annotations: { title, ...annotations } };
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
        if (typeof content !== "string") return { content: [content], structuredContent: { content: [content] } };
        return { content: [{ type: "text", text: content }], structuredContent: { content } };
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        if (error instanceof FileToolsError) return { content: [{ type: "text", text: errorText(error, undefined, TOOL_SET) }], isError: true };
        throw error;
      }
    },
  };
}

function profileTools(ws: WorkspaceClient): Profiled[] {
  /** A read of at most `maxBytes` of text (whole, or its first or last lines), with a note when the cap cut it. */
  const readCapped = async (path: string, signal: AbortSignal, window: { head?: number; tail?: number; encoding?: string }, maxBytes = WHOLE_READ_MAX_BYTES): Promise<string> => {
    const lines = window.tail ? { tail: window.tail } : window.head ? { lineCount: window.head } : {};
    const read = await ws.readText(path, { signal, maxBytes, encoding: window.encoding, ...lines });
    if (!read.truncated && !read.lineCut) return read.text;
    const total = read.totalLines === undefined ? "" : ` of ${read.totalLines}`;
    const shown = read.lastLine < read.firstLine ? "no whole line" : `lines ${read.firstLine}–${read.lastLine}${total}`;
    return `${read.text}\n[filetools: ${path} is cut at ${maxBytes.toLocaleString("en")} bytes of text per read: this is ${shown}${read.lineCut ? " (a line longer than that was cut)" : ""}. Ask for fewer lines with head or tail to see the rest of the beginning or the end.]`;
  };
  const listed = async (path: string, signal: AbortSignal, recursive = false): Promise<FileInfo[]> =>
    (await ws.list(path, { signal, recursive, maxEntries: WALK_MAX_ENTRIES, respectGitignore: false })).entries;
  /** A directory's workspace path as the daemon names what is in it ("sub", "./sub/" and "/sub" are "/sub"; the root is ""). */
  const directoryPath = async (path: string, signal: AbortSignal): Promise<string> => (await ws.stat(path, { signal })).path.replace(/\/$/, "");
  const readTextFile = async (args: Args, signal: AbortSignal): Promise<string> => {
    // The reference reads head: 0 and tail: 0 as not given; so do we.
    const head = (args.head as number | undefined) || undefined;
    const tail = (args.tail as number | undefined) || undefined;
    if (head && tail) throw new FileToolsError(Code.INVALID_ARGUMENT, "Cannot specify both head and tail parameters simultaneously", "INVALID_ARGUMENT");
    const text = await readCapped(args.path as string, signal, { head, tail, encoding: args.encoding as string | undefined });
    // The reference joins the first N lines with "\n": no newline after the last.
    return head ? text.replace(/\n(?=$|\n\[filetools: )/, "") : text;
  };
  const readTextProperties = {
    path: text("Workspace path of the file"),
    head: { type: "integer", minimum: 0, description: "If provided, returns only the first N lines of the file" },
    tail: { type: "integer", minimum: 0, description: "If provided, returns only the last N lines of the file" },
    encoding: text("The file's text encoding: utf-8 (the default), utf-16le, latin1 or ascii"),
  };
  const READ_TEXT = "Read the contents of a file in the workspace as text. Use the 'head' parameter to read only the first N lines of a file, or the 'tail' parameter to read only the last N lines (never both). At most 1 MiB of text is returned, with a note saying which lines when the file is longer. Works on files of any size.";

  return [
    // In the reference's order: the deprecated alias first.
    { tool: tool("read_file", "Read File (Deprecated)", `${READ_TEXT} DEPRECATED: Use read_text_file instead.`, readTextProperties, ["path"], READS), run: readTextFile },
    { tool: tool("read_text_file", "Read Text File", READ_TEXT, readTextProperties, ["path"], READS), run: readTextFile },
    {
      tool: tool(
        "read_media_file",
        "Read Media File",
        `Read a file and return it as a base64-encoded content block with its MIME type. Image and audio files are returned as image/audio content; any other file type is returned as an embedded resource. At most ${MEDIA_MAX_BYTES / (1 << 20)} MiB.`,
        { path: text("Workspace path of the file") },
        ["path"],
        READS,
        MEDIA_OUTPUT,
      ),
      async run(args, signal) {
        const { file, data } = await ws.readBytes(args.path as string, { signal, maxBytes: MEDIA_MAX_BYTES });
        const path = file?.path ?? (args.path as string);
        const mimeType = MEDIA_TYPES[extname(path).toLowerCase()] ?? "application/octet-stream";
        const base64 = data.toString("base64");
        const kind = mimeType.split("/")[0];
        if (kind === "image" || kind === "audio") return { type: kind, data: base64, mimeType };
        // The reference names the host file (file://…); we name the workspace path, never a host one.
        return { type: "resource", resource: { uri: `filetools:${encodeURI(path)}`, mimeType, blob: base64 } };
      },
    },
    {
      tool: tool(
        "read_multiple_files",
        "Read Multiple Files",
        "Read the contents of multiple files at once. Each file's content is returned with its path as a reference; a failed read of one file does not stop the others. At most 1 MiB of text in all, shared equally between the files, with a note on each file that is longer.",
        { paths: { type: "array", minItems: 1, maxItems: 100, items: { type: "string" }, description: "Workspace paths of the files" } },
        ["paths"],
        READS,
      ),
      async run(args, signal) {
        const paths = args.paths as string[];
        const share = Math.floor(WHOLE_READ_MAX_BYTES / paths.length);
        const results = await Promise.all(
          paths.map((path) =>
            readCapped(path, signal, {}, share).then(
              (content) => `${path}:\n${content}\n`,
              (error: unknown) => `${path}: Error - ${inWords(error instanceof Error ? error.message : String(error), TOOL_SET)}`,
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
        "Make edits to a text file: each edit replaces exact text with new content, and returns a git-style diff of the changes. Stricter than a first-match replace: each oldText must occur exactly once in the file (add surrounding lines to make it unique), otherwise nothing is written and the error says how many times it occurs or which line is closest. Edits apply in order, all or none. dryRun previews the diff. No edits change nothing (an empty diff).",
        {
          path: text("Workspace path of the file"),
          edits: {
            type: "array",
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
        if (edits.length === 0) {
          // The reference accepts no edits and changes nothing; the daemon's Edit wants one, so the file is only checked (a text file that exists).
          await ws.readText(args.path as string, { signal, lineCount: 1, maxBytes: 1 });
          return "```diff\n```\n\n";
        }
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
        const base = await directoryPath(root, signal);
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
        "Recursively search for files and directories whose path matches a glob pattern, relative to path: '*.ext' matches in the directory itself, '**/*.ext' in all subdirectories. Returns their workspace paths.",
        { path: text("Workspace path of the directory to search"), pattern: text("Glob pattern"), excludePatterns: { type: "array", items: { type: "string" } } },
        ["path", "pattern"],
        READS,
      ),
      async run(args, signal) {
        const base = await directoryPath(args.path as string, signal);
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
        "Retrieve metadata about a file or directory: size, modification time, type and permissions, and a version token that changes whenever the content does.",
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
