// The tools of the catalogue, callable by name: definitions in the shapes
// model APIs take (OpenAI function calling, Anthropic tool use, MCP), and
// call(name, arguments) → what the model should read, plus the structured
// result for programs. Arguments are validated against the catalogue's JSON
// Schema first; nothing a model sends makes call() throw.
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { status as Code } from "@grpc/grpc-js";
import { FileToolsError } from "../errors.js";
import { FileType } from "@filetools/proto/filetools/v1/common_pb.js";
import { PatchAction, WriteMode } from "@filetools/proto/filetools/v1/files_pb.js";
import { create } from "@bufbuild/protobuf";
import { DiffEntrySchema, DiffEntryType, DiffKind, DiffSummarySchema, type DiffEntry, type DiffSummary } from "@filetools/proto/filetools/v1/workspaces_pb.js";
import type { OnProgress } from "../byte-streams.js";
import type { CallOptions } from "../client.js";
import type { WorkspaceClient } from "../workspace.js";
import { catalogue, openAIStrictSchemas, type JsonSchema, type ToolDefinition } from "./catalogue.js";
import * as texts from "./texts.js";

/** What a tool call gives back. */
export interface ToolResult {
  /** What the model reads. */
  text: string;
  /** True when the call failed; `text` then says why and what to do next. */
  isError: boolean;
  /** The result as data (snake_case keys), for programs and MCP's structuredContent. */
  structured: Record<string, unknown>;
  /** What the model sees besides the text: the image a read of an image returns (base64, MCP's image content shape). */
  images?: ImageContent[];
}

/** An image for the model, as MCP carries it; content.ts gives it in each model API's shape. */
export interface ImageContent {
  type: "image";
  /** The image's bytes, base64. */
  data: string;
  mimeType: string;
}

export interface DispatcherOptions {
  /** Offer only the tools that change nothing (read, list, search, stat, changes, list_snapshots). */
  readOnly?: boolean;
}

/** Lines a read returns unless told otherwise, and the text it may carry: a window a model can take in. */
export const DEFAULT_READ_LINES = 2000;
export const READ_MAX_BYTES = 100_000;
/** Pages a read of a PDF returns unless told otherwise (line_count counts pages there). */
export const DEFAULT_PDF_PAGES = 20;
const DEFAULT_LIST_ENTRIES = 1000;
/** The most entries List gives at once: a workspace's files, when changes has no snapshot to compare with. */
const LIST_MAX_ENTRIES = 100_000;

/** A call's options: cancellation and deadline, and for the tools that move bytes (export_archive, import_archive), their progress. */
export interface ToolCallOptions extends CallOptions {
  onProgress?: OnProgress;
}

type Args = Record<string, unknown>;
type Handler = (args: Args, options: ToolCallOptions) => Promise<ToolResult>;

export class ToolDispatcher {
  private readonly tools: ToolDefinition[];
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly handlers: Record<string, Handler>;

  constructor(
    private readonly workspace: WorkspaceClient,
    options: DispatcherOptions = {},
  ) {
    this.tools = catalogue.tools.filter((tool) => !options.readOnly || tool.annotations.readOnlyHint);
    const ajv = new Ajv({ allErrors: false, strict: true });
    for (const tool of this.tools) this.validators.set(tool.name, ajv.compile(tool.input_schema));
    this.handlers = {
      read: (args, o) => this.read(args, o),
      write: (args, o) => this.write(args, o),
      edit: (args, o) => this.edit(args, o),
      apply_patch: (args, o) => this.applyPatch(args, o),
      delete: (args, o) => this.remove(args, o),
      move: (args, o) => this.move(args, o),
      make_dir: (args, o) => this.makeDir(args, o),
      list: (args, o) => this.list(args, o),
      search: (args, o) => this.search(args, o),
      stat: (args, o) => this.stat(args, o),
      changes: (args, o) => this.changes(args, o),
      list_snapshots: (_args, o) => this.listSnapshots(o),
      export_archive: (args, o) => this.exportArchive(args, o),
      import_archive: (args, o) => this.importArchive(args, o),
    };
  }

  /** The tools offered, as the catalogue defines them. */
  definitions(): ToolDefinition[] {
    return this.tools;
  }

  /**
   * For OpenAI-style function calling (`tools` of a chat completion request).
   * With `strict`, the definitions OpenAI's strict mode takes (`strict: true`,
   * every argument required, the optional ones nullable): a model then sends
   * null for each argument it leaves out, which call() reads as left out.
   */
  openAITools(options: { strict?: boolean } = {}): Array<{ type: "function"; function: { name: string; description: string; parameters: JsonSchema; strict?: true } }> {
    return this.tools.map((tool) => ({
      type: "function",
      function: options.strict
        ? { name: tool.name, description: tool.description, parameters: openAIStrictSchemas[tool.name]!, strict: true }
        : { name: tool.name, description: tool.description, parameters: tool.input_schema },
    }));
  }

  /**
   * For the OpenAI Responses API's built-in apply_patch tool (`tools: [{ type:
   * "apply_patch" }]`): applies the operations of a response's
   * apply_patch_call items together, as one apply_patch (all or nothing).
   * create_file and update_file carry their diff in apply_patch's own hunk
   * format, delete_file none. The text is the apply_patch_call_output's
   * output; isError means its status "failed".
   */
  async applyPatchOperations(operations: unknown, options: ToolCallOptions = {}): Promise<ToolResult> {
    const patch = patchOfOperations(operations);
    if (patch === undefined) return failure("INVALID_ARGUMENT", "invalid apply_patch operations: each is {type: create_file or update_file, path, diff} or {type: delete_file, path}");
    return this.call("apply_patch", { patch }, options);
  }

  /** For Anthropic tool use (`tools` of a Messages request). */
  anthropicTools(): Array<{ name: string; description: string; input_schema: JsonSchema }> {
    return this.tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: tool.input_schema }));
  }

  /**
   * Calls tool `name` with `args` (an object, or its JSON text as OpenAI sends
   * it). Bad arguments, unknown tools and failed calls come back as results
   * with isError; only a cancelled `options.signal` rejects.
   */
  async call(name: string, args: unknown, options: ToolCallOptions = {}): Promise<ToolResult> {
    const handler = this.handlers[name];
    const validate = this.validators.get(name);
    if (!handler || !validate) {
      return failure("UNKNOWN_TOOL", `there is no tool named ${JSON.stringify(name)}; the tools are ${this.tools.map((t) => t.name).join(", ")}`);
    }
    const parsed = parseArguments(args);
    if (typeof parsed === "string") return failure("INVALID_ARGUMENT", `invalid arguments for ${name}: ${parsed}`);
    const given = withoutNulls(validate.schema as JsonSchema, parsed) as Args;
    if (!validate(given)) return failure("INVALID_ARGUMENT", `invalid arguments for ${name}: ${schemaViolation(validate.errors?.[0])}`);
    try {
      return await handler(given, options);
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (error instanceof FileToolsError) return { text: texts.errorText(error, name), isError: true, structured: errorFields(error) };
      // Not the daemon's answer (a bug here, a value the client cannot encode): still a result, never an exception out of the tool.
      return failure("INTERNAL", `the tool failed in the client: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private async read(args: Args, options: CallOptions): Promise<ToolResult> {
    const path = args.path as string;
    const tail = args.tail as number | undefined;
    let window;
    try {
      window = await this.workspace.readText(path, {
        ...options,
        ...(tail === undefined ? { startLine: (args.start_line as number | undefined) ?? 1, lineCount: (args.line_count as number | undefined) ?? DEFAULT_READ_LINES } : { tail }),
        maxBytes: READ_MAX_BYTES,
        atSnapshot: args.at_snapshot as string | undefined,
      });
    } catch (error) {
      // An image or a PDF: the daemon's Read names its media type, and ReadMedia reads it.
      if (error instanceof FileToolsError && error.reason === "BINARY_FILE" && error.metadata.media_type) return this.readMedia(args, error.metadata.media_type, options);
      throw error;
    }
    return ok(texts.readText(window, READ_MAX_BYTES), {
      path: window.file.path,
      first_line: window.firstLine,
      last_line: window.lastLine,
      total_lines: window.totalLines ?? null,
      next_start_line: window.nextStartLine ?? null,
      eof: window.eof,
      version: window.version,
      text: window.text,
    });
  }

  /** read of an image (the image, and a line about it) or of a PDF (a window of its pages as text; start_line and line_count count pages). */
  private async readMedia(args: Args, mediaType: string, options: CallOptions): Promise<ToolResult> {
    if (args.tail !== undefined) throw new FileToolsError(Code.INVALID_ARGUMENT, texts.mediaTailRefused(args.path as string, mediaType), "INVALID_ARGUMENT");
    const startPage = (args.start_line as number | undefined) ?? 1;
    const media = await this.workspace.readMedia(args.path as string, {
      ...options,
      startPage,
      pageCount: (args.line_count as number | undefined) ?? DEFAULT_PDF_PAGES,
      maxBytes: READ_MAX_BYTES,
      atSnapshot: args.at_snapshot as string | undefined,
    });
    const { file, image } = media;
    const common = { path: file.path, version: file.version, media_type: media.mediaType };
    if (image) {
      const shown = { mediaType: image.mediaType, size: image.data.length, width: image.width, height: image.height, originalWidth: image.originalWidth, originalHeight: image.originalHeight, downscaled: image.downscaled };
      const structured = { ...common, first_line: 0, last_line: 0, total_lines: null, next_start_line: null, eof: true, image: { media_type: image.mediaType, size: image.data.length, width: image.width, height: image.height, original_width: image.originalWidth, original_height: image.originalHeight, downscaled: image.downscaled } };
      return { ...ok(texts.imageText(file.path, media.mediaType, file.size, shown), structured), images: [{ type: "image", data: image.data.toString("base64"), mimeType: image.mediaType }] };
    }
    const last = media.pages.at(-1)?.number ?? startPage - 1;
    return ok(texts.pdfText(media.pages, media.pageCount, media.nextPage, READ_MAX_BYTES), {
      ...common,
      first_line: media.pages[0]?.number ?? startPage,
      last_line: last,
      total_lines: media.pageCount,
      next_start_line: media.nextPage ?? null,
      eof: media.eof,
      text: media.pages.map((page) => page.text).join(""),
    });
  }

  private async write(args: Args, options: CallOptions): Promise<ToolResult> {
    const mode = WRITE_MODES[(args.mode as string | undefined) ?? "create_or_replace"]!;
    const response = await this.workspace.writeText(args.path as string, args.content as string, { ...options, mode, ifVersion: args.if_version as string | undefined });
    const appended = mode === WriteMode.APPEND && !response.created;
    return ok(texts.writeText(response.path, response.size, response.created, appended, response.version), {
      path: response.path,
      size: Number(response.size),
      created: response.created,
      version: response.version,
      sha256: response.sha256,
    });
  }

  private async edit(args: Args, options: CallOptions): Promise<ToolResult> {
    const edits = (args.edits as Array<{ old_text: string; new_text: string; replace_all?: boolean }>).map((e) => ({
      oldText: e.old_text,
      newText: e.new_text,
      replaceAll: e.replace_all ?? false,
    }));
    const dryRun = (args.dry_run as boolean | undefined) ?? false;
    const response = await this.workspace.edit(args.path as string, edits, { ...options, dryRun, ifVersion: args.if_version as string | undefined });
    return ok(texts.editText(response.path, response.replacements, response.diff, response.diffTruncated, dryRun, response.version), {
      path: response.path,
      replacements: Number(response.replacements),
      diff: response.diff,
      diff_truncated: response.diffTruncated,
      dry_run: dryRun,
      version: response.version,
    });
  }

  private async applyPatch(args: Args, options: CallOptions): Promise<ToolResult> {
    const dryRun = (args.dry_run as boolean | undefined) ?? false;
    const response = await this.workspace.applyPatch(args.patch as string, { ...options, dryRun });
    const files = response.files.map((f) => ({ path: f.path, action: PATCH_ACTIONS[f.action] ?? "updated", movedFrom: f.movedFrom, version: f.version }));
    return ok(texts.patchText(files, dryRun), { files: files.map((f) => ({ path: f.path, action: f.action, moved_from: f.movedFrom, version: f.version })), dry_run: dryRun });
  }

  private async remove(args: Args, options: CallOptions): Promise<ToolResult> {
    const response = await this.workspace.delete(args.path as string, { ...options, recursive: args.recursive as boolean | undefined, ifVersion: args.if_version as string | undefined });
    return ok(texts.deleteText(response.path, response.existed), { path: response.path, existed: response.existed });
  }

  private async move(args: Args, options: CallOptions): Promise<ToolResult> {
    const response = await this.workspace.move(args.source as string, args.destination as string, {
      ...options,
      overwrite: args.overwrite as boolean | undefined,
      ifVersion: args.if_version as string | undefined,
    });
    return ok(texts.moveText(response.source, response.destination), { source: response.source, destination: response.destination, version: response.file?.version ?? "" });
  }

  private async makeDir(args: Args, options: CallOptions): Promise<ToolResult> {
    const response = await this.workspace.mkdir(args.path as string, options);
    return ok(texts.makeDirText(response.path, response.created), { path: response.path, created: response.created });
  }

  private async list(args: Args, options: CallOptions): Promise<ToolResult> {
    const listing = await this.workspace.list((args.path as string | undefined) ?? "/", {
      ...options,
      pattern: args.pattern as string | undefined,
      recursive: args.recursive as boolean | undefined,
      maxDepth: args.max_depth as number | undefined,
      includeHidden: args.include_hidden as boolean | undefined,
      respectGitignore: args.respect_gitignore as boolean | undefined,
      maxEntries: (args.max_entries as number | undefined) ?? DEFAULT_LIST_ENTRIES,
      atSnapshot: args.at_snapshot as string | undefined,
    });
    return ok(texts.listText(listing.entries, listing.truncated), {
      entries: listing.entries.map((e) => ({ path: e.path, type: FILE_TYPES[e.type] ?? "other", size: Number(e.size), version: e.version })),
      truncated: listing.truncated,
    });
  }

  private async search(args: Args, options: CallOptions): Promise<ToolResult> {
    const context = (args.context as number | undefined) ?? 0;
    const searchOptions = {
      ...options,
      path: (args.path as string | undefined) ?? "/",
      fixedStrings: args.fixed_strings as boolean | undefined,
      caseInsensitive: args.case_insensitive as boolean | undefined,
      include: args.include as string[] | undefined,
      exclude: args.exclude as string[] | undefined,
      contextBefore: context,
      contextAfter: context,
      maxResults: args.max_results as number | undefined,
      // The first page soonest unless the model asks for a stable one (catalogue: search's "order").
      order: (args.order as "found" | "path" | undefined) ?? "found",
    };
    const pattern = args.pattern as string;
    const mode = (args.output_mode as string | undefined) ?? "content";
    if (mode === "files_with_matches") {
      const results = this.workspace.searchFiles(pattern, searchOptions);
      const paths: string[] = [];
      for await (const path of results) paths.push(path);
      return ok(texts.searchFilesText(paths, results.summary, searchOptions.order), { files: paths, ...summaryFields(results.summary) });
    }
    if (mode === "count") {
      const results = this.workspace.searchCounts(pattern, searchOptions);
      const counts: Array<{ path: string; count: bigint }> = [];
      for await (const c of results) counts.push({ path: c.path, count: c.count });
      return ok(texts.searchCountsText(counts, results.summary, searchOptions.order), { counts: counts.map((c) => ({ path: c.path, count: Number(c.count) })), ...summaryFields(results.summary) });
    }
    const results = this.workspace.search(pattern, searchOptions);
    const hits: texts.SearchHit[] = [];
    for await (const m of results) hits.push({ path: m.path, lineNumber: m.lineNumber, line: m.line, before: m.before, after: m.after });
    return ok(texts.searchMatchesText(hits, results.summary, context > 0, searchOptions.order), {
      matches: hits.map((h) => ({ path: h.path, line_number: Number(h.lineNumber), line: h.line, before: h.before, after: h.after })),
      ...summaryFields(results.summary),
    });
  }

  private async stat(args: Args, options: CallOptions): Promise<ToolResult> {
    const file = await this.workspace.stat((args.path as string | undefined) ?? "/", { ...options, countLines: args.count_lines as boolean | undefined, atSnapshot: args.at_snapshot as string | undefined });
    return ok(texts.statText(file), {
      path: file.path,
      type: FILE_TYPES[file.type] ?? "other",
      size: Number(file.size),
      mode: file.mode,
      version: file.version,
      line_count: file.lineCount === undefined ? null : Number(file.lineCount),
    });
  }

  private async changes(args: Args, options: CallOptions): Promise<ToolResult> {
    const { entries, summary } = await this.liveChanges((args.since as string | undefined) ?? "", options);
    const shown = entries.slice(0, (args.max_entries as number | undefined) ?? DEFAULT_LIST_ENTRIES);
    const changes = shown.map((e) => {
      const removed = e.kind === DiffKind.REMOVED;
      const type = (removed ? e.typeBefore : e.typeAfter) === DiffEntryType.SYMLINK ? "symlink" : "file";
      return { path: e.path, kind: DIFF_KINDS[e.kind] ?? "modified", type, size_before: Number(e.sizeBefore), size_after: Number(e.sizeAfter) };
    });
    return ok(texts.changesText(shown, summary), {
      since: summary.from,
      changes,
      added: Number(summary.added),
      modified: Number(summary.modified),
      removed: Number(summary.removed),
      unchanged: Number(summary.unchanged),
      truncated: shown.length < entries.length,
    });
  }

  /**
   * What changed from snapshot `since` ("" = the newest) to the live tree.
   * With no snapshot yet (a workspace whose first run has not finished),
   * every file and link of the live tree is new: reported as added, with
   * summary.from "" (the daemon's DiffSnapshots says NOT_FOUND there).
   */
  private async liveChanges(since: string, options: CallOptions): Promise<{ entries: DiffEntry[]; summary: DiffSummary }> {
    try {
      return await this.workspace.diffSnapshots(since, options);
    } catch (error) {
      if (since !== "" || !(error instanceof FileToolsError) || error.reason !== "NOT_FOUND") throw error;
    }
    const listing = await this.workspace.list("/", { ...options, recursive: true, includeHidden: true, respectGitignore: false, maxEntries: LIST_MAX_ENTRIES });
    const entries = listing.entries
      .filter((e) => e.type === FileType.FILE || e.type === FileType.SYMLINK)
      .map((e) => create(DiffEntrySchema, { path: e.path, kind: DiffKind.ADDED, typeAfter: e.type === FileType.SYMLINK ? DiffEntryType.SYMLINK : DiffEntryType.FILE, sizeAfter: e.size }));
    return { entries, summary: create(DiffSummarySchema, { from: "", added: BigInt(entries.length) }) };
  }

  private async listSnapshots(options: CallOptions): Promise<ToolResult> {
    const snapshots = await this.workspace.listSnapshots(options);
    return ok(texts.snapshotsText(snapshots), {
      snapshots: snapshots.map((s) => ({
        id: s.id,
        created_at: texts.isoTime(s.createdAt),
        run_id: s.runId,
        file_count: Number(s.fileCount),
        size_bytes: Number(s.sizeBytes),
        labels: { ...s.labels },
      })),
    });
  }

  private async exportArchive(args: Args, options: ToolCallOptions): Promise<ToolResult> {
    // Stat first: the daemon's include globs match nothing in a missing directory, and a model should hear that, not get an empty archive.
    const source = await this.workspace.stat((args.path as string | undefined) ?? "/", options);
    const include = archiveIncludes(source.path, source.type === FileType.DIRECTORY, (args.include as string[] | undefined) ?? []);
    const mode = args.overwrite === true ? WriteMode.CREATE_OR_REPLACE : WriteMode.CREATE_ONLY;
    const { header, file } = await this.workspace.exportInto(args.destination as string, { ...options, live: true, include, mode });
    return ok(texts.exportText(source.path, file.path, header.fileCount, file.size, file.version), {
      path: source.path,
      destination: file.path,
      file_count: Number(header.fileCount),
      size: Number(file.size),
      sha256: file.sha256,
      version: file.version,
    });
  }

  private async importArchive(args: Args, options: ToolCallOptions): Promise<ToolResult> {
    const { archive, imported } = await this.workspace.importFrom(args.archive as string, { ...options, path: (args.destination as string | undefined) ?? "/" });
    // The directory as the daemon names it (it exists now): "out" and "/out/" are both /out.
    const destination = await this.workspace.stat((args.destination as string | undefined) ?? "/", options);
    const archivePath = archive?.path ?? (args.archive as string);
    return ok(texts.importText(archivePath, destination.path, imported.fileCount, imported.sizeBytes), {
      archive: archivePath,
      destination: destination.path,
      file_count: Number(imported.fileCount),
      size_bytes: Number(imported.sizeBytes),
    });
  }
}

/** The Responses API's apply_patch operations as one patch in apply_patch's format; undefined when they are not well formed. */
export function patchOfOperations(operations: unknown): string | undefined {
  if (!Array.isArray(operations) || operations.length === 0) return undefined;
  const sections: string[] = [];
  for (const op of operations as Array<Record<string, unknown>>) {
    if (typeof op !== "object" || op === null || typeof op.path !== "string") return undefined;
    if (op.type === "delete_file") sections.push(`*** Delete File: ${op.path}`);
    else if ((op.type === "create_file" || op.type === "update_file") && typeof op.diff === "string") {
      sections.push(`*** ${op.type === "create_file" ? "Add" : "Update"} File: ${op.path}`, ...(op.diff === "" ? [] : [op.diff.replace(/\n$/, "")]));
    } else return undefined;
  }
  return `*** Begin Patch\n${sections.join("\n")}\n*** End Patch\n`;
}

/**
 * The daemon's include globs (matched against workspace paths without the
 * leading "/") for a tool's path and its globs relative to it: the
 * directory's name escaped, so that a "[" or "*" in it is taken literally.
 */
export function archiveIncludes(path: string, isDirectory: boolean, globs: string[]): string[] {
  const base = path.replace(/^\/+/, "").replace(/[\\*?[\]{}()!+@]/g, "\\$&");
  if (!isDirectory) return [base];
  if (base === "") return globs;
  return globs.length === 0 ? [`${base}/**`] : globs.map((glob) => `${base}/${glob}`);
}

const PATCH_ACTIONS: Record<number, string> = { [PatchAction.ADDED]: "added", [PatchAction.UPDATED]: "updated", [PatchAction.DELETED]: "deleted", [PatchAction.MOVED]: "moved" };

const DIFF_KINDS: Record<number, string> = { [DiffKind.ADDED]: "added", [DiffKind.MODIFIED]: "modified", [DiffKind.REMOVED]: "removed" };

const WRITE_MODES: Record<string, WriteMode> = {
  create_or_replace: WriteMode.CREATE_OR_REPLACE,
  create_only: WriteMode.CREATE_ONLY,
  replace_only: WriteMode.REPLACE_ONLY,
  append: WriteMode.APPEND,
};

const FILE_TYPES: Record<number, string> = { 1: "file", 2: "directory", 3: "symlink", 4: "other" };

function ok(text: string, structured: Record<string, unknown>): ToolResult {
  return { text, isError: false, structured };
}

/** A tool-level failure (no daemon call was made): the same text shape as a daemon error. */
function failure(reason: string, message: string): ToolResult {
  return { text: texts.errorText({ message, reason, codeName: reason, metadata: {} }), isError: true, structured: { error: { reason, message } } };
}

function errorFields(error: FileToolsError): Record<string, unknown> {
  return { error: { reason: error.reason || error.codeName, code: error.codeName, message: error.message, metadata: error.metadata } };
}

function summaryFields(summary: { filesSearched: bigint; filesMatched: bigint; matches: bigint; truncated: boolean; timedOut: boolean } | undefined) {
  return {
    files_searched: Number(summary?.filesSearched ?? 0n),
    files_matched: Number(summary?.filesMatched ?? 0n),
    truncated: summary?.truncated ?? false,
    timed_out: summary?.timedOut ?? false,
  };
}

/** An arguments object, from an object or its JSON text; otherwise what is wrong with it. */
function parseArguments(args: unknown): Args | string {
  let value = args ?? {};
  if (typeof value === "string") {
    try {
      value = JSON.parse(value === "" ? "{}" : value);
    } catch {
      return "the arguments are not valid JSON";
    }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "the arguments must be a JSON object";
  return value as Args;
}

/**
 * `value` without the optional arguments (at any depth the schema describes)
 * that are null: strict-mode models send null for what they leave out. A null
 * for a required argument stays, for the schema to refuse. The caller's
 * value is not changed.
 */
export function withoutNulls(schema: JsonSchema, value: unknown): unknown {
  if (Array.isArray(value)) {
    const items = schema.items as JsonSchema | undefined;
    return items ? value.map((item) => withoutNulls(items, item)) : value;
  }
  if (typeof value !== "object" || value === null) return value;
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = (schema.required ?? []) as string[];
  const kept: Array<[string, unknown]> = [];
  for (const [name, item] of Object.entries(value)) {
    const sub = Object.hasOwn(properties, name) ? properties[name] : undefined;
    if (item === null && sub && !required.includes(name)) continue;
    kept.push([name, sub ? withoutNulls(sub, item) : item]);
  }
  return Object.fromEntries(kept); // own properties even for "__proto__", as JSON.parse makes them
}

/**
 * One schema violation in words every client writes the same way (the
 * Python and Go dispatchers map their validators' errors to these too).
 */
export function schemaViolation(error: ErrorObject | undefined): string {
  if (!error) return "they do not match the tool's schema";
  const where = error.instancePath === "" ? "" : `${error.instancePath.slice(1).replace(/\//g, ".")} `;
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required":
      return `${where}missing required argument ${p.missingProperty}`.trim();
    case "additionalProperties":
      return `${where}unknown argument ${p.additionalProperty}`.trim();
    case "type":
      return `${where}must be ${/^[aeiou]/.test(String(p.type)) ? "an" : "a"} ${p.type}`;
    case "enum":
      return `${where}must be one of ${(p.allowedValues as unknown[]).join(", ")}`;
    case "minimum":
      return `${where}must be at least ${p.limit}`;
    case "maximum":
      return `${where}must be at most ${p.limit}`;
    case "minLength":
      return `${where}must not be empty`;
    case "maxLength":
      return `${where}must be at most ${p.limit} characters`;
    case "minItems":
      return `${where}must have at least ${p.limit} items`;
    case "maxItems":
      return `${where}must have at most ${p.limit} items`;
    default:
      return `${where}${error.message ?? "is not valid"}`;
  }
}
