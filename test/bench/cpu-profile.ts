// Where a daemon's CPU went during some of the snapshot benchmark's calls:
//   BENCH_CPU_PROF=/tmp/prof npm run bench:snapshots     (every daemon: node --cpu-prof)
//   npx tsx test/bench/cpu-profile.ts /tmp/prof 'wide run'   (the calls whose label matches)
//   npx tsx test/bench/cpu-profile.ts /tmp/prof 'wide run' 25 workers   (the pool's threads instead, summed)
// snapshots.ts writes windows.json there: each measured call's label, daemon
// pid and span on the monotonic clock (µs), which is the clock of V8's
// profiles on Linux. The samples of the matching spans are summed: wall time
// of the spans, the daemon's main thread busy vs idle, self time by function
// and by file, and inclusive time by function (each function once per stack).
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}
interface Window {
  label: string;
  pid: number;
  startUs: number;
  endUs: number;
}

const [dir, pattern = "", top = "25", threads = "main"] = process.argv.slice(2);
if (!dir || (threads !== "main" && threads !== "workers")) {
  console.error("usage: cpu-profile.ts PROFILE_DIR [LABEL_REGEX] [TOP] [main|workers]");
  process.exit(2);
}
const matches = new RegExp(pattern);
const windows = (JSON.parse(readFileSync(path.join(dir, "windows.json"), "utf8")) as Window[]).filter((w) => matches.test(w.label));
const files = readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"));

const short = (url: string) => url.replace(/^file:\/\/.*?\/(dist|node_modules)\//, "$1/").replace(/^node:/, "node:");
const frameKey = (f: CallFrame) => `${f.functionName || "(anonymous)"} ${short(f.url)}${f.url ? `:${f.lineNumber + 1}` : ""}`;

const self = new Map<string, number>();
const byFile = new Map<string, number>();
const inclusive = new Map<string, number>();
let sampled = 0;
let wall = 0;
const add = (map: Map<string, number>, key: string, us: number) => map.set(key, (map.get(key) ?? 0) + us);

for (const pid of new Set(windows.map((w) => w.pid))) {
  // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile: thread 0 is the main thread (the others are the pool's workers).
  const chosen = files.filter((f) => f.split(".")[3] === String(pid) && (f.split(".")[4] === "0") === (threads === "main"));
  const mine = windows.filter((w) => w.pid === pid);
  wall += mine.reduce((sum, w) => sum + (w.endUs - w.startUs), 0);
  if (chosen.length === 0) {
    console.log(`no profile for pid ${pid} (${mine.map((w) => w.label).join(", ")})`);
    continue;
  }
  for (const file of chosen) sumProfile(JSON.parse(readFileSync(path.join(dir, file), "utf8")) as Profile, mine);
}

/** Adds the samples of `profile` that fall in the windows `mine`. */
function sumProfile(profile: Profile, mine: readonly Window[]): void {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i]!;
    const next = profile.timeDeltas[i + 1] ?? 0; // the time this sample stands for: until the next one
    if (!mine.some((w) => t >= w.startUs && t < w.endUs)) continue;
    const node = byId.get(profile.samples[i]!)!;
    sampled += next;
    add(self, frameKey(node.callFrame), next);
    add(byFile, short(node.callFrame.url) || node.callFrame.functionName, next);
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const key = frameKey(byId.get(id)!.callFrame);
      if (seen.has(key)) continue;
      seen.add(key);
      add(inclusive, key, next);
    }
  }
}

const ms = (us: number) => `${(us / 1000).toFixed(0).padStart(7)} ms`;
const idle = self.get("(idle) ") ?? 0;
const sampledWhat = threads === "main" ? "main thread" : "the pool's threads (summed)";
console.log(`${windows.length} calls matching /${pattern}/: wall ${ms(wall)}; ${sampledWhat} sampled ${ms(sampled)}, of which idle ${ms(idle)} (busy ${ms(sampled - idle)})`);
const print = (title: string, map: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [key, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, Number(top))) console.log(`${ms(us)}  ${key}`);
};
print("self time by function", self);
print("self time by file", byFile);
print("inclusive time by function", inclusive);
