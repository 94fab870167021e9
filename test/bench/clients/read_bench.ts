// The TypeScript client's bench driver (run by test/bench/clients.ts with tsx):
// one scenario of reads through @filetools/client's workspace calls against a
// running daemon, the result as JSON on stdout. The Python and Go drivers
// (read_bench.py, go/main.go) take the same JSON argument and print the same JSON.
import { connect } from "../../../clients/ts/src/index.js";

interface Job {
  address: string;
  workspace: string;
  path: string;
  scenario: "latency" | "stream" | "concurrent";
  /** latency: timed calls (after `warmup` untimed ones); concurrent: calls in all. */
  calls: number;
  warmup: number;
  /** concurrent: calls in flight. */
  concurrency: number;
  /** stream: max_bytes of each window. */
  windowBytes: number;
}

const job = JSON.parse(process.argv[2]!) as Job;
const client = connect(job.address);
const workspace = client.workspace(job.workspace);

/** The whole small file: its size in UTF-8 bytes. */
async function readSmall(): Promise<number> {
  return Buffer.byteLength((await workspace.readText(job.path)).text, "utf8");
}

function countNewlines(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

async function latency() {
  for (let i = 0; i < job.warmup; i++) await readSmall();
  const samplesMs: number[] = [];
  let bytes = 0;
  for (let i = 0; i < job.calls; i++) {
    const started = process.hrtime.bigint();
    bytes = await readSmall();
    samplesMs.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return { samplesMs, bytes };
}

/** The whole file, window after window of `windowBytes`, each from the previous one's next line; the text piece by piece. */
async function stream() {
  const started = process.hrtime.bigint();
  let bytes = 0;
  let lines = 0;
  let windows = 0;
  const onText = (text: string) => {
    bytes += Buffer.byteLength(text, "utf8");
    lines += countNewlines(text);
  };
  for (let startLine: number | undefined = 1; startLine !== undefined; windows++) {
    ({ nextStartLine: startLine } = await workspace.readTo(job.path, onText, { startLine, maxBytes: job.windowBytes }));
  }
  return { seconds: Number(process.hrtime.bigint() - started) / 1e9, bytes, lines, windows };
}

async function concurrent() {
  for (let i = 0; i < job.warmup; i++) await readSmall();
  let started = 0;
  let bytes = 0;
  const worker = async () => {
    while (started < job.calls) {
      started++;
      const size = await readSmall();
      bytes += size;
    }
  };
  const begun = process.hrtime.bigint();
  await Promise.all(Array.from({ length: job.concurrency }, worker));
  return { seconds: Number(process.hrtime.bigint() - begun) / 1e9, calls: job.calls, bytes };
}

const scenarios = { latency, stream, concurrent };
try {
  console.log(JSON.stringify(await scenarios[job.scenario]()));
} finally {
  client.close();
}
