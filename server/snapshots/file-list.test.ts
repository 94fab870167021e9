import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { parseManifest, tarballKey, type Manifest } from "./manifest.js";
import { FileListBuilder, recordsOf } from "./file-list.js";
import { diffRecords } from "./diff.js";

const ID = "20260101T000000000Z-0123abcd";
const digest = (i: number) => createHash("sha256").update(String(i)).digest();
const hex = (i: number) => digest(i).toString("hex");

function manifestWith(files: unknown): string {
  const manifest: Omit<Manifest, "files"> & { files?: unknown } = {
    id: ID,
    workspace: "w",
    runId: "",
    createdAt: "2026-01-01T00:00:00.000Z",
    sizeBytes: 0,
    sha256: "0".repeat(64),
    fileCount: 0,
    labels: {},
    changes: { created: 0, modified: 0, deleted: 0, moved: 0 },
    changeSet: [],
    tarball: tarballKey("w", ID),
    parent: "",
    files,
  };
  if (files === undefined) delete manifest.files;
  return JSON.stringify(manifest);
}

describe("the manifest's file list", () => {
  it("holds 100,000 files in under 6.5 MB of JSON (4.3 MB of it the digests), validated by the manifest schema and read back exactly", () => {
    const builder = new FileListBuilder();
    // A source tree in walk order, 20 files a directory: /src/pkg-NNN/dir-N/file-NNNNN.ts (about 32 characters).
    const pathOf = (i: number) => `/src/pkg-${Math.floor(i / 200)}/dir-${Math.floor(i / 20) % 10}/file-${i}.ts`;
    for (let i = 0; i < 100_000; i++) builder.addFile(pathOf(i), (i * 37) % 200_000, i % 3 ? 0o644 : 0o755, hex(i));
    builder.addLink("/current", "src/pkg-1");
    const text = manifestWith(builder.build());
    const started = performance.now();
    const manifest = parseManifest("w", ID, text);
    const parseMs = performance.now() - started;
    console.log(`100,000 files: manifest ${(text.length / 1e6).toFixed(2)} MB of JSON, parsed and validated in ${parseMs.toFixed(0)} ms`);
    expect(text.length).toBeLessThan(6_500_000);
    const records = [...recordsOf(manifest.files!)];
    expect(records).toHaveLength(100_001);
    expect(records.map((r) => r.path).slice(0, 100_000)).toEqual(Array.from({ length: 100_000 }, (_, i) => pathOf(i)));
    expect(records[54_321]).toEqual({ path: "/src/pkg-271/dir-6/file-54321.ts", type: "file", size: (54_321 * 37) % 200_000, mode: 0o755, sha256: digest(54_321).toString("hex"), target: "" });
    expect(records[100_000]).toEqual({ path: "/current", type: "symlink", size: 0, mode: 0o777, sha256: "", target: "src/pkg-1" });
  });

  it("is optional (manifests older than it parse) but refused when its arrays disagree", () => {
    expect(parseManifest("w", ID, manifestWith(undefined)).files).toBeUndefined();
    const good = { paths: ["/a"], shared: [0], sizes: [1], modes: [0o644], sha256: digest(1).toString("base64"), links: { paths: [], targets: [] } };
    expect(parseManifest("w", ID, manifestWith(good)).files?.paths).toEqual(["/a"]);
    for (const bad of [
      { ...good, sizes: [] },
      { ...good, shared: [1] },
      { ...good, shared: [] },
      { ...good, modes: [0o644, 0o644] },
      { ...good, sha256: digest(1).subarray(0, 31).toString("base64") },
      { ...good, sha256: "not base64!" },
      { ...good, links: { paths: ["/l"], targets: [] } },
      { ...good, sizes: [-1] },
    ]) {
      expect(() => parseManifest("w", ID, manifestWith(bad)), JSON.stringify(bad)).toThrow(/damaged/);
    }
  });
});

describe("diffRecords", () => {
  it("reports added, removed and modified paths (content, mode, type or target) and counts the unchanged", async () => {
    const from = new FileListBuilder();
    from.addFile("/same", 1, 0o644, hex(1));
    from.addFile("/content", 1, 0o644, hex(2));
    from.addFile("/mode", 1, 0o644, hex(3));
    from.addFile("/gone", 1, 0o644, hex(4));
    from.addFile("/became-link", 1, 0o644, hex(5));
    from.addLink("/link", "a");
    const to = new FileListBuilder();
    to.addFile("/same", 1, 0o644, hex(1));
    to.addFile("/content", 1, 0o644, hex(20));
    to.addFile("/mode", 1, 0o600, hex(3));
    to.addFile("/new", 2, 0o644, hex(6));
    to.addLink("/became-link", "same");
    to.addLink("/link", "b");
    const counts = { added: 0, removed: 0, modified: 0, unchanged: 0 };
    const entries = [];
    for await (const entry of diffRecords(recordsOf(from.build()), recordsOf(to.build()), counts)) entries.push([entry.kind, entry.path]);
    expect(entries).toEqual([
      ["modified", "/content"],
      ["modified", "/mode"],
      ["added", "/new"],
      ["modified", "/became-link"],
      ["modified", "/link"],
      ["removed", "/gone"],
    ]);
    expect(counts).toEqual({ added: 1, removed: 1, modified: 4, unchanged: 1 });
  });
});
