// The guard's reading of the tar format, on archives written byte by byte:
// what tar-stream would read differently from other tools (a NUL inside a
// name, a pax number that does not parse, data after the end) is refused,
// empty and cut-off archives are told apart, and bombs built as streams are
// refused while they stream, for their member count or their expansion ratio.
import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { createGzip, gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { FileToolsError } from "../errors.js";
import { END, rawData, rawHeader, rawPax } from "../../test/support/tar.js";
import { DEFAULT_LIMITS, inspectArchive, type ExtractLimits } from "./extract.js";

const BLOCK = 512;

async function* streamOf(bytes: Buffer): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += 4096) yield bytes.subarray(i, i + 4096);
}

async function outcome(source: AsyncIterable<Uint8Array>, limits: ExtractLimits = DEFAULT_LIMITS, damaged: "UNSAFE_ARCHIVE" | "DATA_LOSS" = "DATA_LOSS"): Promise<string> {
  try {
    await inspectArchive(source, { limits, damaged });
    return "accepted";
  } catch (error) {
    expect(error).toBeInstanceOf(FileToolsError);
    return `${(error as FileToolsError).reason}: ${(error as FileToolsError).message}`;
  }
}

const inspect = (bytes: Buffer, limits?: ExtractLimits) => outcome(streamOf(bytes), limits);

describe("archive parsing confusions are refused (UNSAFE_ARCHIVE)", () => {
  it("a plain member and its end are accepted", async () => {
    expect(await inspect(Buffer.concat([rawHeader({ name: "a.txt", size: 3 }), rawData("abc"), END]))).toBe("accepted");
  });

  it("a NUL inside a ustar name, name prefix or link name", async () => {
    expect(await inspect(Buffer.concat([rawHeader({ name: "evil\0/../../x", size: 0 }), END]))).toMatch(/^UNSAFE_ARCHIVE: .*name has a NUL inside/);
    expect(await inspect(Buffer.concat([rawHeader({ name: "x", prefix: "a\0b" }), END]))).toMatch(/^UNSAFE_ARCHIVE: .*prefix has a NUL inside/);
    expect(await inspect(Buffer.concat([rawHeader({ name: "l", type: "2", linkname: "ok\0/../../etc" }), END]))).toMatch(/^UNSAFE_ARCHIVE: .*link name has a NUL inside/);
  });

  it("a NUL inside a pax path or a GNU long name", async () => {
    expect(await inspect(Buffer.concat([rawPax({ path: "a\0b" }), rawHeader({ name: "x" }), END]))).toMatch(/^UNSAFE_ARCHIVE: the pax path has a NUL/);
    const longName = Buffer.from("long\0name");
    const gnu = Buffer.concat([rawHeader({ name: "././@LongLink", type: "L", size: longName.length }), rawData(longName), rawHeader({ name: "x" }), END]);
    expect(await inspect(gnu)).toMatch(/^UNSAFE_ARCHIVE: a GNU long name has a NUL/);
  });

  it("a pax size that is not the member's real size, and other malformed pax numbers", async () => {
    for (const [key, value] of [["size", "1e15"], ["size", "0x10"], ["size", " 3"], ["size", "-1"], ["mtime", "garbage"], ["mtime", "1.5.2"], ["uid", "1.5"], ["gid", "abc"]] as const) {
      const archive = Buffer.concat([rawPax({ [key]: value }), rawHeader({ name: "a.txt", size: 3 }), rawData("abc"), END]);
      expect(await inspect(archive), `${key}=${value}`).toMatch(/^UNSAFE_ARCHIVE: the pax (size|mtime|uid|gid) .* is not a decimal/);
    }
    const honest = Buffer.concat([rawPax({ size: "3", mtime: "1700000000.25", path: "long/name.txt" }), rawHeader({ name: "a.txt", size: 0 }), rawData("abc"), END]);
    expect(await inspect(honest)).toBe("accepted");
  });

  it("malformed pax records and two pax headers for one member", async () => {
    const badLength = Buffer.concat([rawHeader({ name: "P", type: "x", size: 12 }), rawData("99 path=x\n\n\n"), rawHeader({ name: "x" }), END]);
    expect(await inspect(badLength)).toMatch(/^UNSAFE_ARCHIVE: a pax header record/);
    const twice = Buffer.concat([rawPax({ path: "a" }), rawPax({ path: "b" }), rawHeader({ name: "x" }), END]);
    expect(await inspect(twice)).toMatch(/^UNSAFE_ARCHIVE: .*two pax/);
    expect(await inspect(Buffer.concat([rawPax({ path: "every-member" }, "g"), rawHeader({ name: "x" }), END]))).toMatch(/^UNSAFE_ARCHIVE: a pax global header sets path/);
    expect(await inspect(Buffer.concat([rawPax({ path: "a" }), END]))).toMatch(/^UNSAFE_ARCHIVE: .*without its member/);
  });

  it("malformed octal fields (read partly by a lenient parser)", async () => {
    expect(await inspect(Buffer.concat([rawHeader({ sizeField: "12x\0\0\0\0\0\0\0\0\0" }), rawData("x".repeat(10)), END]))).toMatch(/^UNSAFE_ARCHIVE: a tar header's size is not an octal number/);
    expect(await inspect(Buffer.concat([rawHeader({ sizeField: "3\0 7\0\0\0\0\0\0\0\0" }), rawData("abc"), END]))).toMatch(/size is not an octal/);
  });

  it("data after the end-of-archive block (a lenient reader goes on extracting)", async () => {
    const hidden = Buffer.concat([rawHeader({ name: "a.txt", size: 0 }), Buffer.alloc(BLOCK), rawHeader({ name: "hidden.txt", size: 0 }), END]);
    expect(await inspect(hidden)).toMatch(/^UNSAFE_ARCHIVE: .*data after its end-of-archive block/);
  });

  it("a directory or link with a size, unknown types, sparse files", async () => {
    expect(await inspect(Buffer.concat([rawHeader({ name: "d/", type: "5", size: 512 }), rawData("x".repeat(512)), END]))).toMatch(/non-zero size/);
    expect(await inspect(Buffer.concat([rawHeader({ name: "old-style-dir/", type: "0", size: 3 }), rawData("abc"), END]))).toMatch(/non-zero size/);
    expect(await inspect(Buffer.concat([rawHeader({ name: "s", type: "S", size: 0 }), END]))).toMatch(/unsupported type "S"/);
    expect(await inspect(Buffer.concat([rawPax({ "GNU.sparse.size": "100" }), rawHeader({ name: "x" }), END]))).toMatch(/sparse/);
  });

  it("zero bytes and an empty gzip are refused; an empty tar (just its end) is a valid empty archive", async () => {
    expect(await inspect(Buffer.alloc(0))).toMatch(/^UNSAFE_ARCHIVE: the archive is empty/);
    expect(await inspect(gzipSync(Buffer.alloc(0)))).toMatch(/^UNSAFE_ARCHIVE: the archive is empty/);
    expect(await inspect(END)).toBe("accepted");
    expect(await inspect(gzipSync(END))).toBe("accepted");
  });

  it("a cut-off archive or a bad checksum is damage: the caller's reason (DATA_LOSS for a snapshot, UNSAFE_ARCHIVE for an import)", async () => {
    const whole = Buffer.concat([rawHeader({ name: "a.txt", size: 1000 }), rawData("x".repeat(1000)), END]);
    expect(await inspect(whole.subarray(0, 700))).toMatch(/^DATA_LOSS: the archive is truncated/);
    expect(await inspect(whole.subarray(0, 2 * BLOCK + BLOCK))).toMatch(/^DATA_LOSS: the archive is truncated/);
    expect(await outcome(streamOf(whole.subarray(0, 700)), DEFAULT_LIMITS, "UNSAFE_ARCHIVE")).toMatch(/^UNSAFE_ARCHIVE: the archive is truncated/);
    const gz = gzipSync(whole);
    expect(await inspect(gz.subarray(0, gz.length - 10))).toMatch(/^DATA_LOSS: the archive is damaged/);
    const corrupt = Buffer.from(whole);
    corrupt[10] = corrupt[10]! ^ 1;
    expect(await inspect(corrupt)).toMatch(/^DATA_LOSS: .*checksum/);
  });

  it("archives written by GNU tar (gnu, posix and ustar formats) are accepted", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "ftd-guard-"));
    try {
      mkdirSync(path.join(dir, "src", "d".repeat(60), "e".repeat(60)), { recursive: true });
      writeFileSync(path.join(dir, "src", "d".repeat(60), "e".repeat(60), "f".repeat(90)), "deep\n");
      writeFileSync(path.join(dir, "src", "é ü.txt"), "x".repeat(5000));
      symlinkSync("é ü.txt", path.join(dir, "src", "link"));
      for (const format of ["gnu", "posix", "ustar"]) {
        execFileSync("tar", ["-C", path.join(dir, "src"), `--format=${format}`, "-czf", path.join(dir, `${format}.tgz`), "."]);
        expect(await inspect(readFileSync(path.join(dir, `${format}.tgz`))), format).toBe("accepted");
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("archive bombs are refused while they stream (built here as streams, nothing on disk)", () => {
  function* headers(count: number): Generator<Buffer> {
    for (let i = 0; i < count; i += 1000) {
      yield Buffer.concat(Array.from({ length: Math.min(1000, count - i) }, (_, j) => rawHeader({ name: `f${i + j}` })));
    }
    yield END;
  }

  it("a gzip of endless zeros stops at the expansion ratio", async () => {
    function* zeros(): Generator<Buffer> {
      const chunk = Buffer.alloc(1 << 20);
      for (let i = 0; i < 20 * 1024; i++) yield chunk; // 20 GiB, never all read
    }
    expect(await outcome(Readable.from(zeros()).pipe(createGzip()))).toMatch(/^UNSAFE_ARCHIVE: the archive expands more than 200 times/);
  });

  it("a tar of one huge file of zeros under the byte cap stops at the expansion ratio", async () => {
    function* bigFile(): Generator<Buffer> {
      yield rawHeader({ name: "zeros", size: 8 * 1024 ** 3 });
      const chunk = Buffer.alloc(1 << 20);
      for (let i = 0; i < 8 * 1024; i++) yield chunk;
    }
    expect(await outcome(Readable.from(bigFile()).pipe(createGzip()))).toMatch(/^UNSAFE_ARCHIVE: the archive expands more than 200 times/);
  });

  it("the ratio is not held against an archive that expands to less than the floor", async () => {
    const zeros = Buffer.concat([rawHeader({ name: "zeros", size: 64 << 20 }), Buffer.alloc(64 << 20), END]);
    expect(await outcome(streamOf(gzipSync(zeros)))).toBe("accepted");
  });

  it("one member too many is refused by counting headers, before any is extracted", async () => {
    const limits = { ...DEFAULT_LIMITS, maxMembers: 20_000 };
    expect(await outcome(Readable.from(headers(20_001)).pipe(createGzip()), limits)).toMatch(/^UNSAFE_ARCHIVE: the archive has more than 20000 members/);
    expect(await outcome(Readable.from(headers(20_000)).pipe(createGzip()), limits)).toBe("accepted");
  });

  it("content over the byte cap is refused at the header that passes it", async () => {
    const limits = { ...DEFAULT_LIMITS, maxBytes: 1 << 20 };
    const archive = Buffer.concat([rawHeader({ name: "a", size: 1 << 20 }), Buffer.alloc(1 << 20), rawHeader({ name: "b", size: 1 }), rawData("x"), END]);
    expect(await outcome(streamOf(archive), limits)).toMatch(/^UNSAFE_ARCHIVE: the archive holds more than 1048576 bytes/);
  });
});
