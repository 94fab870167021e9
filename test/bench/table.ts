// The result table: one row per benchmark, the daemon's time, up to two tools
// with their time and the ratio daemon/tool, the daemon's peak RSS, a note;
// with a baseline build (BENCH_BASELINE), its time and the ratio to it, so
// that a regression shows in the table that found it. Printed as a Markdown
// table so it can be quoted as is.

export interface Compared {
  tool: string;
  ms?: number;
  /** Why there is no time (e.g. "n/a (ripgrep not installed)"). */
  missing?: string;
}

export interface Row {
  name: string;
  /** Daemon time in ms, or why there is none. */
  daemon: number | string;
  tools: Compared[];
  peakRss?: number;
  note?: string;
  /** The baseline build's time in ms, timed in the same rounds (BENCH_BASELINE). */
  baseline?: number;
}

export function formatMs(value: number): string {
  if (value >= 10_000) return `${(value / 1000).toFixed(1)} s`;
  if (value >= 1000) return `${(value / 1000).toFixed(2)} s`;
  if (value >= 10) return `${value.toFixed(0)} ms`;
  return `${value.toFixed(2)} ms`;
}

export function formatRatio(ratio: number): string {
  if (ratio >= 10) return ratio.toFixed(0);
  if (ratio >= 0.1) return ratio.toFixed(2);
  return ratio.toPrecision(2);
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

function cells(row: Row, withBaseline: boolean): string[] {
  const daemon = typeof row.daemon === "number" ? formatMs(row.daemon) : row.daemon;
  const tools = [row.tools[0], row.tools[1]].flatMap((t) => {
    if (!t) return ["", ""];
    if (t.ms === undefined) return [`${t.tool}: ${t.missing ?? "n/a"}`, "n/a"];
    const ratio = typeof row.daemon === "number" ? formatRatio(row.daemon / t.ms) : "n/a";
    return [`${t.tool}: ${formatMs(t.ms)}`, ratio];
  });
  const baseline = !withBaseline ? [] : row.baseline === undefined ? ["", ""] : [formatMs(row.baseline), typeof row.daemon === "number" ? formatRatio(row.daemon / row.baseline) : "n/a"];
  const all = [row.name, daemon, ...tools, ...baseline, row.peakRss === undefined ? "" : mib(row.peakRss), row.note ?? ""];
  return all.map((c) => c.replaceAll("|", "\\|")); // Markdown: a bare | would end the cell
}

/** `baseline` names the baseline build (e.g. its commit) in the header; its columns appear when a row has a baseline time. */
export function renderTable(rows: Row[], baseline = "baseline"): string {
  const withBaseline = rows.some((row) => row.baseline !== undefined);
  const header = ["benchmark", "filetoolsd", "tool 1", "ratio", "tool 2", "ratio", ...(withBaseline ? [baseline, "vs baseline"] : []), "daemon peak RSS", "note"];
  const body = rows.map((row) => cells(row, withBaseline));
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(header), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...body.map(line)].join("\n");
}
