// The commit rule of CallScope: an abort that arrives after the handler
// committed (its change is in place) no longer turns the call into a failure;
// before the commit it does. And InFlightCalls: shutdown's abort reaches
// every call, without a listener per call on anything shared.
import { EventEmitter } from "node:events";
import { Metadata, status as Code } from "@grpc/grpc-js";
import { describe, expect, it } from "vitest";
import { Workspaces } from "@filetools/proto/filetools/v1/workspaces_pb.js";
import { createLogger } from "../log.js";
import { CallScope, InFlightCalls } from "./call.js";

const logLines: Array<Record<string, unknown>> = [];
const logger = createLogger("info", { write: (line: string) => void logLines.push(JSON.parse(line)) });

function fakeCall() {
  return Object.assign(new EventEmitter(), { metadata: new Metadata(), getDeadline: () => Infinity });
}

function scopeOfCancelledCall(): CallScope {
  const call = fakeCall();
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

describe("InFlightCalls", () => {
  it("aborts every call in flight, and every call that starts after, with the shutdown reason", () => {
    const inFlight = new InFlightCalls();
    const before = Array.from({ length: 3 }, () => new CallScope(fakeCall(), Workspaces.method.importArchive, { logger, inFlight }));
    inFlight.abortAll();
    const after = new CallScope(fakeCall(), Workspaces.method.importArchive, { logger, inFlight });
    for (const scope of [...before, after]) expect(scope.context.signal.reason).toMatchObject({ reason: "CANCELLED", message: "the daemon is shutting down" });
  });

  it("is none once every call has ended, however it ended", async () => {
    const inFlight = new InFlightCalls();
    const scopes = Array.from({ length: 20 }, () => new CallScope(fakeCall(), Workspaces.method.importArchive, { logger, inFlight }));
    let none = false;
    void inFlight.none().then(() => (none = true));
    scopes.forEach((scope, i) => (i % 2 ? scope.succeed() : scope.fail(new Error("x"))));
    await Promise.resolve();
    expect(none).toBe(true);
  });

  it("holds 100 calls at once without a MaxListenersExceededWarning", async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    try {
      const inFlight = new InFlightCalls();
      const scopes = Array.from({ length: 100 }, () => new CallScope(fakeCall(), Workspaces.method.importArchive, { logger, inFlight }));
      await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on a later tick
      for (const scope of scopes) scope.succeed();
      expect(warnings.map((w) => w.name)).not.toContain("MaxListenersExceededWarning");
    } finally {
      process.off("warning", onWarning);
    }
  });
});
