// A snapshot store that reports each operation's outcome to the metrics:
// every one, the leases' and the heads' conditional writes included.
import { FileToolsError } from "../errors.js";
import type { Store } from "../snapshots/store.js";
import type { StoreMetrics } from "./metrics.js";

export function meteredStore(store: Store, metrics: Pick<StoreMetrics, "storeOperation">): Store {
  const metered =
    <A extends unknown[], R>(operation: string, call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        const result = await call(...args);
        metrics.storeOperation(operation, "ok");
        return result;
      } catch (error) {
        metrics.storeOperation(operation, error instanceof FileToolsError ? error.reason : "error");
        throw error;
      }
    };
  return {
    description: store.description,
    shared: store.shared,
    check: () => store.check(),
    put: metered("put", (key: string, body: AsyncIterable<Uint8Array>, signal?: AbortSignal) => store.put(key, body, signal)),
    get: metered("get", (key: string, signal?: AbortSignal) => store.get(key, signal)),
    getRange: metered("get_range", (key: string, offset: number, length: number, signal?: AbortSignal) => store.getRange(key, offset, length, signal)),
    list: metered("list", (prefix: string, signal?: AbortSignal) => store.list(prefix, signal)),
    delete: metered("delete", (key: string, signal?: AbortSignal) => store.delete(key, signal)),
    createIfAbsent: metered("create_if_absent", (key: string, body: Buffer, signal?: AbortSignal) => store.createIfAbsent(key, body, signal)),
    replaceIfMatch: metered("replace_if_match", (key: string, body: Buffer, etag: string, signal?: AbortSignal) => store.replaceIfMatch(key, body, etag, signal)),
    readWithTag: metered("read_with_tag", (key: string, signal?: AbortSignal) => store.readWithTag(key, signal)),
    ...(store.presignGet ? { presignGet: metered("presign", store.presignGet.bind(store)) } : {}),
  };
}
