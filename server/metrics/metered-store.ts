// A snapshot store that reports each operation's outcome to the metrics.
import { FileToolsError } from "../errors.js";
import { aroundStore } from "../snapshots/around-store.js";
import type { Store } from "../snapshots/store.js";
import type { StoreMetrics } from "./metrics.js";

export function meteredStore(store: Store, metrics: Pick<StoreMetrics, "storeOperation">): Store {
  return aroundStore(store, async (operation, call) => {
    try {
      const result = await call();
      metrics.storeOperation(operation, "ok");
      return result;
    } catch (error) {
      metrics.storeOperation(operation, error instanceof FileToolsError ? error.reason : "error");
      throw error;
    }
  });
}
