// `npm test`: every suite of the repository, from a fresh clone after `npm ci`.
//
//   1. setup: build the TypeScript (dist/, which the client smoke tests run as
//      the daemon), the pinned Python environment (.venv) with the Python
//      client, its test extra and the framework adapters' extras (crewai,
//      langchain, deepagents), the Go module's dependencies, and
//      SeaweedFS's `weed` (the S3-compatible server that the S3 store's tests
//      start on loopback; pinned in toolchain.mjs);
//   2. suites: vitest, the generated-code freshness check, the proto
//      compatibility check (buf breaking against a pinned commit), pytest
//      (clients/python) and `go test ./...` (clients/go); with
//      FILETOOLS_TEST_EXTRA=node22,image (CI sets it) also vitest again on
//      Node 22 and the image test (test/image).
//
// Output streams through for people; each suite's count is read from a
// machine-readable report (vitest JSON, pytest JUnit XML, go test -json). A
// setup step or suite that fails without reporting a failed test counts as
// one failed test, never as zero. The last line is `N passed, N failed`; the
// exit code is 1 when anything failed.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { NODE22, PYTHON_REQUIREMENTS, ROOT, VENV_PYTHON, ensureSeaweedfs, ensureVenv, run } from "./toolchain.mjs";

const reports = mkdtempSync(path.join(tmpdir(), "filetools-test-"));
const results = []; // { name, passed, failed, skipped, note, failures: names of the failed tests }

function banner(text) {
  console.log(`\n=== ${text} ${"=".repeat(Math.max(0, 70 - text.length))}`);
}

/** Runs a command, streaming its output (or each stdout line through `onLine`); `env` adds to the environment. */
function exec(cmd, args, { cwd = ROOT, onLine, env } = {}) {
  console.log(`$ ${[cmd, ...args].join(" ")}`);
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, stdio: ["ignore", onLine ? "pipe" : "inherit", "inherit"] });
    if (onLine) createInterface({ input: child.stdout }).on("line", onLine);
    child.on("error", (err) => {
      console.error(`${cmd}: ${err.message}`);
      resolve(-1);
    });
    child.on("close", (code, signal) => resolve(code ?? (signal ? 128 : -1)));
  });
}

/** Records a suite; a non-zero exit without a counted failure is one failure. */
function record(name, code, counts, note) {
  const r = { name, passed: 0, failed: 0, skipped: 0, failures: [], ...counts };
  if (code !== 0 && r.failed === 0) {
    r.failed = 1;
    r.note = note ?? `exited with ${code} without reporting a failed test`;
  }
  results.push(r);
  return r.failed === 0;
}

async function step(name, fn) {
  banner(name);
  try {
    await fn();
    return true;
  } catch (err) {
    console.error(`${name}: ${err.message}`);
    record(name, 1, {}, `setup failed: ${err.message}`);
    return false;
  }
}

// --- setup ----------------------------------------------------------------

await step("build (npm run build)", async () => {
  const code = await exec("npm", ["run", "build"]);
  if (code !== 0) throw new Error(`npm run build exited with ${code}`);
});

const pythonReady = await step("python environment (.venv)", async () => {
  ensureVenv();
  run(VENV_PYTHON, [
    "-m", "pip", "install", "--disable-pip-version-check", "-q", "--no-build-isolation",
    "-c", PYTHON_REQUIREMENTS, "-e", "clients/python[test,crewai,langchain,deepagents]",
  ]);
});

// The S3 store's tests start their own SeaweedFS (test/support/seaweedfs.ts) on loopback.
await step("seaweedfs (weed for the S3 store tests)", async () => {
  ensureSeaweedfs();
});

const goReady = await step("go module (go mod download)", async () => {
  const code = await exec("go", ["mod", "download"], { cwd: path.join(ROOT, "clients/go") });
  if (code !== 0) throw new Error(`go mod download exited with ${code}`);
});

// --- suites ---------------------------------------------------------------

/**
 * Runs vitest with `node` (default: this one) and `args`, and records its
 * counts from its JSON report under `name`. `env` adds to the environment.
 */
async function vitestSuite(name, { node = process.execPath, args = [], env } = {}) {
  banner(name);
  const json = path.join(reports, `${name.replace(/\W+/g, "-")}.json`);
  const code = await exec(node, [
    path.join(ROOT, "node_modules/vitest/vitest.mjs"), "run", "--passWithNoTests", ...args,
    "--reporter=default", "--reporter=json", `--outputFile=${json}`,
  ], { env });
  let counts = {};
  if (existsSync(json)) {
    const r = JSON.parse(readFileSync(json, "utf8"));
    // A test file that fails to load has no failed test of its own: count it.
    const broken = (r.testResults ?? []).filter(
      (f) => f.status === "failed" && !(f.assertionResults ?? []).some((a) => a.status === "failed"),
    );
    counts = {
      passed: r.numPassedTests ?? 0,
      failed: (r.numFailedTests ?? 0) + broken.length,
      skipped: (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0),
      failures: (r.testResults ?? []).flatMap((f) => {
        const file = path.relative(ROOT, f.name);
        const failedTests = (f.assertionResults ?? []).filter((a) => a.status === "failed");
        return broken.includes(f) ? [`${file} (did not load)`] : failedTests.map((a) => `${file} > ${a.fullName}`);
      }),
    };
  }
  record(name, code, counts);
}

await vitestSuite("vitest");

banner("generated code freshness");
{
  const code = await exec("node", ["scripts/check-generated.mjs"]);
  record("generated code freshness", code, code === 0 ? { passed: 1 } : { failed: 1 });
}

banner("proto compatibility (buf breaking)");
{
  const code = await exec("node", ["scripts/check-breaking.mjs"]);
  record("proto compatibility", code, code === 0 ? { passed: 1 } : { failed: 1 });
}

banner("pytest (clients/python)");
if (!pythonReady) {
  record("pytest", 1, {}, "not run: the Python environment could not be set up");
} else {
  const xml = path.join(reports, "pytest.xml");
  const code = await exec(VENV_PYTHON, [
    "-m", "pytest", "clients/python/tests", "-p", "no:cacheprovider", "--tb=short", `--junitxml=${xml}`,
  ]);
  let counts = {};
  if (existsSync(xml)) {
    const report = readFileSync(xml, "utf8");
    counts = { passed: 0, failed: 0, skipped: 0, failures: [] };
    // A <testcase> holding a <failure> or <error>.
    for (const m of report.matchAll(/<testcase\b([^>]*?)(?:\/>|>([\s\S]*?)<\/testcase>)/g)) {
      if (!/<(failure|error)\b/.test(m[2] ?? "")) continue;
      const attr = (n) => new RegExp(`\\s${n}="([^"]*)"`).exec(m[1])?.[1] ?? "";
      counts.failures.push(`${attr("classname")} > ${attr("name")}`);
    }
    for (const m of report.matchAll(/<testsuite\b[^>]*>/g)) {
      const get = (n) => Number(new RegExp(`\\s${n}="(\\d+)"`).exec(m[0])?.[1] ?? 0);
      const failed = get("failures") + get("errors");
      counts.failed += failed;
      counts.skipped += get("skipped");
      counts.passed += get("tests") - failed - get("skipped");
    }
  }
  // Exit 5 is "no tests collected": a suite that ran nothing has failed.
  record("pytest", code, counts, code === 5 ? "pytest collected no tests" : undefined);
}

banner("go test (clients/go)");
if (!goReady) {
  record("go test", 1, {}, "not run: the Go module's dependencies could not be downloaded");
} else {
  const counts = { passed: 0, failed: 0, skipped: 0, failures: [] };
  const failedPackages = new Set();
  const testFailures = new Set();
  const code = await exec("go", ["test", "-json", "./..."], {
    cwd: path.join(ROOT, "clients/go"),
    onLine: (line) => {
      let ev;
      try {
        ev = JSON.parse(line);
      } catch {
        console.log(line); // not an event (e.g. a build error printed by go)
        return;
      }
      if (ev.Output !== undefined) process.stdout.write(ev.Output);
      if (ev.Test) {
        if (ev.Action === "pass") counts.passed++;
        else if (ev.Action === "fail") counts.failed++, testFailures.add(ev.Package), counts.failures.push(`${ev.Package} > ${ev.Test}`);
        else if (ev.Action === "skip") counts.skipped++;
      } else if (ev.Action === "fail" && ev.Package) {
        failedPackages.add(ev.Package);
      }
    },
  });
  // A package that failed with no failed test (build error, crash, timeout).
  for (const pkg of failedPackages) if (!testFailures.has(pkg)) counts.failed++, counts.failures.push(`${pkg} (package failed)`);
  record("go test", code, counts);
}

// --- suites CI adds (FILETOOLS_TEST_EXTRA=node22,image; .ci/run sets both) ---

const extra = new Set((process.env.FILETOOLS_TEST_EXTRA ?? "").split(",").filter(Boolean));
for (const unknown of [...extra].filter((x) => x !== "node22" && x !== "image")) {
  record(`FILETOOLS_TEST_EXTRA=${unknown}`, 1, {}, "unknown suite: node22 and image exist");
}
if (extra.has("node22")) {
  // The TypeScript suite again on Node 22 (the npm registry's `node` package): the daemons the
  // tests start run on it too, as process.execPath and as `node` on PATH (bin/filetoolsd).
  let node22;
  const found = await step(`node ${NODE22} (npm exec node@${NODE22})`, async () => {
    node22 = run("npm", ["exec", "--yes", `--package=node@${NODE22}`, "--", "node", "-p", "process.execPath"], { stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" }).stdout.trim();
  });
  if (found) await vitestSuite(`vitest (Node ${NODE22})`, { node: node22, env: { PATH: `${path.dirname(node22)}:${process.env.PATH}` } });
}
if (extra.has("image")) await vitestSuite("image (buildah, podman)", { args: ["--config", "test/image/vitest.config.ts"] });

rmSync(reports, { recursive: true, force: true });

// --- summary --------------------------------------------------------------

banner("summary");
let passed = 0;
let failed = 0;
for (const r of results) {
  passed += r.passed;
  failed += r.failed;
  const skipped = r.skipped ? `, ${r.skipped} skipped` : "";
  const note = r.note ? `  (${r.note})` : "";
  console.log(`${r.failed ? "FAIL" : "ok  "} ${r.name}: ${r.passed} passed, ${r.failed} failed${skipped}${note}`);
  // The failed tests by name, so that the summary alone (all a CI log's tail may keep) says which.
  for (const failure of r.failures.slice(0, 20)) console.log(`       ✗ ${failure}`);
  if (r.failures.length > 20) console.log(`       … and ${r.failures.length - 20} more`);
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
