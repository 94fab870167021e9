// grep: the Search RPC, printed as grep -rn prints (or as JSON Lines).
import { Option, type Command } from "commander";
import { OutputMode, SearchMatchSchema, SearchOrder, SearchResponseSchema, type SearchMatch, type SearchSummary } from "@filetools/proto/filetools/v1/files_pb.js";
import { collect, int64, integerAtLeast } from "./args.js";
import { jsonOf, note, printJsonLine, writeOut } from "./output.js";
import { sessionOf } from "./session.js";

export function addGrepCommand(program: Command): void {
  program
    .command("grep")
    .summary("search file contents with a regular expression")
    .description(
      "Search the files under a path for lines matching an ECMAScript regular expression (or a literal with -F), " +
        "in sorted path order (--sort none: as found). Prints path:line:text, context lines as path-line-text with -- between groups, as " +
        "grep -rn does. Binary files and what .gitignore excludes are skipped. --json prints JSON Lines: one " +
        '{"match"|"file"|"count": …} object per result as it arrives, then {"summary": …}. A search that found ' +
        "nothing exits 0; the summary tells.",
    )
    .argument("<workspace>", "workspace id")
    .argument("<pattern>", "regular expression (at most 1024 characters, no line breaks)")
    .argument("[path]", "file or directory to search (default: the root)")
    .option("-F, --fixed-strings", "the pattern is a literal string (fastest)")
    .option("-i, --ignore-case", "case-insensitive matching")
    .option("-g, --glob <glob>", 'only files matching (repeatable, any of them): "*.ts" at any depth, "src/**" from <path>', collect)
    .option("--exclude <glob>", "leave out matching files and directories (repeatable)", collect)
    .option("-A, --after-context <lines>", "lines of context after each match", integerAtLeast(0))
    .option("-B, --before-context <lines>", "lines of context before each match", integerAtLeast(0))
    .option("-C, --context <lines>", "lines of context before and after", integerAtLeast(0))
    .addOption(new Option("-l, --files-with-matches", "print only the paths of matching files").conflicts("count"))
    .option("-c, --count", "print path:count of matching lines per file")
    .option("-m, --max-results <n>", "stop after n results (daemon default 100, at most 10,000)", integerAtLeast(1))
    .option("--max-file-size <bytes>", "skip files larger than this", integerAtLeast(1))
    .option("--no-gitignore", "search what .gitignore excludes, and .git")
    .addOption(
      new Option("--sort <order>", "path: files in sorted path order (the same results every time); none: as found, the first sooner (rg's default)")
        .choices(["path", "none"])
        .default("path"),
    )
    .addHelpText("after", '\nExamples:\n  filetools grep demo "TODO|FIXME" src -g "*.ts" -C 2\n  filetools grep demo -F "import os" -l')
    .action(async (workspace: string, pattern: string, path: string | undefined, options, command: Command) => {
      const { client, json, call } = sessionOf(command);
      const request = {
        workspace,
        path,
        pattern,
        fixedStrings: options.fixedStrings ?? false,
        caseInsensitive: options.ignoreCase ?? false,
        include: options.glob,
        exclude: options.exclude,
        contextBefore: options.beforeContext ?? options.context ?? 0,
        contextAfter: options.afterContext ?? options.context ?? 0,
        maxResults: options.maxResults,
        maxFileSize: int64(options.maxFileSize),
        respectGitignore: options.gitignore,
        outputMode: options.filesWithMatches ? OutputMode.FILES_WITH_MATCHES : options.count ? OutputMode.COUNT : OutputMode.CONTENT,
        batchMatches: true,
        order: options.sort === "none" ? SearchOrder.FOUND : SearchOrder.PATH,
      };
      const printer = new MatchPrinter(request.contextBefore > 0 || request.contextAfter > 0);
      let summary: SearchSummary | undefined;
      // The raw stream rather than the client's search(): every event of any output mode is printed as it comes.
      for await (const response of client.files.search(request, call)) {
        const { event } = response;
        // A batch of matches prints as its matches, one line (or JSON object) each.
        if (event.case === "matches") {
          for (const match of event.value.matches) {
            if (json) await printJsonLine({ match: jsonOf(SearchMatchSchema, match) });
            else await writeOut(printer.lines(match));
          }
        } else if (json) await printJsonLine(jsonOf(SearchResponseSchema, response));
        else if (event.case === "match") await writeOut(printer.lines(event.value));
        else if (event.case === "file") await writeOut(`${event.value.path}\n`);
        else if (event.case === "count") await writeOut(`${event.value.path}:${event.value.count}\n`);
        if (event.case === "summary") summary = event.value;
      }
      if (json || !summary) return;
      if (summary.truncated) note(`stopped after ${request.maxResults ?? 100} results (raise --max-results)`);
      if (summary.timedOut) note("the search ran out of time: the results are partial");
    });
}

/** Matches as grep -n prints them, with "--" between groups of context that do not touch. */
class MatchPrinter {
  private lastPath = "";
  private lastLine = 0n;

  constructor(private readonly withContext: boolean) {}

  lines(match: SearchMatch): string {
    const first = match.lineNumber - BigInt(match.before.length);
    let out = "";
    if (this.withContext && this.lastPath !== "" && (match.path !== this.lastPath || first > this.lastLine + 1n)) out += "--\n";
    match.before.forEach((line, i) => (out += `${match.path}-${first + BigInt(i)}-${line}\n`));
    out += `${match.path}:${match.lineNumber}:${match.line}\n`;
    match.after.forEach((line, i) => (out += `${match.path}-${match.lineNumber + 1n + BigInt(i)}-${line}\n`));
    this.lastPath = match.path;
    this.lastLine = match.lineNumber + BigInt(match.after.length);
    return out;
  }
}
