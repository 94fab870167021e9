// ReadMedia through a real daemon and the TypeScript client: images passed
// through or downscaled (sharp), PDFs' text by page windows (pdf.js in the
// worker pool), Read's BINARY_FILE naming the media type, and hostile files
// (cut short, a header that lies, garbage after a PDF signature, PDFs past the
// pool's memory and time limits) refused with MEDIA_UNREADABLE while the
// daemon goes on serving.
import { mkdirSync, truncateSync, writeFileSync } from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WorkspaceClient } from "../../clients/ts/src/workspace.js";
import { deflatedRepeat, makePdf, noisyPng, pdfOfManyPages, pdfWithDeflatedPage, pngClaiming, solidImage } from "../support/media.js";
import { expectError, forbidHostPath, startDaemon, type Daemon } from "./daemon.js";

let daemon: Daemon;
let ws: WorkspaceClient;
const PAGES = Array.from({ length: 30 }, (_, i) => `Page ${i + 1} first line\nand its second (line)`);

beforeAll(async () => {
  daemon = await startDaemon();
  forbidHostPath(daemon.dataDir);
  await daemon.client.createWorkspace("media");
  ws = daemon.client.workspace("media");
  const root = daemon.hostDir("media");
  mkdirSync(path.join(root, "img"), { recursive: true });
  const png = await solidImage(40, 30, "png");
  writeFileSync(path.join(root, "img/small.png"), png);
  writeFileSync(path.join(root, "img/photo.jpg"), await solidImage(64, 48, "jpeg"));
  writeFileSync(path.join(root, "img/anim.gif"), await solidImage(10, 10, "gif"));
  writeFileSync(path.join(root, "img/pic.webp"), await solidImage(12, 6, "webp"));
  writeFileSync(path.join(root, "img/wide.png"), await solidImage(4000, 100, "png"));
  writeFileSync(path.join(root, "img/noise.png"), await noisyPng(1200, 1200));
  writeFileSync(path.join(root, "img/named.txt"), png); // the bytes decide, not the name
  writeFileSync(path.join(root, "img/cut.png"), png.subarray(0, png.length - 30));
  writeFileSync(path.join(root, "img/bomb.png"), pngClaiming(png, 20_000, 20_000));
  writeFileSync(path.join(root, "img/garbage.jpg"), Buffer.concat([Buffer.from([0xff, 0xd8, 0xff]), Buffer.alloc(500, 0x41)]));
  const pdf = makePdf(PAGES);
  writeFileSync(path.join(root, "doc.pdf"), pdf);
  writeFileSync(path.join(root, "blank.pdf"), makePdf([""]));
  writeFileSync(path.join(root, "cut.pdf"), pdf.subarray(0, 200));
  writeFileSync(path.join(root, "garbage.pdf"), Buffer.concat([Buffer.from("%PDF-1.7\n"), Buffer.alloc(2000, 0xee)]));
  writeFileSync(path.join(root, "notes.txt"), "just text\n");
  writeFileSync(path.join(root, "huge.png"), png);
  truncateSync(path.join(root, "huge.png"), (64 << 20) + 1); // a PNG's first bytes, then zeros past the 64 MiB ReadMedia holds
  writeFileSync(path.join(root, "blob.bin"), Buffer.from([0, 1, 2, 3, 0, 255]));
}, 60_000);

afterAll(async () => {
  await daemon?.stop();
});

describe("images", () => {
  it("an image within the caps comes back as the file's own bytes, with its size", async () => {
    const read = await ws.readMedia("img/small.png");
    expect(read.mediaType).toBe("image/png");
    expect(read.image).toMatchObject({ mediaType: "image/png", width: 40, height: 30, originalWidth: 40, originalHeight: 30, downscaled: false });
    expect(read.image!.data.equals(await solidImage(40, 30, "png"))).toBe(true);
  });

  it.each([
    ["img/photo.jpg", "image/jpeg", 64, 48],
    ["img/anim.gif", "image/gif", 10, 10],
    ["img/pic.webp", "image/webp", 12, 6],
    ["img/named.txt", "image/png", 40, 30],
  ])("%s is read as %s (by its bytes)", async (file, type, width, height) => {
    const read = await ws.readMedia(file);
    expect(read.image).toMatchObject({ mediaType: type, width, height, downscaled: false });
    expect((await sharp(read.image!.data).metadata()).width).toBe(width);
  });

  it("an image wider than the side cap is downscaled to it, keeping its aspect ratio, in its own format", async () => {
    const read = await ws.readMedia("img/wide.png");
    expect(read.image).toMatchObject({ mediaType: "image/png", width: 2000, height: 50, originalWidth: 4000, originalHeight: 100, downscaled: true });
    const decoded = await sharp(read.image!.data).metadata();
    expect([decoded.format, decoded.width, decoded.height]).toEqual(["png", 2000, 50]);
    const smaller = await ws.readMedia("img/wide.png", { maxImageSide: 400 });
    expect([smaller.image!.width, smaller.image!.height]).toEqual([400, 10]);
  });

  it("a downscaled photo is upright by its EXIF orientation", async () => {
    const sideways = await sharp({ create: { width: 300, height: 100, channels: 3, background: "#808080" } }).jpeg().withMetadata({ orientation: 6 }).toBuffer();
    await ws.writeBytes("img/sideways.jpg", sideways);
    const read = await ws.readMedia("img/sideways.jpg", { maxImageSide: 150 });
    expect(read.image).toMatchObject({ width: 50, height: 150, originalWidth: 300, originalHeight: 100, downscaled: true });
  });

  it("an image over the byte cap is re-encoded (a PNG of noise as JPEG) and shrunk until it fits", async () => {
    const read = await ws.readMedia("img/noise.png", { maxImageBytes: 100_000 });
    expect(read.image!.downscaled).toBe(true);
    expect(read.image!.data.length).toBeLessThanOrEqual(100_000);
    expect(read.image!.mediaType).toBe("image/jpeg");
    expect((await sharp(read.image!.data).metadata()).format).toBe("jpeg");
  });

  it.each([
    ["img/cut.png", /img\/cut\.png cannot be decoded as an image/],
    ["img/bomb.png", /img\/bomb\.png is 20000×20000 pixels, more than the 50,000,000 an image may have/],
    ["img/garbage.jpg", /img\/garbage\.jpg cannot be decoded as an image/],
  ])("a hostile image %s is MEDIA_UNREADABLE, saying why", async (file, message) => {
    const error = await expectError(ws.readMedia(file), "FAILED_PRECONDITION", "MEDIA_UNREADABLE");
    expect(error.message).toMatch(message);
  });

  it("bad caps are INVALID_ARGUMENT", async () => {
    await expectError(ws.readMedia("img/small.png", { maxImageSide: 9000 }), "INVALID_ARGUMENT", "INVALID_ARGUMENT");
    await expectError(ws.readMedia("doc.pdf", { startPage: 0 }), "INVALID_ARGUMENT", "INVALID_ARGUMENT");
  });
});

describe("PDFs", () => {
  it("gives the text of a window of pages, the page count and where to go on", async () => {
    const read = await ws.readMedia("doc.pdf", { startPage: 2, pageCount: 3 });
    expect(read.mediaType).toBe("application/pdf");
    expect(read.image).toBeUndefined();
    expect(read.pageCount).toBe(30);
    expect(read.pages).toEqual([2, 3, 4].map((n) => ({ number: n, text: `Page ${n} first line\nand its second (line)\n`, cut: false })));
    expect([read.nextPage, read.eof, read.truncated]).toEqual([5, false, false]);
  });

  it("the last window reaches the end; past it, no pages", async () => {
    const last = await ws.readMedia("doc.pdf", { startPage: 29 });
    expect(last.pages.map((p) => p.number)).toEqual([29, 30]);
    expect([last.nextPage, last.eof]).toEqual([undefined, true]);
    const past = await ws.readMedia("doc.pdf", { startPage: 31 });
    expect([past.pages.length, past.pageCount, past.eof]).toEqual([0, 30, true]);
  });

  it("max_bytes stops at a whole page; a first page longer than it is cut", async () => {
    const pageBytes = Buffer.byteLength("Page 1 first line\nand its second (line)\n");
    const window = await ws.readMedia("doc.pdf", { maxBytes: pageBytes * 2 + 5 });
    expect(window.pages.map((p) => p.number)).toEqual([1, 2]);
    expect([window.truncated, window.nextPage]).toEqual([true, 3]);
    const cut = await ws.readMedia("doc.pdf", { maxBytes: 10 });
    expect(cut.pages).toEqual([{ number: 1, text: "Page 1 fir", cut: true }]);
  });

  it("a cut falls on a character boundary", async () => {
    await ws.writeBytes("accents.pdf", makePdf(["a\u00e9\u00e9"])); // latin1 in the PDF, two UTF-8 bytes each in the text
    expect((await ws.readMedia("accents.pdf", { maxBytes: 2 })).pages).toEqual([{ number: 1, text: "a", cut: true }]);
    expect((await ws.readMedia("accents.pdf", { maxBytes: 3 })).pages).toEqual([{ number: 1, text: "a\u00e9", cut: true }]);
  });

  it("images asked for at once are all answered", async () => {
    const reads = await Promise.all(Array.from({ length: 6 }, (_, i) => ws.readMedia(i % 2 ? "img/wide.png" : "img/small.png")));
    expect(reads.map((read) => read.image!.width)).toEqual([40, 2000, 40, 2000, 40, 2000]);
  });

  it("a page without text is an empty page", async () => {
    const read = await ws.readMedia("blank.pdf");
    expect(read.pages).toEqual([{ number: 1, text: "", cut: false }]);
  });

  it.each(["cut.pdf", "garbage.pdf"])("a hostile PDF %s is MEDIA_UNREADABLE, and the daemon goes on serving", async (file) => {
    const error = await expectError(ws.readMedia(file), "FAILED_PRECONDITION", "MEDIA_UNREADABLE");
    expect(error.message).toMatch(new RegExp(`^/${file.replace(".", "\\.")} cannot be read as a PDF: Invalid PDF structure`));
    expect((await ws.readMedia("doc.pdf", { pageCount: 1 })).pages[0]!.number).toBe(1);
  });
});

describe("PDFs past the worker pool's limits", () => {
  it(
    "a decompression bomb, a page of a gigabyte of text and a million pages are MEDIA_UNREADABLE, saying which limit; the daemon serves meanwhile, and the pool reads the next PDF",
    async () => {
      // 4 GiB of zeros and 1 GiB of text operators, each deflated to a few megabytes: held whole once inflated.
      await ws.writeBytes("limits/bomb.pdf", pdfWithDeflatedPage(deflatedRepeat(Buffer.alloc(1 << 20), 4096)));
      await ws.writeBytes("limits/text.pdf", pdfWithDeflatedPage(deflatedRepeat(Buffer.from("(ab) Tj ".repeat(1 << 17)), 1024)));
      // A page tree pdf.js walks for longer than the time budget, in little memory.
      await ws.writeBytes("limits/pages.pdf", pdfOfManyPages(1_000_000));
      const refused = (file: string) => expectError(ws.readMedia(`limits/${file}`), "FAILED_PRECONDITION", "MEDIA_UNREADABLE");
      const [bomb, text, pages] = await Promise.all([
        refused("bomb.pdf"),
        refused("text.pdf"),
        refused("pages.pdf"),
        // The daemon's own thread is not the pool's: other calls are answered while the workers are busy.
        ws.readText("notes.txt").then((read) => expect(read.text).toBe("just text\n")),
      ]);
      // Memory is the bound these two reach first on an idle machine; on a loaded one (three PDFs and other test files at once) the 30 s budget can come first.
      expect(bomb.message).toMatch(/^\/limits\/bomb\.pdf: its text (needs more than 512 MiB|took more than 30 s) to extract$/);
      expect(text.message).toMatch(/^\/limits\/text\.pdf: its text (needs more than 512 MiB|took more than 30 s) to extract$/);
      expect(pages.message).toBe("/limits/pages.pdf: its text took more than 30 s to extract");
      expect((await ws.readMedia("doc.pdf", { pageCount: 1 })).pages[0]).toEqual({ number: 1, text: "Page 1 first line\nand its second (line)\n", cut: false });
    },
    180_000,
  );
});

describe("at a snapshot", () => {
  it("reads an image and a PDF as a stored snapshot has them, after the live files went", async () => {
    await ws.writeBytes("snap/dot.png", await solidImage(5, 4, "png"));
    await ws.writeBytes("snap/doc.pdf", makePdf(["then"]));
    const run = await ws.startRun();
    const { snapshot } = await ws.finishRun(run.id);
    await ws.delete("snap", { recursive: true });
    const image = await ws.readMedia("snap/dot.png", { atSnapshot: snapshot!.id });
    expect([image.image!.width, image.image!.height]).toEqual([5, 4]);
    expect((await ws.readMedia("snap/doc.pdf", { atSnapshot: snapshot!.id })).pages).toEqual([{ number: 1, text: "then\n", cut: false }]);
    await expectError(ws.readMedia("snap/dot.png"), "NOT_FOUND", "NOT_FOUND");
  });
});

describe("other files", () => {
  it("Read of an image or PDF is BINARY_FILE naming its media type; of another binary file, naming none", async () => {
    expect((await expectError(ws.readText("img/photo.jpg"), "FAILED_PRECONDITION", "BINARY_FILE")).metadata.media_type).toBe("image/jpeg");
    expect((await expectError(ws.readText("doc.pdf"), "FAILED_PRECONDITION", "BINARY_FILE")).metadata.media_type).toBe("application/pdf");
    expect((await expectError(ws.readText("blob.bin"), "FAILED_PRECONDITION", "BINARY_FILE")).metadata.media_type).toBeUndefined();
  });

  it("ReadMedia of a text or other binary file is NOT_MEDIA; of a missing one NOT_FOUND", async () => {
    expect((await expectError(ws.readMedia("notes.txt"), "FAILED_PRECONDITION", "NOT_MEDIA")).message).toBe("/notes.txt is not a PNG, JPEG, GIF, WebP or PDF file");
    await expectError(ws.readMedia("blob.bin"), "FAILED_PRECONDITION", "NOT_MEDIA");
    await expectError(ws.readMedia("nope.png"), "NOT_FOUND", "NOT_FOUND");
    expect((await expectError(ws.readMedia("huge.png"), "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED")).message).toBe(
      "/huge.png is 67108865 bytes; ReadMedia reads files of at most 67108864 bytes",
    );
    await expectError(ws.readMedia("../x.png"), "PERMISSION_DENIED", "PATH_ESCAPES_WORKSPACE");
  });
});
