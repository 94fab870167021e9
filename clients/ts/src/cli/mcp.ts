// mcp: serve one workspace to an MCP host (Claude Code and Desktop, Cursor, …).
import { createRequire } from "node:module";
import { InvalidArgumentError, Option, type Command } from "commander";
import { serverFilesystemToolSet } from "../mcp/server-filesystem.js";
import { catalogueToolSet, createMcpServer, serveHttp, serveStdio } from "../mcp/server.js";
import { addResourceSubscriptions, withWaitForChange } from "../mcp/watch.js";
import type { FileToolsClient } from "../client.js";
import { FileToolsError } from "../errors.js";
import { ToolDispatcher } from "../tools/dispatcher.js";
import { interrupt, sessionOf } from "./session.js";

const { version } = createRequire(import.meta.url)("../../package.json") as { version: string };

interface McpOptions {
  workspace: string;
  readOnly?: boolean;
  profile: "filetools" | "server-filesystem";
  http?: { host: string; port: number };
}

export function addMcpCommand(program: Command): void {
  program
    .command("mcp")
    .summary("serve a workspace's file tools to an MCP host")
    .description(
      "Serve the file tools of one workspace as an MCP server: over stdio (what an MCP host starts), or over Streamable HTTP at http://HOST:PORT/mcp with --http. Uses the global --address and --token to reach the daemon.",
    )
    .requiredOption("--workspace <id>", "the workspace the tools act on")
    .option("--read-only", "offer only the tools that change nothing (read, list, search, stat, changes, list_snapshots)")
    .addOption(
      new Option("--profile <name>", "filetools: the catalogue's tools; server-filesystem: the tool names and arguments of @modelcontextprotocol/server-filesystem")
        .choices(["filetools", "server-filesystem"])
        .default("filetools"),
    )
    .option("--http <host:port>", "serve Streamable HTTP instead of stdio (port 0: any free port)", hostPort)
    .action(async (options: McpOptions, command: Command) => {
      const { client } = sessionOf(command);
      await checkWorkspace(client, options.workspace);
      const workspace = client.workspace(options.workspace);
      const native = options.profile === "filetools";
      const toolSet = native
        ? withWaitForChange(catalogueToolSet(new ToolDispatcher(workspace, { readOnly: options.readOnly })), workspace)
        : serverFilesystemToolSet(workspace, { readOnly: options.readOnly });
      const newServer = () => {
        const server = createMcpServer(toolSet, { version, workspace: options.workspace });
        // Over stdio the server lives as long as its session; over stateless HTTP a subscription has none to tell.
        if (native) addResourceSubscriptions(server, workspace);
        return server;
      };
      if (!options.http) return serveStdio(newServer);
      const served = await serveHttp(newServer, options.http.host, options.http.port);
      // stdout is not the MCP channel here, but keep it for data: the address goes to stderr.
      process.stderr.write(`filetools mcp listening on ${served.url}\n`);
      await new Promise((resolve) => interrupt.signal.addEventListener("abort", resolve, { once: true }));
      await served.close();
    });
}

/**
 * A workspace that does not exist (or that the token may not use) stops the
 * command before it serves: a host shows the server as failed, rather than
 * listing tools whose every call fails. A daemon not reachable yet does not:
 * it may come up after the host starts us (each call then says so).
 */
async function checkWorkspace(client: FileToolsClient, id: string): Promise<void> {
  try {
    await client.workspaces.getWorkspace({ workspace: id });
  } catch (error) {
    if (error instanceof FileToolsError && (error.codeName === "UNAVAILABLE" || error.codeName === "DEADLINE_EXCEEDED")) {
      process.stderr.write(`filetools mcp: the daemon is not reachable yet (${error.message}); serving anyway\n`);
      return;
    }
    throw error;
  }
}

function hostPort(value: string): { host: string; port: number } {
  const match = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(value);
  const port = Number(match?.[2]);
  if (!match || !(port >= 0 && port <= 65535)) throw new InvalidArgumentError("expected HOST:PORT, e.g. 127.0.0.1:8808");
  return { host: match[1]!.replace(/^\[|\]$/g, ""), port };
}
