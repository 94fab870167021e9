// An agent loop you can run without a network: the Vercel AI SDK's
// generateText with filetools' tools, driven by a scripted model (the SDK's
// own MockLanguageModelV3) that reads a window of a big log, searches the
// sources, edits with a stale version, recovers from the CONTENT_CHANGED
// message by reading the version it names, and stops. The run is then
// finished (the daemon snapshots the workspace). Against a local daemon:
//
//   npx tsx clients/ts/examples/agent-loop.ts [address]
//
// It prints every tool result the model was given. With a real model, pass
// e.g. openai("gpt-…") as `model` and drop the script.
import { generateText, stepCountIs, type ModelMessage } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { connect, ToolDispatcher } from "../src/index.js";
import { aiSdkTools } from "../src/integrations/ai-sdk.js";

const address = process.argv[2] ?? process.env.FILETOOLS_ADDRESS ?? "127.0.0.1:7447";
const client = connect(address, { token: process.env.FILETOOLS_TOKEN });
const workspace = client.workspace("agent-loop");

/** What the scripted model does at each step, given the tool results so far (newest last). */
const script: Array<(results: string[]) => { tool: string; input: object } | { text: string }> = [
  // As a strict-mode model sends it: null for an argument it leaves out.
  () => ({ tool: "read", input: { path: "/logs/app.log", start_line: 5000, line_count: 3, tail: null } }),
  () => ({ tool: "search", input: { pattern: "timeout = \\d+", path: "/src" } }),
  // A version the model remembered from before someone else changed the file: stale.
  () => ({ tool: "edit", input: { path: "/src/config.py", edits: [{ old_text: "timeout = 5", new_text: "timeout = 30" }], if_version: "0000000000000000" } }),
  // Recovery: the error names the file's current version; retry with it.
  (results) => {
    const version = /retry with if_version (\w+)/.exec(results.at(-1) ?? "")?.[1] ?? "";
    return { tool: "edit", input: { path: "/src/config.py", edits: [{ old_text: "timeout = 5", new_text: "timeout = 30" }], if_version: version } };
  },
  () => ({ text: "Raised the timeout to 30 seconds in /src/config.py." }),
];

/** The tool results in a prompt, in order: what the model was given to read. */
function toolResults(prompt: ModelMessage[] | Array<{ role: string; content: unknown }>): string[] {
  const results: string[] = [];
  for (const message of prompt) {
    if (message.role !== "tool" || !Array.isArray(message.content)) continue;
    for (const part of message.content as Array<{ type: string; output?: { type: string; value: unknown } }>) {
      if (part.type === "tool-result" && part.output) results.push(String(part.output.value));
    }
  }
  return results;
}

let step = 0;
const model = new MockLanguageModelV3({
  doGenerate: async ({ prompt }) => {
    const next = script[step++]!(toolResults(prompt));
    const usage = { inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 0, text: 0, reasoning: 0 } };
    if ("text" in next) return { content: [{ type: "text", text: next.text }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] };
    const call = { type: "tool-call" as const, toolCallId: `call-${step}`, toolName: next.tool, input: JSON.stringify(next.input) };
    return { content: [call], finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage, warnings: [] };
  },
});

try {
  await client.createWorkspace("agent-loop").catch(() => undefined); // it may exist from an earlier run
  const run = await workspace.startRun({ restore: "NONE" });
  const log = Array.from({ length: 10_000 }, (_, i) => `2026-12-03T10:00:${String(i % 60).padStart(2, "0")}Z line ${i + 1}${i + 1 === 5001 ? " ERROR request timed out" : ""}\n`).join("");
  await workspace.writeText("/logs/app.log", log);
  await workspace.writeText("/src/config.py", "timeout = 5\nretries = 3\n");

  const result = await generateText({
    model,
    tools: aiSdkTools(new ToolDispatcher(workspace)),
    stopWhen: stepCountIs(script.length),
    prompt: "Requests time out: find out why and fix the configuration.",
  });
  for (const [i, text] of toolResults(result.response.messages).entries()) console.log(`--- tool result ${i + 1}\n${text}`);
  // A failed call is a tool-error for the SDK (the model still reads its text, which says what to do next).
  const failed = result.steps.flatMap((s) => s.content).filter((part) => part.type === "tool-error");
  console.log(`--- tool errors: ${failed.map((part) => part.toolName).join(", ") || "none"}`);
  console.log(`--- model\n${result.text}`);

  const { changes } = await workspace.finishRun(run.id);
  console.log(`--- run ${run.id} finished: ${changes?.created ?? 0n} created, ${changes?.modified ?? 0n} modified`);
} finally {
  client.close();
}
