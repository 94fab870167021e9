// File commands: read, write, edit, rm, mv, mkdir, stat, ls (one RPC each).
import { readFile } from "node:fs/promises";
import { Option, type Command } from "commander";
import { FileInfoSchema, FileType } from "@filetools/proto/filetools/v1/common_pb.js";
import {
  DeleteResponseSchema,
  EditResponseSchema,
  MakeDirResponseSchema,
  MoveResponseSchema,
  Newline,
  WriteMode,
  WriteResponseSchema,
} from "@filetools/proto/filetools/v1/files_pb.js";
import { numberLines } from "../format.js";
import { collect, integerAtLeast } from "./args.js";
import { UsageError } from "./errors.js";
import { jsonOf, localTime, modeString, note, printJson, table, typeName, writeOut } from "./output.js";
import { sessionOf } from "./session.js";

/** --mode values of write and upload. */
export const WRITE_MODES: Record<string, WriteMode> = {
  "create-or-replace": WriteMode.CREATE_OR_REPLACE,
  "create-only": WriteMode.CREATE_ONLY,
  "replace-only": WriteMode.REPLACE_ONLY,
  append: WriteMode.APPEND,
};

const NEWLINES: Record<string, Newline> = { preserve: Newline.PRESERVE, lf: Newline.LF, crlf: Newline.CRLF };

const ENCODING_HELP = 'text encoding: "utf-8" (default), "utf-16le", "latin1" or "ascii"';
/** The help of --at (read, stat, ls, download). */
export const AT_HELP = "answer from this stored snapshot (an id from `snapshots ls`) instead of the live workspace";
const EXPECT_VERSION_HELP = "change nothing unless the file's version (from stat, read --json or a write) is still this";

export function addFileCommands(program: Command): void {
  program
    .command("read")
    .summary("print a file's lines, numbered as cat -n")
    .description(
      "Print a file's text with line numbers (cat -n style), or a window of its lines, streamed as it arrives. " +
        "One call returns at most --max-bytes of text (10 MiB by default): when lines remain after the window, a " +
        "note on stderr says which --start continues. --json prints the window as one document: text, firstLine, " +
        "lastLine, totalLines (when known), nextStartLine (absent at the end), truncated, eof, lineCut, version, " +
        "encoding and file.",
    )
    .argument("<workspace>", "workspace id")
    .argument("<path>", "workspace path of the file")
    .option("--start <line>", "first line to print, 1-based (default 1)", integerAtLeast(1))
    .option("--count <lines>", "how many lines to print (default: to the end)", integerAtLeast(0))
    .addOption(new Option("--tail <lines>", "print the last N lines instead (of a big file whose line count the daemon does not know yet, numbered from the end: -1 is the last line)").argParser(integerAtLeast(0)).conflicts("start"))
    .option("--raw", "print the text as it is, without line numbers")
    .option("--encoding <name>", ENCODING_HELP)
    .option("--max-bytes <bytes>", "stop before the text exceeds this many bytes (daemon default 10 MiB)", integerAtLeast(1))
    .option("--at <snapshot>", AT_HELP)
    .addHelpText(
      "after",
      "\nExamples:\n  filetools read reports big.log --start 100 --count 50\n  filetools read reports big.log --tail 20 --raw\n  filetools read reports notes.md --at 20261206T101500123Z-1a2b3c4d",
    )
    .action(async (workspace: string, path: string, options, command: Command) => {
      const { client, json, call } = sessionOf(command);
      const workspaceClient = client.workspace(workspace);
      const readOptions = {
        ...call,
        startLine: options.start,
        lineCount: options.count,
        tail: options.tail,
        encoding: options.encoding,
        maxBytes: options.maxBytes,
        atSnapshot: options.at,
      };
      if (json) {
        const { file, ...window } = await workspaceClient.readText(path, readOptions);
        return printJson({ ...window, file: jsonOf(FileInfoSchema, file) });
      }
      const window = await workspaceClient.readTo(
        path,
        (text, firstLine) => writeOut(options.raw ? text : numberLines(text, { firstLine })),
        readOptions,
      );
      if (window.lineCut) note(`line ${window.firstLine} was cut at --max-bytes`);
      if (window.nextStartLine !== undefined) {
        const of = window.totalLines === undefined ? "" : ` of ${window.totalLines}`;
        const shown = window.lastLine < window.firstLine ? "no lines" : `lines ${window.firstLine}-${window.lastLine}${of}`;
        note(`${shown}${window.truncated ? " (--max-bytes reached)" : ""}; continue with --start ${window.nextStartLine}`);
      }
    });

  program
    .command("write")
    .summary("write a file from a local file or stdin")
    .description(
      "Write a file atomically from a local file or standard input (-). The bytes must be UTF-8 text, which the " +
        "daemon encodes with --encoding and --newline; --binary writes them as they are. A message holds at most " +
        "8 MiB (the daemon's --max-message-bytes): use upload for bigger files.",
    )
    .argument("<workspace>", "workspace id")
    .argument("<path>", "workspace path of the file to write")
    .argument("<source>", "local file to send, or - for standard input")
    .addOption(
      new Option("--mode <mode>", "create-or-replace, create-only (ALREADY_EXISTS if present), replace-only (NOT_FOUND if absent) or append")
        .choices(Object.keys(WRITE_MODES))
        .default("create-or-replace"),
    )
    .option("--binary", "write the bytes as they are (no decoding; --encoding and --newline do not apply)")
    .option("--encoding <name>", `${ENCODING_HELP} on disk`)
    .addOption(
      new Option("--newline <style>", "preserve (a CRLF file stays CRLF), lf or crlf").choices(Object.keys(NEWLINES)).default("preserve"),
    )
    .option("--no-create-dirs", "fail instead of creating missing parent directories")
    .option("--expect-version <version>", EXPECT_VERSION_HELP)
    .addHelpText("after", "\nExamples:\n  echo 'hello' | filetools write demo notes/a.txt -\n  filetools write demo src/app.ts ./app.ts --expect-version 5f0c3a…")
    .action(async (workspace: string, path: string, source: string, options, command: Command) => {
      const { client, json, call } = sessionOf(command);
      const workspaceClient = client.workspace(workspace);
      const bytes = source === "-" ? await readAll(process.stdin) : await readFile(source);
      const writeOptions = { ...call, mode: WRITE_MODES[options.mode], createDirs: options.createDirs, ifVersion: options.expectVersion };
      const response = options.binary
        ? await workspaceClient.writeBytes(path, bytes, writeOptions)
        : await workspaceClient.writeText(path, decodeUtf8(bytes, source), {
            ...writeOptions,
            encoding: options.encoding,
            newline: NEWLINES[options.newline],
          });
      if (json) return printJson(jsonOf(WriteResponseSchema, response));
      await writeOut(`${response.created ? "created" : "wrote"} ${response.path}: ${response.size} bytes, version ${response.version}\n`);
    });

  program
    .command("edit")
    .summary("replace exact text in a file and print the diff")
    .description(
      "Replace exact text in a file: every --old/--new pair is one edit, applied in order, all or nothing. " +
        "Without --all an --old text must occur exactly once (OLD_TEXT_NOT_UNIQUE otherwise); when it does not " +
        "occur, the error names the closest line. Prints the unified diff.",
    )
    .argument("<workspace>", "workspace id")
    .argument("<path>", "workspace path of a text file")
    .option("--old <text>", "exact text to find (repeatable, paired in order with --new)", collect)
    .option("--new <text>", "its replacement (repeatable)", collect)
    .option("--all", "replace every occurrence of each --old text")
    .option("--dry-run", "print the diff, change nothing")
    .option("--expect-version <version>", EXPECT_VERSION_HELP)
    .option("--encoding <name>", ENCODING_HELP)
    .addHelpText("after", "\nExample:\n  filetools edit demo src/app.ts --old 'retries = 3' --new 'retries = 5'")
    .action(async (workspace: string, path: string, options, command: Command) => {
      const olds: string[] = options.old ?? [];
      const news: string[] = options.new ?? [];
      if (olds.length === 0 || olds.length !== news.length) throw new UsageError("give --old and --new in pairs (at least one)");
      const { client, json, call } = sessionOf(command);
      const edits = olds.map((oldText, i) => ({ oldText, newText: news[i], replaceAll: options.all ?? false }));
      const response = await client
        .workspace(workspace)
        .edit(path, edits, { ...call, dryRun: options.dryRun, ifVersion: options.expectVersion, encoding: options.encoding });
      if (json) return printJson(jsonOf(EditResponseSchema, response));
      const count = `${response.replacements} replacement${response.replacements === 1n ? "" : "s"}`;
      await writeOut(response.diff);
      const cut = response.diffTruncated ? "; the diff above stops at 1 MiB" : "";
      await writeOut(
        options.dryRun ? `dry run: ${count} in ${response.path}, nothing written${cut}\n` : `edited ${response.path}: ${count}, version ${response.version}${cut}\n`,
      );
    });

  program
    .command("rm")
    .summary("remove a file, symlink or directory")
    .description("Remove a file, symbolic link (never its target) or, with -r, a directory and everything under it. Nothing there is not an error.")
    .argument("<workspace>", "workspace id")
    .argument("<path>", "workspace path to remove")
    .option("-r, --recursive", "remove a directory and its contents")
    .option("--expect-version <version>", EXPECT_VERSION_HELP)
    .action(async (workspace: string, path: string, options, command: Command) => {
      const { client, json, call } = sessionOf(command);
      const response = await client.workspace(workspace).delete(path, { ...call, recursive: options.recursive, ifVersion: options.expectVersion });
      if (json) return printJson(jsonOf(DeleteResponseSchema, response));
      await writeOut(response.existed ? `removed ${response.path}\n` : `nothing to remove at ${response.path}\n`);
    });

  program
    .command("mv")
    .summary("move or rename a file or directory")
    .description("Move or rename a file or directory inside the workspace. An existing destination is ALREADY_EXISTS unless --overwrite.")
    .argument("<workspace>", "workspace id")
    .argument("<source>", "workspace path to move")
    .argument("<destination>", "workspace path it will have")
    .option("--overwrite", "replace an existing destination file (or empty directory)")
    .option("--no-create-dirs", "fail instead of creating missing parents of the destination")
    .option("--expect-version <version>", "move only if the source's version is still this")
    .action(async (workspace: string, source: string, destination: string, options, command: Command) => {
      const { client, json, call } = sessionOf(command);
      const response = await client
        .workspace(workspace)
        .move(source, destination, { ...call, overwrite: options.overwrite, createDirs: options.createDirs, ifVersion: options.expectVersion });
      if (json) return printJson(jsonOf(MoveResponseSchema, response));
      await writeOut(`moved ${response.source} -> ${response.destination}\n`);
    });

  program
    .command("mkdir")
    .summary("create a directory")
    .description("Create a directory. An existing directory is not an error.")
    .argument("<workspace>", "workspace id")
    .argument("<path>", "workspace path of the directory")
    .option("-p, --parents", "create missing parent directories too")
    .action(async (workspace: string, path: string, options, command: Command) => {
      const { client, json, call } = sessionOf(command);
      const response = await client.workspace(workspace).mkdir(path, { ...call, parents: options.parents ?? false });
      if (json) return printJson(jsonOf(MakeDirResponseSchema, response));
      await writeOut(response.created ? `created ${response.path}\n` : `${response.path} already exists\n`);
    });

  program
    .command("stat")
    .summary("describe a file or directory")
    .description("Describe one entry (a symbolic link is described itself, not its target), with its version for --expect-version.")
    .argument("<workspace>", "workspace id")
    .argument("[path]", "workspace path (default: the root)", "/")
    .option("--lines", "count the lines of a text file (reads it all)")
    .option("--binary", "tell whether the file is binary (reads its first 8 KiB)")
    .option("--at <snapshot>", AT_HELP)
    .action(async (workspace: string, path: string, options, command: Command) => {
      const { client, json, call } = sessionOf(command);
      const file = await client.workspace(workspace).stat(path, { ...call, countLines: options.lines, detectBinary: options.binary, atSnapshot: options.at });
      if (json) return printJson(jsonOf(FileInfoSchema, file));
      const rows = [
        ["path:", file.path],
        ["type:", typeName(file.type)],
        ["size:", String(file.size)],
        ["mode:", `${file.mode.toString(8).padStart(4, "0")} (${modeString(file)})`],
        ["modified:", localTime(file.mtime)],
        ["version:", file.version],
      ];
      if (file.lineCount !== undefined) rows.push(["lines:", String(file.lineCount)]);
      if (file.isBinary !== undefined) rows.push(["binary:", file.isBinary ? "yes" : "no"]);
      await writeOut(table(rows));
    });

  program
    .command("ls")
    .summary("list a directory")
    .description(
      "List a directory as ls -l does: type and permissions, size, modification time, path. Hidden entries are " +
        "listed; what .gitignore files exclude is not. --json prints one document: {entries, truncated}.",
    )
    .argument("<workspace>", "workspace id")
    .argument("[path]", "workspace path of the directory (default: the root)", "/")
    .option("-r, --recursive", "descend into subdirectories (never through symlinks)")
    .option("--depth <levels>", "with -r: how deep to go (1 = the directory's own entries)", integerAtLeast(1))
    .option("-g, --glob <pattern>", 'only entries whose path relative to <path> matches, e.g. "**/*.ts"')
    .option("--no-hidden", "leave out names starting with a dot")
    .option("--no-gitignore", "list what .gitignore files exclude, and .git")
    .option("--max-entries <n>", "stop after n entries (daemon default 10,000)", integerAtLeast(1))
    .option("--at <snapshot>", AT_HELP)
    .action(async (workspace: string, path: string, options, command: Command) => {
      const { client, json, call } = sessionOf(command);
      const { entries, truncated } = await client.workspace(workspace).list(path, {
        ...call,
        pattern: options.glob,
        recursive: options.recursive,
        maxDepth: options.depth,
        includeHidden: options.hidden,
        respectGitignore: options.gitignore,
        maxEntries: options.maxEntries,
        atSnapshot: options.at,
      });
      if (json) return printJson({ entries: entries.map((entry) => jsonOf(FileInfoSchema, entry)), truncated });
      await writeOut(
        table(
          entries.map((e) => [modeString(e), String(e.size), localTime(e.mtime), e.type === FileType.DIRECTORY ? `${e.path}/` : e.path]),
          [1],
        ),
      );
      if (truncated) note(`listing stopped at ${entries.length} entries (raise --max-entries)`);
    });
}

async function readAll(stream: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part);
  return Buffer.concat(parts);
}

/** The bytes as text; refuses bytes that are not UTF-8 rather than writing U+FFFD in their place. */
function decodeUtf8(bytes: Uint8Array, source: string): string {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new UsageError(`${source === "-" ? "standard input" : source} is not UTF-8 text; use --binary to write its bytes as they are`);
  }
}
