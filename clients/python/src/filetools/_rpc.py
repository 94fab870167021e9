"""The daemon's RPCs as typed descriptors, for the sync and the asyncio client alike.

The generated ``*_pb2_grpc`` stubs are untyped, so the clients open their
calls from these: the method path comes from the generated service
descriptor, and the request and response classes give the calls their types.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from google.protobuf.descriptor import ServiceDescriptor
from google.protobuf.message import Message

from filetools.v1 import daemon_pb2 as d
from filetools.v1 import files_pb2 as f
from filetools.v1 import journal_pb2 as j
from filetools.v1 import workspaces_pb2 as w

Req = TypeVar("Req", bound=Message)
Resp = TypeVar("Resp", bound=Message)


@dataclass(frozen=True)
class Rpc(Generic[Req, Resp]):
    path: str
    request: type[Req]
    response: type[Resp]


def _rpc(service: ServiceDescriptor, name: str, request: type[Req], response: type[Resp]) -> Rpc[Req, Resp]:
    method = service.methods_by_name[name]
    # A renamed message in the proto must fail here, at import, not on the wire.
    assert method.input_type is request.DESCRIPTOR and method.output_type is response.DESCRIPTOR, name
    return Rpc(f"/{service.full_name}/{method.name}", request, response)


_FILES = f.DESCRIPTOR.services_by_name["Files"]
_WORKSPACES = w.DESCRIPTOR.services_by_name["Workspaces"]
_DAEMON = d.DESCRIPTOR.services_by_name["Daemon"]
_JOURNAL = j.DESCRIPTOR.services_by_name["Journal"]

WATCH = _rpc(_JOURNAL, "Watch", j.WatchRequest, j.WatchResponse)
GET_JOURNAL = _rpc(_JOURNAL, "GetJournal", j.GetJournalRequest, j.GetJournalResponse)

READ = _rpc(_FILES, "Read", f.ReadRequest, f.ReadResponse)
WRITE = _rpc(_FILES, "Write", f.WriteRequest, f.WriteResponse)
EDIT = _rpc(_FILES, "Edit", f.EditRequest, f.EditResponse)
APPLY_PATCH = _rpc(_FILES, "ApplyPatch", f.ApplyPatchRequest, f.ApplyPatchResponse)
DELETE = _rpc(_FILES, "Delete", f.DeleteRequest, f.DeleteResponse)
MOVE = _rpc(_FILES, "Move", f.MoveRequest, f.MoveResponse)
MAKE_DIR = _rpc(_FILES, "MakeDir", f.MakeDirRequest, f.MakeDirResponse)
STAT = _rpc(_FILES, "Stat", f.StatRequest, f.StatResponse)
LIST = _rpc(_FILES, "List", f.ListRequest, f.ListResponse)
SEARCH = _rpc(_FILES, "Search", f.SearchRequest, f.SearchResponse)
UPLOAD = _rpc(_FILES, "Upload", f.UploadRequest, f.UploadResponse)
DOWNLOAD = _rpc(_FILES, "Download", f.DownloadRequest, f.DownloadResponse)
READ_MEDIA = _rpc(_FILES, "ReadMedia", f.ReadMediaRequest, f.ReadMediaResponse)

CREATE_WORKSPACE = _rpc(_WORKSPACES, "CreateWorkspace", w.CreateWorkspaceRequest, w.CreateWorkspaceResponse)
GET_WORKSPACE = _rpc(_WORKSPACES, "GetWorkspace", w.GetWorkspaceRequest, w.GetWorkspaceResponse)
LIST_WORKSPACES = _rpc(_WORKSPACES, "ListWorkspaces", w.ListWorkspacesRequest, w.ListWorkspacesResponse)
DELETE_WORKSPACE = _rpc(_WORKSPACES, "DeleteWorkspace", w.DeleteWorkspaceRequest, w.DeleteWorkspaceResponse)
START_RUN = _rpc(_WORKSPACES, "StartRun", w.StartRunRequest, w.StartRunResponse)
FINISH_RUN = _rpc(_WORKSPACES, "FinishRun", w.FinishRunRequest, w.FinishRunResponse)
LIST_RUNS = _rpc(_WORKSPACES, "ListRuns", w.ListRunsRequest, w.ListRunsResponse)
ABANDON_RUN = _rpc(_WORKSPACES, "AbandonRun", w.AbandonRunRequest, w.AbandonRunResponse)
GET_CHANGE_SET = _rpc(_WORKSPACES, "GetChangeSet", w.GetChangeSetRequest, w.GetChangeSetResponse)
LIST_SNAPSHOTS = _rpc(_WORKSPACES, "ListSnapshots", w.ListSnapshotsRequest, w.ListSnapshotsResponse)
DIFF_SNAPSHOTS = _rpc(_WORKSPACES, "DiffSnapshots", w.DiffSnapshotsRequest, w.DiffSnapshotsResponse)
EXPORT_SNAPSHOT = _rpc(_WORKSPACES, "ExportSnapshot", w.ExportSnapshotRequest, w.ExportSnapshotResponse)
RESTORE_SNAPSHOT = _rpc(_WORKSPACES, "RestoreSnapshot", w.RestoreSnapshotRequest, w.RestoreSnapshotResponse)
IMPORT_ARCHIVE = _rpc(_WORKSPACES, "ImportArchive", w.ImportArchiveRequest, w.ImportArchiveResponse)

GET_VERSION = _rpc(_DAEMON, "GetVersion", d.GetVersionRequest, d.GetVersionResponse)
