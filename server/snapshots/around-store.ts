// A store whose every operation (the leases' and heads' conditional writes
// included) runs through `around`: the one list of operations that the
// metrics' and the traces' wrappers share, at the store interface's edge.
import type { Store } from "./store.js";

/** Runs one store operation (`call`), named `operation` (e.g. "put", "create_if_absent"). */
export type AroundOperation = <R>(operation: string, call: () => Promise<R>) => Promise<R>;

export function aroundStore(store: Store, around: AroundOperation): Store {
  const wrap =
    <A extends unknown[], R>(operation: string, call: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> =>
      around(operation, () => call(...args));
  return {
    description: store.description,
    shared: store.shared,
    check: () => store.check(),
    put: wrap("put", (key: string, body: AsyncIterable<Uint8Array>, signal?: AbortSignal) => store.put(key, body, signal)),
    get: wrap("get", (key: string, signal?: AbortSignal) => store.get(key, signal)),
    getRange: wrap("get_range", (key: string, offset: number, length: number, signal?: AbortSignal) => store.getRange(key, offset, length, signal)),
    list: wrap("list", (prefix: string, signal?: AbortSignal) => store.list(prefix, signal)),
    delete: wrap("delete", (key: string, signal?: AbortSignal) => store.delete(key, signal)),
    createIfAbsent: wrap("create_if_absent", (key: string, body: Buffer, signal?: AbortSignal) => store.createIfAbsent(key, body, signal)),
    replaceIfMatch: wrap("replace_if_match", (key: string, body: Buffer, etag: string, signal?: AbortSignal) => store.replaceIfMatch(key, body, etag, signal)),
    readWithTag: wrap("read_with_tag", (key: string, signal?: AbortSignal) => store.readWithTag(key, signal)),
    ...(store.presignGet ? { presignGet: wrap("presign", store.presignGet.bind(store)) } : {}),
  };
}
