import { listRuns } from "../../runs/lifecycle.js";
import { activeRunMessage } from "./snapshot-convert.js";
import type { Deps, WorkspacesHandler } from "../types.js";

export function listRunsHandler(deps: Deps): WorkspacesHandler<"listRuns"> {
  return async (_request, ctx) => ({ runs: (await listRuns(deps, ctx.signal)).map(activeRunMessage) });
}
