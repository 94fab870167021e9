// The extraction caps, with small limits: a gzip bomb, a million-member
// archive, deep and long names. Each is refused whole and the staging
// directory goes away.
import { mkdtempSync, readdirSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import tar from "tar-stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FileToolsError } from "../errors.js";
import { Workspace } from "../workspace/workspace.js";
import { extractArchive, memberParts, DEFAULT_LIMITS, type ExtractLimits } from "./extract.js";

async function tarOf(members: Array<{ name: string; size?: number; content?: Buffer; type?: tar.Header["type"] }>): Promise<Buffer> {
  const pack = tar.pack();
  const parts: Buffer[] = [];
  const done = (async () => {
    for await (const chunk of pack) parts.push(Buffer.from(chunk as Uint8Array));
  })();
  for (const m of members) {
    await new Promise<void>((resolve, reject) => {
      const cb = (e?: Error | null) => (e ? reject(e) : resolve());
      if (m.content) pack.entry({ name: m.name, type: m.type, size: m.content.length }, m.content, cb);
      else pack.entry({ name: m.name, type: m.type ?? "directory" }, cb);
    });
  }
  pack.finalize();
  await done;
  return Buffer.concat(parts);
}

async function* bytes(buffer: Buffer): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < buffer.length; i += 65536) yield buffer.subarray(i, i + 65536);
}

let dir: string;
let workspace: Workspace;
beforeAll(async () => {
  dir = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-extract-")));
  workspace = await Workspace.open("x", dir, false);
});
afterAll(async () => {
  await workspace.close();
  rmSync(dir, { recursive: true, force: true });
});

async function refused(archive: Buffer, limits: ExtractLimits): Promise<string> {
  const staging = await workspace.createStaging();
  try {
    await extractArchive(bytes(archive), staging, { limits, damaged: "UNSAFE_ARCHIVE" });
  } catch (error) {
    await staging.discard();
    expect(error).toBeInstanceOf(FileToolsError);
    expect((error as FileToolsError).reason).toBe("UNSAFE_ARCHIVE");
    expect(readdirSync(dir)).toEqual([]);
    return (error as FileToolsError).message;
  }
  await staging.discard();
  throw new Error("expected a refusal");
}

describe("extraction caps", () => {
  it("a gzip bomb stops at the byte cap", async () => {
    const bomb = gzipSync(await tarOf([{ name: "zeros", content: Buffer.alloc(64 * 1024 * 1024) }]));
    expect(bomb.length).toBeLessThan(200 * 1024);
    expect(await refused(bomb, { ...DEFAULT_LIMITS, maxBytes: 1024 * 1024, maxMembers: 100 })).toMatch(/bytes/);
  });

  it("too many members", async () => {
    const many = await tarOf(Array.from({ length: 200 }, (_, i) => ({ name: `d${i}/` })));
    expect(await refused(many, { ...DEFAULT_LIMITS, maxMembers: 100 })).toMatch(/more than 100 members/);
  });

  it("too deep, too long", async () => {
    expect(await refused(await tarOf([{ name: "a/b/c/d/e/f/" }]), { ...DEFAULT_LIMITS, maxDepth: 4 })).toMatch(/deeper/);
    expect(() => memberParts("x".repeat(5000), DEFAULT_LIMITS)).toThrow(/longer than 4095/);
  });

  it("names: absolute, .., drive letters and NUL are refused; ./ prefixes and trailing slashes are fine", () => {
    for (const bad of ["/etc/passwd", "//x", "a/../../b", "..", "c:..\\x", "a\u0000b"]) expect(() => memberParts(bad, DEFAULT_LIMITS)).toThrow(FileToolsError);
    expect(memberParts("a\\b", DEFAULT_LIMITS)).toEqual(["a\\b"]); // a byte of a POSIX name, as the API makes it
    expect(memberParts("./a/./b/", DEFAULT_LIMITS)).toEqual(["a", "b"]);
    expect(memberParts("./", DEFAULT_LIMITS)).toEqual([]);
  });
});
