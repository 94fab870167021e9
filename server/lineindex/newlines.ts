// Line-feed search for the index scan, over two reusable read buffers.
//
// Buffer.indexOf costs a call into C++ per line (about 40 ns): on a file of
// short lines that, not the disk, bounds the scan. A tiny WebAssembly module
// with 128-bit SIMD compares 16 bytes at a time and is called once per
// checkpoint instead of once per line. The buffers live in its memory, so
// the file is read straight into them (no copy). Where WebAssembly SIMD is
// missing, the same interface runs on Buffer.indexOf.
//
// UTF-8, latin1 and ASCII only (a line feed is the byte 0A); UTF-16LE scans
// use the buffers with lines.ts's code-unit-aware search.

/** Line feeds in buf[from, to), or the position of the k-th one. */
export interface NewlineScanner {
  /** The two read buffers, each `chunkBytes` long; reused from scan to scan. */
  readonly buffers: readonly [Buffer, Buffer];
  /** Number of 0A bytes in buffers[which][from, to). */
  count(which: 0 | 1, from: number, to: number): number;
  /** Position in the buffer of the k-th (k ≥ 1) 0A byte in [from, to); when there are fewer, -1 - (how many there are). */
  nth(which: 0 | 1, from: number, to: number, k: number): number;
}

// ---- the WebAssembly module, assembled here so that it can be read -------

const I32 = 0x7f;
const V128 = 0x7b;
const op = {
  block: [0x02, 0x40],
  loop: [0x03, 0x40],
  if: [0x04, 0x40],
  end: [0x0b],
  br: (depth: number) => [0x0c, depth],
  brIf: (depth: number) => [0x0d, depth],
  return: [0x0f],
  get: (local: number) => [0x20, local],
  set: (local: number) => [0x21, local],
  tee: (local: number) => [0x22, local],
  load8u: [0x2d, 0x00, 0x00],
  const: (value: number) => [0x41, ...sleb(value)],
  eqz: [0x45],
  eq: [0x46],
  ltU: [0x49],
  gtU: [0x4b],
  leU: [0x4d],
  geU: [0x4f],
  ctz: [0x68],
  popcnt: [0x69],
  add: [0x6a],
  sub: [0x6b],
  and: [0x71],
  v128load: [0xfd, 0x00, 0x00, 0x00],
  i8x16splat: [0xfd, 0x0f],
  i8x16eq: [0xfd, 0x23],
  i8x16bitmask: [0xfd, 0x64],
};

function uleb(value: number): number[] {
  const out: number[] = [];
  do {
    let byte = value & 0x7f;
    value >>>= 7;
    if (value !== 0) byte |= 0x80;
    out.push(byte);
  } while (value !== 0);
  return out;
}

function sleb(value: number): number[] {
  const out: number[] = [];
  for (;;) {
    const byte = value & 0x7f;
    value >>= 7;
    if ((value === 0 && (byte & 0x40) === 0) || (value === -1 && (byte & 0x40) !== 0)) {
      out.push(byte);
      return out;
    }
    out.push(byte | 0x80);
  }
}

const vec = (items: number[][]): number[] => [...uleb(items.length), ...items.flat()];
const name = (text: string): number[] => [...uleb(text.length), ...Buffer.from(text, "utf8")];
const section = (id: number, body: number[]): number[] => [id, ...uleb(body.length), ...body];
const body = (locals: [number, number][], code: number[][]): number[] => {
  const bytes = [...vec(locals.map(([n, type]) => [...uleb(n), type])), ...code.flat(), ...op.end];
  return [...uleb(bytes.length), ...bytes];
};

// count(ptr, end) -> number of 0A bytes in [ptr, end). Locals: 2 acc, 3 splat(0A).
const COUNT = body(
  [
    [1, I32],
    [1, V128],
  ],
  [
    op.const(10), op.i8x16splat, op.set(3),
    op.block, op.loop, // 16 bytes at a time
    op.get(0), op.const(16), op.add, op.get(1), op.gtU, op.brIf(1),
    op.get(2), op.get(0), op.v128load, op.get(3), op.i8x16eq, op.i8x16bitmask, op.popcnt, op.add, op.set(2),
    op.get(0), op.const(16), op.add, op.set(0),
    op.br(0), op.end, op.end,
    op.block, op.loop, // the rest byte by byte
    op.get(0), op.get(1), op.geU, op.brIf(1),
    op.get(2), op.get(0), op.load8u, op.const(10), op.eq, op.add, op.set(2),
    op.get(0), op.const(1), op.add, op.set(0),
    op.br(0), op.end, op.end,
    op.get(2),
  ],
);

// nth(ptr, end, k) -> position of the k-th 0A byte, or -1 - found.
// Locals: 3 mask, 4 popcount, 5 k as given, 6 splat(0A).
const NTH = body(
  [
    [3, I32],
    [1, V128],
  ],
  [
    op.get(2), op.set(5),
    op.const(10), op.i8x16splat, op.set(6),
    op.block, op.loop,
    op.get(0), op.const(16), op.add, op.get(1), op.gtU, op.brIf(1),
    op.get(0), op.v128load, op.get(6), op.i8x16eq, op.i8x16bitmask, op.tee(3), op.popcnt, op.tee(4),
    op.get(2), op.ltU,
    op.if, // fewer than k here: on to the next 16 bytes
    op.get(2), op.get(4), op.sub, op.set(2),
    op.get(0), op.const(16), op.add, op.set(0),
    op.br(1), op.end,
    op.block, op.loop, // drop the k-1 lowest set bits of the mask
    op.get(2), op.const(1), op.leU, op.brIf(1),
    op.get(3), op.get(3), op.const(1), op.sub, op.and, op.set(3),
    op.get(2), op.const(1), op.sub, op.set(2),
    op.br(0), op.end, op.end,
    op.get(0), op.get(3), op.ctz, op.add, op.return,
    op.end, op.end,
    op.block, op.loop, // the rest byte by byte
    op.get(0), op.get(1), op.geU, op.brIf(1),
    op.get(0), op.load8u, op.const(10), op.eq,
    op.if,
    op.get(2), op.const(1), op.sub, op.tee(2), op.eqz,
    op.if, op.get(0), op.return, op.end,
    op.end,
    op.get(0), op.const(1), op.add, op.set(0),
    op.br(0), op.end, op.end,
    op.const(-1), op.get(5), op.get(2), op.sub, op.sub,
  ],
);

const WASM = Uint8Array.from([
  ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
  ...section(1, vec([
    [0x60, ...vec([[I32], [I32]]), ...vec([[I32]])],
    [0x60, ...vec([[I32], [I32], [I32]]), ...vec([[I32]])],
  ])),
  ...section(2, vec([[...name("env"), ...name("mem"), 0x02, 0x00, ...uleb(1)]])),
  ...section(3, vec([[0], [1]])),
  ...section(7, vec([
    [...name("count"), 0x00, 0],
    [...name("nth"), 0x00, 1],
  ])),
  ...section(10, vec([COUNT, NTH])),
]);

// The project's lib settings carry no WebAssembly typings: the little used here.
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => WasmModule;
  Memory: new (descriptor: { initial: number }) => { readonly buffer: ArrayBuffer };
  Instance: new (module: WasmModule, imports: Record<string, Record<string, unknown>>) => { readonly exports: unknown };
};
interface WasmModule {
  readonly __wasmModule?: never;
}

interface WasmExports {
  count(ptr: number, end: number): number;
  nth(ptr: number, end: number, k: number): number;
}

let compiled: WasmModule | null | undefined;

/** The compiled module, or null where WebAssembly SIMD is not available. */
function wasmModule(): WasmModule | null {
  if (compiled === undefined) {
    try {
      compiled = new WebAssembly.Module(WASM);
    } catch {
      compiled = null;
    }
  }
  return compiled;
}

const PAGE = 64 * 1024;

class WasmScanner implements NewlineScanner {
  readonly buffers: readonly [Buffer, Buffer];
  private readonly exports: WasmExports;

  constructor(module: WasmModule, private readonly chunkBytes: number) {
    const memory = new WebAssembly.Memory({ initial: Math.ceil((2 * chunkBytes) / PAGE) });
    this.exports = new WebAssembly.Instance(module, { env: { mem: memory } }).exports as unknown as WasmExports;
    this.buffers = [Buffer.from(memory.buffer, 0, chunkBytes), Buffer.from(memory.buffer, chunkBytes, chunkBytes)];
  }

  count(which: 0 | 1, from: number, to: number): number {
    const base = which * this.chunkBytes;
    return this.exports.count(base + from, base + to);
  }

  nth(which: 0 | 1, from: number, to: number, k: number): number {
    const base = which * this.chunkBytes;
    const found = this.exports.nth(base + from, base + to, k);
    return found < 0 ? found : found - base;
  }
}

class IndexOfScanner implements NewlineScanner {
  readonly buffers: readonly [Buffer, Buffer];

  constructor(chunkBytes: number) {
    this.buffers = [Buffer.allocUnsafeSlow(chunkBytes), Buffer.allocUnsafeSlow(chunkBytes)];
  }

  count(which: 0 | 1, from: number, to: number): number {
    const buf = this.buffers[which];
    let n = 0;
    for (let i = buf.indexOf(0x0a, from); i !== -1 && i < to; i = buf.indexOf(0x0a, i + 1)) n++;
    return n;
  }

  nth(which: 0 | 1, from: number, to: number, k: number): number {
    const buf = this.buffers[which];
    let found = 0;
    for (let i = buf.indexOf(0x0a, from); i !== -1 && i < to; i = buf.indexOf(0x0a, i + 1)) {
      if (++found === k) return i;
    }
    return -1 - found;
  }
}

/** A scanner with two buffers of `chunkBytes`: WebAssembly SIMD where available, unless `portable`. */
export function createNewlineScanner(chunkBytes: number, portable = false): NewlineScanner {
  const module = portable ? null : wasmModule();
  return module ? new WasmScanner(module, chunkBytes) : new IndexOfScanner(chunkBytes);
}

/** Whether scans use the WebAssembly SIMD search. */
export function simdAvailable(): boolean {
  return wasmModule() !== null;
}
