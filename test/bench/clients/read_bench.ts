// The TypeScript client's bench driver (run by test/bench/clients.ts with tsx):
// one scenario of Read calls against a running daemon, the result as JSON on
// stdout. The Python and Go drivers (read_bench.py, go/main.go) take the same
// JSON argument and print the same JSON.
import { connect, type FileToolsClient } from "../../../clients/ts/src/client.js";

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

/** One whole Read window from `startLine`: its text's line feeds, and the trailer's bytes and next line. */
async function readWindow(client: FileToolsClient, startLine: bigint, maxBytes?: bigint) {
  let newlines = 0;
  let bytes = 0n;
  let nextLine = 0n;
  for await (const message of client.files.read({ workspace: job.workspace, path: job.path, startLine, maxBytes })) {
    if (message.event.case === "chunk") newlines += countNewlines(message.event.value.text);
    else if (message.event.case === "trailer") ({ bytesReturned: bytes, nextLine } = message.event.value);
  }
  return { newlines, bytes, nextLine };
}

function countNewlines(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

async function latency() {
  for (let i = 0; i < job.warmup; i++) await readWindow(client, 1n);
  const samplesMs: number[] = [];
  let bytes = 0n;
  for (let i = 0; i < job.calls; i++) {
    const started = process.hrtime.bigint();
    const window = await readWindow(client, 1n);
    samplesMs.push(Number(process.hrtime.bigint() - started) / 1e6);
    bytes = window.bytes;
  }
  return { samplesMs, bytes: Number(bytes) };
}

/** The whole file, window after window of `windowBytes`, each starting at the previous one's next line. */
async function stream() {
  const started = process.hrtime.bigint();
  let bytes = 0n;
  let lines = 0;
  let windows = 0;
  for (let line = 1n; line !== 0n; windows++) {
    const window = await readWindow(client, line, BigInt(job.windowBytes));
    bytes += window.bytes;
    lines += window.newlines;
    line = window.nextLine;
  }
  return { seconds: Number(process.hrtime.bigint() - started) / 1e9, bytes: Number(bytes), lines, windows };
}

async function concurrent() {
  for (let i = 0; i < job.warmup; i++) await readWindow(client, 1n);
  let started = 0;
  let bytes = 0;
  const worker = async () => {
    while (started < job.calls) {
      started++;
      const window = await readWindow(client, 1n);
      bytes += Number(window.bytes);
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
