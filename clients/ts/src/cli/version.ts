// version: this command line's release and the daemon's (GetVersion).
import type { Command } from "commander";
import { GetVersionResponseSchema } from "@filetools/proto/filetools/v1/daemon_pb.js";
import { VERSION } from "../version.js";
import { jsonOf, printJson, writeOut } from "./output.js";
import { sessionOf } from "./session.js";

export function addVersionCommand(program: Command): void {
  program
    .command("version")
    .description("Print this command line's version and the daemon's (--version prints only this command line's, without a call)")
    .action(async (_options, command: Command) => {
      const { client, json, call } = sessionOf(command);
      const daemon = await client.daemon.getVersion({}, call);
      if (json) return printJson({ client: VERSION, daemon: jsonOf(GetVersionResponseSchema, daemon) });
      await writeOut(`filetools ${VERSION}\nfiletoolsd ${daemon.version} (${daemon.api}, ${daemon.runtime})\n`);
    });
}
