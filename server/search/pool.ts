// The search worker pool (piscina). A task aborted through its signal has its
// worker terminated (V8 stops even a regex in the middle of backtracking) and
// a replacement started: minThreads keeps the pool at full strength.
import os from "node:os";
import v8 from "node:v8";
import { Piscina } from "piscina";
import { inSpan } from "../tracing/tracing.js";
import type { BatchResult, SearchTask, WorkerTask } from "./worker.js";

const PING_TIMEOUT_MS = 30_000;
/**
 * A worker's young generation: small, because what a worker allocates either
 * dies within a file or is a file's text, and V8's default (up to 48 MiB per
 * thread) only adds resident memory (measured: no CPU cost at 4 MiB).
 */
const WORKER_YOUNG_GENERATION_MB = 4;

let flagsSet = false;
/**
 * Irregexp with a fallback to V8's linear-time engine once a match backtracks
 * too much (see pattern.ts for the measurements). V8 flags are process-wide
 * and must be set before any worker starts.
 */
export function enableLinearRegexpFallback(): void {
  if (flagsSet) return;
  v8.setFlagsFromString("--enable-experimental-regexp-engine-on-excessive-backtracks");
  flagsSet = true;
}

export function defaultWorkerCount(): number {
  return typeof os.availableParallelism === "function" ? os.availableParallelism() : os.cpus().length;
}

export interface PoolLogger {
  error(object: object, message: string): void;
}

export class SearchPool {
  /** Each live worker thread's exit, by thread id: a terminated worker runs on until it exits. */
  private readonly exits = new Map<number, Promise<void>>();
  /** Batches handed to piscina and not yet settled (running or queued). */
  private running = 0;

  private constructor(
    private readonly piscina: Piscina<WorkerTask, BatchResult | "pong">,
    readonly threads: number,
  ) {}

  /** Starts `threads` workers and checks that one answers. */
  static async start(threads: number, logger?: PoolLogger): Promise<SearchPool> {
    enableLinearRegexpFallback();
    // Recipe of shared/notes/stack.md section 5: .ts under tsx/vitest, .js once compiled.
    const isTs = import.meta.url.endsWith(".ts");
    const filename = new URL(isTs ? "./worker.ts" : "./worker.js", import.meta.url).href;
    const execArgv = isTs && !process.execArgv.some((a) => a.includes("tsx")) ? [...process.execArgv, "--import", "tsx"] : undefined;
    const piscina = new Piscina<WorkerTask, BatchResult | "pong">({
      filename,
      execArgv,
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: 2 ** 31 - 1,
      concurrentTasksPerWorker: 1,
      // A worker terminated mid-file leaves its open descriptor to Node, which closes it when the thread exits.
      trackUnmanagedFds: true,
      resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
    });
    piscina.on("error", (error: unknown) => logger?.error({ err: error }, "search worker failed"));
    const pool = new SearchPool(piscina, threads);
    // Emitted once a worker is ready, before it runs a task.
    piscina.on("workerCreate", () => pool.watchExits());
    try {
      const answer = await piscina.run({ ping: true }, { signal: AbortSignal.timeout(PING_TIMEOUT_MS) });
      if (answer !== "pong") throw new Error(`unexpected answer ${String(answer)}`);
    } catch (error) {
      await piscina.destroy();
      throw new Error(`the search workers did not start: ${(error as Error).message}`);
    }
    return pool;
  }

  /** Runs one batch; aborting `signal` rejects at once and terminates the worker if it is running. */
  run(task: SearchTask, signal: AbortSignal): Promise<BatchResult> {
    this.running++;
    return inSpan("search.batch", { "filetools.search.files": "fd" in task.files ? 1 : task.files.names.length }, () => this.piscina.run(task, { signal }) as Promise<BatchResult>).finally(
      () => this.running--,
    );
  }

  /** For the metrics: batches waiting, workers busy, threads. */
  stats(): { queued: number; busy: number; threads: number } {
    const queued = this.piscina.queueSize;
    return { queued, busy: Math.min(this.threads, Math.max(0, this.running - queued)), threads: this.piscina.threads.length };
  }

  /** Resolves once the worker thread `threadId` has exited (at once if it has). */
  exited(threadId: number): Promise<void> {
    return this.exits.get(threadId) ?? Promise.resolve();
  }

  close(): Promise<void> {
    return this.piscina.destroy();
  }

  private watchExits(): void {
    for (const worker of this.piscina.threads) {
      const id = worker.threadId;
      if (id < 0 || this.exits.has(id)) continue;
      this.exits.set(id, new Promise<void>((resolve) => worker.once("exit", () => resolve())).then(() => void this.exits.delete(id)));
    }
  }
}
