// Re-packs members of an older-format snapshot (one plain `.tar.gz`, read
// through tar-stream) for a filtered export: names are held names whose exact
// bytes are stored. A name or link target that is not valid UTF-8 goes in a
// GNU long-name record ('L'/'K', raw bytes, which GNU tar, bsdtar and our
// extract read back byte for byte), the ustar header then carrying an ASCII
// stand-in. New snapshots are written by seekable.ts.
import tar from "tar-stream";
import { bytesOfName, hasRawBytes } from "../workspace/names.js";
import { longNameRecord } from "./tar-headers.js";

type Header = tar.Header | (Partial<tar.Header> & { name: string });
type Sink = ReturnType<tar.Pack["entry"]>;

/**
 * Adds a member to `pack` with its names as held names (workspace/names.ts),
 * their exact bytes stored (see withLongNames); for re-packing members.
 * Call with no other member open. A pack destroyed under an open member (a
 * cancelled export, a failed upload) destroys its sink with the pack's error:
 * the sink is listened to here (an 'error' event nobody listens to ends the
 * process), and `callback` gets the error.
 */
export function packMember(pack: tar.Pack, header: Header, callback: (error?: Error | null) => void): Sink {
  withLongNames(pack, header);
  const sink = pack.entry(header, callback);
  sink.on("error", () => undefined);
  return sink;
}

/**
 * A name or link target that is not valid UTF-8 goes in a GNU long-name
 * record before the member ('L' for the name, 'K' for the target), its
 * exact bytes; the header keeps an ASCII stand-in (so that tar-stream writes
 * no pax record, whose values it would read back as UTF-8). Pushed while no
 * member is open: the packer adds members one at a time.
 */
function withLongNames(pack: tar.Pack, header: Header): void {
  const linkname = header.linkname ?? "";
  if (!hasRawBytes(header.name) && !hasRawBytes(linkname)) return;
  const isDirectory = header.type === "directory";
  const name = isDirectory ? header.name.replace(/\/$/, "") : header.name;
  pack.push(longNameRecord("L", Buffer.concat([bytesOfName(name), Buffer.from(isDirectory ? "/" : "")])));
  header.name = asciiStandIn(name, 98);
  if (linkname) {
    pack.push(longNameRecord("K", bytesOfName(linkname)));
    header.linkname = asciiStandIn(linkname, 99);
  }
}

/** Printable ASCII of at most `max` bytes, for readers that know no long names. */
function asciiStandIn(name: string, max: number): string {
  return name.replace(/[^\x20-\x7e]/gu, "_").slice(-max).replace(/^\/+/, "") || "_";
}
