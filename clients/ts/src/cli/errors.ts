// How a failure ends the command: one line on stderr and an exit code a script
// can branch on.
import { status as Code } from "@grpc/grpc-js";
import { CommanderError } from "commander";
import { FileToolsError } from "../client.js";
import { inCliTerms } from "./terms.js";

export const ExitCode = {
  ok: 0,
  failure: 1,
  usage: 2,
  notFound: 3,
  denied: 4,
  unavailable: 5,
  interrupted: 130,
} as const;

export const EXIT_CODES_HELP = `Exit codes:
  0    success
  1    any other failure (e.g. ALREADY_EXISTS, CONTENT_CHANGED, OLD_TEXT_NOT_FOUND, UNSAFE_ARCHIVE)
  2    usage: a bad flag or argument, or the daemon said INVALID_ARGUMENT (INVALID_PATH, a bad regex, ...)
  3    not found: a file, workspace, run or snapshot (NOT_FOUND), or a local file
  4    denied: PERMISSION_DENIED (e.g. PATH_ESCAPES_WORKSPACE) or UNAUTHENTICATED (missing or unknown --token)
  5    unavailable: the daemon cannot be reached or its store failed (UNAVAILABLE), or --timeout passed
  130  interrupted (Ctrl-C); the call is cancelled
Errors are printed to stderr as "filetools: <message> (<REASON>)", followed by the
reason's details (e.g. current_version, closest_line) as indented "key: value" lines.`;

/** Ctrl-C: whatever failed after it, the command was interrupted. */
export function reportInterrupted(): number {
  process.stderr.write("filetools: interrupted; the call was cancelled (CANCELLED)\n");
  return ExitCode.interrupted;
}

/** A mistake in the command line found before any call is made. */
export class UsageError extends Error {}

/** Prints `error` to stderr and returns the exit code it stands for; `address` is the daemon's, once known. */
export function reportError(error: unknown, address: string | undefined): number {
  if (error instanceof CommanderError) return error.exitCode === 0 ? ExitCode.ok : ExitCode.usage; // commander has printed it
  if (error instanceof FileToolsError) {
    const details = Object.entries(error.metadata).map(([key, value]) => `\n  ${key}: ${value}`);
    // Without a reason, UNAVAILABLE comes from grpc-js, not the daemon: it could not be reached.
    const message =
      error.code === Code.UNAVAILABLE && !error.reason
        ? `cannot reach filetoolsd at ${address}: ${error.message.replace(/\s*Resolution note:\s*$/, "")}`
        : inCliTerms(error.message);
    process.stderr.write(`filetools: ${message} (${error.reason || error.codeName})${details.join("")}\n`);
    return exitCodeOf(error);
  }
  if (error instanceof UsageError) {
    process.stderr.write(`filetools: ${error.message} (USAGE)\n`);
    return ExitCode.usage;
  }
  const errno = systemErrorCode(error);
  if (errno) {
    // Node's message already starts with the code ("ENOENT: no such file ..."): name it once, at the end.
    const message = (error as Error).message.replace(`${errno}: `, "");
    process.stderr.write(`filetools: ${message} (${errno})\n`);
    return errno === "ENOENT" ? ExitCode.notFound : errno === "EACCES" || errno === "EPERM" ? ExitCode.denied : ExitCode.failure;
  }
  process.stderr.write(`filetools: ${error instanceof Error ? error.message : String(error)}\n`);
  return ExitCode.failure;
}

function exitCodeOf(error: FileToolsError): number {
  switch (error.code) {
    case Code.INVALID_ARGUMENT:
      return ExitCode.usage;
    case Code.NOT_FOUND:
      return ExitCode.notFound;
    case Code.PERMISSION_DENIED:
    case Code.UNAUTHENTICATED:
      return ExitCode.denied;
    case Code.UNAVAILABLE:
    case Code.DEADLINE_EXCEEDED:
      return ExitCode.unavailable;
    default:
      return ExitCode.failure;
  }
}

function systemErrorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^E[A-Z]+$/.test(code) ? code : undefined;
}
