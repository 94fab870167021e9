// The shape of our client streams (Upload, ImportArchive): one header message,
// then data chunks.
import { fail } from "../errors.js";

interface HeaderOrChunk<H> {
  event: { case: "header"; value: H } | { case: "chunk"; value: { data: Uint8Array } } | { case: undefined; value?: undefined };
}

/** Splits a client stream into its header and the chunks that follow; `what` names the call in messages. */
export async function headerThenChunks<H>(requests: AsyncIterable<HeaderOrChunk<H>>, what: string): Promise<{ header: H; chunks: AsyncGenerator<Uint8Array> }> {
  const stream = requests[Symbol.asyncIterator]();
  const first = await stream.next();
  if (first.done || first.value.event.case !== "header") fail("INVALID_ARGUMENT", `${what} starts with a header message`);
  async function* chunks(): AsyncGenerator<Uint8Array> {
    for (let next = await stream.next(); !next.done; next = await stream.next()) {
      if (next.value.event.case !== "chunk") fail("INVALID_ARGUMENT", `${what} has one header, then chunks`);
      yield next.value.event.value.data;
    }
  }
  return { header: first.value.event.value, chunks: chunks() };
}
