// The kernel's notifications of changes under a workspace's root (inotify on
// Linux, through @parcel/watcher's prebuilt native module), turned into
// workspace components: for the journal's outside changes. The host path is
// used only here, to subscribe, and never leaves this module.
import watcher from "@parcel/watcher";
import { nameFromBytes } from "./names.js";
import type { Components } from "./paths.js";
import { TEMP_FILE_PATTERN } from "./temp-files.js";

export interface OutsideEvent {
  parts: Components;
  type: "create" | "update" | "delete";
}

export interface OutsideSubscription {
  close(): Promise<void>;
}

/**
 * Subscribes to changes under `rootReal`; `onEvents` gets them in batches,
 * `onError` a failure of the notifications (a queue overflow among them),
 * after which events may have been lost. Rejects when notifications are
 * unavailable (no inotify, too many watches).
 */
export async function subscribeOutside(
  rootReal: string,
  onEvents: (events: OutsideEvent[]) => void,
  onError: (error: Error) => void,
): Promise<OutsideSubscription> {
  const prefix = rootReal.endsWith("/") ? rootReal : rootReal + "/";
  const subscription = await watcher.subscribe(rootReal, (error, events) => {
    if (error) {
      onError(error);
      return;
    }
    const out: OutsideEvent[] = [];
    for (const event of events) {
      if (!event.path.startsWith(prefix)) continue;
      // Names as the file system has them: bytes that are not UTF-8 come back from parcel as they were decoded.
      const parts = event.path.slice(prefix.length).split("/").map((name) => nameFromBytes(Buffer.from(name)));
      // The daemon's own temp files and staging directories.
      if (parts.some((name) => TEMP_FILE_PATTERN.test(name))) continue;
      out.push({ parts, type: event.type });
    }
    if (out.length > 0) onEvents(out);
  });
  return { close: () => subscription.unsubscribe() };
}
