// A directory the workspace holds open: every path it uses is
// /proc/self/fd/N/name through one of these (see resolver.ts).
//
// Opened and closed synchronously, like the metadata calls on held
// descriptors (lstatOrNull): the kernel answers from its caches in
// microseconds, while a thread-pool round trip costs 20–60 µs of the main
// thread here, and every call reopens the workspace root and closes it.
import { constants, fsync, openSync, type PathLike } from "node:fs";
import { HeldDescriptor } from "./held-descriptor.js";

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = constants;

export class Directory extends HeldDescriptor {
  /**
   * Opens the directory at `path` (usually /proc/self/fd/N/name). A symbolic
   * link is not followed unless `followLink` (for /proc/self/fd/N itself, or
   * the host directory a workspace is bound to).
   */
  static open(path: PathLike, followLink = false): Directory {
    return new Directory(openSync(path, O_RDONLY | O_DIRECTORY | (followLink ? 0 : O_NOFOLLOW)));
  }

  /**
   * Like open, but null when the directory is not there (removed meanwhile,
   * or no longer a directory, or a link now): for walks. Other failures
   * (permissions, I/O) are thrown: a walk must not skip a subtree silently.
   */
  static openIfThere(path: PathLike): Directory | null {
    try {
      return Directory.open(path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR" || code === "ELOOP") return null;
      throw error;
    }
  }

  /**
   * The same descriptor for another user, without a system call: closing the
   * borrowed directory lets go of it, and this one's close() waits until
   * every borrower has.
   */
  borrow(): Directory {
    return new Directory(this.fd, this.hold());
  }

  /** Makes the entries created, renamed or removed in it durable. */
  sync(): Promise<void> {
    return this.onPool((fd) => new Promise((resolve, reject) => fsync(fd, (error) => (error ? reject(error) : resolve()))));
  }
}
