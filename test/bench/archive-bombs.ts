// Archive bombs sent to ImportArchive (issue 10 item 11): how long the daemon
// takes to refuse each, and its peak resident memory meanwhile.
//   npx tsx test/bench/archive-bombs.ts [OTHER_CHECKOUT/bin/filetoolsd]
// The bombs are built as streams (nothing on disk; the member bomb in memory first, as it compresses to 7 MB):
//   members   1,000,001 empty files, gzipped (the member cap is 1,000,000)
//   zeros     a gzip of 20 GiB of zero bytes (not even a tar)
//   big-file  a tar of one 15 GiB file of zeros, gzipped (under the byte cap)
// Each bomb gets a fresh daemon; a refusal that takes longer than LIMIT_S
// seconds (default 300) is cut off and shown as such. BOMBS=members,zeros
// runs only those (an old build writes all of big-file to disk before refusing).
import { createGzip } from "node:zlib";
import { Readable } from "node:stream";
import { Daemon, ms } from "./measure.js";

const LIMIT_S = Number(process.env.LIMIT_S ?? 300);
const MiB = 1024 * 1024;
const BLOCK = 512;

function header(name: string, size: number): Buffer {
  const block = Buffer.alloc(BLOCK);
  block.write(name, 0, "latin1");
  block.write("0000644\0", 100, "latin1");
  block.write("0000000\0", 108, "latin1");
  block.write("0000000\0", 116, "latin1");
  block.write(size.toString(8).padStart(11, "0") + "\0", 124, "latin1");
  block.write("00000000000\0", 136, "latin1");
  block.write("        ", 148, "latin1");
  block.write("0", 156, "latin1");
  block.write("ustar\u000000", 257, "latin1");
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(sum.toString(8).padStart(6, "0") + "\0 ", 148, "latin1");
  return block;
}

function* manyMembers(count: number): Generator<Buffer> {
  const batch: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    batch.push(header(`f${i.toString().padStart(8, "0")}`, 0));
    if (batch.length === 2048) yield Buffer.concat(batch.splice(0));
  }
  yield Buffer.concat([...batch, Buffer.alloc(2 * BLOCK)]);
}

function* zeros(bytes: number): Generator<Buffer> {
  const chunk = Buffer.alloc(MiB);
  for (let sent = 0; sent < bytes; sent += chunk.length) yield chunk;
}

function* bigFile(bytes: number): Generator<Buffer> {
  yield header("zeros", bytes);
  yield* zeros(bytes);
}

function gzipped(raw: Iterable<Buffer>): AsyncIterable<Uint8Array> {
  return Readable.from(raw).pipe(createGzip({ level: 9 }));
}

/** The compressed bytes, made before the clock starts (7 MB: building them takes longer than refusing them). */
async function inMemory(bytes: AsyncIterable<Uint8Array>): Promise<() => AsyncIterable<Uint8Array>> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of bytes) chunks.push(chunk);
  return () => Readable.from(chunks);
}

const BOMBS: Record<string, () => Promise<() => AsyncIterable<Uint8Array>>> = {
  members: () => inMemory(gzipped(manyMembers(1_000_001))),
  zeros: async () => () => gzipped(zeros(20 * 1024 * MiB)),
  "big-file": async () => () => gzipped(bigFile(15 * 1024 * MiB)),
};

async function refusal(daemon: Daemon, bomb: () => AsyncIterable<Uint8Array>): Promise<string> {
  await daemon.client.workspaces.createWorkspace({ workspace: "w" });
  async function* requests() {
    yield { event: { case: "header" as const, value: { workspace: "w", path: "" } } };
    for await (const data of bomb()) yield { event: { case: "chunk" as const, value: { data } } };
  }
  try {
    await daemon.client.workspaces.importArchive(requests(), { deadline: LIMIT_S * 1000 });
    return "accepted (!)";
  } catch (error) {
    const { codeName, reason, message } = error as { codeName?: string; reason?: string; message?: string };
    return `${codeName}/${reason}: ${String(message).slice(0, 70)}`;
  }
}

const launcher = process.argv[2];
console.log(`| bomb | refused after | daemon peak RSS | answer |\n| --- | --- | --- | --- |`);
const chosen = process.env.BOMBS?.split(",") ?? Object.keys(BOMBS);
for (const [name, prepare] of Object.entries(BOMBS).filter(([name]) => chosen.includes(name))) {
  const bomb = await prepare();
  const daemon = await Daemon.start({}, [], ...(launcher ? [launcher] : []));
  try {
    const started = process.hrtime.bigint();
    const { result, peak } = await daemon.peakDuring(() => refusal(daemon, bomb));
    console.log(`| ${name} | ${(ms(started) / 1000).toFixed(1)} s | ${(peak / MiB).toFixed(0)} MiB | ${result} |`);
  } finally {
    await daemon.stop();
  }
}
