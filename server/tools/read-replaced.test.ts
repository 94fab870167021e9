// A file replaced while it is read (an atomic write renames another file over
// its name, so the inode a reader opened has no link left): its bytes are
// never used. Before anything is answered the name is opened again and read
// from the start, a bounded number of times; once a Read has sent its header,
// the stream ends with CONTENT_CHANGED. Never PATH_ESCAPES_WORKSPACE, which is
// for hard links. node:fs is wrapped so that the replacement happens exactly
// after the open.
import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { Workspace } from "../workspace/workspace.js";
import { readFile } from "./read.js";
import { downloadFile } from "./transfer.js";
import { readMedia } from "./media.js";
import { statPath } from "./stat.js";

/** How many of the next opens of `name` are followed by a replacement of the file, and how many opens there were. */
const hook = { name: "", replacements: 0, opens: 0, replace: () => {} };
vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof import("node:fs")>();
  const openSync = ((file: string, ...rest: unknown[]) => {
    const fd = (fs.openSync as (...args: unknown[]) => number)(file, ...rest);
    if (hook.name && String(file).endsWith(`/${hook.name}`)) {
      hook.opens++;
      if (hook.replacements > 0) {
        hook.replacements--;
        hook.replace();
      }
    }
    return fd;
  }) as typeof fs.openSync;
  return { ...fs, openSync, default: { ...fs, openSync } };
});

let root: string;
let workspace: Workspace;
const leaf = () => path.join(root, "leaf");
let version = 0;
/** Version `v` of the file: `size` bytes in lines of 64. */
const contentOf = (v: number, size: number) => `${v}`.padEnd(63, ".").concat("\n").repeat(size / 64);
/** Puts a new version of the file in place as a Write does: written beside it, renamed over it. */
function replaceFile(size: number): void {
  writeFileSync(path.join(root, "next"), contentOf(++version, size));
  renameSync(path.join(root, "next"), leaf());
}

beforeEach(async () => {
  root = mkdtempSync(path.join(tmpdir(), "read-replaced-"));
  workspace = await Workspace.open("test", root, false);
  version = 0;
});

afterEach(() => {
  hook.name = "";
  workspace.close();
  rmSync(root, { recursive: true, force: true });
});

/** Every event of a Read of the file, its text joined. */
async function readText(): Promise<string> {
  let text = "";
  for await (const part of readFile(workspace, "leaf", { encoding: "" }, 1 << 30, new AbortController().signal)) {
    if ("text" in part) text += part.text;
  }
  return text;
}

function replacedAfterOpens(replacements: number, size: number): void {
  Object.assign(hook, { name: "leaf", replacements, opens: 0, replace: () => replaceFile(size) });
}

it.each([
  ["within the first read", 128],
  ["a few chunks", 3 << 20],
])("Read (%s): a file replaced after its open is opened again and read whole, from its new version", async (_, size) => {
  replaceFile(size);
  replacedAfterOpens(2, size);
  const text = await readText();
  expect(hook.opens).toBe(3);
  expect(text).toBe(contentOf(3, size));
});

it("Read, Stat, Download and ReadMedia: a file replaced after each of 3 opens is CONTENT_CHANGED, not PATH_ESCAPES_WORKSPACE", async () => {
  replaceFile(128);
  const calls = [
    readText,
    () => statPath(workspace, "leaf", { detectBinary: true, countLines: true }),
    async () => {
      for await (const part of downloadFile(workspace, "leaf", new AbortController().signal)) void part;
    },
    () => readMedia(workspace, "leaf", {}, new AbortController().signal),
  ];
  for (const call of calls) {
    replacedAfterOpens(5, 128);
    await expect(call()).rejects.toMatchObject({ reason: "CONTENT_CHANGED", message: "/leaf was replaced or changed each time it was read; read it again" });
    expect(hook.opens).toBe(3);
  }
});

it("Read: a file replaced after its header was sent ends the stream with CONTENT_CHANGED, its bytes not sent", async () => {
  const size = 3 << 20;
  replaceFile(size);
  const window = readFile(workspace, "leaf", { encoding: "" }, 1 << 30, new AbortController().signal);
  const first = await window.next();
  expect(first.value).toMatchObject({ entry: { size: BigInt(size) } });
  replaceFile(size);
  let sent = 0;
  const rest = (async () => {
    for (let next = await window.next(); !next.done; next = await window.next()) if ("text" in next.value) sent += next.value.text.length;
  })();
  await expect(rest).rejects.toMatchObject({ reason: "CONTENT_CHANGED", message: "/leaf was replaced or removed while it was being read; read it again" });
  expect(sent).toBeLessThanOrEqual(1 << 20); // the first chunk, read before the replacement
});
