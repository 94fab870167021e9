import { describe, expect, it } from "vitest";
import { createNewlineScanner, simdAvailable } from "./newlines.js";

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe("newline scanners", () => {
  it("WebAssembly SIMD is available on this Node", () => {
    expect(simdAvailable()).toBe(true);
  });

  for (const portable of [false, true]) {
    it(`${portable ? "indexOf" : "SIMD"}: count and nth agree with a byte loop at every alignment`, () => {
      const scanner = createNewlineScanner(4096, portable);
      const random = rng(portable ? 1 : 2);
      for (const which of [0, 1] as const) {
        const buf = scanner.buffers[which];
        for (let i = 0; i < buf.length; i++) buf[i] = random() < 0.15 ? 0x0a : random() < 0.5 ? 0x8a : 0x41;
        for (let trial = 0; trial < 300; trial++) {
          const from = Math.floor(random() * buf.length);
          const to = from + Math.floor(random() * (buf.length - from + 1));
          const positions: number[] = [];
          for (let i = from; i < to; i++) if (buf[i] === 0x0a) positions.push(i);
          expect(scanner.count(which, from, to)).toBe(positions.length);
          const k = 1 + Math.floor(random() * (positions.length + 3));
          expect(scanner.nth(which, from, to, k)).toBe(k <= positions.length ? positions[k - 1] : -1 - positions.length);
        }
      }
    });
  }
});
