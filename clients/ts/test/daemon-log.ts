// The daemon's call log (one JSON line per call on stderr, with --log-level
// info): tells a test how a call ended on the daemon's side, e.g. that a search
// the client left early was cancelled there rather than run to its end.
import type { ChildProcess } from "node:child_process";
import { EventEmitter } from "node:events";

export interface CallLogLine {
  method?: string;
  workspace?: string;
  code?: string;
  reason?: string;
  msg?: string;
}

export interface CallLog {
  /**
   * The log line of the next call of `method` (e.g. "filetools.v1.Files/Search")
   * on `workspace` to end from now on. A line can come after the client has its
   * answer, so a test gives each watched call a workspace of its own.
   */
  nextCall(method: string, workspace: string): Promise<CallLogLine>;
}

export function followCallLog(daemon: ChildProcess): CallLog {
  const lines: CallLogLine[] = [];
  const added = new EventEmitter();
  let partial = "";
  daemon.stderr!.on("data", (data: Buffer) => {
    const parts = (partial + data.toString("utf8")).split("\n");
    partial = parts.pop()!;
    for (const part of parts) {
      try {
        lines.push(JSON.parse(part) as CallLogLine);
        added.emit("line");
      } catch {
        // not a log line
      }
    }
  });
  return {
    nextCall(method, workspace) {
      let next = lines.length;
      return new Promise((resolve) => {
        const look = () => {
          for (; next < lines.length; next++) {
            const line = lines[next]!;
            if (line.method === method && line.workspace === workspace && line.code !== undefined) {
              added.off("line", look);
              resolve(line);
              return;
            }
          }
        };
        added.on("line", look);
      });
    },
  };
}
