// The npm package as a user gets it: `npm pack` the workspace package, install
// the tarball into a fresh project, import it there and call a real daemon.
import { execFile, execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ROOT, startDaemon, type Daemon } from "../../../test/e2e/daemon.js";
import { withDirectoryLock } from "../../../test/support/lock.js";
import { solidImage } from "../../../test/support/media.js";

const run = promisify(execFile);
const dir = mkdtempSync(path.join(tmpdir(), "ftc-ts-package-"));
let daemon: Daemon;
/** The packed tarballs (@filetools/proto, @filetools/client), made by the install test. */
let tarballs: string[] = [];

beforeAll(async () => {
  daemon = await startDaemon();
});

afterAll(async () => {
  await daemon?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const USER_CODE = `
import { connect, FileToolsError, numberLines } from "@filetools/client";
const client = connect(process.argv[2]);
const ws = client.workspace("pkg");
await client.createWorkspace("pkg");
await ws.writeText("hello.txt", "one\\ntwo\\nthree\\n");
const page = await ws.readText("hello.txt", { startLine: 2, lineCount: 1 });
const missing = await ws.readText("nope.txt").catch((e) => e);
console.log(JSON.stringify({
  numbered: numberLines(page.text, { firstLine: page.firstLine }),
  nextStartLine: page.nextStartLine,
  missing: missing instanceof FileToolsError ? missing.reason : String(missing),
}));
client.close();
`;

it("a clone's npm install links `filetools` before anything is built, so npx finds it and says to build", { timeout: 120_000 }, async () => {
  // A clone's manifests and the committed launcher, without dist/: the root package, named filetools too, has only filetoolsd.
  const clone = path.join(dir, "clone");
  const { name, bin, workspaces } = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8"));
  mkdirSync(clone);
  writeFileSync(path.join(clone, "package.json"), JSON.stringify({ name, private: true, type: "module", bin, workspaces }));
  for (const file of ["clients/ts/package.json", "clients/ts/bin", "gen/ts/package.json"]) {
    cpSync(path.join(ROOT, file), path.join(clone, file), { recursive: true });
  }
  // No scripts: nothing is built here (gen/ts would be), and bins are linked all the same.
  await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--ignore-scripts"], { cwd: clone });

  const npx = await run("npx", ["filetools", "--help"], { cwd: clone }).catch((error: { code: number; stderr: string }) => error);
  expect(npx).toMatchObject({ code: 1, stderr: "filetools: the command line is not built yet: run `npm run build` in the repository\n" });
});

it("installs from its npm pack tarballs (with @filetools/proto's) into a fresh project and talks to the daemon", { timeout: 120_000 }, async () => {
  // Packing builds clients/ts/dist (prepack), which the CLI tests run: under their build lock.
  const packed = withDirectoryLock("filetools-cli-build.lock", 120_000, () =>
    execFileSync("npm", ["pack", "-w", "@filetools/proto", "-w", "@filetools/client", "--pack-destination", dir, "--json"], {
      cwd: ROOT,
      encoding: "utf8",
    }),
  );
  tarballs = (JSON.parse(packed) as { filename: string }[]).map(({ filename }) => path.join(dir, filename));
  expect(tarballs.map((tarball) => path.basename(tarball))).toEqual(["filetools-proto-0.1.0.tgz", "filetools-client-0.1.0.tgz"]);

  const app = path.join(dir, "app");
  mkdirSync(app);
  writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
  await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", ...tarballs], { cwd: app });
  expect(existsSync(path.join(app, "node_modules/@filetools/client/dist/index.d.ts"))).toBe(true);

  writeFileSync(path.join(app, "main.js"), USER_CODE);
  const { stdout } = await run(process.execPath, ["main.js", daemon.address], { cwd: app });
  expect(JSON.parse(stdout)).toEqual({ numbered: "     2\ttwo\n", nextStartLine: 3, missing: "NOT_FOUND" });

  // The package's command line is installed too.
  const help = await run(path.join(app, "node_modules/.bin/filetools"), ["--help"], { cwd: app });
  expect(help.stdout).toContain("filetools");
});

/** An agent loop with the AI SDK's scripted model: a read with a strict-mode null, then a read of a missing file. */
const AI_SDK_CODE = `
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { connect, ToolDispatcher } from "@filetools/client";
import { aiSdkTools } from "@filetools/client/ai-sdk";
const client = connect(process.argv[2]);
const ws = client.workspace(process.argv[3]);
await client.createWorkspace(process.argv[3]);
await ws.writeText("a.txt", "one\\n");
await ws.writeBytes("dot.png", Buffer.from(process.argv[4], "base64"));
const calls = [["read", { path: "/a.txt", start_line: null }], ["read", { path: "/missing.txt" }], ["read", { path: "/dot.png" }]];
const usage = { inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 0, text: 0, reasoning: 0 } };
let step = 0;
let prompt = [];
const model = new MockLanguageModelV3({
  doGenerate: async (options) => {
    prompt = options.prompt;
    if (step === calls.length) return { content: [{ type: "text", text: "done" }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] };
    const [toolName, input] = calls[step++];
    return { content: [{ type: "tool-call", toolCallId: "call-" + step, toolName, input: JSON.stringify(input) }], finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage, warnings: [] };
  },
});
const result = await generateText({ model, tools: aiSdkTools(new ToolDispatcher(ws)), stopWhen: stepCountIs(5), prompt: "read a.txt" });
const parts = result.steps.flatMap((s) => s.content).filter((p) => p.type === "tool-result" || p.type === "tool-error");
// What the model was given for the read of the image: the text and the image as content parts.
const sent = prompt.filter((m) => m.role === "tool").flatMap((m) => m.content).map((c) => c.output).at(-1);
const image = sent.value[1];
console.log(JSON.stringify({
  parts: parts.slice(0, 2).map((p) => [p.type, p.type === "tool-error" ? p.error.message : p.output]),
  model: [sent.type, sent.value[0], image.type, image.mediaType, image.data === process.argv[4]],
}));
client.close();
`;

// The peer range takes AI SDK 6 and 7: installed beside the package (no ERESOLVE), each runs the same loop.
it.each(["6.0.333", "7.0.185"])("with the AI SDK %s: installs beside the package; a failed call is a tool-error, nulls are left out", { timeout: 180_000 }, async (version) => {
  expect(tarballs).toHaveLength(2); // made by the test above
  const app = path.join(dir, `ai-${version}`);
  mkdirSync(app);
  writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
  await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", ...tarballs, `ai@${version}`], { cwd: app });
  writeFileSync(path.join(app, "agent.js"), AI_SDK_CODE);
  const png = (await solidImage(4, 3, "png")).toString("base64");
  const { stdout } = await run(process.execPath, ["agent.js", daemon.address, `ai-${version.split(".")[0]}`, png], { cwd: app });
  expect(JSON.parse(stdout)).toEqual({
    parts: [
      ["tool-result", "     1\tone\n"],
      ["tool-error", "Error (NOT_FOUND): /missing.txt does not exist.\nCheck the path with list, or create the file with write.\n"],
    ],
    // A read of an image reaches the model as the SDK's content: the text, then the image (SDK 7 hands a provider an image part as file-data).
    model: ["content", { type: "text", text: "Image /dot.png (PNG, 4x3 pixels, 95 bytes).\n" }, version.startsWith("6.") ? "image-data" : "file-data", "image/png", true],
  });
});
