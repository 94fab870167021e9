// Structured JSON logs on stderr (stdout carries only the "listening" line).
// Callers log facts (method, workspace, code, duration), never file contents.
import { pino, type DestinationStream, type Logger } from "pino";

export type { Logger };

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** A logger writing one JSON object per line to `destination` (default: stderr, synchronously). */
export function createLogger(level: LogLevel, destination: DestinationStream = pino.destination(2)): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      // "level":"info" reads better than "level":30 for people and log tools alike.
      formatters: { level: (label) => ({ level: label }) },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}
