// Globs of requests (List pattern, Search include/exclude, Export include,
// a token's workspaces), all in picomatch syntax, dot files included; a
// malformed one is INVALID_ARGUMENT.
//
// picomatch turns a glob into a regular expression, and V8's usual engine
// backtracks: `*a*a*a*a*a*a*b` took 3 s against one 60-character name, and a
// few more stars, forever, on the daemon's only thread. So V8 is told to
// rerun a match on its linear-time engine once it has backtracked too much
// (50,000 times), which it does for an expression that engine takes: no
// lookarounds. The ones picomatch writes keep a segment from being "." or
// ".." (never in a workspace path) or an empty last one (ONE_CHAR below), and
// are rewritten away; a glob that still needs one (a negated extglob,
// `!(…)`) is refused. The usual engine stays first: the linear one took 22
// times as long over 22,353 paths with **/*.ts.
import v8 from "node:v8";
import picomatch from "picomatch";
import { fail } from "../errors.js";

// Read when an expression is compiled or run, so setting them before the first glob is enough.
// The first lets a glob's expression be checked with the `l` flag (the linear engine takes it).
v8.setFlagsFromString("--enable-experimental-regexp-engine");
v8.setFlagsFromString("--enable-experimental-regexp-engine-on-excessive-backtracks");

/**
 * picomatch's guards for a segment (its lib/constants.js NO_DOTS,
 * NO_DOTS_SLASH, NO_DOT_SLASH: not "." nor ".."), always true of a
 * workspace path.
 */
const DOT_GUARDS = ["(?!(?:^|\\/)\\.{1,2}(?:\\/|$))", "(?!\\.{1,2}(?:\\/|$))", "(?!\\.{0,1}(?:\\/|$))"];
// ONE_CHAR, "something follows": a segment's `*` never matches an empty last
// segment. In a workspace path only a globstar's "or the end" can put it at
// the end (the glob a/**/* must not match "a"): that choice is dropped
// there, and the guard everywhere.
const ONE_CHAR = "(?=.)";
const END_THEN_ONE_CHAR = "|$)(?=.)";
const LOOKAROUND = /\(\?<?[=!]/;

/** A matcher for any of `patterns`; `what` names the field in the error message. */
export function globMatcher(patterns: string | readonly string[], what: string): (path: string) => boolean {
  const list = typeof patterns === "string" ? [patterns] : patterns;
  const regexes = list.map((pattern) => linearRegex(pattern, what));
  // As picomatch's own matcher: a path equal to a pattern matches it ("notes (1).md", whose parentheses are a group).
  const literal = new Set(list);
  return (path) => literal.has(path) || regexes.some((regex) => regex.test(path));
}

function linearRegex(pattern: string, what: string): RegExp {
  let source: string;
  try {
    source = picomatch.makeRe(pattern, { dot: true, strictBrackets: true }).source;
  } catch (error) {
    fail("INVALID_ARGUMENT", `invalid ${what} glob: ${(error as Error).message}`);
  }
  for (const guard of DOT_GUARDS) source = source.replaceAll(guard, "");
  source = source.replaceAll(END_THEN_ONE_CHAR, ")").replaceAll(ONE_CHAR, "");
  if (LOOKAROUND.test(source)) fail("INVALID_ARGUMENT", `invalid ${what} glob ${JSON.stringify(pattern)}: negated extglobs, !(…), are not supported; use an exclude instead`);
  try {
    new RegExp(source, "l"); // throws unless the linear engine can take it over
    return new RegExp(source);
  } catch (error) {
    fail("INVALID_ARGUMENT", `invalid ${what} glob ${JSON.stringify(pattern)}: ${(error as Error).message}`);
  }
}
