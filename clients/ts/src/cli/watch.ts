// watch: a workspace's changes as they happen, resumed from the last cursor if the stream breaks.
import { InvalidArgumentError, type Command } from "commander";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { JournalEntrySchema, JournalKind, type JournalEntry } from "@filetools/proto/filetools/v1/journal_pb.js";
import { jsonOf, printJsonLine, writeOut } from "./output.js";
import { sessionOf } from "./session.js";

export function addWatchCommand(program: Command): void {
  program
    .command("watch")
    .description(
      "Print a workspace's changes as they happen, one line each (cursor, time, kind, path, who), until interrupted; " +
        "with --since N, the changes after cursor N first. A broken stream is resumed from the last cursor printed. " +
        "--json prints JSON Lines: one JournalEntry object per line.",
    )
    .argument("<workspace>", "workspace id")
    .argument("[globs...]", 'only paths matching one of these globs ("src/**", "*.ts")')
    .option("--since <cursor>", "print the changes after this cursor first (0: all the journal holds)", cursorOf)
    .action(async (workspace: string, globs: string[], options: { since?: bigint }, command: Command) => {
      const { client, json, call } = sessionOf(command);
      const onNotice = (message: string) => void process.stderr.write(`filetools: ${message}\n`);
      for await (const entry of client.workspace(workspace).watch({ ...call, globs, since: options.since, onNotice })) {
        if (json) await printJsonLine(jsonOf(JournalEntrySchema, entry));
        else await writeOut(lineOf(entry));
      }
    });
}

function cursorOf(value: string): bigint {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError("expected a cursor: a whole number");
  return BigInt(value);
}

/** "12 2026-12-06T21:00:00.123Z moved /a -> /b (Move, token ci, run run-…)". */
function lineOf(entry: JournalEntry): string {
  const time = entry.time ? timestampDate(entry.time).toISOString() : "";
  const kind = JournalKind[entry.kind]!.toLowerCase().replace("_", "-");
  const what = entry.fromPath ? `${entry.fromPath} -> ${entry.path}` : entry.path;
  const actor = entry.actor;
  const who = entry.outside
    ? "outside"
    : [actor?.rpc, actor?.tokenName && `token ${actor.tokenName}`, actor?.runId && `run ${actor.runId}`, actor?.callId && `call ${actor.callId}`].filter(Boolean).join(", ");
  return `${entry.cursor} ${time} ${kind} ${what} (${who})\n`;
}
