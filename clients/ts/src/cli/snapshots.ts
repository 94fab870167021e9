// snapshots ls|diff|export|url|restore.
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { Command } from "commander";
import { DiffEntrySchema, DiffKind, DiffSummarySchema, ExportHeaderSchema, SnapshotSchema, type DiffEntry } from "@filetools/proto/filetools/v1/workspaces_pb.js";
import { collect, integerAtLeast, label, time } from "./args.js";
import { fileCount, humanBytes, jsonOf, localTime, printJson, printJsonLine, table, writeOut } from "./output.js";
import { changesText } from "./runs.js";
import { UsageError } from "./errors.js";
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
    .option("--label <key=value>", "only snapshots with this label (repeatable: all must match)", label)
    .option("--after <time>", "only snapshots created at or after this time (ISO 8601)", time)
    .option("--before <time>", "only snapshots created before this time (ISO 8601)", time)
    .option("--recovered", "also the recovered snapshots: work kept off the main line, with why")
    .addHelpText("after", "\nExample:\n  filetools snapshots ls reports --label team=docs --after 2026-05-01")
    .action(async (workspace: string, options: { label?: Record<string, string>; after?: Date; before?: Date; recovered?: boolean }, command: Command) => {
      const { client, json, call } = sessionOf(command);
      const filter = { labels: options.label, createdAfter: options.after, createdBefore: options.before, includeRecovered: options.recovered };
      const snapshots = await client.workspace(workspace).listSnapshots({ ...call, ...filter });
      if (json) return printJson({ snapshots: snapshots.map((snapshot) => jsonOf(SnapshotSchema, snapshot)) });
      const rows = snapshots.map((s) => [s.id, localTime(s.createdAt), humanBytes(s.sizeBytes), String(s.fileCount), s.runId, changesText(s.changes)]);
      let text = table([["ID", "CREATED", "SIZE", "FILES", "RUN", "CHANGES"], ...rows], [2, 3]);
      for (const s of snapshots.filter((s) => s.recovered)) text += `recovered ${s.id} (parent ${s.parent || "none"}): ${s.recoveredReason}\n`;
      await writeOut(text);
    });

  snapshots
    .command("diff")
    .description(
      "What changed between two snapshots, or from a snapshot to the workspace as it is now (--live, or no second snapshot): " +
        "A added, D removed, M modified (content, mode or link target), then a summary. " +
        "--json prints JSON Lines: one object per entry, then {\"summary\": ...}.",
    )
    .argument("<workspace>", "workspace id")
    .argument("<from>", "snapshot id to compare from")
    .argument("[to]", "snapshot id to compare to (default: the live workspace)")
    .option("--live", "compare to the live workspace (its files hashed now)")
    .addHelpText("after", "\nExamples:\n  filetools snapshots diff reports 20260501T120000000Z-1a2b3c4d --live\n  filetools snapshots diff reports FROM TO --json | jq -r .path")
    .action(async (workspace: string, from: string, to: string | undefined, options: { live?: boolean }, command: Command) => {
      const { client, json, call } = sessionOf(command);
      if (options.live && to !== undefined) throw new UsageError("name a second snapshot or --live, not both");
      for await (const { event } of client.workspaces.diffSnapshots({ workspace, from, to: to ?? "", live: options.live ?? false }, call)) {
        if (event.case === "entries") {
          if (json) for (const entry of event.value.entries) await printJsonLine(jsonOf(DiffEntrySchema, entry));
          else await writeOut(event.value.entries.map(diffLine).join(""));
        } else if (event.case === "summary") {
          const s = event.value;
          if (json) await printJsonLine({ summary: jsonOf(DiffSummarySchema, s) });
          else await writeOut(`${s.added} added, ${s.removed} removed, ${s.modified} modified, ${s.unchanged} unchanged (${s.from} → ${s.to || "live"})\n`);
        }
      }
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
      await writeOut(`saved ${file}: ${fileCount(header.fileCount)}, ${humanBytes(header.size)}, sha256 ${header.sha256}\n`);
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
      process.stderr.write(`${fileCount(header.fileCount)}, ${humanBytes(header.size)}, sha256 ${header.sha256}; expires ${header.urlExpiresAt ? timestampDate(header.urlExpiresAt).toISOString() : "?"}\n`);
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

/** "M /a.txt  12 B → 14 B", as a person reads a diff's entry. */
function diffLine(entry: DiffEntry): string {
  const letter = entry.kind === DiffKind.ADDED ? "A" : entry.kind === DiffKind.REMOVED ? "D" : "M";
  const side = (size: bigint, mode: number, link: string) => (link ? `-> ${link}` : `${humanBytes(size)} ${mode.toString(8).padStart(3, "0")}`);
  const before = side(entry.sizeBefore, entry.modeBefore, entry.linkBefore);
  const after = side(entry.sizeAfter, entry.modeAfter, entry.linkAfter);
  const detail = entry.kind === DiffKind.ADDED ? after : entry.kind === DiffKind.REMOVED ? before : `${before} → ${after}`;
  return `${letter} ${entry.path}  ${detail}\n`;
}
