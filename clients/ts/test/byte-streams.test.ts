// saveVerified refuses bytes that do not match their stream's header. The
// daemon never sends such a stream, so these streams are made here.
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { status as Code } from "@grpc/grpc-js";
import { afterAll, expect, it } from "vitest";
import { FileToolsError, saveVerified } from "../src/index.js";

const dir = mkdtempSync(path.join(tmpdir(), "ftc-ts-bytes-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const HELLO_SHA256 = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"; // sha256("hello")
const header = (size: bigint, sha256: string) => ({ event: { case: "header" as const, value: { size, sha256 } } });
const chunk = (text: string) => ({ event: { case: "chunk" as const, value: { data: new TextEncoder().encode(text) } } });

async function* stream(...messages: (ReturnType<typeof header> | ReturnType<typeof chunk>)[]) {
  yield* messages;
}

it("writes the file when size and sha256 match the header", async () => {
  const target = path.join(dir, "ok.bin");
  const progress: unknown[] = [];
  await saveVerified(stream(header(5n, HELLO_SHA256), chunk("hel"), chunk("lo")), target, (p) => progress.push(p));
  expect(readdirSync(dir)).toEqual(["ok.bin"]);
  expect(progress).toEqual([
    { bytes: 3, totalBytes: 5 },
    { bytes: 5, totalBytes: 5 },
  ]);
  rmSync(target);
});

it.each([
  ["other bytes", stream(header(5n, HELLO_SHA256), chunk("jello"))],
  ["fewer bytes", stream(header(5n, HELLO_SHA256), chunk("hell"))],
  ["no header", stream(chunk("hello"))],
])("refuses %s with DATA_LOSS and leaves no file", async (_what, messages) => {
  const error = await saveVerified(messages, path.join(dir, "bad.bin")).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(FileToolsError);
  expect(error).toMatchObject({ code: Code.DATA_LOSS });
  expect(readdirSync(dir)).toEqual([]);
});

it("into a missing directory: ENOENT naming the caller's path and its directory, not the temp file", async () => {
  const target = path.join(dir, "no-such-dir", "x.bin");
  const error = await saveVerified(stream(header(5n, HELLO_SHA256), chunk("hello")), target).catch((e: unknown) => e);
  expect(error).toMatchObject({
    code: "ENOENT",
    path: target,
    message: `ENOENT: cannot save ${target}: directory ${path.join(dir, "no-such-dir")} does not exist`,
  });
});
