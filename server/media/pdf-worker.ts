// A PDF pool worker (pdf-pool.ts): the text of a window of a PDF's pages,
// with pdf.js. No gRPC, no file system: the bytes come in the task.
import { workerData } from "node:worker_threads";
import { getDocument } from "pdfjs-dist/legacy/build/pdf.mjs";

export interface PdfWorkerData {
  /** Bytes of buffers past which the worker ends itself (and so its task). */
  maxBufferBytes: number;
}

/** How often the buffers are counted. pdf.js yields to the event loop as it goes, and decodes a stream in blocks. */
const WATCH_MS = 20;

// A stream pdf.js decodes is held whole in a buffer, outside the heap that the
// pool's resource limit bounds: a few hundred kilobytes of deflated zeros grow
// to gigabytes (a decompression bomb). Past the limit, an exception nobody
// catches ends this worker, and the pool fails its task.
const { maxBufferBytes } = workerData as PdfWorkerData;
setInterval(() => {
  const held = process.memoryUsage().arrayBuffers;
  if (held > maxBufferBytes) throw new Error(`out of memory: the PDF worker held ${held} bytes of buffers (at most ${maxBufferBytes})`);
}, WATCH_MS).unref();

export interface PdfTask {
  data: Uint8Array;
  startPage: number;
  /** Pages wanted; undefined = to the end. */
  pageCount?: number;
  maxBytes: number;
}

export interface PdfText {
  pageCount: number;
  pages: Array<{ number: number; text: string; cut: boolean }>;
  truncated: boolean;
  /** The page to ask for next; 0 at the end. */
  nextPage: number;
  /** Set instead of the rest when pdf.js refused the document: its reason in a few words. */
  unreadable?: string;
}

export default async function extract(task: PdfTask): Promise<PdfText> {
  let document;
  try {
    document = await getDocument({ data: task.data, isEvalSupported: false, disableFontFace: true, useSystemFonts: false, verbosity: 0, stopAtErrors: false }).promise;
  } catch (error) {
    return { pageCount: 0, pages: [], truncated: false, nextPage: 0, unreadable: reasonOf(error) };
  }
  try {
    const pageCount = document.numPages;
    const last = task.pageCount === undefined ? pageCount : Math.min(pageCount, task.startPage + task.pageCount - 1);
    const pages: PdfText["pages"] = [];
    let bytes = 0;
    let truncated = false;
    for (let number = task.startPage; number <= last; number++) {
      const text = await pageText(document, number);
      const size = Buffer.byteLength(text);
      if (bytes + size > task.maxBytes) {
        if (pages.length === 0) pages.push({ number, text: cutUtf8(text, task.maxBytes), cut: true });
        truncated = true;
        break;
      }
      pages.push({ number, text, cut: false });
      bytes += size;
    }
    const after = pages.length === 0 ? Math.max(task.startPage, pageCount + 1) : pages[pages.length - 1]!.number + 1;
    return { pageCount, pages, truncated, nextPage: after <= pageCount ? after : 0 };
  } catch (error) {
    return { pageCount: 0, pages: [], truncated: false, nextPage: 0, unreadable: reasonOf(error) };
  } finally {
    await document.destroy();
  }
}

/** A page's text items, a line break where pdf.js marks one. */
async function pageText(document: Awaited<ReturnType<typeof getDocument>["promise"]>, number: number): Promise<string> {
  const page = await document.getPage(number);
  const content = await page.getTextContent();
  let text = "";
  for (const item of content.items) {
    if (!("str" in item)) continue;
    text += item.str;
    if (item.hasEOL) text += "\n";
  }
  page.cleanup();
  return text.endsWith("\n") || text === "" ? text : `${text}\n`;
}

/** The longest prefix of `text` within `maxBytes` UTF-8 bytes, on a character boundary. */
function cutUtf8(text: string, maxBytes: number): string {
  const all = Buffer.from(text);
  let end = Math.min(maxBytes, all.length);
  while (end > 0 && end < all.length && (all[end]! & 0xc0) === 0x80) end--; // the byte after the cut continues a character
  return all.subarray(0, end).toString("utf8");
}

function reasonOf(error: unknown): string {
  const name = error instanceof Error ? error.name : "";
  if (name === "PasswordException") return "it is encrypted with a password";
  const message = error instanceof Error ? error.message : String(error);
  return message.split("\n")[0]!.trim() || "damaged";
}
