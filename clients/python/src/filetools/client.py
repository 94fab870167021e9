"""The synchronous client. ``filetools.aio.AsyncClient`` mirrors it method for method."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any, BinaryIO, Generic, TypeVar

import time
from datetime import datetime

import grpc
import grpc.experimental

from filetools import _ops, _rpc
from filetools._channel import connection, with_trace_context
from filetools._rpc import Req, Resp
from filetools._ops import H, Fold, Pipe, ReadEvent, Send, ServerStream, StrPath, Unary
from filetools.errors import error_from_rpc
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


class Stream(Generic[T, S]):
    """The items of a server stream; ``summary`` holds its closing message once the loop has ended.

    Breaking out of the ``for`` loop (or ``close()``, or leaving a ``with``
    block) cancels the call, so the daemon stops working on it.
    """

    def __init__(self, parts: Iterator[tuple[Sequence[T], S | None]], cancel: Callable[[], object]) -> None:
        self._parts = parts
        self._cancel = cancel
        self.summary: S | None = None

    def __iter__(self) -> Iterator[T]:
        try:
            for items, summary in self._parts:
                if summary is not None:
                    self.summary = summary
                yield from items
        except grpc.RpcError as error:
            raise error_from_rpc(error) from None
        finally:  # a no-op once the call has ended; when the loop broke off, it stops the daemon's work
            self._cancel()

    def close(self) -> None:
        self._cancel()

    def __enter__(self) -> Stream[T, S]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _requests(op: Send[Req, Resp], source: BinaryIO) -> Iterator[Req]:
    """The header, then the source file in chunks."""
    yield op.header
    while data := source.read(_ops.CHUNK_BYTES):
        yield op.chunk(data)


class Client:
    """A connection to filetoolsd. Every method takes ``timeout=`` (seconds) and raises ``FileToolsError`` subclasses.

    ``address`` defaults to $FILETOOLS_ADDRESS, else 127.0.0.1:7447. ``token``
    is sent as ``authorization: Bearer TOKEN``; ``tls=True`` (or any PEM) makes
    it a TLS channel, with ``certificate_chain`` and ``private_key`` for mutual TLS.
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
        # Server streams read on the calling thread instead of through a helper thread (grpcio
        # recognises the option by this key only; see test/bench/README.md for what it saves).
        options = [(grpc.experimental.ChannelOptions.SingleThreadedUnaryStream, 1), *options]
        conn = connection(address, token, tls, root_certificates, private_key, certificate_chain, options)
        self.address = conn.address
        self._metadata = conn.metadata
        self._channel = (
            grpc.secure_channel(conn.address, conn.credentials, conn.options)
            if conn.credentials
            else grpc.insecure_channel(conn.address, conn.options)
        )

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # --- transports: the only code that differs from AsyncClient --------

    def _unary(self, op: Unary[Req, Resp, T], timeout: float | None) -> T:
        rpc = op.rpc
        call = self._channel.unary_unary(rpc.path, rpc.request.SerializeToString, rpc.response.FromString)
        try:
            response = call(op.request, timeout=timeout, metadata=with_trace_context(self._metadata))
        except grpc.RpcError as error:
            raise error_from_rpc(error) from None
        return op.result(response)

    def _stream(self, op: ServerStream[Req, Resp, T, S], timeout: float | None) -> Stream[T, S]:
        rpc = op.rpc
        call = self._channel.unary_stream(rpc.path, rpc.request.SerializeToString, rpc.response.FromString)
        responses = call(op.request, timeout=timeout, metadata=with_trace_context(self._metadata))
        return Stream(map(op.split, responses), responses.cancel)

    def _fold(self, op: Fold[Req, Resp, T], timeout: float | None) -> T:
        rpc = op.rpc
        call = self._channel.unary_stream(rpc.path, rpc.request.SerializeToString, rpc.response.FromString)
        folder = op.start()
        responses = call(op.request, timeout=timeout, metadata=with_trace_context(self._metadata))
        try:
            for response in responses:
                folder.add(response)
        except BaseException as error:
            folder.abort()
            responses.cancel()
            if isinstance(error, grpc.RpcError):
                raise error_from_rpc(error) from None
            raise
        return folder.finish()

    def _send(self, op: Send[Req, Resp], timeout: float | None) -> Resp:
        rpc = op.rpc
        call = self._channel.stream_unary(rpc.path, rpc.request.SerializeToString, rpc.response.FromString)
        # Unbuffered: a buffered file's close() waits for a read still blocked in
        # another thread (a stalled pipe after the deadline), and would hang here.
        with open(op.source, "rb", buffering=0) as source:
            # Typed apart: the serializer, Message.SerializeToString, would widen Req to Message here.
            requests: Iterator[Req] = _requests(op, source)
            try:
                response: Resp = call(requests, timeout=timeout, metadata=with_trace_context(self._metadata))
            except grpc.RpcError as error:
                raise error_from_rpc(error) from None
        return response

    def _pipe(self, op: Pipe[Any, Any, H, Req, Resp], timeout: float | None) -> tuple[H, Resp]:
        source = self._channel.unary_stream(op.source.path, op.source.request.SerializeToString, op.source.response.FromString)
        sink = self._channel.stream_unary(op.sink.path, op.sink.request.SerializeToString, op.sink.response.FromString)
        relay = op.relay()
        responses = source(op.request, timeout=timeout, metadata=with_trace_context(self._metadata))
        # grpcio reads the requests on a thread of its own and, when they fail, only cancels the call: keep why.
        failed: list[BaseException] = []

        def requests(announced: H) -> Iterator[Req]:
            yield op.header(announced)
            try:
                for response in responses:
                    if data := relay.data(response):
                        yield op.chunk(data)
                relay.check()
            except BaseException as error:
                failed.append(error)
                raise

        try:
            announced = relay.announce(next(responses, None))
            response: Resp = sink(requests(announced), timeout=timeout, metadata=with_trace_context(self._metadata))
        except BaseException as error:
            cause = failed[0] if failed else error
            if isinstance(cause, grpc.RpcError):
                raise error_from_rpc(cause) from None
            if cause is error:
                raise
            raise cause from None
        finally:
            responses.cancel()  # a no-op once the call has ended
        return announced, response

    # --- Files ------------------------------------------------------------

    def read_text(
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
        """A window of lines: from ``start_line`` (1-based), ``line_count`` of them (None = to the end, within
        ``max_bytes``, 10 MiB by default), or the last ``tail`` lines. Page on with ``next_start_line``."""
        request = _ops.read(workspace, path, start_line, line_count, tail, encoding, max_bytes, at_snapshot)
        return self._fold(_ops.read_text(request), timeout)

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
    ) -> Stream[ReadEvent, f.ReadTrailer]:
        """The Read stream as it comes: the header, then the chunks; ``summary`` is the trailer."""
        request = _ops.read(workspace, path, start_line, line_count, tail, encoding, max_bytes, at_snapshot)
        return self._stream(_ops.read_stream(request), timeout)

    def read_media(
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
        """An image or a PDF as a model takes it (ReadMedia): ``image`` (downscaled by the daemon when over
        ``max_image_bytes`` or ``max_image_side``), or a window of a PDF's ``pages`` as text."""
        op = _ops.read_media(workspace, path, start_page, page_count, max_bytes, max_image_bytes, max_image_side, at_snapshot)
        return self._fold(op, timeout)

    def write_text(
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
        return self._unary(op, timeout)

    def write_bytes(
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
        return self._unary(op, timeout)

    def edit(
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
        """Replaces ``old_text``, which must occur exactly once (or every occurrence, with ``replace_all``)."""
        edits = [f.TextEdit(old_text=old_text, new_text=new_text, replace_all=replace_all)]
        return self._unary(_ops.edit(workspace, path, edits, dry_run, if_version, encoding), timeout)

    def edit_many(
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
        """Applies the edits in order, all or nothing."""
        return self._unary(_ops.edit(workspace, path, edits, dry_run, if_version, encoding), timeout)

    def apply_patch(
        self, workspace: str, patch: str, *, dry_run: bool = False, timeout: float | None = None
    ) -> f.ApplyPatchResponse:
        """A Codex-format patch over several files, all or nothing (ApplyPatch in the proto)."""
        return self._unary(_ops.apply_patch(workspace, patch, dry_run), timeout)

    def delete(
        self,
        workspace: str,
        path: str,
        *,
        recursive: bool = False,
        if_version: str | None = None,
        timeout: float | None = None,
    ) -> f.DeleteResponse:
        return self._unary(_ops.delete(workspace, path, recursive, if_version), timeout)

    def move(
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
        return self._unary(op, timeout)

    def make_dir(
        self, workspace: str, path: str, *, parents: bool = True, timeout: float | None = None
    ) -> f.MakeDirResponse:
        return self._unary(_ops.make_dir(workspace, path, parents), timeout)

    def stat(
        self,
        workspace: str,
        path: str = "",
        *,
        detect_binary: bool = False,
        count_lines: bool = False,
        at_snapshot: str = "",
        timeout: float | None = None,
    ) -> c.FileInfo:
        return self._unary(_ops.stat(workspace, path, detect_binary, count_lines, at_snapshot), timeout)

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
    ) -> Stream[c.FileInfo, f.ListSummary]:
        """The entries under a directory (``max_entries`` None = 10,000); ``summary`` tells whether it was cut."""
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
    ) -> Stream[SearchHit, f.SearchSummary]:
        """Matches as the daemon finds them (``max_results`` None = 100); ``summary`` closes the stream.

        ``order="found"`` asks for results as found rather than in sorted path order (SearchOrder):
        the first ones sooner, but which ones a truncated search returns may differ between calls.
        """
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

    def upload(
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
        """Stores the bytes of the local file ``from_`` (atomically, once all have arrived)."""
        return self._send(_ops.upload(workspace, path, from_, mode, create_dirs, if_version, sha256), timeout)

    def download(
        self,
        workspace: str,
        path: str,
        *,
        to: StrPath,
        on_progress: Progress | None = None,
        at_snapshot: str = "",
        timeout: float | None = None,
    ) -> SavedFile:
        """Writes the file to the local path ``to`` atomically, after checking its size and sha256.

        ``at_snapshot`` (here and in ``read_text``, ``read``, ``stat`` and ``list_dir``): a snapshot id
        (``list_snapshots``) to answer from that stored snapshot instead of the live workspace."""
        return self._fold(_ops.download(workspace, path, to, on_progress, at_snapshot), timeout)

    def import_from(
        self,
        workspace: str,
        archive: str,
        *,
        path: str = "",
        on_progress: Progress | None = None,
        timeout: float | None = None,
    ) -> tuple[f.DownloadHeader, w.ImportArchiveResponse]:
        """Unpacks the tarball at the workspace path ``archive`` into the directory ``path`` of the same workspace.

        The archive's Download is streamed straight into ImportArchive, never
        through this machine's disk; bytes that do not match the download's
        sha256 cancel the import, which then changes nothing.
        """
        return self._pipe(_ops.import_from(workspace, archive, path, on_progress), timeout)

    # --- Workspaces -------------------------------------------------------

    def create_workspace(self, workspace: str, *, timeout: float | None = None) -> w.Workspace:
        return self._unary(_ops.create_workspace(workspace), timeout)

    def get_workspace(self, workspace: str, *, timeout: float | None = None) -> w.Workspace:
        return self._unary(_ops.get_workspace(workspace), timeout)

    def workspace_status(self, workspace: str, *, timeout: float | None = None) -> w.GetWorkspaceResponse:
        """The whole GetWorkspace answer: the workspace, its ``active_run`` (on any daemon of the fleet; unset when
        none), its ``newest_snapshot`` in the store, the snapshot this daemon's copy is of (``copy_of``) and whether
        the copy has ``unpublished_changes``."""
        return self._unary(_ops.workspace_status(workspace), timeout)

    def server_version(self, *, timeout: float | None = None) -> d.GetVersionResponse:
        """The daemon's release, the proto package it serves and its runtime (Daemon.GetVersion);
        this client's own is ``filetools.__version__``."""
        return self._unary(_ops.get_version(), timeout)

    def list_workspaces(self, *, timeout: float | None = None) -> list[w.Workspace]:
        return self._unary(_ops.list_workspaces(), timeout)

    def delete_workspace(
        self, workspace: str, *, delete_snapshots: bool = False, timeout: float | None = None
    ) -> None:
        return self._unary(_ops.delete_workspace(workspace, delete_snapshots), timeout)

    def start_run(
        self,
        workspace: str,
        *,
        restore: str = "LATEST",
        labels: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> w.Run:
        """Starts a run (``restore``: "LATEST", "NONE" or a snapshot id)."""
        return self._unary(_ops.start_run(workspace, restore, labels), timeout)

    def finish_run(
        self,
        workspace: str,
        run_id: str,
        *,
        snapshot: bool = True,
        labels: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> w.FinishRunResponse:
        """Ends the run and publishes a snapshot. When it cannot be published (``ContentChanged``: another run
        published first; ``RunActive``: the run lost its lease), the run ends anyway and its work is kept as the
        recovered snapshot named by the error's ``metadata["recovered_snapshot"]``."""
        return self._unary(_ops.finish_run(workspace, run_id, snapshot, labels), timeout)

    def list_runs(self, *, timeout: float | None = None) -> list[w.ActiveRun]:
        """The active runs this daemon knows of, sorted by workspace: its own (``local``) and, on a shared
        (s3://) store, every live lease of the fleet, with the ``node`` holding it."""
        return self._unary(_ops.list_runs(), timeout)

    def abandon_run(
        self, workspace: str, run_id: str = "", *, reason: str = "", timeout: float | None = None
    ) -> w.AbandonRunResponse:
        """Ends the workspace's active run (``run_id`` "" = whichever is active) without publishing; ``reason`` is
        recorded with the recovered snapshot. A run of this daemon ends at once and its unpublished work is kept as
        ``recovered``; another daemon's has its lease broken (``lease_broken``). No such active run: ``NotFound``."""
        return self._unary(_ops.abandon_run(workspace, run_id, reason), timeout)

    def change_set(self, workspace: str, run_id: str, *, timeout: float | None = None) -> Stream[w.Change, None]:
        return self._stream(_ops.change_set(workspace, run_id), timeout)

    def watch(
        self,
        workspace: str,
        globs: Sequence[str] = (),
        *,
        since: int | None = None,
        retries: int = 20,
        on_notice: Callable[[str], object] | None = None,
        timeout: float | None = None,
    ) -> Iterator[j.JournalEntry]:
        """The workspace's changes as they happen (after cursor ``since`` first, when given; 0: all held).

        A broken stream (the daemon restarted, the connection dropped) or a
        ``missed`` event is resumed from the last cursor seen, so nothing is
        missed or seen twice while the journal holds the entries; past
        ``retries`` breaks in a row, or a cursor the journal no longer holds
        (``CursorOutOfRange``), it raises. Leaving the loop stops the watch; ``timeout``
        bounds each stream (``DeadlineExceeded`` ends the watch).
        """
        state = _ops.WatchState(workspace, globs, since, on_notice)
        rpc = _rpc.WATCH
        call = self._channel.unary_stream(rpc.path, rpc.request.SerializeToString, rpc.response.FromString)
        while True:
            responses = call(state.request(), timeout=timeout, metadata=with_trace_context(self._metadata))
            try:
                for response in responses:
                    yield from state.take(response)
            except grpc.RpcError as error:
                wait = state.retry_after(error.code(), retries)
                if wait is None:
                    raise error_from_rpc(error) from None
                time.sleep(wait)
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
    ) -> Stream[j.JournalEntry, None]:
        """The journal's entries still held, filtered by run, time range (``since`` ≤ t < ``until``), cursor and globs."""
        return self._stream(_ops.get_journal(workspace, run_id, since, until, after_cursor, globs), timeout)

    def list_snapshots(
        self, workspace: str, *, include_recovered: bool = False, timeout: float | None = None
    ) -> list[w.Snapshot]:
        """The workspace's snapshots, newest first: the main line, or with ``include_recovered`` also the recovered
        ones (``recovered`` True: work that could not be published, kept but never restored by LATEST)."""
        return self._unary(_ops.list_snapshots(workspace, include_recovered), timeout)

    def diff_snapshots(
        self, workspace: str, from_id: str = "", to: str | None = None, *, timeout: float | None = None
    ) -> Stream[w.DiffEntry, w.DiffSummary]:
        """What changed from snapshot ``from_id`` ("" = the newest) to snapshot ``to``, or to the live workspace when ``to`` is None; ``summary`` closes the stream."""
        return self._stream(_ops.diff_snapshots(workspace, from_id, to), timeout)

    def export_snapshot(
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
        """Writes a snapshot's tarball (the newest when no id; the workspace as it is now with ``live``)
        to the local path ``to`` atomically, after checking its size and sha256."""
        return self._fold(_ops.export_snapshot(workspace, snapshot_id, live, include, to, on_progress), timeout)

    def export_into(
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
        """Like ``export_snapshot``, but the tarball lands at the workspace path ``destination`` of the same workspace.

        The export is streamed straight into an Upload, which the daemon writes
        atomically once it has checked the bytes against the export's sha256.
        """
        op = _ops.export_into(workspace, destination, snapshot_id, live, include, mode, on_progress)
        return self._pipe(op, timeout)

    def restore_snapshot(
        self, workspace: str, snapshot_id: str = "", *, timeout: float | None = None
    ) -> w.Snapshot:
        return self._unary(_ops.restore_snapshot(workspace, snapshot_id), timeout)

    def import_archive(
        self, workspace: str, *, from_: StrPath, path: str = "", timeout: float | None = None
    ) -> w.ImportArchiveResponse:
        """Unpacks the local tarball ``from_`` (plain or gzip) into the directory ``path`` of the workspace."""
        return self._send(_ops.import_archive(workspace, from_, path), timeout)
