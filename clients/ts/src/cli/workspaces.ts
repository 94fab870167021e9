// workspaces ls|show|create|delete.
import type { Command } from "commander";
import { DeleteWorkspaceResponseSchema, GetWorkspaceResponseSchema, WorkspaceSchema, type Workspace } from "@filetools/proto/filetools/v1/workspaces_pb.js";
import { jsonOf, localTime, printJson, table, writeOut } from "./output.js";
import { sessionOf } from "./session.js";

export function addWorkspaceCommands(program: Command): void {
  const workspaces = program
    .command("workspaces")
    .summary("list, show, create and delete workspaces")
    .description("Workspaces: managed ones live in the daemon's data directory; bound ones are host directories given with --bind.");

  workspaces
    .command("ls")
    .description("List the workspaces (those the token may use), sorted by id")
    .action(async (_options, command: Command) => {
      const { client, json, call } = sessionOf(command);
      const workspaces = await client.listWorkspaces(call);
      if (json) return printJson({ workspaces: workspaces.map((workspace) => jsonOf(WorkspaceSchema, workspace)) });
      await writeOut(table([["ID", "KIND", "CREATED"], ...workspaces.map(row)]));
    });

  workspaces
    .command("show")
    .description("Describe one workspace: its active run and who holds it, the store's newest snapshot, and what the daemon's copy is of")
    .argument("<workspace>", "workspace id")
    .action(async (id: string, _options, command: Command) => {
      const { client, json, call } = sessionOf(command);
      const response = await client.workspaces.getWorkspace({ workspace: id }, call);
      const { workspace, activeRun } = response;
      if (!workspace) throw new Error("the daemon sent no workspace");
      if (json) return printJson(jsonOf(GetWorkspaceResponseSchema, response));
      let text = table([["ID", "KIND", "CREATED"], row(workspace)]);
      text += activeRun
        ? `active run ${activeRun.runId} on node ${activeRun.node}${activeRun.local ? " (this daemon)" : ""}, started ${localTime(activeRun.startedAt)}` +
          `${activeRun.leaseExpiresAt ? `, lease until ${localTime(activeRun.leaseExpiresAt)}` : ""}\n`
        : "no active run\n";
      text += `newest snapshot: ${response.newestSnapshot || "none"}\n`;
      text += `this copy is of: ${response.copyOf || "no snapshot"}${response.unpublishedChanges ? ", with unpublished changes" : ""}\n`;
      await writeOut(text);
    });

  workspaces
    .command("create")
    .description("Create a managed workspace (ALREADY_EXISTS if it exists)")
    .argument("<workspace>", "id: lower-case letters, digits, '.', '_' and '-', starting with a letter or digit, at most 63")
    .action(async (id: string, _options, command: Command) => {
      const { client, json, call } = sessionOf(command);
      const workspace = await client.createWorkspace(id, call);
      if (json) return printJson(jsonOf(WorkspaceSchema, workspace));
      await writeOut(`created workspace ${workspace.id}\n`);
    });

  workspaces
    .command("delete")
    .description("Delete a managed workspace and its files; its snapshots are kept unless --snapshots")
    .argument("<workspace>", "workspace id")
    .option("--snapshots", "delete its snapshots from the store too")
    .action(async (id: string, options, command: Command) => {
      const { client, json, call } = sessionOf(command);
      const response = await client.workspaces.deleteWorkspace({ workspace: id, deleteSnapshots: options.snapshots ?? false }, call);
      if (json) return printJson(jsonOf(DeleteWorkspaceResponseSchema, response));
      await writeOut(`deleted workspace ${response.workspace}${options.snapshots ? " and its snapshots" : ""}\n`);
    });
}

function row(workspace: Workspace): string[] {
  return [workspace.id, workspace.bound ? "bound" : "managed", localTime(workspace.createdAt)];
}
