// Required literals of a regular expression: a few strings, one of which every
// match contains. The workers look for them in the raw bytes first, so that
// files and lines without any are never decoded nor run through the regex
// (the idea of ripgrep's and RE2's prefilters, kept small: a conservative
// walk over the ECMAScript syntax, non-unicode mode, case-sensitive only).
//
// Each part of the pattern gets `exact` (every string it can match, when that
// is a short list) and `required` (strings one of which any match of it
// contains). A run of exact parts in a sequence multiplies out into longer
// strings; an alternation unites its branches; anything else (classes, `.`,
// optional parts, backreferences) knows nothing and breaks a run.

/** More strings than this are not worth searching for one by one. */
const MAX_LITERALS = 8;
/** Shorter literals match too often to save anything. */
const MIN_LITERAL_BYTES = 2;

interface Info {
  exact: string[] | null;
  required: string[] | null;
}

const UNKNOWN: Info = { exact: null, required: null };
const EMPTY: Info = { exact: [""], required: null };
const ESCAPED_CHARS: Record<string, string> = { n: "\n", r: "\r", t: "\t", f: "\f", v: "\v" };
const CLASS_ESCAPES = new Set([..."dDwWsS"]);

/**
 * Literals (at least MIN_LITERAL_BYTES UTF-8 bytes each, at most MAX_LITERALS)
 * one of which every match of `source` contains; null when there is no such
 * useful list. `source` is a valid pattern for flags without `u`.
 */
export function requiredLiterals(source: string): string[] | null {
  const parser = new Parser(source);
  const info = parser.alternation();
  if (parser.pos < source.length) return null; // an unbalanced ")": not a pattern we understand
  const chosen = better(info.exact, info.required);
  return chosen && score(chosen) >= MIN_LITERAL_BYTES ? chosen : null;
}

/** A list's worth: its shortest string's UTF-8 length (-1 when it is useless). */
function score(list: string[] | null): number {
  if (!list || list.length === 0 || list.length > MAX_LITERALS) return -1;
  let shortest = Infinity;
  for (const s of list) {
    if (!s.isWellFormed() || s.includes("\ufffd")) return -1; // not the bytes of any UTF-8 text
    shortest = Math.min(shortest, Buffer.byteLength(s));
  }
  return shortest;
}

function better(a: string[] | null, b: string[] | null): string[] | null {
  const sa = score(a);
  const sb = score(b);
  if (sa < 0 && sb < 0) return null;
  if (sa !== sb) return sa > sb ? a : b;
  return a!.length <= b!.length ? a : b;
}

function cross(a: string[], b: string[]): string[] | null {
  if (a.length * b.length > MAX_LITERALS) return null;
  return unique(a.flatMap((x) => b.map((y) => x + y)));
}

const unique = (list: string[]) => [...new Set(list)];

class Parser {
  pos = 0;
  constructor(private readonly source: string) {}

  /** Branches separated by "|", up to ")" or the end. */
  alternation(): Info {
    const branches = [this.sequence()];
    while (this.source[this.pos] === "|") {
      this.pos++;
      branches.push(this.sequence());
    }
    if (branches.length === 1) return branches[0]!;
    const exact = branches.every((b) => b.exact) ? unique(branches.flatMap((b) => b.exact!)) : null;
    const each = branches.map((b) => better(b.exact, b.required));
    const required = each.every((r) => r) ? unique(each.flatMap((r) => r!)) : null;
    return {
      exact: exact && exact.length <= MAX_LITERALS ? exact : null,
      required: required && required.length <= MAX_LITERALS ? required : null,
    };
  }

  private sequence(): Info {
    let run: string[] = [""];
    let broken = false;
    let required: string[] | null = null;
    const close = () => {
      required = better(required, run);
    };
    while (this.pos < this.source.length && this.source[this.pos] !== "|" && this.source[this.pos] !== ")") {
      const item = this.quantified();
      if (item.exact) {
        const longer = cross(run, item.exact);
        if (longer) run = longer;
        else {
          close();
          broken = true;
          run = item.exact;
        }
      } else {
        close();
        broken = true;
        required = better(required, item.required);
        run = [""];
      }
    }
    close();
    return { exact: broken ? null : run, required };
  }

  private quantified(): Info {
    const atom = this.atom();
    const rest = this.source.slice(this.pos);
    let min: number;
    let max: number;
    const braces = /^\{(\d+)(?:(,)(\d*))?\}/.exec(rest);
    if (rest[0] === "*" || rest[0] === "?") [min, max, this.pos] = [0, Infinity, this.pos + 1];
    else if (rest[0] === "+") [min, max, this.pos] = [1, Infinity, this.pos + 1];
    else if (braces) {
      min = Number(braces[1]);
      max = braces[2] === undefined ? min : braces[3] === "" ? Infinity : Number(braces[3]);
      this.pos += braces[0].length;
    } else return atom;
    if (this.source[this.pos] === "?") this.pos++; // lazy
    if (min === 0) return UNKNOWN;
    if (min === 1 && max === 1) return atom;
    return { exact: null, required: better(atom.exact, atom.required) };
  }

  private atom(): Info {
    const c = this.source[this.pos]!;
    this.pos++;
    switch (c) {
      case "(":
        return this.group();
      case "[":
        this.skipClass();
        return UNKNOWN;
      case ".":
        return UNKNOWN;
      case "^":
      case "$":
        return EMPTY;
      case "\\":
        return this.escape();
      default:
        return { exact: [c], required: null };
    }
  }

  private group(): Info {
    const s = this.source;
    let lookaround = false;
    if (s.startsWith("?:", this.pos)) this.pos += 2;
    else if (s.startsWith("?=", this.pos) || s.startsWith("?!", this.pos)) [lookaround, this.pos] = [true, this.pos + 2];
    else if (s.startsWith("?<=", this.pos) || s.startsWith("?<!", this.pos)) [lookaround, this.pos] = [true, this.pos + 3];
    else if (s.startsWith("?<", this.pos)) this.pos = s.indexOf(">", this.pos) + 1;
    const inner = this.alternation();
    this.pos++; // ")"
    return lookaround ? EMPTY : inner; // a lookaround matches no text of its own
  }

  private skipClass(): void {
    for (; this.pos < this.source.length; this.pos++) {
      if (this.source[this.pos] === "\\") this.pos++;
      else if (this.source[this.pos] === "]") {
        this.pos++;
        return;
      }
    }
  }

  private escape(): Info {
    const s = this.source;
    const c = s[this.pos] ?? "";
    this.pos++;
    const char = (text: string): Info => ({ exact: [text], required: null });
    if (c === "b" || c === "B") return EMPTY;
    if (CLASS_ESCAPES.has(c)) return UNKNOWN;
    if (ESCAPED_CHARS[c] !== undefined) return char(ESCAPED_CHARS[c]);
    if (/[0-9]/.test(c)) {
      // \0 alone is NUL; anything else is a backreference or a legacy octal escape
      if (c === "0" && !/[0-9]/.test(s[this.pos] ?? "")) return char("\0");
      while (/[0-9]/.test(s[this.pos] ?? "")) this.pos++;
      return UNKNOWN;
    }
    const hex = (digits: number): Info => {
      const code = s.slice(this.pos, this.pos + digits);
      if (!new RegExp(`^[0-9a-fA-F]{${digits}}$`).test(code)) return UNKNOWN;
      this.pos += digits;
      return char(String.fromCharCode(parseInt(code, 16)));
    };
    if (c === "x") return hex(2);
    if (c === "u") return hex(4);
    if (c === "c") {
      const letter = s[this.pos] ?? "";
      if (!/[a-zA-Z]/.test(letter)) return UNKNOWN;
      this.pos++;
      return char(String.fromCharCode(letter.charCodeAt(0) % 32));
    }
    if (c === "k") {
      if (s[this.pos] === "<") this.pos = s.indexOf(">", this.pos) + 1;
      return UNKNOWN;
    }
    return char(c); // an identity escape: \. \/ \( …
  }
}
