// MCP servers over stdio for the benchmarks, driven by a minimal JSON-RPC
// client (newline-delimited messages, MCP's stdio transport): any server
// command (`filetools mcp`, in either profile), and the MCP filesystem server
// (@modelcontextprotocol/server-filesystem) as the reference, installed at
// pinned versions into a cache directory outside the repository.
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
  result?: { content?: Array<{ type: string; text?: string }>; isError?: boolean; structuredContent?: Record<string, unknown> };
  error?: { code: number; message: string };
}

/** A tool call's outcome: the first text block, whether it was an error, and the structured content. */
export interface ToolCall {
  text: string;
  isError: boolean;
  structured?: Record<string, unknown>;
}

/** One MCP server process on stdio, initialized and ready for tool calls. */
export class McpStdioServer {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (response: Response) => void; reject: (error: Error) => void }>();
  private exit: string | undefined;

  private constructor(private readonly proc: ChildProcess) {
    proc.stdin!.on("error", () => {}); // EPIPE after the process died: its exit says so
    createInterface({ input: proc.stdout!, crlfDelay: Infinity }).on("line", (line) => {
      const response = JSON.parse(line) as Response;
      if (response.id === undefined) return; // a notification (e.g. a log message)
      this.waiting.get(response.id)?.resolve(response);
      this.waiting.delete(response.id);
    });
    proc.on("exit", (code, signal) => {
      this.exit = signal ? `killed by ${signal}` : `exited ${code}`;
      for (const { reject } of this.waiting.values()) reject(new Error(`the MCP server ${this.exit}`));
      this.waiting.clear();
    });
  }

  /** Starts `command args…` (stderr discarded) and runs MCP's initialize handshake. */
  static async start(command: string, args: string[]): Promise<McpStdioServer> {
    const proc = spawn(command, args, { stdio: ["pipe", "pipe", "ignore"] });
    const server = new McpStdioServer(proc);
    await server.request("initialize", {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: "filetools-bench", version: "1" },
    });
    server.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    return server;
  }

  /** The reference filesystem server (its entry point from ensureMcpServer) allowed into `root`. */
  static filesystem(entryPoint: string, root: string): Promise<McpStdioServer> {
    return McpStdioServer.start(process.execPath, [entryPoint, root]);
  }

  get pid(): number {
    return this.proc.pid!;
  }

  /** Why the process ended, or undefined while it runs. */
  get exited(): string | undefined {
    return this.exit;
  }

  /** Calls a tool; rejects on a protocol error, the process's exit, or after `timeoutMs`. */
  async callTool(name: string, args: object, timeoutMs?: number): Promise<ToolCall> {
    const response = await this.request("tools/call", { name, arguments: args }, timeoutMs);
    const text = response.result?.content?.[0]?.text;
    if (text === undefined) throw new Error(`${name}: no text in ${JSON.stringify(response).slice(0, 500)}`);
    return { text, isError: response.result?.isError === true, structured: response.result?.structuredContent };
  }

  /** The text of a `read_text_file` call (the whole file); a tool error throws. */
  async readTextFile(file: string): Promise<string> {
    const result = await this.callTool("read_text_file", { path: file });
    if (result.isError) throw new Error(`read_text_file ${file}: ${result.text}`);
    return result.text;
  }

  /**
   * Closes its stdin (an MCP server exits then, so that e.g. `node --cpu-prof`
   * writes its profile), and SIGTERM if it is still running 2 s later.
   */
  async stop(): Promise<void> {
    if (this.exit) return;
    const exited = new Promise((resolve) => this.proc.once("exit", resolve));
    this.proc.stdin!.end();
    const timer = setTimeout(() => this.proc.kill("SIGTERM"), 2000);
    await exited;
    clearTimeout(timer);
  }

  private request(method: string, params: object, timeoutMs?: number): Promise<Response> {
    if (this.exit) return Promise.reject(new Error(`the MCP server ${this.exit}`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = timeoutMs === undefined ? undefined : setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`${method}: no answer in ${timeoutMs / 1000} s`));
      }, timeoutMs);
      const settle = <T>(f: (v: T) => void) => (v: T) => {
        clearTimeout(timer);
        f(v);
      };
      this.waiting.set(id, {
        resolve: settle((response: Response) => (response.error ? reject(new Error(`${method}: ${response.error.message}`)) : resolve(response))),
        reject: settle(reject),
      });
      this.send({ jsonrpc: "2.0", id, method, params });
    });
  }

  private send(message: object): void {
    this.proc.stdin!.write(`${JSON.stringify(message)}\n`);
  }
}
