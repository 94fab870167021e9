// What a model reads back from each tool: the texts specified in
// catalogue/README.md, which the Python and Go dispatchers produce too, byte
// for byte. Plain functions of the daemon's answers, no I/O.
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { FileType, type FileInfo } from "@filetools/proto/filetools/v1/common_pb.js";
import type { SearchSummary } from "@filetools/proto/filetools/v1/files_pb.js";
import { DiffEntryType, DiffKind, type DiffEntry, type DiffSummary, type Snapshot } from "@filetools/proto/filetools/v1/workspaces_pb.js";
import type { FileToolsError } from "../errors.js";
import { numberLines } from "../format.js";
import type { ReadWindow } from "../workspace.js";
import { catalogue } from "./catalogue.js";

/** 9840 → "9,840": grouped by hand, so that every language writes the same digits. */
export function count(n: number | bigint): string {
  const digits = String(n < 0 ? -BigInt(n) : BigInt(n));
  const grouped = digits.replace(/\B(?=(\d{3})+$)/g, ",");
  return n < 0 ? `-${grouped}` : grouped;
}

function plural(n: number | bigint, one: string, many = `${one}s`): string {
  return `${count(n)} ${BigInt(n) === 1n ? one : many}`;
}

/** A read window: its lines `cat -n` style, then where to go on. */
export function readText(window: ReadWindow & { text: string }, maxBytes: number): string {
  let text = numberLines(window.text, { firstLine: window.firstLine });
  if (text !== "" && !text.endsWith("\n")) text += "\n";
  const total = window.totalLines === undefined ? "" : `; ${plural(window.totalLines, "line")} in all`;
  if (window.text === "") text = window.totalLines === 0 ? "(empty file)\n" : `(no lines here${total})\n`;
  if (window.lineCut) text += `(a line longer than ${count(maxBytes)} bytes was cut)\n`;
  if (window.nextStartLine !== undefined) text += `… call read with start_line ${window.nextStartLine} for more${total}\n`;
  return text;
}

/** The name of an image or PDF format, as a text names it: "PNG". */
function formatName(mediaType: string): string {
  return MEDIA_FORMATS[mediaType] ?? mediaType;
}
const MEDIA_FORMATS: Record<string, string> = { "image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF", "image/webp": "WebP", "application/pdf": "PDF" };

/** The text beside an image a read returns (the image itself is a content block). */
export function imageText(path: string, fileMediaType: string, fileSize: bigint | number, image: { mediaType: string; size: number; width: number; height: number; originalWidth: number; originalHeight: number; downscaled: boolean }): string {
  const file = `Image ${path} (${formatName(fileMediaType)}, ${image.originalWidth}x${image.originalHeight} pixels, ${plural(fileSize, "byte")})`;
  if (!image.downscaled) return `${file}.\n`;
  return `${file}, shown downscaled to ${image.width}x${image.height} (${formatName(image.mediaType)}, ${plural(image.size, "byte")}).\n`;
}

/** Why a read of an image or a PDF with tail is refused. */
export function mediaTailRefused(path: string, mediaType: string): string {
  return mediaType === "application/pdf" ? `${path} is a PDF: read it without tail (start_line and line_count count its pages)` : `${path} is an image (${formatName(mediaType)}): read it without tail`;
}

/** A window of a PDF's pages as text: each page under a line naming it, then where to go on. */
export function pdfText(pages: Array<{ number: number; text: string; cut: boolean }>, pageCount: number, nextPage: number | undefined, maxBytes: number): string {
  const total = `${plural(pageCount, "page")} in all`;
  let text = "";
  for (const page of pages) {
    const body = page.text === "" ? "(no text on this page)\n" : page.text.endsWith("\n") ? page.text : `${page.text}\n`;
    text += `--- page ${page.number} of ${pageCount} ---\n${body}`;
    if (page.cut) text += `(page ${page.number} is cut at ${count(maxBytes)} bytes of text)\n`;
  }
  if (pages.length === 0) text = pageCount === 0 ? "(a PDF with no pages)\n" : `(no pages here; ${total})\n`;
  if (nextPage !== undefined) text += `… call read with start_line ${nextPage} for the next pages (in a PDF, start_line and line_count count pages); ${total}\n`;
  return text;
}

export function writeText(path: string, size: bigint, created: boolean, appended: boolean, version: string): string {
  const what = appended ? "appended to" : created ? "created" : "replaced";
  return `Wrote ${path} (${what}): ${plural(size, "byte")} now. Version ${version}.\n`;
}

export function editText(path: string, replacements: bigint, diff: string, diffTruncated: boolean, dryRun: boolean, version: string): string {
  const head = dryRun
    ? `Dry run, nothing written: ${plural(replacements, "replacement")} in ${path} would make this change.\n`
    : `Edited ${path}: ${plural(replacements, "replacement")}. Version ${version}.\n`;
  const text = diff === "" ? head : `${head}\n${diff.endsWith("\n") ? diff : `${diff}\n`}`;
  return diffTruncated ? `${text}${DIFF_CUT}` : text;
}

/** What apply_patch did (or, on dry_run, would do) to each file, in the patch's order. */
export function patchText(files: Array<{ path: string; action: string; movedFrom: string }>, dryRun: boolean): string {
  const head = dryRun ? `Dry run, nothing written: the patch would change ${plural(files.length, "file")}.\n` : `Applied the patch: ${plural(files.length, "file")} changed.\n`;
  return head + files.map((f) => (f.action === "moved" ? `moved ${f.movedFrom} to ${f.path}\n` : `${f.action} ${f.path}\n`)).join("");
}

/** After a diff the daemon stopped at its size limit. */
export const DIFF_CUT = "(the diff stops here, at 1 MiB; the rest of the change is not shown)\n";

export function deleteText(path: string, existed: boolean): string {
  return existed ? `Deleted ${path}.\n` : `${path} did not exist; nothing was deleted.\n`;
}

export function moveText(source: string, destination: string): string {
  return `Moved ${source} to ${destination}.\n`;
}

export function makeDirText(path: string, created: boolean): string {
  return created ? `Created directory ${path}.\n` : `Directory ${path} already exists.\n`;
}

/** One line per entry: directories end in "/", files show their size. */
export function listText(entries: FileInfo[], truncated: boolean): string {
  if (entries.length === 0) return "(no entries)\n";
  let text = "";
  for (const entry of entries) text += `${entryLine(entry)}\n`;
  if (truncated) text += `… stopped at ${plural(entries.length, "entry", "entries")}: narrow it with pattern or max_depth, or raise max_entries\n`;
  return text;
}

function entryLine(entry: FileInfo): string {
  switch (entry.type) {
    case FileType.DIRECTORY:
      return entry.path === "/" ? "/" : `${entry.path}/`;
    case FileType.FILE:
      return `${entry.path} (${plural(entry.size, "byte")})`;
    case FileType.SYMLINK:
      return `${entry.path} (symbolic link)`;
    default:
      return `${entry.path} (special file)`;
  }
}

export interface SearchHit {
  path: string;
  lineNumber: bigint;
  line: string;
  before: string[];
  after: string[];
}

/** Matches grouped by file, as `grep -n` with context: "12:match", "13-context", "--" between blocks that do not touch. */
export function searchMatchesText(hits: SearchHit[], summary: SearchSummary | undefined, withContext: boolean, order: SearchOrderName): string {
  let text = "";
  let file: string | undefined;
  let lastLine = 0n;
  for (const hit of hits) {
    const first = hit.lineNumber - BigInt(hit.before.length);
    if (hit.path !== file) {
      text += `${file === undefined ? "" : "\n"}${hit.path}\n`;
      file = hit.path;
    } else if (withContext && first > lastLine + 1n) {
      text += "--\n";
    }
    hit.before.forEach((line, i) => (text += `${first + BigInt(i)}-${line}\n`));
    text += `${hit.lineNumber}:${hit.line}\n`;
    hit.after.forEach((line, i) => (text += `${hit.lineNumber + 1n + BigInt(i)}-${line}\n`));
    lastLine = hit.lineNumber + BigInt(hit.after.length);
  }
  return text + summaryLine(summary, `${plural(summary?.matches ?? 0n, "matching line")} in ${plural(summary?.filesMatched ?? 0n, "file")}`, order);
}

export function searchFilesText(paths: string[], summary: SearchSummary | undefined, order: SearchOrderName): string {
  return paths.map((path) => `${path}\n`).join("") + summaryLine(summary, `${plural(paths.length, "file")} with matches`, order);
}

export function searchCountsText(counts: Array<{ path: string; count: bigint }>, summary: SearchSummary | undefined, order: SearchOrderName): string {
  const lines = counts.map(({ path, count: n }) => `${path}:${n}\n`).join("");
  return lines + summaryLine(summary, `${plural(summary?.matches ?? 0n, "matching line")} in ${plural(counts.length, "file")}`, order);
}

/** The search tool's "order": files as found (the first page soonest) or sorted by path. */
export type SearchOrderName = "found" | "path";

/** Said when files came as found and more than one was searched: the page may differ next time. */
const FOUND_ORDER_HINT = 'files in the order found: order "path" sorts them, for the same page every time';

function summaryLine(summary: SearchSummary | undefined, found: string, order: SearchOrderName): string {
  if (!summary || summary.matches === 0n) {
    return `No matches (${plural(summary?.filesSearched ?? 0n, "file")} searched).\n`;
  }
  let line = `(${found}; ${plural(summary.filesSearched, "file")} searched`;
  if (summary.truncated) line += "; more exist: raise max_results or narrow the search";
  if (summary.timedOut) line += "; the search ran out of time, so results are partial";
  if (order === "found" && summary.filesSearched > 1n) line += `; ${FOUND_ORDER_HINT}`;
  return `${line})\n`;
}

export function statText(file: FileInfo): string {
  const kind = { [FileType.FILE]: "file", [FileType.DIRECTORY]: "directory", [FileType.SYMLINK]: "symbolic link" }[file.type as number] ?? "special file";
  const mode = file.mode.toString(8).padStart(4, "0");
  let text = `${file.path}: ${kind}, ${plural(file.size, "byte")}, mode ${mode}, modified ${isoTime(file.mtime)}, version ${file.version}\n`;
  if (file.lineCount !== undefined) text += `${plural(file.lineCount, "line")}\n`;
  return text;
}

/** What changed since a snapshot: a count line, then one line per path (at most those given; the summary counts all). */
export function changesText(entries: DiffEntry[], summary: DiffSummary): string {
  const changed = summary.added + summary.modified + summary.removed;
  const fresh = summary.from === ""; // no snapshot yet: the dispatcher listed the live tree
  if (changed === 0n) return fresh ? `${NO_SNAPSHOT_YET}, and no files yet.\n` : `Nothing changed since snapshot ${summary.from} (${plural(summary.unchanged, "path")}).\n`;
  let text = fresh
    ? `${NO_SNAPSHOT_YET}, so every file is new: ${count(summary.added)} added.\n`
      : `Since snapshot ${summary.from}: ${count(summary.added)} added, ${count(summary.modified)} modified, ${count(summary.removed)} removed, ${count(summary.unchanged)} unchanged.\n`;
  for (const entry of entries) text += `${changeLine(entry)}\n`;
  if (BigInt(entries.length) < changed) text += `… ${plural(changed - BigInt(entries.length), "more change")} not shown: raise max_entries\n`;
  return text;
}

const NO_SNAPSHOT_YET = "No snapshot yet (one is taken when a run finishes)";

function changeLine(entry: DiffEntry): string {
  const side = (type: DiffEntryType, size: bigint) => (type === DiffEntryType.SYMLINK ? "symbolic link" : plural(size, "byte"));
  if (entry.kind === DiffKind.REMOVED) return `removed ${entry.path}`;
  const after = side(entry.typeAfter, entry.sizeAfter);
  if (entry.kind === DiffKind.ADDED) return `added ${entry.path} (${after})`;
  const before = side(entry.typeBefore, entry.sizeBefore);
  return `modified ${entry.path} (${before === after ? after : `${after}, was ${before}`})`;
}

/** One line per snapshot, newest first. */
export function snapshotsText(snapshots: Snapshot[]): string {
  if (snapshots.length === 0) return "No snapshots yet (one is taken when a run finishes).\n";
  let text = "";
  for (const s of snapshots) {
    text += `${s.id}: ${isoTime(s.createdAt)}, ${plural(s.fileCount, "file")}, ${plural(s.sizeBytes, "byte")}`;
    if (s.runId !== "") text += `, run ${s.runId}`;
    const labels = Object.keys(s.labels).sort();
    if (labels.length > 0) text += `; labels ${labels.map((key) => `${key}=${s.labels[key]}`).join(", ")}`;
    text += "\n";
  }
  return text;
}

export function exportText(path: string, destination: string, files: bigint, size: bigint, version: string): string {
  return `Exported ${path} to ${destination}: ${plural(files, "file")}, ${plural(size, "byte")}. Version ${version}.\n`;
}

export function importText(archive: string, destination: string, files: bigint, size: bigint): string {
  return `Imported ${archive} into ${destination}: ${plural(files, "file")}, ${plural(size, "byte")} written.\n`;
}

/** RFC 3339 in UTC with milliseconds, e.g. 2026-12-03T10:00:00.123Z. */
export function isoTime(time: Timestamp | undefined): string {
  if (!time) return "unknown";
  const date = new Date(Number(time.seconds) * 1000 + Math.floor(time.nanos / 1e6));
  // Past JavaScript's dates (±275,760 years): a touch(1) with a wild time can set one.
  return Number.isNaN(date.getTime()) ? "unknown" : date.toISOString();
}

/** A failed call of tool `tool`, for a model: the daemon's message and reason, then what to do next. */
export function errorText(error: Pick<FileToolsError, "message" | "reason" | "codeName" | "metadata">, tool?: string, toolSet?: string): string {
  const reason = error.reason || error.codeName;
  // Not the daemon's answer but the channel's, in grpc-js's words ("… Resolution note: ."): the catalogue's, as every client says it.
  const told = !error.reason && error.codeName === "UNAVAILABLE" ? catalogue.unreachable.message : error.message;
  const message = inWords(told, toolSet).replace(/\.$/, "");
  const line = (toolSet === undefined ? undefined : catalogue.tool_sets[toolSet]?.error_line) ?? "Error ({reason}): {message}.";
  let text = `${line.replace(/\{(reason|message)\}/g, (_, key: string) => (key === "reason" ? reason : message))}\n`;
  for (const hint of hintsFor(reason, error.metadata, tool, toolSet)) text += `${hint}\n`;
  return text;
}

/** A daemon message in the words of `toolSet` (the catalogue's tool_sets[…].words); as it is for the catalogue's own tools. */
export function inWords(message: string, toolSet?: string): string {
  const words = toolSet === undefined ? [] : (catalogue.tool_sets[toolSet]?.words ?? []);
  return words.reduce((text, [from, to]) => text.replaceAll(from, to), message);
}

/**
 * The catalogue's sentences for `reason` (the tool's own for it, when it has
 * some, else the tool set's, instead of the shared ones), those with
 * placeholders only when the metadata fills them all.
 */
export function hintsFor(reason: string, metadata: Record<string, string>, tool?: string, toolSet?: string): string[] {
  const hints: string[] = [];
  const own = tool === undefined ? undefined : toolHints.get(tool)?.[reason];
  const ofToolSet = toolSet === undefined ? undefined : catalogue.tool_sets[toolSet]?.error_hints[reason];
  for (const sentence of own ?? ofToolSet ?? catalogue.error_hints[reason] ?? []) {
    let complete = true;
    const filled = sentence.replace(/\{(\w+)\}/g, (_, key: string) => {
      if (metadata[key] === undefined || metadata[key] === "") complete = false;
      return metadata[key] ?? "";
    });
    if (complete) hints.push(filled);
  }
  return hints;
}

const toolHints = new Map(catalogue.tools.map((tool) => [tool.name, tool.error_hints ?? {}]));
