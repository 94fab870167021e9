// The daemon's messages name request fields and RPCs (`edits[0].old_text`,
// `replace_all`, `Download`), which is what an API caller wrote; a user of the
// command line typed flags and commands. This table says each of them in the
// command line's words, for every message of the daemon that the CLI prints.

type Replacement = string | ((match: string, ...groups: string[]) => string);

/** What a daemon message says, and what the command line calls it; applied in order. */
const CLI_TERMS: readonly [RegExp, Replacement][] = [
  [/\bedits\[(\d+)\]\.old_text\b/g, (_, index) => `--old #${Number(index) + 1}`],
  [/\bedits\[(\d+)\]\.new_text\b/g, (_, index) => `--new #${Number(index) + 1}`],
  [/\bedits\[(\d+)\]/g, (_, index) => `edit #${Number(index) + 1}`],
  [/\bold_text\b/g, "--old"],
  [/\bnew_text\b/g, "--new"],
  [/\bset replace_all\b/g, "add --all"],
  [/\bmax_results\b/g, "--max-results"],
  [/\bmax_entries\b/g, "--max-entries"],
  [/\bcontext_before\b/g, "-B/-C"],
  [/\bcontext_after\b/g, "-A/-C"],
  [/\buse Download\b/g, "use `filetools download`"],
  [/\buse Read and Write\b/g, "use `filetools read` and `filetools write`"],
];

/** A daemon message in the command line's words. */
export function inCliTerms(message: string): string {
  return CLI_TERMS.reduce(
    (text, [term, replacement]) => (typeof replacement === "string" ? text.replace(term, replacement) : text.replace(term, replacement)),
    message,
  );
}
