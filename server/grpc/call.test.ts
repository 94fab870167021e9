// The commit rule of CallScope: an abort that arrives after the handler
// committed (its change is in place) no longer turns the call into a failure;
// before the commit it does.
import { EventEmitter } from "node:events";
import { Metadata, status as Code } from "@grpc/grpc-js";
import { describe, expect, it } from "vitest";
import { Workspaces } from "../../clients/ts/src/gen/filetools/v1/workspaces_pb.js";
import { createLogger } from "../log.js";
import { CallScope } from "./call.js";

const logLines: Array<Record<string, unknown>> = [];
const logger = createLogger("info", { write: (line: string) => void logLines.push(JSON.parse(line)) });

function scopeOfCancelledCall(): CallScope {
  const call = Object.assign(new EventEmitter(), { metadata: new Metadata(), getDeadline: () => Infinity });
  const scope = new CallScope(call, Workspaces.method.importArchive, { logger });
  call.emit("cancelled");
  expect(scope.context.signal.aborted).toBe(true);
  return scope;
}

describe("CallScope.succeed", () => {
  it("an abort before the commit fails the call", () => {
    expect(scopeOfCancelledCall().succeed()?.code).toBe(Code.CANCELLED);
  });

  it("an abort after the commit leaves it OK, and the log line says so", () => {
    const scope = scopeOfCancelledCall();
    scope.context.committed();
    expect(scope.succeed()).toBeUndefined();
    expect(logLines.at(-1)).toMatchObject({ code: "OK", committed_after_abort: true });
  });
});
