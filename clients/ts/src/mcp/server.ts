// `filetools mcp`: one workspace of a daemon as an MCP server (the official
// SDK's low-level Server), over stdio or Streamable HTTP. The tools are the
// catalogue's, through the ToolDispatcher: the texts are the dispatcher's,
// errors are tool results with isError (never protocol errors), and an MCP
// cancellation aborts the gRPC call. A call that moves bytes (export_archive,
// import_archive) and carries a progressToken gets notifications/progress.
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type ProgressToken, type Tool } from "@modelcontextprotocol/sdk/types.js";
import type { OnProgress } from "../byte-streams.js";
import type { ToolDispatcher, ToolResult } from "../tools/dispatcher.js";

export interface McpServerInfo {
  /** The package's version, announced to the client. */
  version: string;
  /** The workspace served, named in the instructions the client may show the model. */
  workspace: string;
}

/** A tool set an MCP server offers: the catalogue's own, or a profile shaped like another server's. */
export interface McpToolSet {
  tools(): Tool[];
  /** `onProgress` is there when the client asked for progress (a progressToken); a tool that moves bytes reports them to it. */
  call(name: string, args: Record<string, unknown>, signal: AbortSignal, onProgress?: OnProgress): Promise<CallToolResult>;
}

/** At most one progress notification per this many milliseconds (plus the first and the last). */
export const PROGRESS_INTERVAL_MS = 100;

/** The catalogue's tools, as MCP tools with annotations, output schemas and structured content. */
export function catalogueToolSet(dispatcher: ToolDispatcher): McpToolSet {
  return {
    tools: () =>
      dispatcher.definitions().map((tool) => ({
        name: tool.name,
        title: tool.title,
        description: tool.description,
        inputSchema: tool.input_schema as Tool["inputSchema"],
        outputSchema: tool.output_schema as Tool["outputSchema"],
        annotations: { title: tool.title, ...tool.annotations },
      })),
    call: async (name, args, signal, onProgress) => asMcpResult(await dispatcher.call(name, args, { signal, onProgress }), name),
  };
}

/** Fields of a tool's structured result that MCP leaves out: the text content carries them already (a read's window, numbered), and a window would go out twice. */
const CARRIED_BY_TEXT: Record<string, string> = { read: "text" };

/** A dispatcher result as an MCP tool result; a failure carries no structuredContent (the client would check it against the output schema). */
export function asMcpResult(result: ToolResult, tool: string): CallToolResult {
  const content: CallToolResult["content"] = [{ type: "text" as const, text: result.text }, ...(result.images ?? [])];
  if (result.isError) return { content, isError: true };
  const carried = CARRIED_BY_TEXT[tool];
  const structuredContent = carried === undefined ? result.structured : Object.fromEntries(Object.entries(result.structured).filter(([key]) => key !== carried));
  return { content, structuredContent };
}

/** An MCP server for one workspace; connect it to a transport. */
export function createMcpServer(toolSet: McpToolSet, info: McpServerInfo): Server {
  const server = new Server(
    { name: "filetools", version: info.version },
    {
      capabilities: { tools: {} },
      instructions: `File tools for the workspace "${info.workspace}" of a filetools daemon. Paths are workspace paths: "/" is the workspace root, and nothing outside it can be reached.`,
    },
  );
  const tools = toolSet.tools();
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  // tools/call, the one request of every turn, is served by the fallback
  // handler rather than setRequestHandler: for that the SDK's Server would
  // check each request against its Zod schema twice and copy each result
  // through another (a tenth of the MCP layer's time per call, measured).
  // The arguments are the tool's to validate, against the catalogue's JSON
  // Schema; the results are built here, to the spec's shape.
  server.fallbackRequestHandler = async (request, extra) => {
    if (request.method !== "tools/call") throw new McpError(ErrorCode.MethodNotFound, "Method not found");
    const params = (request.params ?? {}) as { name?: unknown; arguments?: unknown; _meta?: { progressToken?: ProgressToken } };
    if (typeof params.name !== "string") throw new McpError(ErrorCode.InvalidParams, "Invalid tools/call request: params.name must be a string");
    const args = params.arguments ?? {};
    if (typeof args !== "object" || args === null || Array.isArray(args)) throw new McpError(ErrorCode.InvalidParams, "Invalid tools/call request: params.arguments must be an object");
    const token = params._meta?.progressToken;
    const onProgress = token === undefined ? undefined : throttledProgress((progress) => extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, ...progress } }));
    return toolSet.call(params.name, args as Record<string, unknown>, extra.signal, onProgress);
  };
  return server;
}

/**
 * Progress as MCP notifications, throttled: the first, then at most one per
 * PROGRESS_INTERVAL_MS, and the last (bytes reaching the total) always, so a
 * client sees the transfer start and end however fast it is. A notification
 * that cannot be sent (the client went away) is dropped: the call's own
 * cancellation deals with that.
 */
export function throttledProgress(send: (params: { progress: number; total?: number }) => Promise<void>): OnProgress {
  let sentAt: number | undefined;
  return ({ bytes, totalBytes }) => {
    const now = performance.now();
    const last = totalBytes !== undefined && bytes >= totalBytes;
    if (!last && sentAt !== undefined && now - sentAt < PROGRESS_INTERVAL_MS) return;
    sentAt = now;
    send(totalBytes === undefined ? { progress: bytes } : { progress: bytes, total: totalBytes }).catch(() => {});
  };
}

/** Serves over standard input and output until the client closes them. */
export async function serveStdio(newServer: () => Server): Promise<void> {
  const server = newServer();
  const previous = server.onclose;
  const closed = new Promise<void>(
    (resolve) =>
      (server.onclose = () => {
        previous?.();
        resolve();
      }),
  );
  await server.connect(new StdioServerTransport());
  await closed;
}

/**
 * Serves Streamable HTTP at http://HOST:PORT/mcp, stateless: each POST gets a
 * fresh server and transport, so no session state outlives a request. Only
 * requests whose Host header names this address are served (DNS rebinding).
 * Resolves with the address once listening.
 */
export async function serveHttp(newServer: () => Server, host: string, port: number): Promise<{ url: string; close(): Promise<void> }> {
  const http = createHttpServer((req, res) => void handle(req, res));
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.url?.split("?")[0] !== "/mcp") return void res.writeHead(404).end("not found: the MCP endpoint is /mcp\n");
    if (req.method !== "POST") return void res.writeHead(405, { allow: "POST" }).end("method not allowed: this server is stateless, POST only\n");
    const address = http.address();
    const listening = typeof address === "object" && address ? `${host.includes(":") ? `[${host}]` : host}:${address.port}` : "";
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableDnsRebindingProtection: true, allowedHosts: [listening] });
    const server = newServer();
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res);
    } catch {
      if (!res.headersSent) res.writeHead(500).end();
    }
  }
  await new Promise<void>((resolve, reject) => http.once("error", reject).listen(port, host, resolve));
  const address = http.address();
  const bound = typeof address === "object" && address ? address.port : port;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${bound}/mcp`,
    close: () => new Promise((resolve) => http.close(() => resolve())),
  };
}
