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
video) is read whole and returned base64, as its own backends do.

As the protocol asks, nothing raises: a failure is the result's ``error``, in
the words of the tool dispatcher (``Error (REASON): message`` and what to do
next); uploads and downloads report ``FileOperationError`` codes where one fits.
Given an ``AsyncClient`` too, the async twins run on it; otherwise they run the
blocking calls in a thread (the protocol's default).
"""

from __future__ import annotations

import asyncio
import base64
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timezone
from pathlib import Path
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
from filetools.models import TextWindow
from filetools.tools import _texts as texts
from filetools.v1 import common_pb2 as c
from filetools.v1 import files_pb2 as f

__all__ = ["FiletoolsBackend"]

R = TypeVar("R")

#: Matches a grep returns when the caller sets no max_count (the daemon's Search takes at most this many at once).
GREP_MAX_RESULTS = 10_000
#: Files a glob returns at most.
GLOB_MAX_ENTRIES = 10_000


@dataclass(frozen=True)
class _Op(Generic[R]):
    """One client call, by method name (Client and AsyncClient both have it), and how its answer or failure becomes a result."""

    method: str
    kwargs: dict[str, Any]
    finish: Callable[[Any], R]
    fail: Callable[[str], R]
    stream: bool = False


def _failure_text(error: Exception) -> str:
    if isinstance(error, errors.FileToolsError):
        return texts.error(error)
    return texts.error_text("INVALID_ARGUMENT", str(error), {})


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
    by it says where to go on, through ``next_offset``).
    """

    def __init__(
        self,
        client: Client,
        workspace: str,
        *,
        async_client: AsyncClient | None = None,
        read_max_bytes: int = 1_000_000,
    ) -> None:
        self._client = client
        self._async_client = async_client
        self._workspace = workspace
        self._read_max_bytes = read_max_bytes

    # --- running a call on either client ---------------------------------

    def _run(self, op: _Op[R]) -> R:
        method = getattr(self._client, op.method)
        try:
            if op.stream:
                stream = method(self._workspace, **op.kwargs)
                answer: Any = (list(stream), stream.summary)
            else:
                answer = method(self._workspace, **op.kwargs)
        except (errors.FileToolsError, ValueError) as error:
            return op.fail(_failure_text(error))
        return op.finish(answer)

    async def _arun(self, op: _Op[R]) -> R:
        if self._async_client is None:
            return await asyncio.to_thread(self._run, op)
        method = getattr(self._async_client, op.method)
        try:
            if op.stream:
                stream = method(self._workspace, **op.kwargs)
                answer: Any = ([item async for item in stream], stream.summary)
            else:
                answer = await method(self._workspace, **op.kwargs)
        except (errors.FileToolsError, ValueError) as error:
            return op.fail(_failure_text(error))
        return op.finish(answer)

    # --- the operations, once for both ------------------------------------

    def _ls(self, path: str) -> _Op[LsResult]:
        def finish(answer: tuple[list[c.FileInfo], f.ListSummary | None]) -> LsResult:
            return LsResult(entries=[_file_info(e) for e in answer[0]])

        return _Op("list_dir", {"path": path, "max_entries": GLOB_MAX_ENTRIES}, finish, lambda e: LsResult(error=e), stream=True)

    def _read_binary(self, file_path: str) -> _Op[ReadResult]:
        """A file deep agents reads as bytes (an image, a PDF, audio, video: by its extension), whole and base64."""
        scratch = Path(tempfile.mkdtemp(prefix="filetools-read-"))
        local = scratch / "file"

        def finish(_: object) -> ReadResult:
            try:
                raw = local.read_bytes()
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
            return ReadResult(file_data={"content": base64.standard_b64encode(raw).decode("ascii"), "encoding": "base64"})

        def fail(error: str) -> ReadResult:
            shutil.rmtree(scratch, ignore_errors=True)
            return ReadResult(error=error)

        return _Op("download", {"path": file_path, "to": local}, finish, fail)

    def _read(self, file_path: str, offset: int, limit: int) -> _Op[ReadResult] | ReadResult:
        if _get_backend_read_file_type(file_path) != "text":
            return self._read_binary(file_path)
        if limit <= 0:
            return ReadResult(file_data={"content": "", "encoding": "utf-8"}, no_lines_requested=True)
        offset = max(offset, 0)

        def finish(w: TextWindow) -> ReadResult:
            content = w.text.replace("\r\n", "\n")
            if w.last_line < w.first_line:  # no line in the window
                if offset == 0:  # an empty file
                    return ReadResult(file_data={"content": "", "encoding": "utf-8"})
                total = w.total_lines if w.total_lines is not None else w.first_line - 1
                return ReadResult(error=f"Line offset {offset} exceeds file length ({total} lines)")
            return ReadResult(
                file_data={"content": content, "encoding": "utf-8"},
                total_lines=w.total_lines,
                start_line=w.first_line,
                end_line=w.last_line,
                next_offset=None if w.next_start_line is None else w.next_start_line - 1,
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
                return DeleteResult(error=texts.error_text("NOT_FOUND", f"nothing exists at {r.path or file_path}", {}))
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
