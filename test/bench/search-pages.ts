// Searches an agent waits on (issue 13), in `npm run bench`: the first page
// of a common word over the 20,000-file tree (max_results at its default,
// 100) against `rg | head -n 100` and `grep | head -n 100`; and whole scans
// of a small repository (small/: 6,000 files, 41 MB), where a cost per call
// or per file shows more than over the big tree.
import path from "node:path";
import { OutputMode, SearchOrder } from "@filetools/proto/filetools/v1/files_pb.js";
import { ALTERNATION, COMMON_WORD, RARE_LITERAL, type Manifest } from "./data.js";
import { lineCount, sh } from "./measure.js";
import { RG, searchRows, sumCounts, withSearchDaemons, type SearchCase } from "./search-runner.js";
import type { Row } from "./table.js";

/** Search's default max_results. */
const FIRST_PAGE = 100;

function cases(data: string, manifest: Manifest, haveRg: boolean): SearchCase[] {
  const tree = { workspace: "tree", dir: path.join(data, "tree") };
  const small = { workspace: "small", dir: path.join(data, "small") };
  const treeGrep = "grep -r --exclude-dir=build --exclude='*.log'";
  const smallGrep = "grep -r --exclude-dir=dist --exclude='*.log'";
  const s = manifest.small!;
  const repo = `small repository (${s.files.toLocaleString("en")} files, ${(s.bytes / 1e6).toFixed(0)} MB)`;
  return [
    {
      ...tree,
      name: `search common word "${COMMON_WORD}": first ${FIRST_PAGE} lines (max_results default)`,
      request: { pattern: COMMON_WORD, fixedStrings: true, maxResults: FIRST_PAGE },
      rg: `${RG} -n -F ${COMMON_WORD} | head -n ${FIRST_PAGE}`,
      grep: `${treeGrep} -n -F ${COMMON_WORD} . | head -n ${FIRST_PAGE}`,
      labels: [`rg -n -j2 -F | head -n ${FIRST_PAGE}`, `grep -rn -F | head -n ${FIRST_PAGE}`],
      count: lineCount,
      // The daemon's results come in sorted path order by default; rg's and grep's in the order the file system lists names.
      aside: haveRg ? { label: `rg --sort path (the daemon's order) | head -n ${FIRST_PAGE}`, cmd: `rg --sort path --no-require-git -n -F ${COMMON_WORD} | head -n ${FIRST_PAGE}` } : undefined,
    },
    {
      ...tree,
      name: `search common word "${COMMON_WORD}": first ${FIRST_PAGE} lines, order FOUND (as rg and grep list)`,
      request: { pattern: COMMON_WORD, fixedStrings: true, maxResults: FIRST_PAGE, order: SearchOrder.FOUND },
      rg: `${RG} -n -F ${COMMON_WORD} | head -n ${FIRST_PAGE}`,
      grep: `${treeGrep} -n -F ${COMMON_WORD} . | head -n ${FIRST_PAGE}`,
      labels: [`rg -n -j2 -F | head -n ${FIRST_PAGE}`, `grep -rn -F | head -n ${FIRST_PAGE}`],
      count: lineCount,
    },
    {
      ...small,
      name: `${repo}: rare literal "${RARE_LITERAL}", whole scan`,
      request: { pattern: RARE_LITERAL, fixedStrings: true },
      rg: `${RG} -n -F ${RARE_LITERAL}`,
      grep: `${smallGrep} -n -F ${RARE_LITERAL} .`,
      labels: ["rg -n -j2 -F", "grep -rn -F"],
      count: lineCount,
    },
    {
      ...small,
      name: `${repo}: alternation regex "${ALTERNATION}", whole scan`,
      request: { pattern: ALTERNATION },
      rg: `${RG} -n -e ${sh(ALTERNATION)}`,
      grep: `${smallGrep} -n -E -e ${sh(ALTERNATION)} .`,
      labels: ["rg -n -j2", "grep -rn -E"],
      count: lineCount,
    },
    {
      ...small,
      name: `${repo}: common word "${COMMON_WORD}", count mode`,
      request: { pattern: COMMON_WORD, fixedStrings: true, outputMode: OutputMode.COUNT },
      rg: `${RG} -c -F ${COMMON_WORD}`,
      grep: `${smallGrep} -c -F ${COMMON_WORD} .`,
      labels: ["rg -c -j2 -F", "grep -rc -F"],
      count: sumCounts,
    },
  ];
}

export async function searchPageBenchmarks(data: string, manifest: Manifest, haveRg: boolean, log: (line: string) => void): Promise<Row[]> {
  const binds = { tree: path.join(data, "tree"), small: path.join(data, "small") };
  return withSearchDaemons(binds, (daemon, baseline) => searchRows(daemon, cases(data, manifest, haveRg), haveRg, log, baseline));
}
