// The mixed-load driver (forked by test/bench/mixed-load.ts, with tsx): a
// share of the 64 simulated agents, each with its own connection to the
// daemon (a channel with its own subchannel pool, so one TCP connection per
// agent, as separate runtimes would have) and its own managed workspace. Each
// agent loops over a seeded mix of calls until told to stop and times each
// call; the samples go back to the parent over the IPC channel.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { connect, type FileToolsClient } from "../../../clients/ts/src/index.js";
import type { WorkspaceClient } from "../../../clients/ts/src/workspace.js";
import { prng } from "../data.js";
import { DEFAULT_MIX, type DriverJob, type DriverMessage } from "../mixed-load.js";

/** The agent's tree: FILES text files of 1–16 KB in a few directories, some lines holding a TODO. */
const FILES = 40;
const DIRS = ["src/core", "src/util", "src/api", "docs", "tests"];
const UPLOAD_BYTES = 256 * 1024;
const WINDOW_LINES = 50;
const WORDS = "the agent reads a window of lines then edits one file and writes results while others list stat and search".split(" ");


function fileText(random: () => number, agent: number, file: number): string {
  const bytes = 1024 + (random() % (15 * 1024));
  const lines: string[] = [];
  let size = 0;
  for (let line = 1; size < bytes; line++) {
    const words = Array.from({ length: 4 + (random() % 10) }, () => WORDS[random() % WORDS.length]);
    const text = `${line}: ${words.join(" ")}${random() % 25 === 0 ? ` TODO(agent-${agent}) item ${file}.${line}` : ""}`;
    lines.push(text);
    size += text.length + 1;
  }
  return lines.join("\n") + "\n";
}

const treePath = (file: number) => `${DIRS[file % DIRS.length]}/file-${String(file).padStart(2, "0")}.txt`;

class Agent {
  private readonly random: () => number;
  private readonly ws: WorkspaceClient;
  private runId = "";
  private counter = 0;
  private writes = 0;
  private readonly mix: [kind: string, weight: number][];
  private readonly totalWeight: number;

  constructor(
    readonly number: number,
    private readonly client: FileToolsClient,
    private readonly job: DriverJob,
  ) {
    this.random = prng(1000 + number);
    this.ws = client.workspace(`agent-${String(number).padStart(2, "0")}`);
    this.mix = job.mix ? DEFAULT_MIX.map(([kind]) => [kind, job.mix![kind] ?? 0]) : DEFAULT_MIX;
    this.totalWeight = this.mix.reduce((sum, [, w]) => sum + w, 0);
  }

  private get uploadSource() {
    return path.join(this.job.scratch, `upload-${this.number}.bin`);
  }

  /** Untimed: the workspace (a run on it), its tree, the file Edit counts in, and the blob Download fetches. */
  async setUp(): Promise<void> {
    this.runId = (await this.ws.startRun({ restore: "NONE" })).id;
    for (let file = 0; file < FILES; file++) await this.ws.writeText(treePath(file), fileText(this.random, this.number, file));
    await this.ws.writeText("notes.md", `# notes of agent ${this.number}\n\ncounter: 0\n`);
    const blob = Buffer.alloc(UPLOAD_BYTES);
    for (let i = 0; i < blob.length; i++) blob[i] = this.random() & 0xff;
    writeFileSync(this.uploadSource, blob);
    await this.ws.upload(this.uploadSource, "uploads/blob.bin");
  }

  /** One call of the mix: its kind and a function making it. */
  pick(): [string, () => Promise<unknown>] {
    let r = this.random() % this.totalWeight;
    const [kind] = this.mix.find(([, w]) => (r -= w) < 0)!;
    return [kind, this.call(kind)];
  }

  private call(kind: string): () => Promise<unknown> {
    const ws = this.ws;
    const file = treePath(this.random() % FILES);
    switch (kind) {
      case "Read (small file)":
        return () => ws.readText(file);
      case "Read (window of a large file)": {
        const { workspace, path: bigPath, lines } = this.job.corpus;
        const startLine = 1 + (this.random() % (lines - WINDOW_LINES));
        return () => this.client.workspace(workspace).readText(bigPath, { startLine, lineCount: WINDOW_LINES });
      }
      case "Write": {
        const body = `result ${this.writes} of agent ${this.number}\n`.repeat(40 + (this.random() % 60));
        const target = `out/result-${this.writes++ % 20}.txt`;
        return () => ws.writeText(target, body);
      }
      case "Edit": {
        const from = this.counter++;
        return () => ws.edit("notes.md", { oldText: `counter: ${from}\n`, newText: `counter: ${from + 1}\n` });
      }
      case "Stat":
        return () => ws.stat(file);
      case "List":
        return () => ws.list("", { recursive: true });
      case "Search":
        return async () => {
          for await (const _ of ws.search("TODO", { fixedStrings: true, maxResults: 100 }));
        };
      case "Upload":
        return () => ws.upload(this.uploadSource, "uploads/blob.bin");
      case "Download":
        return () => ws.download("uploads/blob.bin", path.join(this.job.scratch, `download-${this.number}.bin`));
      case "StartRun + FinishRun":
        // The run open since set-up ends with a snapshot, and the next begins on the same (non-empty) workspace.
        return async () => {
          await ws.finishRun(this.runId, { snapshot: true });
          this.runId = (await ws.startRun()).id;
        };
    }
    throw new Error(`unknown call kind ${kind}`);
  }

  async tearDown(): Promise<void> {
    await this.ws.finishRun(this.runId, { snapshot: false });
  }
}

async function main(): Promise<void> {
  const job = await new Promise<DriverJob>((resolve) => process.once("message", (m) => resolve(m as DriverJob)));
  mkdirSync(job.scratch, { recursive: true });
  const clients = job.agents.map(() => connect(job.address, { channelOptions: { "grpc.use_local_subchannel_pool": 1 } }));
  const agents = job.agents.map((n, i) => new Agent(n, clients[i]!, job));
  await Promise.all(agents.map((a) => a.setUp()));
  const samples: Record<string, number[]> = Object.fromEntries(DEFAULT_MIX.map(([kind]) => [kind, []]));
  const errors: Record<string, number> = Object.fromEntries(DEFAULT_MIX.map(([kind]) => [kind, 0]));
  const errorExamples: string[] = [];

  let stopping = false;
  const stopped = new Promise<void>((resolve) => process.on("message", (m) => m === "stop" && resolve()));
  await new Promise<void>((resolve) => {
    process.on("message", (m) => m === "go" && resolve());
    send({ type: "ready" });
  });
  void stopped.then(() => (stopping = true));
  const cpuBefore = process.cpuUsage();
  const began = process.hrtime.bigint();
  await Promise.all(
    agents.map(async (agent) => {
      while (!stopping) {
        const [kind, run] = agent.pick();
        const started = process.hrtime.bigint();
        try {
          await run();
          samples[kind]!.push(Number(process.hrtime.bigint() - started) / 1e6);
        } catch (error) {
          errors[kind]!++;
          if (errorExamples.length < 5) errorExamples.push(`${kind}: ${(error as Error).message}`);
        }
      }
    }),
  );
  const cpu = process.cpuUsage(cpuBefore);
  const seconds = Number(process.hrtime.bigint() - began) / 1e9;
  await Promise.all(agents.map((a) => a.tearDown()));
  for (const c of clients) c.close();
  send({ type: "result", result: { samples, errors, errorExamples, cpuMs: (cpu.user + cpu.system) / 1000, seconds } });
  process.disconnect();
}

function send(message: DriverMessage): void {
  process.send!(message);
}

main().catch((error: unknown) => {
  send({ type: "failed", error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  process.exitCode = 1;
  process.disconnect();
});
