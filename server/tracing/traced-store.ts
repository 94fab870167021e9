// A snapshot store whose every operation is a child span of the call (or
// run-end work) that made it: "store.put", "store.create_if_absent", …
import { aroundStore } from "../snapshots/around-store.js";
import type { Store } from "../snapshots/store.js";
import { inSpan } from "./tracing.js";

export function tracedStore(store: Store): Store {
  return aroundStore(store, (operation, call) => inSpan(`store.${operation}`, { "filetools.store.operation": operation }, call));
}
