"""What each client method asks and how its answer is read, shared by Client and AsyncClient.

Every method of the two clients builds one operation here (the RPC, the
request, how the responses become the method's result) and hands it to its
transport, so the two clients cannot drift apart in what they send or return.
The kinds: ``Unary`` (one request, one response), ``ServerStream`` (responses
read as items plus a closing summary), ``Fold`` (a response stream folded into
one result, e.g. a text window or a file written to disk), ``Send`` (a
header, then the bytes of a local file, one response) and ``Pipe`` (the bytes
of one call's response stream sent on as another call's request stream).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Generic, Protocol, TypeVar, Union

import grpc
from google.protobuf.message import Message

from filetools import _rpc as R
from filetools.errors import ChecksumMismatch, Internal
from filetools.models import (
    MediaImage,
    MediaRead,
    PdfPage,
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

Req = TypeVar("Req", bound=Message)
Resp = TypeVar("Resp", bound=Message)
Resp_contra = TypeVar("Resp_contra", bound=Message, contravariant=True)
T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)
S = TypeVar("S")

#: DataChunk carries at most 1 MiB.
CHUNK_BYTES = 1 << 20

StrPath = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class Unary(Generic[Req, Resp, T]):
    rpc: R.Rpc[Req, Resp]
    request: Req
    result: Callable[[Resp], T]


@dataclass(frozen=True)
class ServerStream(Generic[Req, Resp, T, S]):
    rpc: R.Rpc[Req, Resp]
    request: Req
    #: One response -> the items it carries and, on the last one, the summary.
    split: Callable[[Resp], tuple[Sequence[T], S | None]]


class Folder(Protocol[Resp_contra, T_co]):
    def add(self, response: Resp_contra) -> None: ...
    def finish(self) -> T_co: ...
    def abort(self) -> None: ...


@dataclass(frozen=True)
class Fold(Generic[Req, Resp, T]):
    rpc: R.Rpc[Req, Resp]
    request: Req
    #: Called when the call starts; the transport feeds it every response.
    start: Callable[[], Folder[Resp, T]]


@dataclass(frozen=True)
class Send(Generic[Req, Resp]):
    rpc: R.Rpc[Req, Resp]
    header: Req
    chunk: Callable[[bytes], Req]
    source: Path


class _Header(Protocol):
    size: int
    sha256: str


H = TypeVar("H", bound=_Header)
SrcReq = TypeVar("SrcReq", bound=Message)
SrcResp = TypeVar("SrcResp", bound=Message)


@dataclass(frozen=True)
class Pipe(Generic[SrcReq, SrcResp, H, Req, Resp]):
    """A server stream of bytes (a header, then chunks) sent on as a client stream, straight from call to call.

    The transport calls ``source``, reads its header, starts ``sink`` with
    ``header(that header)`` and forwards each chunk through a ``Relay``, which
    checks the bytes against the source's header when they end.
    """

    source: R.Rpc[SrcReq, SrcResp]
    request: SrcReq
    #: A source response -> its header, or the bytes of a chunk.
    split: Callable[[SrcResp], H | bytes]
    sink: R.Rpc[Req, Resp]
    header: Callable[[H], Req]
    chunk: Callable[[bytes], Req]
    #: What the source's bytes are (a workspace path), for a mismatch's message.
    name: str
    on_progress: Progress | None

    def relay(self) -> Relay[SrcResp, H]:
        return Relay(self.split, self.name, self.on_progress)


class Relay(Generic[SrcResp, H]):
    """One pipe's bytes as they pass: the header first, then chunks counted and hashed, checked at the end."""

    def __init__(self, split: Callable[[SrcResp], H | bytes], name: str, on_progress: Progress | None) -> None:
        self._split = split
        self._name = name
        self._on_progress = on_progress
        self._hash = hashlib.sha256()
        self._received = 0
        self.announced: H | None = None

    def announce(self, response: SrcResp | None) -> H:
        part = None if response is None else self._split(response)
        if part is None or isinstance(part, bytes):
            raise Internal.unexpected("the stream did not start with a header")
        self.announced = part
        return part

    def data(self, response: SrcResp) -> bytes:
        """The chunk's bytes, counted and hashed (b"" for a message that carries none)."""
        part = self._split(response)
        if not isinstance(part, bytes):
            return b""
        self._hash.update(part)
        self._received += len(part)
        if self._on_progress and self.announced is not None:
            self._on_progress(self._received, self.announced.size)
        return part

    def check(self) -> None:
        announced = self.announced
        digest = self._hash.hexdigest()
        if announced is not None and (self._received, digest) != (announced.size, announced.sha256):
            raise ChecksumMismatch.of(PurePosixPath(self._name), announced.size, announced.sha256, self._received, digest)


def _identity(response: Resp) -> Resp:
    return response


# --- Files -----------------------------------------------------------------


def read(
    workspace: str,
    path: str,
    start_line: int,
    line_count: int | None,
    tail: int | None,
    encoding: str,
    max_bytes: int | None,
    at_snapshot: str = "",
) -> f.ReadRequest:
    # The proto refuses start_line with tail_lines; the default start (1) is left out for a tail.
    start = start_line if tail is None or start_line != 1 else None
    return f.ReadRequest(
        workspace=workspace,
        path=path,
        start_line=start,
        line_count=line_count,
        tail_lines=tail,
        encoding=encoding,
        max_bytes=max_bytes,
        at_snapshot=at_snapshot,
    )


ReadEvent = Union[f.ReadHeader, f.ReadChunk]


def read_stream(request: f.ReadRequest) -> ServerStream[f.ReadRequest, f.ReadResponse, ReadEvent, f.ReadTrailer]:
    def split(r: f.ReadResponse) -> tuple[Sequence[ReadEvent], f.ReadTrailer | None]:
        kind = r.WhichOneof("event")
        if kind == "header":
            return [r.header], None
        if kind == "chunk":
            return [r.chunk], None
        return [], r.trailer

    return ServerStream(R.READ, request, split)


class _TextWindowFolder:
    def __init__(self, request: f.ReadRequest) -> None:
        self._request = request
        self._header: f.ReadHeader | None = None
        self._trailer: f.ReadTrailer | None = None
        self._first_line: int | None = None
        self._parts: list[str] = []

    def add(self, response: f.ReadResponse) -> None:
        kind = response.WhichOneof("event")
        if kind == "header":
            self._header = response.header
        elif kind == "chunk":
            if self._first_line is None:
                self._first_line = response.chunk.first_line
            self._parts.append(response.chunk.text)
        elif kind == "trailer":
            self._trailer = response.trailer

    def finish(self) -> TextWindow:
        header, trailer = self._header, self._trailer
        if header is None or trailer is None:
            raise Internal.unexpected("Read ended without a header and a trailer")
        total: int | None = None
        if trailer.HasField("total_lines"):
            total = trailer.total_lines
        elif header.HasField("total_lines"):
            total = header.total_lines
        first_line = self._first_line
        if first_line is None:  # an empty window starts where it was asked for
            asked = self._request
            first_line = asked.start_line if asked.HasField("start_line") else 1
            if asked.HasField("tail_lines"):
                first_line = (total or 0) + 1
        return TextWindow(
            path=header.file.path,
            text="".join(self._parts),
            first_line=first_line,
            last_line=first_line + trailer.lines_returned - 1,
            total_lines=total,
            truncated=trailer.truncated,
            eof=trailer.eof,
            line_cut=trailer.line_cut,
            next_start_line=trailer.next_line or None,
            version=header.file.version,
        )

    def abort(self) -> None:
        pass


def read_text(request: f.ReadRequest) -> Fold[f.ReadRequest, f.ReadResponse, TextWindow]:
    return Fold(R.READ, request, lambda: _TextWindowFolder(request))


def read_media(
    workspace: str,
    path: str,
    start_page: int | None,
    page_count: int | None,
    max_bytes: int | None,
    max_image_bytes: int | None,
    max_image_side: int | None,
    at_snapshot: str,
) -> Fold[f.ReadMediaRequest, f.ReadMediaResponse, MediaRead]:
    request = f.ReadMediaRequest(
        workspace=workspace,
        path=path,
        start_page=start_page,
        page_count=page_count,
        max_bytes=max_bytes,
        max_image_bytes=max_image_bytes,
        max_image_side=max_image_side,
        at_snapshot=at_snapshot,
    )
    return Fold(R.READ_MEDIA, request, _MediaFolder)


class _MediaFolder:
    def __init__(self) -> None:
        self._header: f.MediaHeader | None = None
        self._trailer: f.MediaTrailer | None = None
        self._data: list[bytes] = []
        self._pages: list[PdfPage] = []

    def add(self, response: f.ReadMediaResponse) -> None:
        kind = response.WhichOneof("event")
        if kind == "header":
            self._header = response.header
        elif kind == "image_data":
            self._data.append(response.image_data.data)
        elif kind == "page":
            self._pages.append(PdfPage(number=response.page.number, text=response.page.text, cut=response.page.cut))
        elif kind == "trailer":
            self._trailer = response.trailer

    def finish(self) -> MediaRead:
        header, trailer = self._header, self._trailer
        if header is None or trailer is None:
            raise Internal.unexpected("ReadMedia ended without a header and a trailer")
        image: MediaImage | None = None
        if header.HasField("image"):
            data = b"".join(self._data)
            if len(data) != header.image.size:
                raise Internal.unexpected(f"ReadMedia: {len(data)} image bytes arrived, the header said {header.image.size}")
            i = header.image
            image = MediaImage(i.media_type, data, i.width, i.height, i.original_width, i.original_height, i.downscaled)
        return MediaRead(
            path=header.file.path,
            media_type=header.media_type,
            version=header.file.version,
            size=header.file.size,
            image=image,
            pages=self._pages,
            page_count=header.page_count,
            next_page=trailer.next_page or None,
            truncated=trailer.truncated,
            eof=trailer.eof,
        )

    def abort(self) -> None:
        pass


def write(
    workspace: str,
    path: str,
    body: str | bytes,
    encoding: str,
    create_dirs: bool,
    mode: WriteMode,
    newline: Newline,
    if_version: str | None,
) -> Unary[f.WriteRequest, f.WriteResponse, f.WriteResponse]:
    request = f.WriteRequest(
        workspace=workspace,
        path=path,
        encoding=encoding,
        create_dirs=create_dirs,
        mode=f"WRITE_MODE_{mode.upper()}",
        newline=f"NEWLINE_{newline.upper()}",
        if_version=if_version,
    )
    if isinstance(body, str):
        request.content = body
    else:
        request.data = body
    return Unary(R.WRITE, request, _identity)


def edit(
    workspace: str, path: str, edits: Iterable[f.TextEdit], dry_run: bool, if_version: str | None, encoding: str
) -> Unary[f.EditRequest, f.EditResponse, f.EditResponse]:
    request = f.EditRequest(
        workspace=workspace, path=path, edits=edits, dry_run=dry_run, if_version=if_version, encoding=encoding
    )
    return Unary(R.EDIT, request, _identity)


def apply_patch(workspace: str, patch: str, dry_run: bool) -> Unary[f.ApplyPatchRequest, f.ApplyPatchResponse, f.ApplyPatchResponse]:
    return Unary(R.APPLY_PATCH, f.ApplyPatchRequest(workspace=workspace, patch=patch, dry_run=dry_run), _identity)


def delete(
    workspace: str, path: str, recursive: bool, if_version: str | None
) -> Unary[f.DeleteRequest, f.DeleteResponse, f.DeleteResponse]:
    request = f.DeleteRequest(workspace=workspace, path=path, recursive=recursive, if_version=if_version)
    return Unary(R.DELETE, request, _identity)


def move(
    workspace: str, source: str, destination: str, overwrite: bool, create_dirs: bool, if_version: str | None
) -> Unary[f.MoveRequest, f.MoveResponse, f.MoveResponse]:
    request = f.MoveRequest(
        workspace=workspace,
        source=source,
        destination=destination,
        overwrite=overwrite,
        create_dirs=create_dirs,
        if_version=if_version,
    )
    return Unary(R.MOVE, request, _identity)


def make_dir(workspace: str, path: str, parents: bool) -> Unary[f.MakeDirRequest, f.MakeDirResponse, f.MakeDirResponse]:
    return Unary(R.MAKE_DIR, f.MakeDirRequest(workspace=workspace, path=path, parents=parents), _identity)


def stat(
    workspace: str, path: str, detect_binary: bool, count_lines: bool, at_snapshot: str = ""
) -> Unary[f.StatRequest, f.StatResponse, c.FileInfo]:
    request = f.StatRequest(
        workspace=workspace, path=path, detect_binary=detect_binary, count_lines=count_lines, at_snapshot=at_snapshot
    )
    return Unary(R.STAT, request, lambda r: r.file)


def list_dir(
    workspace: str,
    path: str,
    pattern: str,
    recursive: bool,
    max_depth: int | None,
    include_hidden: bool,
    respect_gitignore: bool,
    max_entries: int | None,
    at_snapshot: str = "",
) -> ServerStream[f.ListRequest, f.ListResponse, c.FileInfo, f.ListSummary]:
    request = f.ListRequest(
        workspace=workspace,
        path=path,
        pattern=pattern,
        recursive=recursive,
        max_depth=max_depth,
        include_hidden=include_hidden,
        respect_gitignore=respect_gitignore,
        max_entries=max_entries,
        at_snapshot=at_snapshot,
    )

    def split(r: f.ListResponse) -> tuple[Sequence[c.FileInfo], f.ListSummary | None]:
        if r.WhichOneof("event") == "entries":
            return r.entries.entries, None
        return [], r.summary

    return ServerStream(R.LIST, request, split)


def search(
    workspace: str,
    pattern: str,
    path: str,
    fixed_strings: bool,
    case_insensitive: bool,
    include: Iterable[str],
    exclude: Iterable[str],
    context_before: int,
    context_after: int,
    max_results: int | None,
    max_file_size: int | None,
    respect_gitignore: bool,
    output_mode: OutputMode,
    order: SearchOrder,
) -> ServerStream[f.SearchRequest, f.SearchResponse, SearchHit, f.SearchSummary]:
    request = f.SearchRequest(
        workspace=workspace,
        pattern=pattern,
        path=path,
        fixed_strings=fixed_strings,
        case_insensitive=case_insensitive,
        include=include,
        exclude=exclude,
        context_before=context_before,
        context_after=context_after,
        max_results=max_results,
        max_file_size=max_file_size,
        respect_gitignore=respect_gitignore,
        output_mode=f"OUTPUT_MODE_{output_mode.upper()}",
        batch_matches=True,
        order=f"SEARCH_ORDER_{order.upper()}",
    )

    def split(r: f.SearchResponse) -> tuple[Sequence[SearchHit], f.SearchSummary | None]:
        kind = r.WhichOneof("event")
        if kind == "matches":
            return r.matches.matches, None
        if kind == "match":
            return [r.match], None
        if kind == "file":
            return [r.file], None
        if kind == "count":
            return [r.count], None
        return [], r.summary

    return ServerStream(R.SEARCH, request, split)


def upload(
    workspace: str,
    path: str,
    source: StrPath,
    mode: WriteMode,
    create_dirs: bool,
    if_version: str | None,
    sha256: str | None,
) -> Send[f.UploadRequest, f.UploadResponse]:
    header = f.UploadHeader(
        workspace=workspace,
        path=path,
        mode=f"WRITE_MODE_{mode.upper()}",
        create_dirs=create_dirs,
        if_version=if_version,
        sha256=sha256,
    )
    return Send(
        R.UPLOAD,
        f.UploadRequest(header=header),
        lambda data: f.UploadRequest(chunk=c.DataChunk(data=data)),
        Path(source),
    )


@dataclass(frozen=True)
class _Announced:
    """What a download's or an export's header promises about the bytes that follow."""

    size: int
    sha256: str
    file_count: int | None


class _SavedFileFolder(Generic[Resp]):
    """Writes the streamed bytes to a temporary file beside `to`, renamed into place once they check out."""

    def __init__(self, to: StrPath, on_progress: Progress | None, split: Callable[[Resp], _Announced | bytes]) -> None:
        self._to = Path(to)
        self._on_progress = on_progress
        self._split = split
        self._announced: _Announced | None = None
        self._received = 0
        self._hash = hashlib.sha256()
        fd, temp = tempfile.mkstemp(prefix=f".{self._to.name}.", suffix=".part", dir=self._to.parent)
        self._temp = Path(temp)
        self._file = os.fdopen(fd, "wb")

    def add(self, response: Resp) -> None:
        part = self._split(response)
        if isinstance(part, _Announced):
            self._announced = part
        else:
            self._file.write(part)
            self._hash.update(part)
            self._received += len(part)
        if self._on_progress and self._announced:
            self._on_progress(self._received, self._announced.size)

    def finish(self) -> SavedFile:
        announced = self._announced
        if announced is None:
            self.abort()
            raise Internal.unexpected("the stream ended without a header")
        digest = self._hash.hexdigest()
        if (self._received, digest) != (announced.size, announced.sha256):
            self.abort()
            raise ChecksumMismatch.of(self._to, announced.size, announced.sha256, self._received, digest)
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        os.replace(self._temp, self._to)
        return SavedFile(self._to, announced.size, announced.sha256, announced.file_count)

    def abort(self) -> None:
        self._file.close()
        self._temp.unlink(missing_ok=True)


def download(
    workspace: str, path: str, to: StrPath, on_progress: Progress | None, at_snapshot: str = ""
) -> Fold[f.DownloadRequest, f.DownloadResponse, SavedFile]:
    def split(r: f.DownloadResponse) -> _Announced | bytes:
        if r.WhichOneof("event") == "header":
            return _Announced(r.header.size, r.header.sha256, None)
        return r.chunk.data

    return Fold(
        R.DOWNLOAD,
        f.DownloadRequest(workspace=workspace, path=path, at_snapshot=at_snapshot),
        lambda: _SavedFileFolder(to, on_progress, split),
    )


def _data_chunk_upload(data: bytes) -> f.UploadRequest:
    return f.UploadRequest(chunk=c.DataChunk(data=data))


def _data_chunk_import(data: bytes) -> w.ImportArchiveRequest:
    return w.ImportArchiveRequest(chunk=c.DataChunk(data=data))


def export_into(
    workspace: str,
    destination: str,
    snapshot_id: str,
    live: bool,
    include: Iterable[str],
    mode: WriteMode,
    on_progress: Progress | None,
) -> Pipe[w.ExportSnapshotRequest, w.ExportSnapshotResponse, w.ExportHeader, f.UploadRequest, f.UploadResponse]:
    def split(r: w.ExportSnapshotResponse) -> w.ExportHeader | bytes:
        return r.header if r.WhichOneof("event") == "header" else r.chunk.data

    def header(exported: w.ExportHeader) -> f.UploadRequest:
        upload = f.UploadHeader(workspace=workspace, path=destination, mode=f"WRITE_MODE_{mode.upper()}", sha256=exported.sha256)
        return f.UploadRequest(header=upload)

    request = w.ExportSnapshotRequest(workspace=workspace, snapshot_id=snapshot_id, live=live, include=include)
    return Pipe(R.EXPORT_SNAPSHOT, request, split, R.UPLOAD, header, _data_chunk_upload, destination, on_progress)


def import_from(
    workspace: str, archive: str, path: str, on_progress: Progress | None
) -> Pipe[f.DownloadRequest, f.DownloadResponse, f.DownloadHeader, w.ImportArchiveRequest, w.ImportArchiveResponse]:
    def split(r: f.DownloadResponse) -> f.DownloadHeader | bytes:
        return r.header if r.WhichOneof("event") == "header" else r.chunk.data

    def header(_: f.DownloadHeader) -> w.ImportArchiveRequest:
        return w.ImportArchiveRequest(header=w.ImportHeader(workspace=workspace, path=path))

    request = f.DownloadRequest(workspace=workspace, path=archive)
    return Pipe(R.DOWNLOAD, request, split, R.IMPORT_ARCHIVE, header, _data_chunk_import, archive, on_progress)


# --- Workspaces ------------------------------------------------------------


def create_workspace(workspace: str) -> Unary[w.CreateWorkspaceRequest, w.CreateWorkspaceResponse, w.Workspace]:
    return Unary(R.CREATE_WORKSPACE, w.CreateWorkspaceRequest(workspace=workspace), lambda r: r.workspace)


def get_workspace(workspace: str) -> Unary[w.GetWorkspaceRequest, w.GetWorkspaceResponse, w.Workspace]:
    return Unary(R.GET_WORKSPACE, w.GetWorkspaceRequest(workspace=workspace), lambda r: r.workspace)


def workspace_status(workspace: str) -> Unary[w.GetWorkspaceRequest, w.GetWorkspaceResponse, w.GetWorkspaceResponse]:
    return Unary(R.GET_WORKSPACE, w.GetWorkspaceRequest(workspace=workspace), _identity)


def get_version() -> Unary[d.GetVersionRequest, d.GetVersionResponse, d.GetVersionResponse]:
    return Unary(R.GET_VERSION, d.GetVersionRequest(), lambda r: r)


def list_workspaces() -> Unary[w.ListWorkspacesRequest, w.ListWorkspacesResponse, list[w.Workspace]]:
    return Unary(R.LIST_WORKSPACES, w.ListWorkspacesRequest(), lambda r: list(r.workspaces))


def delete_workspace(
    workspace: str, delete_snapshots: bool
) -> Unary[w.DeleteWorkspaceRequest, w.DeleteWorkspaceResponse, None]:
    request = w.DeleteWorkspaceRequest(workspace=workspace, delete_snapshots=delete_snapshots)
    return Unary(R.DELETE_WORKSPACE, request, lambda r: None)


def start_run(
    workspace: str, restore: str, labels: Mapping[str, str] | None
) -> Unary[w.StartRunRequest, w.StartRunResponse, w.Run]:
    request = w.StartRunRequest(workspace=workspace, restore=restore, labels=labels)
    return Unary(R.START_RUN, request, lambda r: r.run)


def finish_run(
    workspace: str, run_id: str, snapshot: bool, labels: Mapping[str, str] | None
) -> Unary[w.FinishRunRequest, w.FinishRunResponse, w.FinishRunResponse]:
    request = w.FinishRunRequest(workspace=workspace, run_id=run_id, snapshot=snapshot, labels=labels)
    return Unary(R.FINISH_RUN, request, _identity)


def list_runs() -> Unary[w.ListRunsRequest, w.ListRunsResponse, list[w.ActiveRun]]:
    return Unary(R.LIST_RUNS, w.ListRunsRequest(), lambda r: list(r.runs))


def abandon_run(
    workspace: str, run_id: str, reason: str
) -> Unary[w.AbandonRunRequest, w.AbandonRunResponse, w.AbandonRunResponse]:
    request = w.AbandonRunRequest(workspace=workspace, run_id=run_id, reason=reason)
    return Unary(R.ABANDON_RUN, request, _identity)


def change_set(
    workspace: str, run_id: str
) -> ServerStream[w.GetChangeSetRequest, w.GetChangeSetResponse, w.Change, None]:
    return ServerStream(
        R.GET_CHANGE_SET,
        w.GetChangeSetRequest(workspace=workspace, run_id=run_id),
        lambda r: (r.changes, None),
    )


def list_snapshots(
    workspace: str, include_recovered: bool
) -> Unary[w.ListSnapshotsRequest, w.ListSnapshotsResponse, list[w.Snapshot]]:
    request = w.ListSnapshotsRequest(workspace=workspace, include_recovered=include_recovered)
    return Unary(R.LIST_SNAPSHOTS, request, lambda r: list(r.snapshots))


def diff_snapshots(
    workspace: str, from_id: str, to: str | None
) -> ServerStream[w.DiffSnapshotsRequest, w.DiffSnapshotsResponse, w.DiffEntry, w.DiffSummary]:
    def split(r: w.DiffSnapshotsResponse) -> tuple[Sequence[w.DiffEntry], w.DiffSummary | None]:
        if r.WhichOneof("event") == "entries":
            return r.entries.entries, None
        return [], r.summary

    request = w.DiffSnapshotsRequest(workspace=workspace, to=to or "", live=to is None)
    setattr(request, "from", from_id)  # a keyword in Python
    return ServerStream(R.DIFF_SNAPSHOTS, request, split)


def export_snapshot(
    workspace: str, snapshot_id: str, live: bool, include: Iterable[str], to: StrPath, on_progress: Progress | None
) -> Fold[w.ExportSnapshotRequest, w.ExportSnapshotResponse, SavedFile]:
    def split(r: w.ExportSnapshotResponse) -> _Announced | bytes:
        if r.WhichOneof("event") == "header":
            return _Announced(r.header.size, r.header.sha256, r.header.file_count)
        return r.chunk.data

    request = w.ExportSnapshotRequest(workspace=workspace, snapshot_id=snapshot_id, live=live, include=include)
    return Fold(R.EXPORT_SNAPSHOT, request, lambda: _SavedFileFolder(to, on_progress, split))


def restore_snapshot(
    workspace: str, snapshot_id: str
) -> Unary[w.RestoreSnapshotRequest, w.RestoreSnapshotResponse, w.Snapshot]:
    request = w.RestoreSnapshotRequest(workspace=workspace, snapshot_id=snapshot_id)
    return Unary(R.RESTORE_SNAPSHOT, request, lambda r: r.snapshot)


def import_archive(workspace: str, source: StrPath, path: str) -> Send[w.ImportArchiveRequest, w.ImportArchiveResponse]:
    return Send(
        R.IMPORT_ARCHIVE,
        w.ImportArchiveRequest(header=w.ImportHeader(workspace=workspace, path=path)),
        lambda data: w.ImportArchiveRequest(chunk=c.DataChunk(data=data)),
        Path(source),
    )


def get_journal(
    workspace: str,
    run_id: str,
    since: datetime | None,
    until: datetime | None,
    after_cursor: int,
    globs: Sequence[str],
) -> ServerStream[j.GetJournalRequest, j.GetJournalResponse, j.JournalEntry, None]:
    request = j.GetJournalRequest(workspace=workspace, run_id=run_id, after_cursor=after_cursor, globs=list(globs))
    if since is not None:
        request.since.FromDatetime(since)
    if until is not None:
        request.until.FromDatetime(until)
    return ServerStream(R.GET_JOURNAL, request, lambda r: (r.entries, None))


#: Broken watch streams are retried after 0.05 s, doubling up to 2 s.
WATCH_FIRST_BACKOFF_S = 0.05
WATCH_MAX_BACKOFF_S = 2.0


class WatchState:
    """Where a watch is: the last cursor seen, so that a new stream resumes after it.

    Shared by the sync and asyncio clients: they open the streams, this turns
    their responses into entries and knows what to ask for next.
    """

    def __init__(self, workspace: str, globs: Sequence[str], since: int | None, on_notice: Callable[[str], object] | None) -> None:
        self.workspace = workspace
        self.globs = list(globs)
        self.cursor = since
        self.on_notice = on_notice
        self.failures = 0

    def request(self) -> j.WatchRequest:
        request = j.WatchRequest(workspace=self.workspace, globs=self.globs)
        if self.cursor is not None:
            request.cursor = self.cursor
        return request

    def take(self, response: j.WatchResponse) -> Sequence[j.JournalEntry]:
        """The entries a response carries (the cursor moves past them); live, missed and notices update the state."""
        self.failures = 0
        event = response.WhichOneof("event")
        if event == "changes":
            entries = response.changes.entries
            if entries:
                self.cursor = entries[-1].cursor
            return entries
        if event == "live" and self.cursor is None:
            self.cursor = response.live.cursor
        elif event == "missed":
            self.cursor = response.missed.resume_cursor  # the stream ends next: watched again from there
        elif event == "notice" and self.on_notice is not None:
            self.on_notice(response.notice.message)
        return ()

    def retry_after(self, code: object, retries: int) -> float | None:
        """Seconds to wait before resuming after a broken stream with status ``code``; None: give up (raise)."""
        if code not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED) or self.failures >= retries:
            return None
        self.failures += 1
        return float(min(WATCH_MAX_BACKOFF_S, WATCH_FIRST_BACKOFF_S * 2 ** (self.failures - 1)))
