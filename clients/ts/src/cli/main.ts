#!/usr/bin/env node
// The `filetools` command line: every RPC of filetoolsd as a command, text for
// people by default, JSON for scripts, and exit codes that tell failures apart.
import { Command, InvalidArgumentError } from "commander";
import { EXIT_CODES_HELP, ExitCode, reportError, reportInterrupted } from "./errors.js";
import { addFileCommands } from "./files.js";
import { addGrepCommand } from "./grep.js";
import { addMcpCommand } from "./mcp.js";
import { addRunCommands } from "./runs.js";
import { closeSession, DEFAULT_ADDRESS, interrupt, sessionAddress } from "./session.js";
import { addSnapshotCommands } from "./snapshots.js";
import { addTransferCommands } from "./transfer.js";
import { addWorkspaceCommands } from "./workspaces.js";
import { addWatchCommand } from "./watch.js";
import { VERSION } from "../version.js";
import { addVersionCommand } from "./version.js";

// grpc-js gives TLS an IP address as the server name, which Node flags with a
// deprecation warning (DEP0123) on every connection to 127.0.0.1: noise for a
// command's user, who can do nothing about it.
process.noDeprecation = true;


const HELP_AFTER = `
Environment:
  FILETOOLS_ADDRESS  the daemon's address when --address is not given (default ${DEFAULT_ADDRESS})
  FILETOOLS_TOKEN    the bearer token when --token is not given
  FILETOOLS_CA, FILETOOLS_CLIENT_CERT, FILETOOLS_CLIENT_KEY
                     PEM files when --ca, --client-cert, --client-key are not given

Output:
  Text for people by default; remarks (paging hints, truncation) go to stderr.
  --json prints one JSON document in the proto3 JSON mapping (camelCase names,
  64-bit integers as strings, enums by name, RFC 3339 times), except grep and
  runs changes, which print JSON Lines: one object per result or change.
  Progress bars (upload, download, import, snapshots export) are drawn on
  stderr, and only when it is a terminal.

${EXIT_CODES_HELP}

Examples:
  filetools workspaces create demo
  echo "hello" | filetools write demo notes/a.txt -
  filetools read demo notes/a.txt --start 100 --count 50
  filetools grep demo "TODO" -g "*.ts" --json | jq -r '.match.path // empty'`;

const program = new Command("filetools")
  .description("Command line for filetoolsd: safe file tools, runs and snapshots inside workspaces.")
  .version(VERSION)
  .option("--address <host:port>", `daemon address, or unix:///path/to/socket (default: $FILETOOLS_ADDRESS, else ${DEFAULT_ADDRESS})`)
  .option("--token <token>", "bearer token for a daemon that requires one (default: $FILETOOLS_TOKEN)")
  .option("--tls", "connect with TLS, trusting the system's certificate authorities")
  .option("--ca <file>", "PEM of the CA that signed the daemon's certificate; implies TLS (default: $FILETOOLS_CA)")
  .option("--client-cert <file>", "PEM client certificate for mutual TLS, with --client-key (default: $FILETOOLS_CLIENT_CERT)")
  .option("--client-key <file>", "PEM private key of --client-cert (default: $FILETOOLS_CLIENT_KEY)")
  .option("--json", "print JSON for scripts instead of text")
  .option("--timeout <seconds>", "deadline of each call in seconds (DEADLINE_EXCEEDED, exit 5, when it passes)", seconds)
  // Usage errors exit 2 (not commander's 1) and read like every other error.
  .exitOverride()
  .configureOutput({ outputError: (text, write) => write(`filetools: ${text.replace(/^error: /, "").trimEnd()} (USAGE)\n`) })
  .showHelpAfterError("(add --help for usage)")
  .addHelpText("after", HELP_AFTER);

addWorkspaceCommands(program);
addFileCommands(program);
addGrepCommand(program);
addTransferCommands(program);
addRunCommands(program);
addSnapshotCommands(program);
addWatchCommand(program);
addMcpCommand(program);
addVersionCommand(program);

process.once("SIGINT", () => {
  interrupt.abort(); // cancels the call in flight
  process.stdin.destroy(); // and ends a wait for standard input
});
// `filetools read … | head`: the reader left, which is not a failure.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error;
  interrupt.abort();
  process.exit(ExitCode.ok);
});

try {
  await program.parseAsync();
} catch (error) {
  process.exitCode = interrupt.signal.aborted ? reportInterrupted() : reportError(error, sessionAddress());
} finally {
  closeSession();
}

function seconds(value: string): number {
  const number = Number(value);
  if (!(number > 0)) throw new InvalidArgumentError("expected a number of seconds above 0");
  return number;
}
