// The end of an agent's task: start a run on a workspace, write its result,
// finish the run (the daemon snapshots the workspace) and download that
// snapshot. Against a local daemon (`npm start`):
//
//   npx tsx clients/ts/examples/finish-run.ts [address] [output.tar.gz (default: $TMPDIR/reports-snapshot.tar.gz)]
//
// In your own project, import from "@filetools/client" instead.
import { tmpdir } from "node:os";
import path from "node:path";
import { connect, FileToolsError, type OnProgress } from "../src/index.js";

const address = process.argv[2] ?? process.env.FILETOOLS_ADDRESS ?? "127.0.0.1:7447";
// By default in the temporary directory, not wherever the example is run from (a clone's root).
const output = process.argv[3] ?? path.join(tmpdir(), "reports-snapshot.tar.gz");

const client = connect(address, { token: process.env.FILETOOLS_TOKEN });
const reports = client.workspace("reports");
try {
  // Restores the newest snapshot first if the workspace is empty (a fresh machine).
  const run = await reports.startRun({ labels: { example: "finish-run" } });
  console.log(`started ${run.id}${run.restoredFrom ? ` (restored ${run.restoredFrom})` : ""}`);

  await reports.writeText("summary.md", `# Summary\n\nWritten by ${run.id}.\n`);

  const { snapshot, changes } = await reports.finishRun(run.id);
  if (!snapshot) throw new Error("the run finished without a snapshot");
  const files = snapshot.fileCount === 1n ? "1 file" : `${snapshot.fileCount} files`;
  console.log(`snapshot ${snapshot.id}: ${files}; ${changes?.created ?? 0n} created, ${changes?.modified ?? 0n} modified`);

  // A line redrawn with \r, on a terminal only: in a log or a pipe each update would pile onto the last.
  const onProgress: OnProgress | undefined = process.stderr.isTTY
    ? ({ bytes, totalBytes }) => process.stderr.write(`\r${bytes} of ${totalBytes} bytes`)
    : undefined;
  const saved = await reports.exportSnapshot(output, { snapshotId: snapshot.id, deadline: 60_000, onProgress });
  if (onProgress) process.stderr.write("\n");
  console.log(`saved ${output}: ${saved.size} bytes, sha256 ${saved.sha256} (checked)`);
} catch (error) {
  if (!(error instanceof FileToolsError)) throw error;
  // e.g. FAILED_PRECONDITION / RUN_ACTIVE when another run on "reports" is still going.
  console.error(`filetools: ${error.codeName} ${error.reason}: ${error.message}`);
  process.exitCode = 1;
} finally {
  client.close();
}
