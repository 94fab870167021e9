// What every command needs from the global options: a client for the daemon,
// the options of each call, and whether to print JSON.
import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { connect, type CallOptions, type ConnectOptions, type FileToolsClient } from "../client.js";

export const DEFAULT_ADDRESS = "127.0.0.1:7447";

interface GlobalOptions {
  address?: string;
  token?: string;
  json?: boolean;
  timeout?: number;
  tls?: boolean;
  ca?: string;
  clientCert?: string;
  clientKey?: string;
}

export interface Session {
  /** Where the daemon is, as given or defaulted. */
  address: string;
  client: FileToolsClient;
  /** --json: print machine-readable output instead of text for people. */
  json: boolean;
  /** For every call: the --timeout deadline and the Ctrl-C signal. */
  call: CallOptions;
}

/** Aborted on Ctrl-C: the call in flight is cancelled, so the daemon stops its work. */
export const interrupt = new AbortController();

let current: Session | undefined;

/** The session of this process (one command a process), connected on first use. */
export function sessionOf(command: Command): Session {
  if (current) return current;
  const options = command.optsWithGlobals<GlobalOptions>();
  const address = options.address ?? process.env.FILETOOLS_ADDRESS ?? DEFAULT_ADDRESS;
  const token = options.token ?? process.env.FILETOOLS_TOKEN;
  const call: CallOptions = { signal: interrupt.signal };
  if (options.timeout !== undefined) call.deadline = options.timeout * 1000;
  current = { address, client: connect(address, { token: token || undefined, tls: tlsOf(options) }), json: options.json ?? false, call };
  return current;
}

/** TLS when asked for with --tls, or implied by a CA or a client certificate. */
function tlsOf(options: GlobalOptions): ConnectOptions["tls"] {
  const pem = (file: string | undefined) => (file ? readFileSync(file) : undefined);
  const ca = pem(options.ca ?? process.env.FILETOOLS_CA);
  const cert = pem(options.clientCert ?? process.env.FILETOOLS_CLIENT_CERT);
  const key = pem(options.clientKey ?? process.env.FILETOOLS_CLIENT_KEY);
  return ca || cert || key ? { ca, cert, key } : (options.tls ?? false);
}

/** The daemon's address, once a command has connected. */
export function sessionAddress(): string | undefined {
  return current?.address;
}

export function closeSession(): void {
  current?.client.close();
}
