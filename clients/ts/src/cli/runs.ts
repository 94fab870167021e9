// runs start|finish|changes|ls|abandon.
import type { Command } from "commander";
import {
  AbandonRunResponseSchema,
  ActiveRunSchema,
  ChangeKind,
  ChangeSchema,
  FinishRunResponseSchema,
  RunSchema,
  type Change,
  type ChangeSummary,
  type Snapshot,
} from "@filetools/proto/filetools/v1/workspaces_pb.js";
import { label } from "./args.js";
import { fileCount, humanBytes, jsonOf, localTime, printJson, printJsonLine, table, writeOut } from "./output.js";
import { sessionOf } from "./session.js";

export function addRunCommands(program: Command): void {
  const runs = program
    .command("runs")
    .summary("start and finish runs, and list what they changed")
    .description(
      "A run is one agent execution on a workspace: while it is active, every write, edit, upload, rm and mv is " +
        "recorded in its change set; finishing it snapshots the workspace to the store.",
    );

  runs
    .command("start")
    .description(
      "Start a run, creating the workspace if needed, from the newest published snapshot (the daemon's copy as it is " +
        "when it is a copy of that one; otherwise restored, after keeping the copy's unpublished changes as a recovered snapshot)",
    )
    .argument("<workspace>", "workspace id")
    .option("--restore <what>", "LATEST (default: the newest published snapshot), NONE (the copy as it is), or a snapshot id")
    .option("--label <key=value>", "label copied to the run's snapshot (repeatable)", label)
    .action(async (workspace: string, options, command: Command) => {
      const { client, json, call } = sessionOf(command);
      const run = await client.workspace(workspace).startRun({ ...call, restore: options.restore, labels: options.label });
      if (json) return printJson({ run: jsonOf(RunSchema, run) });
      const from = run.restoredFrom ? `, restored from snapshot ${run.restoredFrom}` : run.startedFrom ? `, from snapshot ${run.startedFrom}` : "";
      await writeOut(`started ${run.id} on ${run.workspace}${from}\n`);
    });

  runs
    .command("ls")
    .description("List the active runs: this daemon's, and on a shared (s3://) store every daemon's, with the node holding each")
    .action(async (_options, command: Command) => {
      const { client, json, call } = sessionOf(command);
      const { runs: active } = await client.workspaces.listRuns({}, call);
      if (json) return printJson({ runs: active.map((run) => jsonOf(ActiveRunSchema, run)) });
      const rows = active.map((run) => [run.workspace, run.runId, run.node, localTime(run.startedAt), localTime(run.leaseExpiresAt), run.local ? "yes" : "no"]);
      await writeOut(table([["WORKSPACE", "RUN", "NODE", "STARTED", "LEASE UNTIL", "HERE"], ...rows]));
    });

  runs
    .command("abandon")
    .description(
      "End a workspace's stuck run without publishing: a run of this daemon ends now and its unpublished work is kept " +
        "as a recovered snapshot; another daemon's run has its lease broken (that daemon keeps its work the same way)",
    )
    .argument("<workspace>", "workspace id")
    .option("--run <run-id>", "only if this is the active run")
    .option("--reason <text>", "why, recorded with the recovered snapshot")
    .action(async (workspace: string, options: { run?: string; reason?: string }, command: Command) => {
      const { client, json, call } = sessionOf(command);
      const response = await client.workspaces.abandonRun({ workspace, runId: options.run ?? "", reason: options.reason ?? "" }, call);
      if (json) return printJson(jsonOf(AbandonRunResponseSchema, response));
      let text = `abandoned ${response.runId} on ${workspace}`;
      if (response.leaseBroken) text += ": its lease was broken; the daemon running it keeps its work as a recovered snapshot";
      else text += response.recovered ? `: its work is kept as recovered snapshot ${response.recovered.id}` : ": it had no unpublished work";
      await writeOut(`${text}\n`);
    });

  runs
    .command("finish")
    .description("Finish the active run and snapshot the workspace (the run stays active if the snapshot fails)")
    .argument("<workspace>", "workspace id")
    .argument("<run-id>", "id of the active run, as start printed it")
    .option("--no-snapshot", "finish without a snapshot")
    .option("--label <key=value>", "extra label for the snapshot (repeatable)", label)
    .action(async (workspace: string, runId: string, options, command: Command) => {
      const { client, json, call } = sessionOf(command);
      const response = await client.workspace(workspace).finishRun(runId, { ...call, snapshot: options.snapshot, labels: options.label });
      if (json) return printJson(jsonOf(FinishRunResponseSchema, response));
      let text = `finished ${runId}: ${changesText(response.changes)}\n`;
      if (response.snapshot) text += `snapshot ${snapshotText(response.snapshot)}\n`;
      await writeOut(text);
    });

  runs
    .command("changes")
    .description("List a run's change set, in order. --json prints JSON Lines: one change object per line.")
    .argument("<workspace>", "workspace id")
    .argument("<run-id>", "run id")
    .action(async (workspace: string, runId: string, _options, command: Command) => {
      const { client, json, call } = sessionOf(command);
      const changes = await client.workspace(workspace).changeSet(runId, call);
      if (json) {
        for (const change of changes) await printJsonLine(jsonOf(ChangeSchema, change));
        return;
      }
      const what = (change: Change) => (change.kind === ChangeKind.MOVE ? `${change.sourcePath} -> ${change.path}` : change.path);
      await writeOut(table(changes.map((change) => [localTime(change.time), ChangeKind[change.kind].toLowerCase(), what(change)])));
    });
}

/** "1 created, 2 modified, 0 deleted, 0 moved". */
export function changesText(changes: ChangeSummary | undefined): string {
  const { created = 0n, modified = 0n, deleted = 0n, moved = 0n } = changes ?? {};
  return `${created} created, ${modified} modified, ${deleted} deleted, ${moved} moved`;
}

function snapshotText(snapshot: Snapshot): string {
  return `${snapshot.id}: ${fileCount(snapshot.fileCount)}, ${humanBytes(snapshot.sizeBytes)}, sha256 ${snapshot.sha256}`;
}
