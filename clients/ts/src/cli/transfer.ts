// Byte transfers: upload, download, and import of a tarball.
import path from "node:path";
import { Option, type Command } from "commander";
import { headerThenData } from "../byte-streams.js";
import { DownloadHeaderSchema, UploadResponseSchema } from "@filetools/proto/filetools/v1/files_pb.js";
import { ImportArchiveResponseSchema } from "@filetools/proto/filetools/v1/workspaces_pb.js";
import { AT_HELP, WRITE_MODES } from "./files.js";
import { fileCount, humanBytes, jsonOf, printJson, writeOut } from "./output.js";
import { sessionOf } from "./session.js";
import { saveStream, withProgress } from "./streams.js";

export function addTransferCommands(program: Command): void {
  program
    .command("upload")
    .summary("store a local file's bytes (any size, binary too)")
    .description(
      "Store the bytes of a local file or of standard input (-) as they are, streamed in 1 MiB chunks and " +
        "written atomically when complete. Shows a progress bar on a terminal.",
    )
    .argument("<workspace>", "workspace id")
    .argument("<source>", "local file, or - for standard input")
    .argument("<path>", "workspace path of the file to write")
    .addOption(
      new Option("--mode <mode>", "create-or-replace, create-only or replace-only")
        .choices(Object.keys(WRITE_MODES).filter((mode) => mode !== "append"))
        .default("create-or-replace"),
    )
    .option("--no-create-dirs", "fail instead of creating missing parent directories")
    .option("--expect-version <version>", "replace only if the file's version is still this")
    .option("--sha256 <hex>", "the SHA-256 the bytes must have: on a mismatch nothing is written (INVALID_ARGUMENT)")
    .action(async (workspace: string, source: string, filePath: string, options, command: Command) => {
      const { client, json, call } = sessionOf(command);
      const header = {
        workspace,
        path: filePath,
        mode: WRITE_MODES[options.mode],
        createDirs: options.createDirs,
        ifVersion: options.expectVersion,
        sha256: options.sha256,
      };
      // The raw call, as the client's upload() has no sha256 option.
      const response = await withProgress("upload", (onProgress) =>
        client.files.upload(headerThenData(header, source === "-" ? process.stdin : source, onProgress), call),
      );
      if (json) return printJson(jsonOf(UploadResponseSchema, response));
      await writeOut(`${response.created ? "created" : "wrote"} ${response.path}: ${response.size} bytes, sha256 ${response.sha256}\n`);
    });

  program
    .command("download")
    .summary("fetch a file's bytes")
    .description(
      "Fetch a file's bytes into a local file (default: its name, in the current directory) or standard output (-). " +
        "The bytes are checked against the sha256 the daemon announces; a local file appears only once complete.",
    )
    .argument("<workspace>", "workspace id")
    .argument("<path>", "workspace path of the file")
    .argument("[destination]", "local file, or - for standard output")
    .option("--at <snapshot>", AT_HELP)
    .action(async (workspace: string, filePath: string, destination: string | undefined, options, command: Command) => {
      const { client, json, call } = sessionOf(command);
      const target = destination ?? path.basename(filePath);
      const header = await saveStream(client.files.download({ workspace, path: filePath, atSnapshot: options.at }, call), target, "download");
      if (target === "-") return;
      if (json) return printJson(jsonOf(DownloadHeaderSchema, header));
      await writeOut(`saved ${header.file?.path} to ${target}: ${header.size} bytes, sha256 ${header.sha256}\n`);
    });

  program
    .command("import")
    .summary("unpack a tarball into a workspace")
    .description(
      "Unpack a tar archive (plain or gzip) from a local file or standard input (-) into a directory of the " +
        "workspace. The daemon treats it as hostile: absolute names, .., links pointing out, devices and the like " +
        "are refused (UNSAFE_ARCHIVE) and nothing changes. Entries of the same name are replaced, directories merged. " +
        "Shows a progress bar on a terminal.",
    )
    .argument("<workspace>", "workspace id")
    .argument("<archive>", "local .tar or .tar.gz file, or - for standard input")
    .option("--path <dir>", "workspace directory to unpack into (created; default: the root)")
    .action(async (workspace: string, archive: string, options, command: Command) => {
      const { client, json, call } = sessionOf(command);
      const response = await withProgress("import", (onProgress) =>
        client.workspace(workspace).importArchive(archive === "-" ? process.stdin : archive, { ...call, onProgress, path: options.path }),
      );
      if (json) return printJson(jsonOf(ImportArchiveResponseSchema, response));
      await writeOut(`imported ${fileCount(response.fileCount)} (${humanBytes(response.sizeBytes)}) into ${options.path ?? "/"}\n`);
    });
}
