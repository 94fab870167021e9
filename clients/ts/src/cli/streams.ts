// The local end of byte transfers: a progress bar on a terminal, and a
// checked stream saved to a file or to stdout.
import cliProgress from "cli-progress";
import { receiveVerified, saveVerified, type HeaderThenData, type OnProgress } from "../byte-streams.js";
import { humanBytes, writeOut } from "./output.js";

/**
 * Runs `transfer` with a progress callback that draws a bar on stderr, only
 * when stderr is a terminal and the total is known: stdout (data or JSON) is
 * never touched, and logs get no bar noise.
 */
export async function withProgress<T>(label: string, transfer: (onProgress: OnProgress) => Promise<T>): Promise<T> {
  if (!process.stderr.isTTY) return transfer(() => {});
  let bar: cliProgress.SingleBar | undefined;
  const onProgress: OnProgress = ({ bytes, totalBytes }) => {
    if (!totalBytes) return;
    if (!bar) {
      bar = new cliProgress.SingleBar(
        {
          format: `${label} [{bar}] {percentage}% | {done} of ${humanBytes(totalBytes)} | ETA {eta_formatted}`,
          stream: process.stderr,
          hideCursor: true,
        },
        cliProgress.Presets.shades_classic,
      );
      bar.start(totalBytes, 0, { done: humanBytes(0) });
    }
    bar.update(bytes, { done: humanBytes(bytes) });
  };
  try {
    return await transfer(onProgress);
  } finally {
    bar?.stop();
  }
}

/**
 * Saves a Download or ExportSnapshot stream to `destination`, or to stdout for
 * "-", checked against the header's size and sha256 (a file appears only once
 * complete and verified). Returns the header.
 */
export function saveStream<H extends { size: bigint; sha256: string }>(stream: HeaderThenData<H>, destination: string, label: string): Promise<H> {
  return withProgress(label, async (onProgress) => {
    if (destination !== "-") return saveVerified(stream, destination, onProgress);
    const { header, data } = await receiveVerified(stream, onProgress);
    for await (const bytes of data) await writeOut(bytes);
    return header;
  });
}
