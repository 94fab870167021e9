"""Values the clients return besides the generated messages, and the option names they take."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from filetools.v1 import files_pb2

#: Write and Upload modes (WriteMode without its prefix, lower case).
WriteMode = Literal["create_or_replace", "create_only", "replace_only", "append"]
#: Line endings of written text (Newline without its prefix, lower case).
Newline = Literal["preserve", "lf", "crlf"]
#: What Search streams per hit (OutputMode without its prefix, lower case).
OutputMode = Literal["content", "files_with_matches", "count"]
#: The order of Search results (SearchOrder without its prefix, lower case): "path" (sorted, the same
#: results for the same tree) or "found" (as found: the first results sooner, which ones may vary).
SearchOrder = Literal["path", "found"]
#: One Search result: a matching line, a matching file or a file's count, per OutputMode.
SearchHit = files_pb2.SearchMatch | files_pb2.SearchFile | files_pb2.SearchCount
#: Called as bytes arrive with (bytes received so far, bytes announced by the header).
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class TextWindow:
    """A window of a text file's lines, with what it takes to page on."""

    path: str
    text: str
    #: Line number (1-based) of the first line in `text`.
    first_line: int
    #: Line number of the last line in `text` (first_line - 1 when the window is empty).
    last_line: int
    #: Lines in the file, when the daemon knows (a tail, or a window that reached the end).
    total_lines: int | None
    #: True when max_bytes stopped the window before line_count lines or the end of the file.
    truncated: bool
    #: True when the window reached the end of the file.
    eof: bool
    #: True when a single line longer than max_bytes was cut.
    line_cut: bool
    #: The start_line of the next window; None once the window reached the end of the file.
    next_start_line: int | None
    #: The file's version when it was read: pass it as ``if_version`` to edit it safely.
    version: str

    def numbered(self) -> str:
        """The text as ``cat -n`` prints it: a right-aligned line number and a tab before each line."""
        lines = self.text.splitlines(keepends=True)
        return "".join(f"{self.first_line + i:6}\t{line}" for i, line in enumerate(lines))


@dataclass(frozen=True)
class MediaImage:
    """The image ReadMedia returned: the file's bytes, or a smaller image of it (``downscaled``)."""

    media_type: str
    data: bytes
    width: int
    height: int
    original_width: int
    original_height: int
    downscaled: bool


@dataclass(frozen=True)
class PdfPage:
    """One page's text (``cut`` when max_bytes cut it)."""

    number: int
    text: str
    cut: bool


@dataclass(frozen=True)
class MediaRead:
    """What ReadMedia gives: ``image`` for an image, ``pages`` (a window of them) for a PDF."""

    path: str
    #: The file's type: image/png, image/jpeg, image/gif, image/webp or application/pdf.
    media_type: str
    version: str
    size: int
    image: MediaImage | None
    pages: list[PdfPage]
    #: PDF: pages in the document.
    page_count: int
    #: PDF: the page to ask for next; None at the end.
    next_page: int | None
    truncated: bool
    eof: bool


@dataclass(frozen=True)
class SavedFile:
    """A file that ExportSnapshot or Download wrote locally, checked against its header."""

    path: Path
    size: int
    sha256: str
    #: Regular files in an exported tarball (None for a download).
    file_count: int | None = None
