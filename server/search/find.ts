// Finding a literal in raw bytes. Buffer.indexOf's search keys on the
// needle's first or last byte; when that byte is common (the `1` ending
// `zqx_needle_4711`), it stops at almost every position. Looking instead for
// the needle's rarest byte with memchr (indexOf of one byte) and comparing the
// bytes around each find is what ripgrep does; over the bench tree it took
// 51 ms where indexOf took 86. Where that byte turns out to be common in a
// buffer, the search goes back to indexOf for the rest of it.

/** Printable ASCII, most common first (measured over 33 MB of JS, TS, JSON and Markdown). */
const BY_FREQUENCY = " etrnoiaslcdupmfh.g\",()_y*b/;:=vS{}xwTCEkAIR'0O-P1ND`>[]L2MFjB|<3z@U?4q6HGW58V+K&\\97$!J#YQX%Z^~";

/** How common a byte is: higher is more common. Tabs and UTF-8 bytes count as fairly common, other controls as rare. */
const COMMONNESS = new Uint8Array(256);
for (let i = 0; i < BY_FREQUENCY.length; i++) COMMONNESS[BY_FREQUENCY.charCodeAt(i)] = BY_FREQUENCY.length + 1 - i;
COMMONNESS[0x09] = COMMONNESS[0x65]!;
for (let b = 0x80; b < 0x100; b++) COMMONNESS[b] = COMMONNESS[0x6b]!; // as common as "k"

/** Rare-byte finds allowed per byte searched (and a few more) before a buffer is searched with indexOf instead. */
const FINDS_PER_BYTE = 1 / 64;

export class LiteralFinder {
  /** Offset in the needle of its rarest byte. */
  private readonly at: number;
  private readonly rare: number;

  constructor(readonly needle: Buffer) {
    let at = 0;
    for (let i = 1; i < needle.length; i++) if (COMMONNESS[needle[i]!]! < COMMONNESS[needle[at]!]!) at = i;
    this.at = at;
    this.rare = needle[at] ?? 0;
  }

  /** A search through `buf`: each call gives the next occurrence at or after `from`, or -1. Calls must not go backwards. */
  in(buf: Buffer): (from: number) => number {
    const { needle, at, rare } = this;
    const n = needle.length;
    if (n < 2) return (from) => buf.indexOf(needle, from);
    let finds = 0;
    let plain = false;
    return (from) => {
      if (plain) return buf.indexOf(needle, from);
      for (let p = buf.indexOf(rare, from + at); p >= 0; p = buf.indexOf(rare, p + 1)) {
        const start = p - at;
        if (start + n > buf.length) return -1;
        let i = 0;
        while (i < n && buf[start + i] === needle[i]) i++;
        if (i === n) return start;
        if (++finds > 64 + p * FINDS_PER_BYTE) {
          plain = true;
          return buf.indexOf(needle, start + 1);
        }
      }
      return -1;
    };
  }
}

/** What FoldedLiteralFinder's search returns once its rare byte proves common in a buffer. */
export const TOO_COMMON = -2;

const isAsciiLetter = (b: number) => (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a);

/**
 * A literal in any ASCII case ("needle", "NEEDLE", "Needle"…), for patterns
 * matched case-insensitively: memchr of its rarest byte (both cases of a
 * letter, which count as common as the two together), then a compare that
 * folds ASCII case. Where that byte proves common the search gives up with
 * TOO_COMMON (there is no indexOf to fall back on) and the caller decodes the
 * buffer instead.
 */
export class FoldedLiteralFinder {
  private readonly lower: Buffer;
  private readonly at: number;

  constructor(needle: Buffer) {
    this.lower = Buffer.from(needle.map((b) => (isAsciiLetter(b) ? b | 0x20 : b)));
    const commonness = (b: number) => (isAsciiLetter(b) ? COMMONNESS[b | 0x20]! + COMMONNESS[b & ~0x20]! : COMMONNESS[b]!);
    let at = 0;
    for (let i = 1; i < needle.length; i++) if (commonness(this.lower[i]!) < commonness(this.lower[at]!)) at = i;
    this.at = at;
  }

  /** A search through `buf`: each call gives the next occurrence at or after `from`, -1, or TOO_COMMON. Calls must not go backwards. */
  in(buf: Buffer): (from: number) => number {
    const { lower, at } = this;
    const n = lower.length;
    const rare = lower[at]!;
    const other = isAsciiLetter(rare) ? rare & ~0x20 : rare;
    const found = (i: number) => (i < 0 ? Infinity : i);
    // The next find of each case, kept while it is not behind the search.
    let nextRare = -1;
    let nextOther = -1;
    let finds = 0;
    return (from) => {
      for (let p = from + at; ; p++) {
        if (nextRare < p) nextRare = found(buf.indexOf(rare, p));
        if (nextOther < p) nextOther = other === rare ? nextRare : found(buf.indexOf(other, p));
        p = Math.min(nextRare, nextOther);
        if (p === Infinity) return -1;
        const start = p - at;
        if (start + n > buf.length) return -1;
        let i = 0;
        while (i < n && (isAsciiLetter(buf[start + i]!) ? buf[start + i]! | 0x20 : buf[start + i]) === lower[i]) i++;
        if (i === n) return start;
        if (++finds > 64 + p * FINDS_PER_BYTE) return TOO_COMMON;
      }
    };
  }
}
