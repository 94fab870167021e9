"""What a model reads back from each tool: the texts catalogue/README.md specifies.

A port of clients/ts/src/tools/texts.ts, which the Go dispatcher follows too:
the three must write the same text, byte for byte, for the same answers of the
daemon. Plain functions of those answers, no I/O.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence

from google.protobuf.timestamp_pb2 import Timestamp

from filetools.errors import FileToolsError
from filetools.models import MediaImage, PdfPage, SearchOrder, TextWindow
from filetools.tools._catalogue import CATALOGUE, ToolSet
from filetools.v1 import common_pb2 as c
from filetools.v1 import files_pb2 as f
from filetools.v1 import workspaces_pb2 as w


def count(n: int) -> str:
    """9840 -> "9,840"."""
    return f"{n:,}"


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{count(n)} {one if n == 1 else (many or one + 's')}"


# Lines end at LF only (a CR stays in its line), as numberLines in clients/ts/src/format.ts;
# str.splitlines would also split at CR, VT, FF and more.
_LINE = re.compile(r"[^\n]*\n|[^\n]+")


def _numbered(text: str, first_line: int) -> str:
    return "".join(f"{first_line + i:6}\t{m.group()}" for i, m in enumerate(_LINE.finditer(text)))


def read(window: TextWindow, max_bytes: int) -> str:
    """A read window: its lines ``cat -n`` style, then where to go on."""
    text = _numbered(window.text, window.first_line)
    if text and not text.endswith("\n"):
        text += "\n"
    total = "" if window.total_lines is None else f"; {_plural(window.total_lines, 'line')} in all"
    if window.text == "":
        text = "(empty file)\n" if window.total_lines == 0 else f"(no lines here{total})\n"
    if window.line_cut:
        text += f"(a line longer than {count(max_bytes)} bytes was cut)\n"
    if window.next_start_line is not None:
        text += f"… call read with start_line {window.next_start_line} for more{total}\n"
    return text


_MEDIA_FORMATS = {"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF", "image/webp": "WebP", "application/pdf": "PDF"}


def _format_name(media_type: str) -> str:
    return _MEDIA_FORMATS.get(media_type, media_type)


def image(path: str, file_media_type: str, file_size: int, shown: MediaImage) -> str:
    """The text beside an image a read returns (the image itself is a content block)."""
    head = (
        f"Image {path} ({_format_name(file_media_type)}, {shown.original_width}x{shown.original_height} pixels, "
        f"{_plural(file_size, 'byte')})"
    )
    if not shown.downscaled:
        return f"{head}.\n"
    return (
        f"{head}, shown downscaled to {shown.width}x{shown.height} "
        f"({_format_name(shown.media_type)}, {_plural(len(shown.data), 'byte')}).\n"
    )


def media_tail_refused(path: str, media_type: str) -> str:
    """Why a read of an image or a PDF with tail is refused."""
    if media_type == "application/pdf":
        return f"{path} is a PDF: read it without tail (start_line and line_count count its pages)"
    return f"{path} is an image ({_format_name(media_type)}): read it without tail"


def pdf(pages: Sequence[PdfPage], page_count: int, next_page: int | None, max_bytes: int) -> str:
    """A window of a PDF's pages as text: each page under a line naming it, then where to go on."""
    total = f"{_plural(page_count, 'page')} in all"
    text = ""
    for page in pages:
        body = "(no text on this page)\n" if page.text == "" else page.text if page.text.endswith("\n") else f"{page.text}\n"
        text += f"--- page {page.number} of {page_count} ---\n{body}"
        if page.cut:
            text += f"(page {page.number} is cut at {count(max_bytes)} bytes of text)\n"
    if not pages:
        text = "(a PDF with no pages)\n" if page_count == 0 else f"(no pages here; {total})\n"
    if next_page is not None:
        text += (
            f"… call read with start_line {next_page} for the next pages "
            f"(in a PDF, start_line and line_count count pages); {total}\n"
        )
    return text


def write(path: str, size: int, created: bool, appended: bool, version: str) -> str:
    what = "appended to" if appended else "created" if created else "replaced"
    return f"Wrote {path} ({what}): {_plural(size, 'byte')} now. Version {version}.\n"


#: After a diff the daemon stopped at its size limit.
_DIFF_CUT = "(the diff stops here, at 1 MiB; the rest of the change is not shown)\n"


def edit(path: str, replacements: int, diff: str, diff_truncated: bool, dry_run: bool, version: str) -> str:
    if dry_run:
        head = f"Dry run, nothing written: {_plural(replacements, 'replacement')} in {path} would make this change.\n"
    else:
        head = f"Edited {path}: {_plural(replacements, 'replacement')}. Version {version}.\n"
    text = head if diff == "" else f"{head}\n{diff}" if diff.endswith("\n") else f"{head}\n{diff}\n"
    return text + _DIFF_CUT if diff_truncated else text


def patch(files: Sequence[tuple[str, str, str]], dry_run: bool) -> str:
    """What apply_patch did (or would do) to each file: (path, action, moved_from), in the patch's order."""
    count = _plural(len(files), "file")
    head = f"Dry run, nothing written: the patch would change {count}.\n" if dry_run else f"Applied the patch: {count} changed.\n"
    return head + "".join(f"moved {source} to {path}\n" if action == "moved" else f"{action} {path}\n" for path, action, source in files)


def delete(path: str, existed: bool) -> str:
    return f"Deleted {path}.\n" if existed else f"{path} did not exist; nothing was deleted.\n"


def move(source: str, destination: str) -> str:
    return f"Moved {source} to {destination}.\n"


def make_dir(path: str, created: bool) -> str:
    return f"Created directory {path}.\n" if created else f"Directory {path} already exists.\n"


def listing(entries: Sequence[c.FileInfo], truncated: bool) -> str:
    """One line per entry: directories end in "/", files show their size."""
    if not entries:
        return "(no entries)\n"
    text = "".join(f"{_entry_line(entry)}\n" for entry in entries)
    if truncated:
        stopped = _plural(len(entries), "entry", "entries")
        text += f"… stopped at {stopped}: narrow it with pattern or max_depth, or raise max_entries\n"
    return text


def _entry_line(entry: c.FileInfo) -> str:
    if entry.type == c.FILE_TYPE_DIRECTORY:
        return "/" if entry.path == "/" else f"{entry.path}/"
    if entry.type == c.FILE_TYPE_FILE:
        return f"{entry.path} ({_plural(entry.size, 'byte')})"
    if entry.type == c.FILE_TYPE_SYMLINK:
        return f"{entry.path} (symbolic link)"
    return f"{entry.path} (special file)"


def search_matches(
    hits: Sequence[f.SearchMatch], summary: f.SearchSummary | None, with_context: bool, order: SearchOrder
) -> str:
    """Matches grouped by file, as ``grep -n`` with context: "12:match", "13-context", "--" between blocks that do not touch."""
    text = ""
    file: str | None = None
    last_line = 0
    for hit in hits:
        first = hit.line_number - len(hit.before)
        if hit.path != file:
            text += f"{hit.path}\n" if file is None else f"\n{hit.path}\n"
            file = hit.path
        elif with_context and first > last_line + 1:
            text += "--\n"
        text += "".join(f"{first + i}-{line}\n" for i, line in enumerate(hit.before))
        text += f"{hit.line_number}:{hit.line}\n"
        text += "".join(f"{hit.line_number + 1 + i}-{line}\n" for i, line in enumerate(hit.after))
        last_line = hit.line_number + len(hit.after)
    matches = summary.matches if summary else 0
    files = summary.files_matched if summary else 0
    return text + _summary_line(summary, f"{_plural(matches, 'matching line')} in {_plural(files, 'file')}", order)


def search_files(paths: Sequence[str], summary: f.SearchSummary | None, order: SearchOrder) -> str:
    return "".join(f"{path}\n" for path in paths) + _summary_line(summary, f"{_plural(len(paths), 'file')} with matches", order)


def search_counts(counts: Sequence[f.SearchCount], summary: f.SearchSummary | None, order: SearchOrder) -> str:
    lines = "".join(f"{entry.path}:{entry.count}\n" for entry in counts)
    matches = summary.matches if summary else 0
    return lines + _summary_line(summary, f"{_plural(matches, 'matching line')} in {_plural(len(counts), 'file')}", order)


#: Said when files came as found and more than one was searched: the page may differ next time.
_FOUND_ORDER_HINT = 'files in the order found: order "path" sorts them, for the same page every time'


def _summary_line(summary: f.SearchSummary | None, found: str, order: SearchOrder) -> str:
    if summary is None or summary.matches == 0:
        return f"No matches ({_plural(summary.files_searched if summary else 0, 'file')} searched).\n"
    line = f"({found}; {_plural(summary.files_searched, 'file')} searched"
    if summary.truncated:
        line += "; more exist: raise max_results or narrow the search"
    if summary.timed_out:
        line += "; the search ran out of time, so results are partial"
    if order == "found" and summary.files_searched > 1:
        line += f"; {_FOUND_ORDER_HINT}"
    return f"{line})\n"


_KINDS = {c.FILE_TYPE_FILE: "file", c.FILE_TYPE_DIRECTORY: "directory", c.FILE_TYPE_SYMLINK: "symbolic link"}


def stat(file: c.FileInfo) -> str:
    kind = _KINDS.get(file.type, "special file")
    modified = _iso_time(file.mtime) if file.HasField("mtime") else "unknown"
    text = (
        f"{file.path}: {kind}, {_plural(file.size, 'byte')}, mode {file.mode:04o}, "
        f"modified {modified}, version {file.version}\n"
    )
    if file.HasField("line_count"):
        text += f"{_plural(file.line_count, 'line')}\n"
    return text


def changes(entries: Sequence[w.DiffEntry], summary: w.DiffSummary) -> str:
    """What changed since a snapshot: a count line, then one line per path (at most those given; the summary counts all)."""
    since = getattr(summary, "from")
    changed = summary.added + summary.modified + summary.removed
    fresh = since == ""  # no snapshot yet: the dispatcher listed the live tree
    if changed == 0:
        return f"{_NO_SNAPSHOT_YET}, and no files yet.\n" if fresh else f"Nothing changed since snapshot {since} ({_plural(summary.unchanged, 'path')}).\n"
    if fresh:
        text = f"{_NO_SNAPSHOT_YET}, so every file is new: {count(summary.added)} added.\n"
    else:
        text = (
            f"Since snapshot {since}: {count(summary.added)} added, {count(summary.modified)} modified, "
            f"{count(summary.removed)} removed, {count(summary.unchanged)} unchanged.\n"
        )
    text += "".join(f"{_change_line(entry)}\n" for entry in entries)
    if len(entries) < changed:
        text += f"… {_plural(changed - len(entries), 'more change')} not shown: raise max_entries\n"
    return text


_NO_SNAPSHOT_YET = "No snapshot yet (one is taken when a run finishes)"


def _change_side(entry_type: int, size: int) -> str:
    return "symbolic link" if entry_type == w.DIFF_ENTRY_TYPE_SYMLINK else _plural(size, "byte")


def _change_line(entry: w.DiffEntry) -> str:
    if entry.kind == w.DIFF_KIND_REMOVED:
        return f"removed {entry.path}"
    after = _change_side(entry.type_after, entry.size_after)
    if entry.kind == w.DIFF_KIND_ADDED:
        return f"added {entry.path} ({after})"
    before = _change_side(entry.type_before, entry.size_before)
    return f"modified {entry.path} ({after if before == after else f'{after}, was {before}'})"


def snapshots(items: Sequence[w.Snapshot]) -> str:
    """One line per snapshot, newest first."""
    if not items:
        return "No snapshots yet (one is taken when a run finishes).\n"
    text = ""
    for s in items:
        text += f"{s.id}: {snapshot_time(s)}, {_plural(s.file_count, 'file')}, {_plural(s.size_bytes, 'byte')}"
        if s.run_id:
            text += f", run {s.run_id}"
        if s.labels:
            text += "; labels " + ", ".join(f"{key}={s.labels[key]}" for key in sorted(s.labels))
        text += "\n"
    return text


def exported(path: str, destination: str, files: int, size: int, version: str) -> str:
    return f"Exported {path} to {destination}: {_plural(files, 'file')}, {_plural(size, 'byte')}. Version {version}.\n"


def imported(archive: str, destination: str, files: int, size: int) -> str:
    return f"Imported {archive} into {destination}: {_plural(files, 'file')}, {_plural(size, 'byte')} written.\n"


def snapshot_time(snapshot: w.Snapshot) -> str:
    """When the snapshot was taken, RFC 3339 ("unknown" when unset, as the TypeScript writes it)."""
    return _iso_time(snapshot.created_at) if snapshot.HasField("created_at") else "unknown"


def _iso_time(mtime: Timestamp) -> str:
    """RFC 3339 in UTC with milliseconds, as JavaScript's Date.toISOString writes it (2026-12-03T10:00:00.123Z)."""
    try:
        t = time.gmtime(mtime.seconds)
    except (OverflowError, OSError, ValueError):  # beyond what the platform's time_t holds
        return "unknown"
    # toISOString writes years outside 0-9999 with a sign and six digits.
    year = f"{t.tm_year:04}" if 0 <= t.tm_year <= 9999 else f"{t.tm_year:+07}"
    return f"{year}-{time.strftime('%m-%dT%H:%M:%S', t)}.{mtime.nanos // 1_000_000:03}Z"


def error(error: FileToolsError, tool: str | None = None, tool_set: str | None = None) -> str:
    """A failed call of ``tool`` (of ``tool_set``, in its words), for a model: the daemon's message and reason, then what to do next."""
    # Not the daemon's answer but the channel's, in grpcio's words: the catalogue's, as every client says it.
    unreachable = not error.reason and error.code.name == "UNAVAILABLE"
    message = CATALOGUE["unreachable"]["message"] if unreachable else error.message
    return error_text(error.reason or error.code.name, message, error.metadata, tool, tool_set)


def error_text(reason: str, message: str, metadata: Mapping[str, str], tool: str | None = None, tool_set: str | None = None) -> str:
    told = in_words(message, tool_set).removesuffix(".")
    words = _TOOL_SETS.get(tool_set or "")
    line = "Error ({reason}): {message}." if words is None else words.get("error_line", "Error ({reason}): {message}.")
    text = re.sub(r"\{(reason|message)\}", lambda m: reason if m.group(1) == "reason" else told, line) + "\n"
    return text + "".join(f"{hint}\n" for hint in hints_for(reason, metadata, tool, tool_set))


def in_words(message: str, tool_set: str | None = None) -> str:
    """A daemon message in the words of ``tool_set`` (the catalogue's tool_sets[...].words); as it is for the catalogue's own tools."""
    words = _TOOL_SETS.get(tool_set or "")
    for old, new in [] if words is None else words["words"]:
        message = message.replace(old, new)
    return message


# ASCII \w, as the TypeScript reads placeholders.
_PLACEHOLDER = re.compile(r"\{(\w+)\}", re.ASCII)


def hints_for(reason: str, metadata: Mapping[str, str], tool: str | None = None, tool_set: str | None = None) -> list[str]:
    """The catalogue's sentences for ``reason`` (the tool's own for it, when it has some, else the tool set's,
    instead of the shared ones), those with placeholders only when the metadata fills them all."""
    own = _TOOL_HINTS.get(tool or "", {}).get(reason)
    words = _TOOL_SETS.get(tool_set or "")
    if own is None and words is not None:
        own = words["error_hints"].get(reason)
    hints = []
    for sentence in own if own is not None else CATALOGUE["error_hints"].get(reason, []):
        keys = _PLACEHOLDER.findall(sentence)
        if all(metadata.get(key) for key in keys):
            hints.append(_PLACEHOLDER.sub(lambda m: metadata[m.group(1)], sentence))
    return hints


_TOOL_HINTS: dict[str, dict[str, list[str]]] = {t["name"]: t.get("error_hints", {}) for t in CATALOGUE["tools"]}
_TOOL_SETS: dict[str, ToolSet] = {name: value for name, value in CATALOGUE["tool_sets"].items() if not name.startswith("$")}
