// The MCP filesystem server (@modelcontextprotocol/server-filesystem) as the
// reference for small reads: installed at pinned versions into a cache
// directory outside the repository, started over stdio, and driven by a
// minimal JSON-RPC client (newline-delimited messages, MCP's stdio transport).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";

export const MCP_SERVER = "@modelcontextprotocol/server-filesystem@2026.8.31";
/** The server takes the SDK as ^1.30.0: pinned here so that every run gets the same one. */
export const MCP_SDK = "@modelcontextprotocol/sdk@1.32.2";
const PROTOCOL_VERSION = "2025-06-18";

/** Installs the pinned server and SDK into `prefix` unless they are there; returns the server's entry point. */
export function ensureMcpServer(prefix: string, log: (line: string) => void): string {
  const packageDir = path.join(prefix, "node_modules", "@modelcontextprotocol", "server-filesystem");
  const installed = (name: string) => {
    const file = path.join(prefix, "node_modules", name, "package.json");
    return existsSync(file) ? `${name}@${JSON.parse(readFileSync(file, "utf8")).version}` : undefined;
  };
  if (installed("@modelcontextprotocol/server-filesystem") !== MCP_SERVER || installed("@modelcontextprotocol/sdk") !== MCP_SDK) {
    log(`installing ${MCP_SERVER} and ${MCP_SDK} into ${prefix} …`);
    const npm = spawnSync("npm", ["install", "--prefix", prefix, "--save-exact", "--no-audit", "--no-fund", MCP_SERVER, MCP_SDK], {
      stdio: ["ignore", "ignore", "inherit"],
    });
    if (npm.status !== 0) throw new Error(`npm install of ${MCP_SERVER} failed (exit ${npm.status})`);
  }
  return path.join(packageDir, "dist", "index.js");
}

interface Response {
  id?: number;
  result?: { content?: Array<{ type: string; text?: string }>; isError?: boolean };
  error?: { code: number; message: string };
}

/** One MCP filesystem server allowed into `root`, initialized and ready for tool calls. */
export class McpFilesystem {
  private nextId = 1;
  private readonly waiting = new Map<number, (response: Response) => void>();

  private constructor(private readonly proc: ChildProcess) {
    createInterface({ input: proc.stdout! }).on("line", (line) => {
      const response = JSON.parse(line) as Response;
      if (response.id === undefined) return; // a notification (e.g. a log message)
      this.waiting.get(response.id)?.(response);
      this.waiting.delete(response.id);
    });
  }

  static async start(entryPoint: string, root: string): Promise<McpFilesystem> {
    const proc = spawn(process.execPath, [entryPoint, root], { stdio: ["pipe", "pipe", "ignore"] });
    const server = new McpFilesystem(proc);
    await server.request("initialize", {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: "filetools-bench", version: "1" },
    });
    server.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    return server;
  }

  /** The text of a `read_text_file` call (the whole file). */
  async readTextFile(file: string): Promise<string> {
    const response = await this.request("tools/call", { name: "read_text_file", arguments: { path: file } });
    const text = response.result?.content?.[0]?.text;
    if (response.result?.isError || text === undefined) throw new Error(`read_text_file ${file}: ${JSON.stringify(response)}`);
    return text;
  }

  stop(): void {
    this.proc.kill("SIGTERM");
  }

  private request(method: string, params: object): Promise<Response> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, (response) => (response.error ? reject(new Error(`${method}: ${response.error.message}`)) : resolve(response)));
      this.send({ jsonrpc: "2.0", id, method, params });
    });
  }

  private send(message: object): void {
    this.proc.stdin!.write(`${JSON.stringify(message)}\n`);
  }
}
