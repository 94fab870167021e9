// A raw descriptor with one owner (and borrowers that only let go of it,
// see Directory.borrow). Node's FileHandle guards its descriptor
// the same way, but opens and closes on the thread pool; ours are opened and
// closed synchronously (see Directory, OpenFile), so the guard is ours too.
import { closeSync } from "node:fs";

export class HeldDescriptor {
  /** Operations on the thread pool not yet returned: the descriptor outlives them. */
  private inFlight = 0;
  private closing = false;
  private closed = false;

  constructor(
    private readonly descriptor: number,
    /** For a descriptor borrowed from another holder (Directory.borrow): closing lets go of it instead. */
    private readonly letGo?: () => void,
  ) {}

  /** The descriptor, for a synchronous call (or a worker thread of this process); an error once close() was called. */
  get fd(): number {
    if (this.closing) throw new Error("use of a closed descriptor");
    return this.descriptor;
  }

  /** Runs `operation` with the descriptor on the thread pool; close() waits for it. */
  async onPool<T>(operation: (fd: number) => Promise<T>): Promise<T> {
    const fd = this.fd;
    this.inFlight++;
    try {
      return await operation(fd);
    } finally {
      this.inFlight--;
      if (this.closing) this.closeWhenIdle();
    }
  }

  /** Keeps the descriptor open, for a user elsewhere (a search worker), until the returned function is called; close() waits for it. */
  hold(): () => void {
    this.fd; // refuses a closed descriptor
    this.inFlight++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inFlight--;
      if (this.closing) this.closeWhenIdle();
    };
  }

  /**
   * Closes the descriptor once, after any operation still on the thread pool:
   * a number closed twice, or under a read, could be another file's by then.
   */
  close(): void {
    this.closing = true;
    this.closeWhenIdle();
  }

  private closeWhenIdle(): void {
    if (this.closed || this.inFlight > 0) return;
    this.closed = true;
    if (this.letGo) this.letGo();
    else closeSync(this.descriptor);
  }
}
