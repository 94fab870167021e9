// MCP's two ways to learn of changes, both over the workspace's journal (the
// daemon's Watch): resource subscriptions (resources/subscribe on a file's or
// directory's URI → notifications/resources/updated when it changes), and the
// wait_for_change tool for models whose host cannot subscribe: it blocks until
// a matching change or its timeout. MCP-only (the issue asks for them there),
// so they live here rather than in the catalogue every client's dispatcher
// implements; the native profile offers them, the server-filesystem one not.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type CallToolResult,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { JournalKind, type JournalEntry } from "@filetools/proto/filetools/v1/journal_pb.js";
import { FileToolsError } from "../errors.js";
import type { WorkspaceClient } from "../workspace.js";
import type { McpToolSet } from "./server.js";

const DEFAULT_TIMEOUT_S = 30;
const MAX_TIMEOUT_S = 600;
/** After the first change, what else arrives this soon goes in the same answer (a save of several files). */
const GATHER_MS = 100;
const GATHER_MAX = 50;

export const WAIT_FOR_CHANGE_TOOL: Tool = {
  name: "wait_for_change",
  title: "Wait for a change",
  description:
    "Wait until a file or directory of the workspace changes (written, edited, deleted, moved or made, by any agent or program), or until the timeout. " +
    "Returns the changes with their cursor: pass the last one as since to wait for the next change without missing any.",
  inputSchema: {
    type: "object",
    properties: {
      globs: { type: "array", items: { type: "string", minLength: 1 }, description: 'Only changes to matching paths, e.g. ["src/**", "*.md"]. Default: any.' },
      since: { type: "integer", minimum: 0, description: "A cursor from an earlier answer: changes after it count even if they happened before this call. Default: only changes from now on." },
      timeout_seconds: { type: "integer", minimum: 1, maximum: MAX_TIMEOUT_S, description: `How long to wait. Default ${DEFAULT_TIMEOUT_S}.` },
    },
    additionalProperties: false,
  },
  outputSchema: {
    type: "object",
    properties: {
      changed: { type: "boolean" },
      cursor: { type: "integer" },
      changes: {
        type: "array",
        items: {
          type: "object",
          properties: { cursor: { type: "integer" }, kind: { type: "string" }, path: { type: "string" }, from_path: { type: "string" }, outside: { type: "boolean" } },
          required: ["cursor", "kind", "path", "from_path", "outside"],
        },
      },
    },
    required: ["changed", "changes"],
  },
  annotations: { title: "Wait for a change", readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: false },
};

/** `inner` plus wait_for_change. */
export function withWaitForChange(inner: McpToolSet, workspace: WorkspaceClient): McpToolSet {
  return {
    tools: () => [...inner.tools(), WAIT_FOR_CHANGE_TOOL],
    call: (name, args, signal, onProgress) => (name === WAIT_FOR_CHANGE_TOOL.name ? waitForChange(workspace, args, signal) : inner.call(name, args, signal, onProgress)),
  };
}

function kindName(entry: JournalEntry): string {
  return JournalKind[entry.kind]!.toLowerCase().replace("_", " ");
}

async function waitForChange(workspace: WorkspaceClient, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult> {
  const problem = argumentProblem(args);
  if (problem) return { content: [{ type: "text", text: `Error (INVALID_ARGUMENT): invalid arguments for wait_for_change: ${problem}.` }], isError: true };
  const globs = (args.globs as string[] | undefined) ?? [];
  const timeout = (args.timeout_seconds as number | undefined) ?? DEFAULT_TIMEOUT_S;
  const controller = new AbortController();
  const stop = () => controller.abort();
  signal.addEventListener("abort", stop, { once: true });
  const timer = setTimeout(stop, timeout * 1000);
  const changes: JournalEntry[] = [];
  let cursor = typeof args.since === "number" ? BigInt(args.since) : undefined;
  try {
    const entries = workspace.watch({ globs, since: cursor, signal: controller.signal, onLive: (at) => (cursor ??= at) });
    for await (const entry of entries) {
      changes.push(entry);
      cursor = entry.cursor;
      if (changes.length === 1) setTimeout(stop, GATHER_MS);
      if (changes.length >= GATHER_MAX) break;
    }
  } catch (error) {
    if (signal.aborted) throw error;
    if (!controller.signal.aborted) {
      const text = error instanceof FileToolsError ? `Error (${error.reason || error.codeName}): ${error.message}.` : `Error (INTERNAL): ${String(error)}.`;
      return { content: [{ type: "text", text }], isError: true };
    }
  } finally {
    clearTimeout(timer);
    signal.removeEventListener("abort", stop);
  }
  const where = globs.length > 0 ? ` matching ${globs.join(", ")}` : "";
  const next = cursor === undefined ? "" : ` Call again with since ${cursor} to wait for the next one.`;
  const text =
    changes.length === 0
      ? `No change${where} within ${timeout} s.${cursor === undefined ? "" : ` Call again with since ${cursor} to keep waiting without missing any.`}`
      : changes.map((e) => `${e.cursor}\t${kindName(e)}\t${e.fromPath ? `${e.fromPath} -> ` : ""}${e.path}${e.outside ? "\t(outside)" : ""}`).join("\n") + `\n${next.trim()}`;
  const structured = {
    changed: changes.length > 0,
    ...(cursor === undefined ? {} : { cursor: Number(cursor) }),
    changes: changes.map((e) => ({ cursor: Number(e.cursor), kind: kindName(e), path: e.path, from_path: e.fromPath, outside: e.outside })),
  };
  return { content: [{ type: "text", text }], structuredContent: structured };
}

function argumentProblem(args: Record<string, unknown>): string | undefined {
  for (const key of Object.keys(args)) if (!["globs", "since", "timeout_seconds"].includes(key) && args[key] !== null) return `unknown argument ${key}`;
  const { globs, since, timeout_seconds: timeout } = args;
  if (globs != null && (!Array.isArray(globs) || globs.some((g) => typeof g !== "string" || g === ""))) return "globs must be a list of non-empty strings";
  if (since != null && !(Number.isInteger(since) && (since as number) >= 0)) return "since must be a whole number (a cursor)";
  if (timeout != null && !(Number.isInteger(timeout) && (timeout as number) >= 1 && (timeout as number) <= MAX_TIMEOUT_S)) return `timeout_seconds must be a whole number from 1 to ${MAX_TIMEOUT_S}`;
  for (const key of ["globs", "since", "timeout_seconds"]) if (args[key] === null) delete args[key];
  return undefined;
}

/** The URI of a workspace path: filetools://WORKSPACE/PATH. */
export function resourceUri(workspace: string, path: string): string {
  return `filetools://${workspace}${path.split("/").map(encodeURIComponent).join("/")}`;
}

/**
 * Resource subscriptions on `server` (stdio: one session per server): a
 * subscribed URI names a file (updated when it changes) or a directory
 * (when anything under it does). One Watch serves them all, opened with the
 * first subscription and closed with the last (or the server).
 */
export function addResourceSubscriptions(server: Server, workspace: WorkspaceClient): void {
  const prefix = `filetools://${workspace.id}/`;
  const subscribed = new Set<string>();
  let watching: AbortController | undefined;
  const pathOf = (uri: string): string => {
    if (!uri.startsWith(prefix)) throw new McpError(ErrorCode.InvalidParams, `not a resource of this server: URIs are ${prefix}PATH`);
    return "/" + uri.slice(prefix.length).split("/").map(decodeURIComponent).filter(Boolean).join("/");
  };
  const follow = async (controller: AbortController, live: () => void) => {
    try {
      for await (const entry of workspace.watch({ signal: controller.signal, onLive: live })) {
        for (const uri of subscribed) {
          const path = pathOf(uri);
          const touches = (p: string) => p !== "" && (p === path || p.startsWith(path === "/" ? "/" : `${path}/`));
          if (touches(entry.path) || touches(entry.fromPath)) await server.sendResourceUpdated({ uri }).catch(() => undefined);
        }
      }
    } catch {
      // The watch ended (the daemon went away past the client's retries, or the server closed): nothing more to tell.
    } finally {
      live(); // a subscription waiting for a watch that failed at once
    }
  };
  server.registerCapabilities({ resources: { subscribe: true } });
  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: [] }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [{ uriTemplate: `${prefix}{+path}`, name: "workspace file", description: `A file of workspace ${workspace.id}; subscribe to a file or directory to hear of its changes.` }],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const path = pathOf(request.params.uri);
    const window = await workspace.readText(path, { signal: extra.signal });
    return { contents: [{ uri: request.params.uri, mimeType: "text/plain", text: window.text }] };
  });
  let isLive: Promise<void> = Promise.resolve();
  server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    pathOf(request.params.uri);
    subscribed.add(request.params.uri);
    if (!watching) {
      watching = new AbortController();
      let live!: () => void;
      isLive = new Promise((resolve) => (live = resolve));
      void follow(watching, live);
    }
    // Answered once the watch is live: a change made after the answer is told.
    await isLive;
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    subscribed.delete(request.params.uri);
    if (subscribed.size === 0) {
      watching?.abort();
      watching = undefined;
    }
    return {};
  });
  server.onclose = () => watching?.abort(); // serveStdio chains its own after this one
}
