// Room set aside on the data directory's disk (a file of zeros,
// DATA_DIR/journal-reserve) for what is written after a change is applied:
// its journal entry and its run's change-set line. A change is applied only
// while the room is set aside; an append after a change that meets a full
// disk frees the room and is made again in it; from then on, changes are
// refused (NO_SPACE) before they are applied until the room can be set aside
// again. So a change is either applied, journaled and acknowledged, or
// refused and not applied (docs/watch.md, "A full disk").
import { promises as fsp } from "node:fs";
import { FileToolsError } from "../errors.js";
import { errnoOf, translateErrno } from "../workspace/errno.js";

/** Far more than the entries of the calls in flight when the disk fills (an entry is a few hundred bytes). */
export const RESERVE_BYTES = 4 * 1024 * 1024;

const ZEROS = Buffer.alloc(1024 * 1024);

export class SpaceReserve {
  private isSetAside = false;
  private settingAside: Promise<void> | undefined;
  /** Appends being made again in the freed room: the room is not taken back from under them. */
  private spending = 0;

  constructor(
    private readonly file: string,
    private readonly bytes = RESERVE_BYTES,
  ) {}

  /** Before a change: the room is set aside (again, if it was spent), or NO_SPACE, and the change must not be made. */
  async ensure(): Promise<void> {
    if (this.isSetAside) return;
    if (this.spending > 0) throw this.refusal();
    this.settingAside ??= this.setAside().finally(() => (this.settingAside = undefined));
    await this.settingAside;
  }

  /** After a change: `append`, made again in the freed room when it meets a full disk. */
  async afterChange<T>(append: () => Promise<T>): Promise<T> {
    try {
      return await append();
    } catch (error) {
      if (!isNoSpace(error)) throw error;
      this.spending++;
      try {
        await this.settingAside?.catch(() => undefined);
        this.isSetAside = false;
        await fsp.truncate(this.file, 0).catch(() => undefined);
        return await append();
      } finally {
        this.spending--;
      }
    }
  }

  /** Writes the zeros (real blocks, not a hole) and syncs them; on a full disk, frees what it wrote. */
  private async setAside(): Promise<void> {
    const handle = await fsp.open(this.file, "w", 0o600).catch((error: unknown) => {
      throw isNoSpace(error) ? this.refusal() : translateErrno(error, "the journal's reserved space");
    });
    try {
      for (let done = 0; done < this.bytes; ) done += (await handle.write(ZEROS, 0, Math.min(ZEROS.length, this.bytes - done))).bytesWritten;
      await handle.datasync();
      this.isSetAside = true;
    } catch (error) {
      await handle.truncate(0).catch(() => undefined);
      throw isNoSpace(error) ? this.refusal() : translateErrno(error, "the journal's reserved space");
    } finally {
      await handle.close();
    }
  }

  private refusal(): FileToolsError {
    const mib = Math.round(this.bytes / (1024 * 1024));
    return new FileToolsError("NO_SPACE", `the daemon's data directory has less than ${mib} MiB free, the room its journal keeps for the changes in flight: nothing was changed`);
  }
}

function isNoSpace(error: unknown): boolean {
  if (error instanceof FileToolsError) return error.reason === "NO_SPACE";
  const code = errnoOf(error);
  return code === "ENOSPC" || code === "EDQUOT";
}
