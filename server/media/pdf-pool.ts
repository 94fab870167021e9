// The PDF worker pool (piscina): pdf.js parses untrusted documents, so it runs
// off the main thread, bounded in memory (a worker past its heap limit, or
// holding more buffers than that, dies, and its task fails), in time (a task
// past its budget has its worker terminated) and by the call's cancellation.
// Started on the first PDF and ended after a minute idle: a daemon that never
// reads a PDF pays nothing.
import { Piscina } from "piscina";
import { fail } from "../errors.js";
import type { PdfTask, PdfText, PdfWorkerData } from "./pdf-worker.js";

/** Memory a PDF worker may use: a document's objects and one page's text at a time on its heap, and as much again in
 * buffers (decoded streams, which V8's heap limit does not count: pdf-worker.ts watches them). */
const WORKER_MEMORY_MB = 512;
/** Time one PDF call may take in a worker. */
export const PDF_TIME_BUDGET_MS = 30_000;
const IDLE_MS = 60_000;
const THREADS = 2;

let pool: Piscina<PdfTask, PdfText> | undefined;

function started(): Piscina<PdfTask, PdfText> {
  if (pool) return pool;
  // Recipe of shared/notes/stack.md section 5: .ts under tsx/vitest, .js once compiled.
  const isTs = import.meta.url.endsWith(".ts");
  const filename = new URL(isTs ? "./pdf-worker.ts" : "./pdf-worker.js", import.meta.url).href;
  const execArgv = isTs && !process.execArgv.some((a) => a.includes("tsx")) ? [...process.execArgv, "--import", "tsx"] : undefined;
  pool = new Piscina<PdfTask, PdfText>({
    filename,
    execArgv,
    minThreads: 0,
    maxThreads: THREADS,
    idleTimeout: IDLE_MS,
    resourceLimits: { maxOldGenerationSizeMb: WORKER_MEMORY_MB },
    workerData: { maxBufferBytes: WORKER_MEMORY_MB * 2 ** 20 } satisfies PdfWorkerData,
  });
  // A worker that fails fails its task (its caller hears of it); an 'error' event nobody listened to would end the daemon.
  pool.on("error", () => undefined);
  return pool;
}

/** The text of a window of pages of the PDF `data` (named `path` in errors). */
export async function pdfText(path: string, task: PdfTask, signal: AbortSignal): Promise<PdfText> {
  const budget = AbortSignal.timeout(PDF_TIME_BUDGET_MS);
  let result: PdfText;
  try {
    // The bytes are copied to the worker, not transferred: a small file's may sit in Node's shared Buffer pool.
    result = await started().run(task, { signal: AbortSignal.any([signal, budget]) });
  } catch (error) {
    signal.throwIfAborted();
    if (budget.aborted) fail("MEDIA_UNREADABLE", `${path}: its text took more than ${PDF_TIME_BUDGET_MS / 1000} s to extract`);
    const memory = error instanceof Error && /memory/i.test(`${(error as { code?: string }).code ?? ""} ${error.message}`);
    fail("MEDIA_UNREADABLE", `${path}: ${memory ? `its text needs more than ${WORKER_MEMORY_MB} MiB to extract` : "the PDF reader failed on it"}`);
  }
  if (result.unreadable !== undefined) fail("MEDIA_UNREADABLE", `${path} cannot be read as a PDF: ${result.unreadable}`);
  return result;
}

/** Ends the pool's threads (tests; a daemon's end ends them too). */
export async function closePdfPool(): Promise<void> {
  const ending = pool;
  pool = undefined;
  await ending?.destroy();
}
