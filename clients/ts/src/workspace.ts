// The calls an agent runtime makes on one workspace, over the raw per-RPC
// layer: plain numbers for lines, the stream's pieces put together, snapshots
// to and from files. Options left out take the daemon's defaults (proto/).
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { CallOptions, RawClient } from "./client.js";
import { status as Code } from "@grpc/grpc-js";
import { FileToolsError, present } from "./errors.js";
import type { FileInfo } from "@filetools/proto/filetools/v1/common_pb.js";
import {
  OutputMode,
  SearchOrder,
  type ApplyPatchResponse,
  type DeleteResponse,
  type DownloadHeader,
  type EditResponse,
  type MakeDirResponse,
  type MediaHeader,
  type MediaTrailer,
  type MoveResponse,
  type Newline,
  type ReadHeader,
  type ReadTrailer,
  type SearchCount,
  type SearchMatch,
  type SearchResponse,
  type SearchSummary,
  type TextEditSchema,
  type UploadResponse,
  type WriteMode,
  type WriteResponse,
} from "@filetools/proto/filetools/v1/files_pb.js";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { Change, DiffEntry, DiffSummary, ExportHeader, FinishRunResponse, ImportArchiveResponse, Run, Snapshot } from "@filetools/proto/filetools/v1/workspaces_pb.js";
import { headerThenData, receiveVerified, saveVerified, type OnProgress } from "./byte-streams.js";
import type { GetJournalRequest, JournalEntry } from "@filetools/proto/filetools/v1/journal_pb.js";
import { watchChanges, type WatchOptions } from "./watch.js";

/** Reads (readText, readTo, stat, list, download) answered from a stored snapshot rather than the live workspace. */
export interface AtSnapshotOption {
  /** A snapshot id (listSnapshots shows them): the file or tree as it was then. Default: the live workspace. */
  atSnapshot?: string;
}

export interface ReadMediaOptions extends CallOptions, AtSnapshotOption {
  /** PDF: the first page, 1-based (default 1). */
  startPage?: number;
  /** PDF: how many pages (default: to the end, within maxBytes). */
  pageCount?: number;
  /** PDF: the most UTF-8 bytes of text (default and most 1 MiB). */
  maxBytes?: number;
  /** Image: the most bytes (default and most 3.75 MiB); a bigger image is downscaled. */
  maxImageBytes?: number;
  /** Image: the most pixels on the longer side (default 2000, at most 8000). */
  maxImageSide?: number;
}

/** What readMedia gives: `image` for an image, `pages` for a PDF. */
export interface MediaRead {
  file: FileInfo;
  /** The file's type: image/png, image/jpeg, image/gif, image/webp or application/pdf. */
  mediaType: string;
  image?: { mediaType: string; data: Buffer; width: number; height: number; originalWidth: number; originalHeight: number; downscaled: boolean };
  /** PDF: the window's pages, and the document's page count. */
  pages: Array<{ number: number; text: string; cut: boolean }>;
  pageCount: number;
  /** PDF: the page to ask for next; undefined at the end. */
  nextPage: number | undefined;
  truncated: boolean;
  eof: boolean;
}

export interface ReadTextOptions extends CallOptions, AtSnapshotOption {
  /** First line, 1-based. Default 1. */
  startLine?: number;
  /** Lines to return. Default: to the end of the file; 0 = only the metadata. */
  lineCount?: number;
  /** Instead of startLine: the last N lines. */
  tail?: number;
  /** "utf-8" (default), "utf-16le", "latin1" or "ascii". */
  encoding?: string;
  /** Cap on the UTF-8 bytes of text. Default 10 MiB (the daemon may lower it). */
  maxBytes?: number;
}

/** Where a window of a text file's lines lies, and where to go on from it. */
export interface ReadWindow {
  /** Number (1-based) of the first line of the window. */
  firstLine: number;
  /** Number of the last line of the window (firstLine - 1 when it has none). */
  lastLine: number;
  /** Lines in the file, when the daemon knows (always once the window reached the end, or for a tail). */
  totalLines?: number;
  /** True when maxBytes stopped the window before lineCount lines or the end. */
  truncated: boolean;
  /** True when the window reached the end of the file. */
  eof: boolean;
  /** True when a single line longer than maxBytes was cut. */
  lineCut: boolean;
  /** The startLine that continues from here; undefined at the end of the file. */
  nextStartLine?: number;
  /** The file's version when it was read: pass it as `ifVersion` to edit only what you read. */
  version: string;
  /** The file as it was opened. */
  file: FileInfo;
  /** The encoding the text was decoded with. */
  encoding: string;
}

/** A window of a text file's lines, with its text. */
export interface TextWindow extends ReadWindow {
  /** Whole lines with their line endings. */
  text: string;
}

interface ConditionalOptions extends CallOptions {
  /** Do it only if the file's version is still this one (else FAILED_PRECONDITION / CONTENT_CHANGED). */
  ifVersion?: string;
}

export interface WriteTextOptions extends ConditionalOptions {
  /** Default WriteMode.CREATE_OR_REPLACE. */
  mode?: WriteMode;
  /** Create missing parent directories. Default true. */
  createDirs?: boolean;
  /** Default Newline.PRESERVE (a CRLF file stays CRLF). */
  newline?: Newline;
  /** "utf-8" (default), "utf-16le", "latin1" or "ascii". */
  encoding?: string;
}

/** One replacement: `oldText` must occur exactly once, unless `replaceAll`. */
export type TextEditInit = Omit<MessageInitShape<typeof TextEditSchema>, "$typeName">;

export interface EditOptions extends ConditionalOptions {
  /** Compute the diff, write nothing. Default false. */
  dryRun?: boolean;
  /** "utf-8" (default), "utf-16le", "latin1" or "ascii". */
  encoding?: string;
}

export interface SearchOptions extends CallOptions {
  /** File or directory to search. Default: the root. */
  path?: string;
  /** Treat the pattern as a literal. Default false. */
  fixedStrings?: boolean;
  /** Default false. */
  caseInsensitive?: boolean;
  /** Globs a file must match (`*.ts`, `src/**`). Default: every file. */
  include?: string[];
  /** Globs that exclude files and directories. */
  exclude?: string[];
  /** Context lines before each match (at most 1000). Default 0. */
  contextBefore?: number;
  /** Context lines after each match (at most 1000). Default 0. */
  contextAfter?: number;
  /** Stop after this many results. Default 100, at most 10,000. */
  maxResults?: number;
  /** Skip files larger than this many bytes. Default: no limit. */
  maxFileSize?: number;
  /** Skip what .gitignore excludes, and .git. Default true. */
  respectGitignore?: boolean;
  /**
   * "path" (default): files in sorted path order, the same results for the
   * same tree. "found": as the daemon finds them (directories in the order the
   * file system lists them, as rg): the first results come sooner, and which
   * ones a truncated search returns may differ between calls.
   */
  order?: "path" | "found";
}

const SEARCH_ORDERS = { path: SearchOrder.PATH, found: SearchOrder.FOUND } as const;

export interface ListOptions extends CallOptions, AtSnapshotOption {
  /** Glob matched against the path relative to the directory, e.g. "**\/*.ts". */
  pattern?: string;
  /** Descend into subdirectories. Default false. */
  recursive?: boolean;
  /** With recursive: how deep; 1 = the directory's own entries. Default: no limit. */
  maxDepth?: number;
  /** Default true. */
  includeHidden?: boolean;
  /** Default true. */
  respectGitignore?: boolean;
  /** Default 10,000, at most 100,000. */
  maxEntries?: number;
}

export interface Listing {
  entries: FileInfo[];
  /** True when maxEntries stopped the listing. */
  truncated: boolean;
}

export interface TransferOptions extends CallOptions {
  /** Called after each chunk. */
  onProgress?: OnProgress;
}

export interface ExportOptions extends TransferOptions {
  /** Default: the newest snapshot. */
  snapshotId?: string;
  /** A fresh tarball of the workspace as it is now instead of a stored snapshot. */
  live?: boolean;
  /** Only files matching these globs (e.g. "reports/**"). Default: all. */
  include?: string[];
}

/** Streams search results and, once the loop has run to its end, holds the summary. */
export class SearchResults<T> implements AsyncIterable<T> {
  /** Set when a loop over the results has reached the end of the stream. */
  summary: SearchSummary | undefined;

  constructor(
    private readonly start: () => AsyncIterable<SearchResponse>,
    /** The results a message carries (content mode's batches hold several). */
    private readonly resultsOf: (event: SearchResponse["event"]) => readonly T[],
  ) {}

  /** Each loop is one call; leaving the loop early cancels it, and the daemon stops searching. */
  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for await (const { event } of this.start()) {
      if (event.case === "summary") this.summary = event.value;
      yield* this.resultsOf(event);
    }
  }
}

/** A workspace of the daemon: `client.workspace("reports")`. Nothing is called until a method is. */
export class WorkspaceClient {
  constructor(
    private readonly raw: RawClient,
    readonly id: string,
  ) {}

  // Options objects go to the raw calls whole: they read only signal, deadline and metadata.

  /** A window of a text file's lines (the whole file by default), with paging info. */
  async readText(path: string, options: ReadTextOptions = {}): Promise<TextWindow> {
    const texts: string[] = [];
    // Every piece is taken as it comes: the Read may share the connection's stream of small calls.
    const window = await this.readTo(path, (text) => void texts.push(text), { ...options, eager: true });
    return { ...window, text: texts.join("") };
  }

  /**
   * Like readText, but hands the text to `onText` piece by piece (whole lines,
   * at most 64 KiB each) as it arrives, e.g. to a file or stdout, so that a
   * window of any size never sits in memory. The next piece waits for a
   * promise `onText` returns.
   */
  async readTo(path: string, onText: (text: string, firstLine: number) => void | Promise<void>, options: ReadTextOptions = {}): Promise<ReadWindow> {
    const request = {
      workspace: this.id,
      path,
      startLine: int64(options.startLine),
      lineCount: int64(options.lineCount),
      tailLines: int64(options.tail),
      encoding: options.encoding,
      maxBytes: int64(options.maxBytes),
      atSnapshot: options.atSnapshot,
    };
    let header: ReadHeader | undefined;
    let trailer: ReadTrailer | undefined;
    let firstLine: number | undefined;
    // Read to the end of the stream (not just to the trailer), so the call ends with its status rather than cancelled.
    for await (const { event } of this.raw.files.read(request, options)) {
      if (event.case === "header") header = event.value;
      else if (event.case === "trailer") trailer = event.value;
      else if (event.case === "chunk") {
        firstLine ??= Number(event.value.firstLine);
        await onText(event.value.text, Number(event.value.firstLine));
      }
    }
    const { file: opened, encoding, totalLines: totalBefore } = present(header, "Read: header");
    const file = present(opened, "Read: header.file");
    const { linesReturned, totalLines: totalAfter, nextLine, truncated, eof, lineCut } = present(trailer, "Read: trailer");
    const totalLines = totalAfter ?? totalBefore;
    // With no line returned, the window sits where it was asked for (a tail: after the last line).
    firstLine ??= options.tail !== undefined ? Number(totalLines ?? 0n) + 1 : (options.startLine ?? 1);
    return {
      firstLine,
      lastLine: firstLine + Number(linesReturned) - 1,
      totalLines: totalLines === undefined ? undefined : Number(totalLines),
      truncated,
      eof,
      lineCut,
      nextStartLine: nextLine === 0n ? undefined : Number(nextLine),
      version: file.version,
      file,
      encoding,
    };
  }

  /** Creates or replaces a text file atomically. */
  writeText(path: string, content: string, options: WriteTextOptions = {}): Promise<WriteResponse> {
    const { mode, createDirs, newline, encoding, ifVersion } = options;
    return this.raw.files.write(
      { workspace: this.id, path, body: { case: "content", value: content }, mode, createDirs, newline, encoding, ifVersion },
      options,
    );
  }

  /** Writes bytes as they are (no encoding, no newline handling); for large files see upload. */
  writeBytes(path: string, data: Uint8Array, options: Omit<WriteTextOptions, "newline" | "encoding"> = {}): Promise<WriteResponse> {
    const { mode, createDirs, ifVersion } = options;
    return this.raw.files.write({ workspace: this.id, path, body: { case: "data", value: data }, mode, createDirs, ifVersion }, options);
  }

  /** Exact text replacements, applied in order, all or nothing. */
  edit(path: string, edits: TextEditInit | TextEditInit[], options: EditOptions = {}): Promise<EditResponse> {
    const { dryRun, encoding, ifVersion } = options;
    const list = Array.isArray(edits) ? edits : [edits];
    return this.raw.files.edit({ workspace: this.id, path, edits: list, dryRun, encoding, ifVersion }, options);
  }

  /** A Codex-format patch over several files, all or nothing (see ApplyPatch in the proto). */
  applyPatch(patch: string, options: CallOptions & { dryRun?: boolean } = {}): Promise<ApplyPatchResponse> {
    return this.raw.files.applyPatch({ workspace: this.id, patch, dryRun: options.dryRun }, options);
  }

  /** Matching lines, as found. `for await (const m of ws.search("TODO")) …`; then `.summary`. */
  search(pattern: string, options: SearchOptions = {}): SearchResults<SearchMatch> {
    return this.searchResults(pattern, options, OutputMode.CONTENT, (event) =>
      event.case === "matches" ? event.value.matches : event.case === "match" ? [event.value] : [],
    );
  }

  /** Paths of the files that match, as found. */
  searchFiles(pattern: string, options: SearchOptions = {}): SearchResults<string> {
    return this.searchResults(pattern, options, OutputMode.FILES_WITH_MATCHES, (event) =>
      event.case === "file" ? [event.value.path] : [],
    );
  }

  /** Matching-line counts per file, as found. */
  searchCounts(pattern: string, options: SearchOptions = {}): SearchResults<SearchCount> {
    return this.searchResults(pattern, options, OutputMode.COUNT, (event) =>
      event.case === "count" ? [event.value] : [],
    );
  }

  private searchResults<T>(
    pattern: string,
    options: SearchOptions,
    outputMode: OutputMode,
    resultsOf: (event: SearchResponse["event"]) => readonly T[],
  ): SearchResults<T> {
    const request = {
      workspace: this.id,
      pattern,
      outputMode,
      path: options.path,
      fixedStrings: options.fixedStrings,
      caseInsensitive: options.caseInsensitive,
      include: options.include,
      exclude: options.exclude,
      contextBefore: options.contextBefore,
      contextAfter: options.contextAfter,
      maxResults: options.maxResults,
      maxFileSize: int64(options.maxFileSize),
      respectGitignore: options.respectGitignore,
      batchMatches: true,
      order: options.order && SEARCH_ORDERS[options.order],
    };
    return new SearchResults(() => this.raw.files.search(request, options), resultsOf);
  }

  /** Describes one entry (a symlink as SYMLINK); `countLines` and `detectBinary` read the file. */
  async stat(path: string, options: CallOptions & AtSnapshotOption & { countLines?: boolean; detectBinary?: boolean } = {}): Promise<FileInfo> {
    const { countLines, detectBinary, atSnapshot } = options;
    const response = await this.raw.files.stat({ workspace: this.id, path, countLines, detectBinary, atSnapshot }, options);
    return present(response.file, "Stat: file");
  }

  /** Entries under a directory (default: the root), a directory before its contents. */
  async list(path = "", options: ListOptions = {}): Promise<Listing> {
    const { pattern, recursive, maxDepth, includeHidden, respectGitignore, maxEntries, atSnapshot } = options;
    const request = { workspace: this.id, path, pattern, recursive, maxDepth, includeHidden, respectGitignore, maxEntries, atSnapshot };
    const listing: Listing = { entries: [], truncated: false };
    for await (const { event } of this.raw.files.list(request, options)) {
      if (event.case === "entries") listing.entries.push(...event.value.entries);
      else if (event.case === "summary") listing.truncated = event.value.truncated;
    }
    return listing;
  }

  /** Removes a file, symlink or (with recursive) directory; `existed: false` when there was nothing. */
  delete(path: string, options: ConditionalOptions & { recursive?: boolean } = {}): Promise<DeleteResponse> {
    const { recursive, ifVersion } = options;
    return this.raw.files.delete({ workspace: this.id, path, recursive, ifVersion }, options);
  }

  /** Renames or moves a file or directory; an existing destination is ALREADY_EXISTS unless `overwrite`. */
  move(
    source: string,
    destination: string,
    options: ConditionalOptions & { overwrite?: boolean; createDirs?: boolean } = {},
  ): Promise<MoveResponse> {
    const { overwrite, createDirs, ifVersion } = options;
    return this.raw.files.move({ workspace: this.id, source, destination, overwrite, createDirs, ifVersion }, options);
  }

  /** Creates a directory (and its parents unless `parents: false`); `created: false` when it existed. */
  mkdir(path: string, options: CallOptions & { parents?: boolean } = {}): Promise<MakeDirResponse> {
    return this.raw.files.makeDir({ workspace: this.id, path, parents: options.parents }, options);
  }

  /** Stores the bytes of a local file (or of a byte stream such as process.stdin) at `path`, in chunks. */
  upload(
    source: string | AsyncIterable<Uint8Array>,
    path: string,
    options: TransferOptions & Pick<WriteTextOptions, "mode" | "createDirs" | "ifVersion"> = {},
  ): Promise<UploadResponse> {
    const { mode, createDirs, ifVersion } = options;
    const header = { workspace: this.id, path, mode, createDirs, ifVersion };
    return this.raw.files.upload(headerThenData(header, source, options.onProgress), options);
  }

  /**
   * A small file's bytes, in memory (an image for a model): at most
   * `maxBytes`, else INVALID_ARGUMENT / FILE_TOO_LARGE before more than one
   * chunk is received (the download is cancelled).
   */
  async readBytes(path: string, options: CallOptions & { maxBytes: number }): Promise<{ file: FileInfo | undefined; data: Buffer }> {
    const { header, data } = await receiveVerified(this.raw.files.download({ workspace: this.id, path }, options));
    const size = Number(header.size); // what arrives is checked against it
    if (size > options.maxBytes) {
      // The chunks' generator ends (cancelling the download) only once started: take one, then leave.
      for await (const _ of data) break;
      throw new FileToolsError(Code.INVALID_ARGUMENT, `${header.file?.path ?? path} is ${size} bytes, more than the ${options.maxBytes} that can be read at once`, "FILE_TOO_LARGE");
    }
    const chunks: Uint8Array[] = [];
    for await (const chunk of data) chunks.push(chunk);
    return { file: header.file, data: Buffer.concat(chunks) };
  }

  /**
   * An image or a PDF as a model takes it (ReadMedia): an image's bytes,
   * downscaled by the daemon when over its caps, or a window of a PDF's pages
   * as text. NOT_MEDIA for any other file.
   */
  async readMedia(path: string, options: ReadMediaOptions = {}): Promise<MediaRead> {
    const request = {
      workspace: this.id,
      path,
      startPage: int64(options.startPage),
      pageCount: int64(options.pageCount),
      maxBytes: int64(options.maxBytes),
      maxImageBytes: int64(options.maxImageBytes),
      maxImageSide: options.maxImageSide,
      atSnapshot: options.atSnapshot,
    };
    let header: MediaHeader | undefined;
    let trailer: MediaTrailer | undefined;
    const data: Uint8Array[] = [];
    const pages: MediaRead["pages"] = [];
    for await (const { event } of this.raw.files.readMedia(request, options)) {
      if (event.case === "header") header = event.value;
      else if (event.case === "trailer") trailer = event.value;
      else if (event.case === "imageData") data.push(event.value.data);
      else if (event.case === "page") pages.push({ number: Number(event.value.number), text: event.value.text, cut: event.value.cut });
    }
    const { file, mediaType, image, pageCount } = present(header, "ReadMedia: header");
    const { nextPage, truncated, eof } = present(trailer, "ReadMedia: trailer");
    const read: MediaRead = { file: present(file, "ReadMedia: header.file"), mediaType, pages, pageCount: Number(pageCount), nextPage: nextPage === 0n ? undefined : Number(nextPage), truncated, eof };
    if (image) {
      const bytes = Buffer.concat(data);
      if (bytes.length !== Number(image.size)) throw new FileToolsError(Code.DATA_LOSS, `ReadMedia: ${bytes.length} image bytes arrived, the header said ${image.size}`, "DATA_LOSS");
      read.image = { mediaType: image.mediaType, data: bytes, width: image.width, height: image.height, originalWidth: image.originalWidth, originalHeight: image.originalHeight, downscaled: image.downscaled };
    }
    return read;
  }

  /** Fetches a file into `toFilePath`, atomically, after checking its sha256. */
  download(path: string, toFilePath: string, options: TransferOptions & AtSnapshotOption = {}): Promise<DownloadHeader> {
    return saveVerified(this.raw.files.download({ workspace: this.id, path, atSnapshot: options.atSnapshot }, options), toFilePath, options.onProgress);
  }

  /** Begins a run (creating the workspace, and restoring its newest snapshot when it is empty, by default). */
  async startRun(options: CallOptions & { restore?: "LATEST" | "NONE" | (string & {}); labels?: Record<string, string> } = {}): Promise<Run> {
    const { restore, labels } = options;
    const response = await this.raw.workspaces.startRun({ workspace: this.id, restore, labels }, options);
    return present(response.run, "StartRun: run");
  }

  /** Ends the run and (unless `snapshot: false`) snapshots the workspace. */
  finishRun(runId: string, options: CallOptions & { snapshot?: boolean; labels?: Record<string, string> } = {}): Promise<FinishRunResponse> {
    const { snapshot, labels } = options;
    return this.raw.workspaces.finishRun({ workspace: this.id, runId, snapshot, labels }, options);
  }

  /** The run's changes, in order. */
  /**
   * The workspace's changes as they happen (after `since` first, when given),
   * resuming by itself from the last cursor seen when the stream breaks;
   * leaving the loop (or aborting `signal`) stops the watch.
   */
  watch(options: WatchOptions = {}): AsyncGenerator<JournalEntry> {
    return watchChanges(this.raw, this.id, options);
  }

  /** The journal's entries still held, filtered by run, time range (`since`, `until`), cursor and globs. */
  async journal(
    filter: Partial<Pick<GetJournalRequest, "runId" | "afterCursor" | "globs">> & { since?: Date; until?: Date } = {},
    options: CallOptions = {},
  ): Promise<JournalEntry[]> {
    const { since, until, ...rest } = filter;
    const request = { workspace: this.id, ...rest, since: since && timestampFromDate(since), until: until && timestampFromDate(until) };
    const entries: JournalEntry[] = [];
    for await (const message of this.raw.journal.getJournal(request, options)) entries.push(...message.entries);
    return entries;
  }

  async changeSet(runId: string, options: CallOptions = {}): Promise<Change[]> {
    const changes: Change[] = [];
    for await (const batch of this.raw.workspaces.getChangeSet({ workspace: this.id, runId }, options)) {
      changes.push(...batch.changes);
    }
    return changes;
  }

  /** The workspace's snapshots, newest first; with labels (all must match) and a time range, only those; includeRecovered: also those kept off the main line. */
  async listSnapshots(options: CallOptions & { labels?: Record<string, string>; createdAfter?: Date; createdBefore?: Date; includeRecovered?: boolean } = {}): Promise<Snapshot[]> {
    const { labels, createdAfter, createdBefore, includeRecovered } = options;
    const request = {
      workspace: this.id,
      labels,
      createdAfter: createdAfter && timestampFromDate(createdAfter),
      createdBefore: createdBefore && timestampFromDate(createdBefore),
      includeRecovered,
    };
    return (await this.raw.workspaces.listSnapshots(request, options)).snapshots;
  }

  /**
   * What changed from snapshot `from` ("" = the newest) to snapshot `to`, or
   * to the live workspace when `to` is left out: the entries (those of "to"
   * in walk order, then the removed ones) and the summary.
   */
  async diffSnapshots(from: string, options: CallOptions & { to?: string } = {}): Promise<{ entries: DiffEntry[]; summary: DiffSummary }> {
    const entries: DiffEntry[] = [];
    let summary: DiffSummary | undefined;
    for await (const { event } of this.raw.workspaces.diffSnapshots({ workspace: this.id, from, to: options.to ?? "", live: options.to === undefined }, options)) {
      if (event.case === "entries") entries.push(...event.value.entries);
      else if (event.case === "summary") summary = event.value;
    }
    return { entries, summary: present(summary, "DiffSnapshots: summary") };
  }

  /** Downloads a snapshot's tarball (gzip) into `toFilePath`, atomically, after checking its sha256 against the header. */
  exportSnapshot(toFilePath: string, options: ExportOptions = {}): Promise<ExportHeader> {
    const { snapshotId, live, include } = options;
    const stream = this.raw.workspaces.exportSnapshot({ workspace: this.id, snapshotId, live, include }, options);
    return saveVerified(stream, toFilePath, options.onProgress);
  }

  /**
   * A presigned URL of a stored snapshot's tarball (an s3:// store), with its
   * size, sha256 and expiry: hand it to whoever needs the artifact, and the
   * bytes come from the bucket, not through the daemon.
   */
  async snapshotUrl(options: CallOptions & { snapshotId?: string; seconds?: number } = {}): Promise<ExportHeader> {
    const request = { workspace: this.id, snapshotId: options.snapshotId, presign: true, presignSeconds: options.seconds };
    let header: ExportHeader | undefined;
    for await (const { event } of this.raw.workspaces.exportSnapshot(request, options)) if (event.case === "header") header = event.value;
    return present(header, "ExportSnapshot: header");
  }

  /** Replaces the workspace's contents with a snapshot (default: the newest). */
  async restoreSnapshot(snapshotId = "", options: CallOptions = {}): Promise<Snapshot> {
    const response = await this.raw.workspaces.restoreSnapshot({ workspace: this.id, snapshotId }, options);
    return present(response.snapshot, "RestoreSnapshot: snapshot");
  }

  /**
   * Like exportSnapshot, but the tarball lands in this workspace, at the
   * workspace path `destination`: the export streamed straight into an
   * Upload, which writes it atomically once the daemon has checked its
   * sha256 against the export's. Nothing passes through this machine's disk.
   * `onProgress` counts the bytes moved, of the export's size.
   */
  async exportInto(destination: string, options: ExportOptions & Pick<WriteTextOptions, "mode"> = {}): Promise<{ header: ExportHeader; file: UploadResponse }> {
    const { snapshotId, live, include, mode } = options;
    const exported = await receiveVerified(this.raw.workspaces.exportSnapshot({ workspace: this.id, snapshotId, live, include }, options), options.onProgress);
    const header = { workspace: this.id, path: destination, mode, sha256: exported.header.sha256 };
    const file = await this.raw.files.upload(headerThenData(header, exported.data), options);
    return { header: exported.header, file };
  }

  /**
   * Like importArchive, from a tarball that is in this workspace: its
   * Download streamed straight into ImportArchive (a download that does not
   * match its header's sha256 cancels the import, which then changes
   * nothing). `onProgress` counts the bytes moved, of the archive's size.
   */
  async importFrom(archive: string, options: TransferOptions & { path?: string } = {}): Promise<{ archive: FileInfo | undefined; imported: ImportArchiveResponse }> {
    const downloaded = await receiveVerified(this.raw.files.download({ workspace: this.id, path: archive }, options), options.onProgress);
    const imported = await this.raw.workspaces.importArchive(headerThenData({ workspace: this.id, path: options.path }, downloaded.data), options);
    return { archive: downloaded.header.file, imported };
  }

  /** Unpacks a tarball (plain or gzip; a local file's path or a byte stream) into a directory of the workspace (default: the root). */
  importArchive(source: string | AsyncIterable<Uint8Array>, options: TransferOptions & { path?: string } = {}): Promise<ImportArchiveResponse> {
    const header = { workspace: this.id, path: options.path };
    return this.raw.workspaces.importArchive(headerThenData(header, source, options.onProgress), options);
  }
}

function int64(value: number | undefined): bigint | undefined {
  return value === undefined ? undefined : BigInt(value);
}
