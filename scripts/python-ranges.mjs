// `npm run test:python-ranges`: the Python client with each of its
// dependencies at the lowest and at the newest version its ranges allow
// (clients/python/pyproject.toml). Two fresh virtualenvs under
// .python-ranges/: "lowest" installs every dependency at its floor (the
// ">=" of its range) and "newest" lets pip take the newest in range; each
// then runs the client's own tests (the calls, the dispatcher's conformance
// table, the asyncio client) against a real daemon (not test_client.py: it
// imports the generated gRPC stubs, which need the grpcio they were made with). Needs the daemon built
// (`npm run build`). Prints the versions each used and exits non-zero if
// either fails.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { ROOT } from "./toolchain.mjs";

const TESTS = ["clients/python/tests/test_tools.py", "clients/python/tests/test_async_client.py"];
// What the tests need besides the client (as requirements-dev.txt pins it).
const TEST_TOOLS = ["pytest==9.2.0"];

const pyproject = readFileSync(path.join(ROOT, "clients/python/pyproject.toml"), "utf8");
const block = /^dependencies = \[([\s\S]*?)^\]/m.exec(pyproject)?.[1] ?? "";
const ranges = [...block.matchAll(/^\s*"([^"]+)",/gm)].map((m) => m[1]);
const floors = ranges.map((range) => {
  const m = /^([A-Za-z0-9_.-]+)>=([^,]+)/.exec(range);
  if (!m) throw new Error(`python-ranges: ${range} has no ">=" floor`);
  return `${m[1]}==${m[2]}`;
});

const base = path.join(ROOT, ".python-ranges");
let failed = 0;
for (const [name, pins] of [["lowest", floors], ["newest", ranges]]) {
  const venv = path.join(base, name);
  rmSync(venv, { recursive: true, force: true });
  mkdirSync(base, { recursive: true });
  const python = path.join(venv, "bin", "python");
  const pip = (...args) => execFileSync(python, ["-m", "pip", "install", "--disable-pip-version-check", "-q", ...args], { cwd: ROOT, stdio: "inherit" });
  execFileSync("python3", ["-m", "venv", venv], { stdio: "inherit" });
  pip(...pins, ...TEST_TOOLS);
  // The client itself, against what is installed (its ranges are checked by pip: a floor outside them fails here).
  pip("--no-build-isolation", "setuptools==84.2.1");
  pip("--no-build-isolation", "-e", "clients/python");
  const versions = execFileSync(python, ["-m", "pip", "freeze", "--exclude-editable"], { encoding: "utf8" })
    .split("\n")
    .filter((line) => /^(grpcio|protobuf|grpcio-status|googleapis-common-protos|jsonschema)==/.test(line));
  console.log(`\n== ${name}: ${versions.join(" ")}`);
  try {
    execFileSync(python, ["-m", "pytest", ...TESTS, "-p", "no:cacheprovider", "-q"], { cwd: ROOT, stdio: "inherit" });
  } catch {
    failed++;
    console.error(`python-ranges: the tests failed with the ${name} versions`);
  }
}
process.exit(failed === 0 ? 0 : 1);
