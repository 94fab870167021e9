// snapshots ls|export|url|restore.
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { Command } from "commander";
import { ExportHeaderSchema, SnapshotSchema } from "@filetools/proto/filetools/v1/workspaces_pb.js";
import { collect, integerAtLeast } from "./args.js";
import { humanBytes, jsonOf, localTime, printJson, table, writeOut } from "./output.js";
import { changesText } from "./runs.js";
import { sessionOf } from "./session.js";
import { saveStream } from "./streams.js";

export function addSnapshotCommands(program: Command): void {
  const snapshots = program
    .command("snapshots")
    .summary("list, export, share and restore a workspace's snapshots")
    .description("Snapshots are gzipped tarballs of a workspace in the daemon's store, one per finished run, each with its sha256.");

  snapshots
    .command("ls")
    .description("List a workspace's snapshots, newest first")
    .argument("<workspace>", "workspace id")
    .action(async (workspace: string, _options, command: Command) => {
      const { client, json, call } = sessionOf(command);
      const snapshots = await client.workspace(workspace).listSnapshots(call);
      if (json) return printJson({ snapshots: snapshots.map((snapshot) => jsonOf(SnapshotSchema, snapshot)) });
      const rows = snapshots.map((s) => [s.id, localTime(s.createdAt), humanBytes(s.sizeBytes), String(s.fileCount), s.runId, changesText(s.changes)]);
      await writeOut(table([["ID", "CREATED", "SIZE", "FILES", "RUN", "CHANGES"], ...rows], [2, 3]));
    });

  snapshots
    .command("export")
    .description(
      "Save a snapshot's tarball (.tar.gz) to a local file or standard output (-), checked against its sha256. " +
        "A local file appears only once complete. Shows a progress bar on a terminal.",
    )
    .argument("<workspace>", "workspace id")
    .argument("<file>", "local file to write, or - for standard output")
    .option("--snapshot <id>", "snapshot id (default: the newest)")
    .option("--live", "a fresh tarball of the workspace as it is now, instead of a stored snapshot")
    .option("--include <glob>", 'only files matching (repeatable), e.g. "reports/**/*.md"', collect)
    .addHelpText("after", '\nExamples:\n  filetools snapshots export reports reports.tar.gz\n  filetools snapshots export reports - --live --include "**/*.md" | tar -tzf -')
    .action(async (workspace: string, file: string, options, command: Command) => {
      const { client, json, call } = sessionOf(command);
      const request = { workspace, snapshotId: options.snapshot, live: options.live ?? false, include: options.include };
      const header = await saveStream(client.workspaces.exportSnapshot(request, call), file, "export");
      if (file === "-") return;
      if (json) return printJson(jsonOf(ExportHeaderSchema, header));
      await writeOut(`saved ${file}: ${header.fileCount} files, ${humanBytes(header.size)}, sha256 ${header.sha256}\n`);
    });

  snapshots
    .command("url")
    .description("Print a presigned URL of a stored snapshot's tarball (an s3:// store): anyone with it can download the artifact from the bucket until it expires")
    .argument("<workspace>", "workspace id")
    .option("--snapshot <id>", "snapshot id (default: the newest)")
    .option("--expires <seconds>", "how long the URL works (default 3600, at most 604800)", integerAtLeast(1))
    .addHelpText("after", "\nExample:\n  curl -fo reports.tar.gz \"$(filetools snapshots url reports)\"")
    .action(async (workspace: string, options: { snapshot?: string; expires?: number }, command: Command) => {
      const { client, json, call } = sessionOf(command);
      const header = await client.workspace(workspace).snapshotUrl({ ...call, snapshotId: options.snapshot, seconds: options.expires });
      if (json) return printJson(jsonOf(ExportHeaderSchema, header));
      // The URL alone on stdout (for $(...)); what it points at on stderr.
      await writeOut(`${header.url}\n`);
      process.stderr.write(`${header.fileCount} files, ${humanBytes(header.size)}, sha256 ${header.sha256}; expires ${header.urlExpiresAt ? timestampDate(header.urlExpiresAt).toISOString() : "?"}\n`);
    });

  snapshots
    .command("restore")
    .description("Replace the workspace's contents with a snapshot (its sha256 is checked first; a bad archive changes nothing)")
    .argument("<workspace>", "workspace id")
    .argument("[snapshot-id]", "snapshot id (default: the newest)")
    .action(async (workspace: string, snapshotId: string | undefined, _options, command: Command) => {
      const { client, json, call } = sessionOf(command);
      const snapshot = await client.workspace(workspace).restoreSnapshot(snapshotId, call);
      if (json) return printJson({ snapshot: jsonOf(SnapshotSchema, snapshot) });
      await writeOut(`restored ${workspace} from snapshot ${snapshot.id}\n`);
    });
}
