"""The asyncio client (grpc.aio): ``filetools.Client`` method for method, each one awaited."""

from __future__ import annotations

import asyncio
from datetime import datetime
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any, BinaryIO, Generic, TypeVar

import grpc
import grpc.aio

from filetools import _ops, _rpc
from filetools._channel import connection, with_trace_context
from filetools._ops import H, Fold, Pipe, ReadEvent, Send, ServerStream, StrPath, Unary
from filetools._rpc import Req, Resp
from filetools.errors import Cancelled, error_from_rpc
from filetools.models import (
    MediaRead,
    Newline,
    OutputMode,
    Progress,
    SavedFile,
    SearchHit,
    SearchOrder,
    TextWindow,
    WriteMode,
)
from filetools.v1 import common_pb2 as c
from filetools.v1 import daemon_pb2 as d
from filetools.v1 import files_pb2 as f
from filetools.v1 import journal_pb2 as j
from filetools.v1 import workspaces_pb2 as w

T = TypeVar("T")
S = TypeVar("S")


class AsyncStream(Generic[T, S]):
    """The items of a server stream for ``async for``; ``summary`` holds its closing message once the loop has ended.

    Breaking out of the loop (or ``close()``, or leaving an ``async with``
    block) cancels the call, so the daemon stops working on it.
    """

    def __init__(self, parts: AsyncIterator[tuple[Sequence[T], S | None]], cancel: Callable[[], object]) -> None:
        self._parts = parts
        self._cancel = cancel
        self._closed = False
        self.summary: S | None = None

    async def __aiter__(self) -> AsyncIterator[T]:
        try:
            async for items, summary in self._parts:
                if summary is not None:
                    self.summary = summary
                for item in items:
                    yield item
        except grpc.aio.AioRpcError as error:
            raise error_from_rpc(error) from None
        except asyncio.CancelledError:
            # grpc.aio reports a call cancelled by close() as a cancelled task; Client raises Cancelled there.
            if self._closed:
                raise Cancelled(grpc.StatusCode.CANCELLED, "", "the stream was closed") from None
            raise
        finally:  # a no-op once the call has ended; when the loop broke off, it stops the daemon's work
            self._cancel()

    def close(self) -> None:
        self._closed = True
        self._cancel()

    async def __aenter__(self) -> AsyncStream[T, S]:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()


async def _split_each(
    responses: AsyncIterator[Resp], split: Callable[[Resp], tuple[Sequence[T], S | None]]
) -> AsyncIterator[tuple[Sequence[T], S | None]]:
    async for response in responses:
        yield split(response)


async def _requests(op: Send[Req, Resp], source: BinaryIO) -> AsyncIterator[Req]:
    """The header, then the source file in chunks, each read in a thread: a slow source must not block the loop."""
    yield op.header
    while data := await asyncio.to_thread(source.read, _ops.CHUNK_BYTES):
        yield op.chunk(data)


class AsyncClient:
    """A connection to filetoolsd for asyncio code; see ``filetools.Client`` for the options.

    Use it as ``async with AsyncClient(address) as client:``. Every method
    takes ``timeout=`` (seconds) and raises ``FileToolsError`` subclasses;
    cancelling the task that awaits a call cancels the call.
    """

    def __init__(
        self,
        address: str | None = None,
        *,
        token: str | None = None,
        tls: bool = False,
        root_certificates: bytes | None = None,
        private_key: bytes | None = None,
        certificate_chain: bytes | None = None,
        options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        conn = connection(address, token, tls, root_certificates, private_key, certificate_chain, options)
        self.address = conn.address
        self._metadata = conn.metadata
        self._channel = (
            grpc.aio.secure_channel(conn.address, conn.credentials, conn.options)
            if conn.credentials
            else grpc.aio.insecure_channel(conn.address, conn.options)
        )

    async def close(self) -> None:
        await self._channel.close()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    # --- transports: the only code that differs from Client -------------

    async def _unary(self, op: Unary[Req, Resp, T], timeout: float | None) -> T:
        rpc = op.rpc
        call = self._channel.unary_unary(rpc.path, rpc.request.SerializeToString, rpc.response.FromString)
        try:
            response = await call(op.request, timeout=timeout, metadata=with_trace_context(self._metadata))
        except grpc.aio.AioRpcError as error:
            raise error_from_rpc(error) from None
        return op.result(response)

    def _stream(self, op: ServerStream[Req, Resp, T, S], timeout: float | None) -> AsyncStream[T, S]:
        rpc = op.rpc
        call = self._channel.unary_stream(rpc.path, rpc.request.SerializeToString, rpc.response.FromString)
        responses = call(op.request, timeout=timeout, metadata=with_trace_context(self._metadata))
        return AsyncStream(_split_each(responses.__aiter__(), op.split), responses.cancel)

    async def _fold(self, op: Fold[Req, Resp, T], timeout: float | None) -> T:
        rpc = op.rpc
        call = self._channel.unary_stream(rpc.path, rpc.request.SerializeToString, rpc.response.FromString)
        folder = op.start()
        responses = call(op.request, timeout=timeout, metadata=with_trace_context(self._metadata))
        try:
            async for response in responses:
                folder.add(response)
        except BaseException as error:
            folder.abort()
            responses.cancel()
            if isinstance(error, grpc.aio.AioRpcError):
                raise error_from_rpc(error) from None
            raise
        return folder.finish()

    async def _send(self, op: Send[Req, Resp], timeout: float | None) -> Resp:
        rpc = op.rpc
        call = self._channel.stream_unary(rpc.path, rpc.request.SerializeToString, rpc.response.FromString)
        # Unbuffered: a buffered file's close() waits for a read still blocked in
        # another thread (a stalled pipe after the deadline), and would hang here.
        with open(op.source, "rb", buffering=0) as source:
            # Typed apart: the serializer, Message.SerializeToString, would widen Req to Message here.
            requests: AsyncIterator[Req] = _requests(op, source)
            try:
                response: Resp = await call(requests, timeout=timeout, metadata=with_trace_context(self._metadata))
            except grpc.aio.AioRpcError as error:
                raise error_from_rpc(error) from None
        return response

    async def _pipe(self, op: Pipe[Any, Any, H, Req, Resp], timeout: float | None) -> tuple[H, Resp]:
        source = self._channel.unary_stream(op.source.path, op.source.request.SerializeToString, op.source.response.FromString)
        sink = self._channel.stream_unary(op.sink.path, op.sink.request.SerializeToString, op.sink.response.FromString)
        relay = op.relay()
        responses = source(op.request, timeout=timeout, metadata=with_trace_context(self._metadata))
        # grpc.aio reads the requests in a task of its own and, when they fail, only cancels the call: keep why.
        failed: list[BaseException] = []

        async def requests(announced: H) -> AsyncIterator[Req]:
            yield op.header(announced)
            try:
                # read(), not async for: grpc.aio refuses a mix of the two on one call.
                while (response := await responses.read()) is not grpc.aio.EOF:
                    if data := relay.data(response):
                        yield op.chunk(data)
                relay.check()
            except GeneratorExit:
                raise  # closed by grpc.aio because the sink call ended: its own error says why
            except BaseException as error:
                failed.append(error)
                raise

        try:
            first = await responses.read()
            announced = relay.announce(None if first is grpc.aio.EOF else first)
            response: Resp = await sink(requests(announced), timeout=timeout, metadata=with_trace_context(self._metadata))
        except BaseException as error:  # (grpc.aio reports a failed request iterator as a cancelled task)
            cause = failed[0] if failed else error
            if isinstance(cause, grpc.aio.AioRpcError):
                raise error_from_rpc(cause) from None
            if cause is error:
                raise
            raise cause from None
        finally:
            responses.cancel()  # a no-op once the call has ended
        return announced, response

    # --- Files ------------------------------------------------------------

    async def read_text(
        self,
        workspace: str,
        path: str,
        start_line: int = 1,
        line_count: int | None = None,
        *,
        tail: int | None = None,
        encoding: str = "",
        max_bytes: int | None = None,
        at_snapshot: str = "",
        timeout: float | None = None,
    ) -> TextWindow:
        """See ``Client.read_text``."""
        request = _ops.read(workspace, path, start_line, line_count, tail, encoding, max_bytes, at_snapshot)
        return await self._fold(_ops.read_text(request), timeout)

    def read(
        self,
        workspace: str,
        path: str,
        start_line: int = 1,
        line_count: int | None = None,
        *,
        tail: int | None = None,
        encoding: str = "",
        max_bytes: int | None = None,
        at_snapshot: str = "",
        timeout: float | None = None,
    ) -> AsyncStream[ReadEvent, f.ReadTrailer]:
        """See ``Client.read``."""
        request = _ops.read(workspace, path, start_line, line_count, tail, encoding, max_bytes, at_snapshot)
        return self._stream(_ops.read_stream(request), timeout)

    async def read_media(
        self,
        workspace: str,
        path: str,
        *,
        start_page: int | None = None,
        page_count: int | None = None,
        max_bytes: int | None = None,
        max_image_bytes: int | None = None,
        max_image_side: int | None = None,
        at_snapshot: str = "",
        timeout: float | None = None,
    ) -> MediaRead:
        """See ``Client.read_media``."""
        op = _ops.read_media(workspace, path, start_page, page_count, max_bytes, max_image_bytes, max_image_side, at_snapshot)
        return await self._fold(op, timeout)

    async def write_text(
        self,
        workspace: str,
        path: str,
        text: str,
        *,
        encoding: str = "",
        create_dirs: bool = True,
        mode: WriteMode = "create_or_replace",
        newline: Newline = "preserve",
        if_version: str | None = None,
        timeout: float | None = None,
    ) -> f.WriteResponse:
        op = _ops.write(workspace, path, text, encoding, create_dirs, mode, newline, if_version)
        return await self._unary(op, timeout)

    async def write_bytes(
        self,
        workspace: str,
        path: str,
        data: bytes,
        *,
        create_dirs: bool = True,
        mode: WriteMode = "create_or_replace",
        if_version: str | None = None,
        timeout: float | None = None,
    ) -> f.WriteResponse:
        op = _ops.write(workspace, path, data, "", create_dirs, mode, "preserve", if_version)
        return await self._unary(op, timeout)

    async def edit(
        self,
        workspace: str,
        path: str,
        old_text: str,
        new_text: str,
        *,
        replace_all: bool = False,
        dry_run: bool = False,
        if_version: str | None = None,
        encoding: str = "",
        timeout: float | None = None,
    ) -> f.EditResponse:
        """See ``Client.edit``."""
        edits = [f.TextEdit(old_text=old_text, new_text=new_text, replace_all=replace_all)]
        return await self._unary(_ops.edit(workspace, path, edits, dry_run, if_version, encoding), timeout)

    async def edit_many(
        self,
        workspace: str,
        path: str,
        edits: Iterable[f.TextEdit],
        *,
        dry_run: bool = False,
        if_version: str | None = None,
        encoding: str = "",
        timeout: float | None = None,
    ) -> f.EditResponse:
        """See ``Client.edit_many``."""
        return await self._unary(_ops.edit(workspace, path, edits, dry_run, if_version, encoding), timeout)

    async def apply_patch(
        self, workspace: str, patch: str, *, dry_run: bool = False, timeout: float | None = None
    ) -> f.ApplyPatchResponse:
        """See ``Client.apply_patch``."""
        return await self._unary(_ops.apply_patch(workspace, patch, dry_run), timeout)

    async def delete(
        self,
        workspace: str,
        path: str,
        *,
        recursive: bool = False,
        if_version: str | None = None,
        timeout: float | None = None,
    ) -> f.DeleteResponse:
        return await self._unary(_ops.delete(workspace, path, recursive, if_version), timeout)

    async def move(
        self,
        workspace: str,
        source: str,
        destination: str,
        *,
        overwrite: bool = False,
        create_dirs: bool = True,
        if_version: str | None = None,
        timeout: float | None = None,
    ) -> f.MoveResponse:
        op = _ops.move(workspace, source, destination, overwrite, create_dirs, if_version)
        return await self._unary(op, timeout)

    async def make_dir(
        self, workspace: str, path: str, *, parents: bool = True, timeout: float | None = None
    ) -> f.MakeDirResponse:
        return await self._unary(_ops.make_dir(workspace, path, parents), timeout)

    async def stat(
        self,
        workspace: str,
        path: str = "",
        *,
        detect_binary: bool = False,
        count_lines: bool = False,
        at_snapshot: str = "",
        timeout: float | None = None,
    ) -> c.FileInfo:
        return await self._unary(_ops.stat(workspace, path, detect_binary, count_lines, at_snapshot), timeout)

    def list_dir(
        self,
        workspace: str,
        path: str = "",
        *,
        pattern: str = "",
        recursive: bool = False,
        max_depth: int | None = None,
        include_hidden: bool = True,
        respect_gitignore: bool = True,
        max_entries: int | None = None,
        at_snapshot: str = "",
        timeout: float | None = None,
    ) -> AsyncStream[c.FileInfo, f.ListSummary]:
        """See ``Client.list_dir``."""
        op = _ops.list_dir(
            workspace, path, pattern, recursive, max_depth, include_hidden, respect_gitignore, max_entries, at_snapshot
        )
        return self._stream(op, timeout)

    def search(
        self,
        workspace: str,
        pattern: str,
        path: str = "",
        *,
        fixed_strings: bool = False,
        case_insensitive: bool = False,
        include: Iterable[str] = (),
        exclude: Iterable[str] = (),
        context_before: int = 0,
        context_after: int = 0,
        max_results: int | None = None,
        max_file_size: int | None = None,
        respect_gitignore: bool = True,
        output_mode: OutputMode = "content",
        order: SearchOrder = "path",
        timeout: float | None = None,
    ) -> AsyncStream[SearchHit, f.SearchSummary]:
        """See ``Client.search``."""
        op = _ops.search(
            workspace,
            pattern,
            path,
            fixed_strings,
            case_insensitive,
            include,
            exclude,
            context_before,
            context_after,
            max_results,
            max_file_size,
            respect_gitignore,
            output_mode,
            order,
        )
        return self._stream(op, timeout)

    async def upload(
        self,
        workspace: str,
        path: str,
        *,
        from_: StrPath,
        mode: WriteMode = "create_or_replace",
        create_dirs: bool = True,
        if_version: str | None = None,
        sha256: str | None = None,
        timeout: float | None = None,
    ) -> f.UploadResponse:
        """See ``Client.upload``."""
        return await self._send(_ops.upload(workspace, path, from_, mode, create_dirs, if_version, sha256), timeout)

    async def download(
        self,
        workspace: str,
        path: str,
        *,
        to: StrPath,
        on_progress: Progress | None = None,
        at_snapshot: str = "",
        timeout: float | None = None,
    ) -> SavedFile:
        """See ``Client.download``."""
        return await self._fold(_ops.download(workspace, path, to, on_progress, at_snapshot), timeout)

    async def import_from(
        self,
        workspace: str,
        archive: str,
        *,
        path: str = "",
        on_progress: Progress | None = None,
        timeout: float | None = None,
    ) -> tuple[f.DownloadHeader, w.ImportArchiveResponse]:
        """See ``Client.import_from``."""
        return await self._pipe(_ops.import_from(workspace, archive, path, on_progress), timeout)

    # --- Workspaces -------------------------------------------------------

    async def create_workspace(self, workspace: str, *, timeout: float | None = None) -> w.Workspace:
        return await self._unary(_ops.create_workspace(workspace), timeout)

    async def get_workspace(self, workspace: str, *, timeout: float | None = None) -> w.Workspace:
        return await self._unary(_ops.get_workspace(workspace), timeout)

    async def workspace_status(self, workspace: str, *, timeout: float | None = None) -> w.GetWorkspaceResponse:
        """See ``Client.workspace_status``."""
        return await self._unary(_ops.workspace_status(workspace), timeout)

    async def server_version(self, *, timeout: float | None = None) -> d.GetVersionResponse:
        """The daemon's release, the proto package it serves and its runtime (Daemon.GetVersion);
        this client's own is ``filetools.__version__``."""
        return await self._unary(_ops.get_version(), timeout)

    async def list_workspaces(self, *, timeout: float | None = None) -> list[w.Workspace]:
        return await self._unary(_ops.list_workspaces(), timeout)

    async def delete_workspace(
        self, workspace: str, *, delete_snapshots: bool = False, timeout: float | None = None
    ) -> None:
        return await self._unary(_ops.delete_workspace(workspace, delete_snapshots), timeout)

    async def start_run(
        self,
        workspace: str,
        *,
        restore: str = "LATEST",
        labels: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> w.Run:
        """See ``Client.start_run``."""
        return await self._unary(_ops.start_run(workspace, restore, labels), timeout)

    async def finish_run(
        self,
        workspace: str,
        run_id: str,
        *,
        snapshot: bool = True,
        labels: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> w.FinishRunResponse:
        """See ``Client.finish_run``."""
        return await self._unary(_ops.finish_run(workspace, run_id, snapshot, labels), timeout)

    async def list_runs(self, *, timeout: float | None = None) -> list[w.ActiveRun]:
        """See ``Client.list_runs``."""
        return await self._unary(_ops.list_runs(), timeout)

    async def abandon_run(
        self, workspace: str, run_id: str = "", *, reason: str = "", timeout: float | None = None
    ) -> w.AbandonRunResponse:
        """See ``Client.abandon_run``."""
        return await self._unary(_ops.abandon_run(workspace, run_id, reason), timeout)

    def change_set(
        self, workspace: str, run_id: str, *, timeout: float | None = None
    ) -> AsyncStream[w.Change, None]:
        return self._stream(_ops.change_set(workspace, run_id), timeout)

    async def watch(
        self,
        workspace: str,
        globs: Sequence[str] = (),
        *,
        since: int | None = None,
        retries: int = 20,
        on_notice: Callable[[str], object] | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[j.JournalEntry]:
        """``Client.watch``, as an async iterator."""
        state = _ops.WatchState(workspace, globs, since, on_notice)
        rpc = _rpc.WATCH
        call = self._channel.unary_stream(rpc.path, rpc.request.SerializeToString, rpc.response.FromString)
        while True:
            responses = call(state.request(), timeout=timeout, metadata=with_trace_context(self._metadata))
            try:
                async for response in responses:
                    for entry in state.take(response):
                        yield entry
            except grpc.RpcError as error:
                wait = state.retry_after(error.code(), retries)
                if wait is None:
                    raise error_from_rpc(error) from None
                await asyncio.sleep(wait)
            finally:
                responses.cancel()

    def journal(
        self,
        workspace: str,
        *,
        run_id: str = "",
        since: datetime | None = None,
        until: datetime | None = None,
        after_cursor: int = 0,
        globs: Sequence[str] = (),
        timeout: float | None = None,
    ) -> AsyncStream[j.JournalEntry, None]:
        """``Client.journal``, as an async stream."""
        return self._stream(_ops.get_journal(workspace, run_id, since, until, after_cursor, globs), timeout)

    async def list_snapshots(
        self, workspace: str, *, include_recovered: bool = False, timeout: float | None = None
    ) -> list[w.Snapshot]:
        """See ``Client.list_snapshots``."""
        return await self._unary(_ops.list_snapshots(workspace, include_recovered), timeout)

    def diff_snapshots(
        self, workspace: str, from_id: str = "", to: str | None = None, *, timeout: float | None = None
    ) -> AsyncStream[w.DiffEntry, w.DiffSummary]:
        """What changed from snapshot ``from_id`` ("" = the newest) to snapshot ``to``, or to the live workspace when ``to`` is None; ``summary`` closes the stream."""
        return self._stream(_ops.diff_snapshots(workspace, from_id, to), timeout)

    async def export_snapshot(
        self,
        workspace: str,
        snapshot_id: str = "",
        *,
        live: bool = False,
        include: Iterable[str] = (),
        to: StrPath,
        on_progress: Progress | None = None,
        timeout: float | None = None,
    ) -> SavedFile:
        """See ``Client.export_snapshot``."""
        op = _ops.export_snapshot(workspace, snapshot_id, live, include, to, on_progress)
        return await self._fold(op, timeout)

    async def export_into(
        self,
        workspace: str,
        destination: str,
        snapshot_id: str = "",
        *,
        live: bool = False,
        include: Iterable[str] = (),
        mode: WriteMode = "create_or_replace",
        on_progress: Progress | None = None,
        timeout: float | None = None,
    ) -> tuple[w.ExportHeader, f.UploadResponse]:
        """See ``Client.export_into``."""
        op = _ops.export_into(workspace, destination, snapshot_id, live, include, mode, on_progress)
        return await self._pipe(op, timeout)

    async def restore_snapshot(
        self, workspace: str, snapshot_id: str = "", *, timeout: float | None = None
    ) -> w.Snapshot:
        return await self._unary(_ops.restore_snapshot(workspace, snapshot_id), timeout)

    async def import_archive(
        self, workspace: str, *, from_: StrPath, path: str = "", timeout: float | None = None
    ) -> w.ImportArchiveResponse:
        """See ``Client.import_archive``."""
        return await self._send(_ops.import_archive(workspace, from_, path), timeout)
