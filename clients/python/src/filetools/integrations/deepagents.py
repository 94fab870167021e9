"""A deep agents backend on a filetools workspace (``pip install filetools[deepagents]``).

    from deepagents import create_deep_agent
    from filetools.integrations.deepagents import FiletoolsBackend

    agent = create_deep_agent(model=model, backend=FiletoolsBackend(client, "demo"))

``FiletoolsBackend`` implements ``deepagents.backends.protocol.BackendProtocol``
(``ls``, ``read``, ``grep``, ``glob``, ``write``, ``edit``, ``delete``,
``upload_files``, ``download_files`` and their ``a``-prefixed twins) with the
daemon's calls: the agent's files are a contained, durable workspace, a read is
one window of the file however large it is, and a path out of bounds is an
error, never a host file.

A file deep agents takes as bytes by its extension (an image, a PDF, audio,
video) is returned base64, as its own backends do, within ``read_max_media_bytes``
(3.75 MiB: 5 MiB as base64, the most a model API takes in one image): an image
larger than that, or than 2,000 pixels a side, comes back downscaled by the
daemon (ReadMedia), and any other file larger than that is refused, saying so.
An image the daemon could fit only in another format than its name says (a PNG
of noise as JPEG, a GIF as PNG) is refused too: deep agents labels the bytes
by the file's extension, and a model API refuses an image labelled wrongly.

As the protocol asks, nothing raises: a failure is the result's ``error``, in
the words of the tool dispatcher (``Error (REASON): message`` and what to do
next); uploads and downloads report ``FileOperationError`` codes where one fits.
Given an ``AsyncClient`` too, the async twins run on it; otherwise they run the
blocking calls in a thread (the protocol's default).
"""

from __future__ import annotations

import asyncio
import base64
import mimetypes
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timezone
from pathlib import Path, PurePosixPath
from typing import Any, Generic, TypeVar

from deepagents.backends.protocol import (
    FILE_NOT_FOUND,
    INVALID_PATH,
    IS_DIRECTORY,
    PERMISSION_DENIED,
    BackendProtocol,
    DeleteResult,
    EditResult,
    FileDownloadResponse,
    FileInfo,
    FileUploadResponse,
    GlobResult,
    GrepMatch,
    GrepResult,
    LsResult,
    ReadResult,
    WriteResult,
)
from deepagents.backends.utils import _get_backend_read_file_type

from filetools import errors
from filetools.aio import AsyncClient
from filetools.client import Client
from filetools.models import MediaRead, SavedFile, TextWindow
from filetools.tools import _texts as texts
from filetools.v1 import common_pb2 as c
from filetools.v1 import files_pb2 as f

__all__ = ["FiletoolsBackend"]

R = TypeVar("R")

#: Matches a grep returns when the caller sets no max_count (the daemon's Search takes at most this many at once).
GREP_MAX_RESULTS = 10_000
#: Files a glob returns at most.
GLOB_MAX_ENTRIES = 10_000
#: Bytes of an image or other binary file a read returns at most: 5 MiB as base64, the most a model API takes
#: in one image (the daemon's ReadMedia default).
READ_MAX_MEDIA_BYTES = 15 * 2**20 // 4
#: The images ReadMedia fits to a size (by deep agents' label for the file's extension).
_FITTED_IMAGES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


@dataclass(frozen=True)
class _Op(Generic[R]):
    """One client call, by method name (Client and AsyncClient both have it), and how its answer or failure becomes a result."""

    method: str
    kwargs: dict[str, Any]
    #: The answer -> the result, or the next call to make (a read's line count).
    finish: Callable[[Any], R | _Op[R]]
    fail: Callable[[str], R]
    stream: bool = False


#: The words of deep agents' tools (ls, read_file, write_file, edit_file with old_string, glob, grep), in which errors are told.
TOOL_SET = "deepagents"


def _failure_text(error: Exception) -> str:
    if isinstance(error, errors.FileToolsError):
        return texts.error(error, tool_set=TOOL_SET)
    return texts.error_text("INVALID_ARGUMENT", str(error), {}, tool_set=TOOL_SET)


def _modified_at(entry: c.FileInfo) -> dict[str, str]:
    if not entry.HasField("mtime"):
        return {}
    return {"modified_at": entry.mtime.ToDatetime(tzinfo=timezone.utc).isoformat()}


def _file_info(entry: c.FileInfo) -> FileInfo:
    info: FileInfo = {"path": entry.path, "is_dir": entry.type == c.FILE_TYPE_DIRECTORY, "size": entry.size}
    info.update(_modified_at(entry))  # type: ignore[typeddict-item]
    return info


def _glob_pattern(pattern: str) -> str:
    """The protocol's glob as the daemon's List pattern: a bare name matches at any depth, a leading "/" anchors."""
    if pattern.startswith("/"):
        return pattern.lstrip("/")
    return pattern if "/" in pattern else f"**/{pattern}"


def _upload_error(error: Exception) -> str:
    """A ``FileOperationError`` code where one fits, else the dispatcher's text."""
    if isinstance(error, (errors.PathEscapesWorkspace, errors.PermissionDenied)):
        return PERMISSION_DENIED
    if isinstance(error, errors.IsADirectory):
        return IS_DIRECTORY
    if isinstance(error, (errors.InvalidPath, ValueError)):
        return INVALID_PATH
    if isinstance(error, errors.NotFound) and not isinstance(error, errors.WorkspaceNotFound):
        return FILE_NOT_FOUND
    return _failure_text(error)


class FiletoolsBackend(BackendProtocol):
    """deep agents' file backend on one workspace of a daemon.

    ``read_max_bytes`` bounds the text one ``read`` returns (a window cut short
    by it says where to go on, through ``next_offset``); ``read_max_media_bytes``
    the bytes of an image (downscaled to fit) or other binary file (refused past it).
    """

    def __init__(
        self,
        client: Client,
        workspace: str,
        *,
        async_client: AsyncClient | None = None,
        read_max_bytes: int = 1_000_000,
        read_max_media_bytes: int = READ_MAX_MEDIA_BYTES,
    ) -> None:
        self._client = client
        self._async_client = async_client
        self._workspace = workspace
        self._read_max_bytes = read_max_bytes
        self._read_max_media_bytes = read_max_media_bytes

    # --- running a call on either client ---------------------------------

    def _run(self, op: _Op[R]) -> R:
        while True:
            method = getattr(self._client, op.method)
            try:
                if op.stream:
                    stream = method(self._workspace, **op.kwargs)
                    answer: Any = (list(stream), stream.summary)
                else:
                    answer = method(self._workspace, **op.kwargs)
            except (errors.FileToolsError, ValueError) as error:
                return op.fail(_failure_text(error))
            step = op.finish(answer)
            if not isinstance(step, _Op):
                return step
            op = step

    async def _arun(self, op: _Op[R]) -> R:
        if self._async_client is None:
            return await asyncio.to_thread(self._run, op)
        while True:
            method = getattr(self._async_client, op.method)
            try:
                if op.stream:
                    stream = method(self._workspace, **op.kwargs)
                    answer: Any = ([item async for item in stream], stream.summary)
                else:
                    answer = await method(self._workspace, **op.kwargs)
            except (errors.FileToolsError, ValueError) as error:
                return op.fail(_failure_text(error))
            step = op.finish(answer)
            if not isinstance(step, _Op):
                return step
            op = step

    # --- the operations, once for both ------------------------------------

    def _ls(self, path: str) -> _Op[LsResult]:
        def finish(answer: tuple[list[c.FileInfo], f.ListSummary | None]) -> LsResult:
            return LsResult(entries=[_file_info(e) for e in answer[0]])

        return _Op("list_dir", {"path": path, "max_entries": GLOB_MAX_ENTRIES}, finish, lambda e: LsResult(error=e), stream=True)

    def _read_binary(self, file_path: str) -> _Op[ReadResult]:
        """A file deep agents reads as bytes (by its extension): an image fitted to the cap by the daemon, any other
        file whole within the cap; base64 either way."""
        # The media type deep agents gives the model for these bytes, as its read_file tool works it out.
        label = mimetypes.guess_type("file" + PurePosixPath(file_path).suffix)[0] or "application/octet-stream"
        if label in _FITTED_IMAGES:
            return self._read_image(file_path, label)

        def sized(info: c.FileInfo) -> ReadResult | _Op[ReadResult]:
            if info.type == c.FILE_TYPE_FILE and info.size > self._read_max_media_bytes:
                return self._too_large(info.path, info.size)
            return self._download_binary(file_path)

        return _Op("stat", {"path": file_path}, sized, lambda e: ReadResult(error=e))

    def _read_image(self, file_path: str, label: str) -> _Op[ReadResult]:
        def finish(m: MediaRead) -> ReadResult:
            shown = m.image.media_type if m.image is not None else m.media_type
            if m.image is None or shown != label:
                if m.image is not None and m.image.downscaled:
                    message = (
                        f"{m.path} ({m.image.original_width}x{m.image.original_height} pixels, {m.size} bytes) fits in "
                        f"{self._read_max_media_bytes} bytes only as {shown}, but read_file shows it as {label}, by its name"
                    )
                else:
                    message = f"{m.path} is {shown}, but read_file shows it as {label}, by its name"
                return ReadResult(error=texts.error_text("NOT_MEDIA", message, {}, tool_set=TOOL_SET))
            return ReadResult(file_data={"content": base64.standard_b64encode(m.image.data).decode("ascii"), "encoding": "base64"})

        kwargs = {"path": file_path, "max_image_bytes": self._read_max_media_bytes}
        return _Op("read_media", kwargs, finish, lambda e: ReadResult(error=e))

    def _download_binary(self, file_path: str) -> _Op[ReadResult]:
        scratch = Path(tempfile.mkdtemp(prefix="filetools-read-"))

        def finish(saved: SavedFile) -> ReadResult:
            try:
                if saved.size > self._read_max_media_bytes:  # it grew since it was looked at
                    return self._too_large(file_path, saved.size)
                raw = saved.path.read_bytes()
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
            return ReadResult(file_data={"content": base64.standard_b64encode(raw).decode("ascii"), "encoding": "base64"})

        def fail(error: str) -> ReadResult:
            shutil.rmtree(scratch, ignore_errors=True)
            return ReadResult(error=error)

        return _Op("download", {"path": file_path, "to": scratch / "file"}, finish, fail)

    def _too_large(self, path: str, size: int) -> ReadResult:
        message = f"{path} is {size} bytes; read_file shows a file of this type only up to {self._read_max_media_bytes} bytes"
        return ReadResult(error=texts.error_text("QUOTA_EXCEEDED", message, {}, tool_set=TOOL_SET))

    def _read(self, file_path: str, offset: int, limit: int) -> _Op[ReadResult] | ReadResult:
        if _get_backend_read_file_type(file_path) != "text":
            return self._read_binary(file_path)
        if limit <= 0:
            return ReadResult(file_data={"content": "", "encoding": "utf-8"}, no_lines_requested=True)
        offset = max(offset, 0)

        def finish(w: TextWindow) -> ReadResult | _Op[ReadResult]:
            content = w.text.replace("\r\n", "\n")
            if w.last_line < w.first_line:  # no line in the window
                if offset == 0:  # an empty file
                    return ReadResult(file_data={"content": "", "encoding": "utf-8"})
                total = w.total_lines if w.total_lines is not None else w.first_line - 1
                return ReadResult(error=f"Line offset {offset} exceeds file length ({total} lines)")

            def window(total_lines: int | None) -> ReadResult:
                return ReadResult(
                    file_data={"content": content, "encoding": "utf-8"},
                    total_lines=total_lines if total_lines is not None and total_lines >= w.last_line else None,
                    start_line=w.first_line,
                    end_line=w.last_line,
                    next_offset=None if w.next_start_line is None else w.next_start_line - 1,
                )

            if w.total_lines is not None:
                return window(w.total_lines)
            # A window short of the end: the count, as deep agents' own backends give it (the daemon's line index keeps it
            # for the next window). Should the count fail, the window still stands without it.
            return _Op(
                "stat",
                {"path": file_path, "count_lines": True},
                lambda info: window(info.line_count if info.HasField("line_count") else None),
                lambda _: window(None),
            )

        kwargs = {"path": file_path, "start_line": offset + 1, "line_count": limit, "max_bytes": self._read_max_bytes}
        return _Op("read_text", kwargs, finish, lambda e: ReadResult(error=e))

    def _grep(self, pattern: str, path: str | None, glob: str | None, max_count: int | None) -> _Op[GrepResult]:
        # One match more than max_count tells a cut search from one that found exactly max_count.
        cap = GREP_MAX_RESULTS if max_count is None else min(max(max_count, 0) + 1, GREP_MAX_RESULTS)

        def finish(answer: tuple[list[f.SearchMatch], f.SearchSummary | None]) -> GrepResult:
            hits, summary = answer
            matches: list[GrepMatch] = [{"path": h.path, "line": h.line_number, "text": h.line} for h in hits]
            timed_out = bool(summary and summary.timed_out)
            truncated = timed_out or bool(summary and summary.truncated)
            if max_count is not None and len(matches) > max_count:
                matches, truncated = matches[:max_count], True
            elif max_count is not None and len(matches) < cap:
                truncated = timed_out
            return GrepResult(matches=matches, truncated=truncated)

        # Sorted path order (the client's default), not the search tool's found order: the protocol
        # can neither ask for an order nor say which one came (README, deep agents).
        kwargs: dict[str, Any] = {
            "pattern": pattern,
            "path": path or "/",
            "fixed_strings": True,
            "include": [glob] if glob else [],
            "max_results": cap,
        }
        return _Op("search", kwargs, finish, lambda e: GrepResult(error=e), stream=True)

    def _glob(self, pattern: str, path: str | None) -> _Op[GlobResult]:
        def finish(answer: tuple[list[c.FileInfo], f.ListSummary | None]) -> GlobResult:
            entries, summary = answer
            files = [_file_info(e) for e in entries if e.type == c.FILE_TYPE_FILE]
            truncated = bool(summary and summary.truncated)
            return GlobResult(matches=files, truncated=truncated, truncation_reason="budget" if truncated else None)

        kwargs = {
            "path": path or "/",
            "pattern": _glob_pattern(pattern),
            "recursive": True,
            "respect_gitignore": False,
            "max_entries": GLOB_MAX_ENTRIES,
        }
        return _Op("list_dir", kwargs, finish, lambda e: GlobResult(error=e), stream=True)

    def _write(self, file_path: str, content: str) -> _Op[WriteResult]:
        return _Op(
            "write_text",
            {"path": file_path, "text": content},
            lambda r: WriteResult(path=r.path),
            lambda e: WriteResult(error=e),
        )

    def _edit(self, file_path: str, old_string: str, new_string: str, replace_all: bool) -> _Op[EditResult]:
        return _Op(
            "edit",
            {"path": file_path, "old_text": old_string, "new_text": new_string, "replace_all": replace_all},
            lambda r: EditResult(path=r.path, occurrences=r.replacements),
            lambda e: EditResult(error=e),
        )

    def _delete(self, file_path: str) -> _Op[DeleteResult]:
        def finish(r: f.DeleteResponse) -> DeleteResult:
            if not r.existed:
                return DeleteResult(error=texts.error_text("NOT_FOUND", f"nothing exists at {r.path or file_path}", {}, tool_set=TOOL_SET))
            return DeleteResult(path=r.path)

        return _Op("delete", {"path": file_path, "recursive": True}, finish, lambda e: DeleteResult(error=e))

    # --- BackendProtocol ---------------------------------------------------

    def ls(self, path: str) -> LsResult:
        return self._run(self._ls(path))

    async def als(self, path: str) -> LsResult:
        return await self._arun(self._ls(path))

    def read(self, file_path: str, offset: int = 0, limit: int = 2000) -> ReadResult:
        op = self._read(file_path, offset, limit)
        return op if isinstance(op, ReadResult) else self._run(op)

    async def aread(self, file_path: str, offset: int = 0, limit: int = 2000) -> ReadResult:
        op = self._read(file_path, offset, limit)
        return op if isinstance(op, ReadResult) else await self._arun(op)

    def grep(self, pattern: str, path: str | None = None, glob: str | None = None, *, max_count: int | None = None) -> GrepResult:
        return self._run(self._grep(pattern, path, glob, max_count))

    async def agrep(
        self, pattern: str, path: str | None = None, glob: str | None = None, *, max_count: int | None = None
    ) -> GrepResult:
        return await self._arun(self._grep(pattern, path, glob, max_count))

    def glob(self, pattern: str, path: str | None = None) -> GlobResult:
        return self._run(self._glob(pattern, path))

    async def aglob(self, pattern: str, path: str | None = None) -> GlobResult:
        return await self._arun(self._glob(pattern, path))

    def write(self, file_path: str, content: str) -> WriteResult:
        return self._run(self._write(file_path, content))

    async def awrite(self, file_path: str, content: str) -> WriteResult:
        return await self._arun(self._write(file_path, content))

    def edit(self, file_path: str, old_string: str, new_string: str, replace_all: bool = False) -> EditResult:  # noqa: FBT001, FBT002
        return self._run(self._edit(file_path, old_string, new_string, replace_all))

    async def aedit(self, file_path: str, old_string: str, new_string: str, replace_all: bool = False) -> EditResult:  # noqa: FBT001, FBT002
        return await self._arun(self._edit(file_path, old_string, new_string, replace_all))

    def delete(self, file_path: str) -> DeleteResult:
        return self._run(self._delete(file_path))

    async def adelete(self, file_path: str) -> DeleteResult:
        return await self._arun(self._delete(file_path))

    def upload_files(self, files: list[tuple[str, bytes]]) -> list[FileUploadResponse]:
        responses = []
        for path, content in files:
            try:
                self._client.write_bytes(self._workspace, path, content)
            except (errors.FileToolsError, ValueError) as error:
                responses.append(FileUploadResponse(path=path, error=_upload_error(error)))
            else:
                responses.append(FileUploadResponse(path=path))
        return responses

    async def aupload_files(self, files: list[tuple[str, bytes]]) -> list[FileUploadResponse]:
        if self._async_client is None:
            return await super().aupload_files(files)
        responses = []
        for path, content in files:
            try:
                await self._async_client.write_bytes(self._workspace, path, content)
            except (errors.FileToolsError, ValueError) as error:
                responses.append(FileUploadResponse(path=path, error=_upload_error(error)))
            else:
                responses.append(FileUploadResponse(path=path))
        return responses

    def download_files(self, paths: list[str]) -> list[FileDownloadResponse]:
        responses = []
        with tempfile.TemporaryDirectory(prefix="filetools-download-") as scratch:
            for i, path in enumerate(paths):
                local = Path(scratch) / str(i)
                try:
                    self._client.download(self._workspace, path, to=local)
                    responses.append(FileDownloadResponse(path=path, content=local.read_bytes()))
                except (errors.FileToolsError, ValueError) as error:
                    responses.append(FileDownloadResponse(path=path, error=_upload_error(error)))
        return responses

    async def adownload_files(self, paths: list[str]) -> list[FileDownloadResponse]:
        if self._async_client is None:
            return await super().adownload_files(paths)
        responses = []
        with tempfile.TemporaryDirectory(prefix="filetools-download-") as scratch:
            for i, path in enumerate(paths):
                local = Path(scratch) / str(i)
                try:
                    await self._async_client.download(self._workspace, path, to=local)
                    responses.append(FileDownloadResponse(path=path, content=local.read_bytes()))
                except (errors.FileToolsError, ValueError) as error:
                    responses.append(FileDownloadResponse(path=path, error=_upload_error(error)))
        return responses
