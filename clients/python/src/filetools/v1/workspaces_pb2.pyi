import datetime

from filetools.v1 import common_pb2 as _common_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ChangeKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CHANGE_KIND_UNSPECIFIED: _ClassVar[ChangeKind]
    CHANGE_KIND_CREATE: _ClassVar[ChangeKind]
    CHANGE_KIND_MODIFY: _ClassVar[ChangeKind]
    CHANGE_KIND_DELETE: _ClassVar[ChangeKind]
    CHANGE_KIND_MOVE: _ClassVar[ChangeKind]

class DiffKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DIFF_KIND_UNSPECIFIED: _ClassVar[DiffKind]
    DIFF_KIND_ADDED: _ClassVar[DiffKind]
    DIFF_KIND_REMOVED: _ClassVar[DiffKind]
    DIFF_KIND_MODIFIED: _ClassVar[DiffKind]

class DiffEntryType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DIFF_ENTRY_TYPE_UNSPECIFIED: _ClassVar[DiffEntryType]
    DIFF_ENTRY_TYPE_FILE: _ClassVar[DiffEntryType]
    DIFF_ENTRY_TYPE_SYMLINK: _ClassVar[DiffEntryType]
CHANGE_KIND_UNSPECIFIED: ChangeKind
CHANGE_KIND_CREATE: ChangeKind
CHANGE_KIND_MODIFY: ChangeKind
CHANGE_KIND_DELETE: ChangeKind
CHANGE_KIND_MOVE: ChangeKind
DIFF_KIND_UNSPECIFIED: DiffKind
DIFF_KIND_ADDED: DiffKind
DIFF_KIND_REMOVED: DiffKind
DIFF_KIND_MODIFIED: DiffKind
DIFF_ENTRY_TYPE_UNSPECIFIED: DiffEntryType
DIFF_ENTRY_TYPE_FILE: DiffEntryType
DIFF_ENTRY_TYPE_SYMLINK: DiffEntryType

class Workspace(_message.Message):
    __slots__ = ("id", "bound", "created_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    BOUND_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    bound: bool
    created_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., bound: _Optional[bool] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CreateWorkspaceRequest(_message.Message):
    __slots__ = ("workspace",)
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    def __init__(self, workspace: _Optional[str] = ...) -> None: ...

class CreateWorkspaceResponse(_message.Message):
    __slots__ = ("workspace",)
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    workspace: Workspace
    def __init__(self, workspace: _Optional[_Union[Workspace, _Mapping]] = ...) -> None: ...

class GetWorkspaceRequest(_message.Message):
    __slots__ = ("workspace",)
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    def __init__(self, workspace: _Optional[str] = ...) -> None: ...

class GetWorkspaceResponse(_message.Message):
    __slots__ = ("workspace", "active_run", "newest_snapshot", "copy_of", "unpublished_changes")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_RUN_FIELD_NUMBER: _ClassVar[int]
    NEWEST_SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    COPY_OF_FIELD_NUMBER: _ClassVar[int]
    UNPUBLISHED_CHANGES_FIELD_NUMBER: _ClassVar[int]
    workspace: Workspace
    active_run: ActiveRun
    newest_snapshot: str
    copy_of: str
    unpublished_changes: bool
    def __init__(self, workspace: _Optional[_Union[Workspace, _Mapping]] = ..., active_run: _Optional[_Union[ActiveRun, _Mapping]] = ..., newest_snapshot: _Optional[str] = ..., copy_of: _Optional[str] = ..., unpublished_changes: _Optional[bool] = ...) -> None: ...

class ActiveRun(_message.Message):
    __slots__ = ("workspace", "run_id", "node", "started_at", "lease_expires_at", "local")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    LEASE_EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    LOCAL_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    run_id: str
    node: str
    started_at: _timestamp_pb2.Timestamp
    lease_expires_at: _timestamp_pb2.Timestamp
    local: bool
    def __init__(self, workspace: _Optional[str] = ..., run_id: _Optional[str] = ..., node: _Optional[str] = ..., started_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., lease_expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., local: _Optional[bool] = ...) -> None: ...

class ListRunsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListRunsResponse(_message.Message):
    __slots__ = ("runs",)
    RUNS_FIELD_NUMBER: _ClassVar[int]
    runs: _containers.RepeatedCompositeFieldContainer[ActiveRun]
    def __init__(self, runs: _Optional[_Iterable[_Union[ActiveRun, _Mapping]]] = ...) -> None: ...

class AbandonRunRequest(_message.Message):
    __slots__ = ("workspace", "run_id", "reason")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    run_id: str
    reason: str
    def __init__(self, workspace: _Optional[str] = ..., run_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class AbandonRunResponse(_message.Message):
    __slots__ = ("run_id", "recovered", "lease_broken")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    RECOVERED_FIELD_NUMBER: _ClassVar[int]
    LEASE_BROKEN_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    recovered: Snapshot
    lease_broken: bool
    def __init__(self, run_id: _Optional[str] = ..., recovered: _Optional[_Union[Snapshot, _Mapping]] = ..., lease_broken: _Optional[bool] = ...) -> None: ...

class ListWorkspacesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListWorkspacesResponse(_message.Message):
    __slots__ = ("workspaces",)
    WORKSPACES_FIELD_NUMBER: _ClassVar[int]
    workspaces: _containers.RepeatedCompositeFieldContainer[Workspace]
    def __init__(self, workspaces: _Optional[_Iterable[_Union[Workspace, _Mapping]]] = ...) -> None: ...

class DeleteWorkspaceRequest(_message.Message):
    __slots__ = ("workspace", "delete_snapshots")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    DELETE_SNAPSHOTS_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    delete_snapshots: bool
    def __init__(self, workspace: _Optional[str] = ..., delete_snapshots: _Optional[bool] = ...) -> None: ...

class DeleteWorkspaceResponse(_message.Message):
    __slots__ = ("workspace",)
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    def __init__(self, workspace: _Optional[str] = ...) -> None: ...

class Run(_message.Message):
    __slots__ = ("id", "workspace", "started_at", "restored_from", "labels", "started_from", "node")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    RESTORED_FROM_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    STARTED_FROM_FIELD_NUMBER: _ClassVar[int]
    NODE_FIELD_NUMBER: _ClassVar[int]
    id: str
    workspace: str
    started_at: _timestamp_pb2.Timestamp
    restored_from: str
    labels: _containers.ScalarMap[str, str]
    started_from: str
    node: str
    def __init__(self, id: _Optional[str] = ..., workspace: _Optional[str] = ..., started_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., restored_from: _Optional[str] = ..., labels: _Optional[_Mapping[str, str]] = ..., started_from: _Optional[str] = ..., node: _Optional[str] = ...) -> None: ...

class StartRunRequest(_message.Message):
    __slots__ = ("workspace", "restore", "labels")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    RESTORE_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    restore: str
    labels: _containers.ScalarMap[str, str]
    def __init__(self, workspace: _Optional[str] = ..., restore: _Optional[str] = ..., labels: _Optional[_Mapping[str, str]] = ...) -> None: ...

class StartRunResponse(_message.Message):
    __slots__ = ("run",)
    RUN_FIELD_NUMBER: _ClassVar[int]
    run: Run
    def __init__(self, run: _Optional[_Union[Run, _Mapping]] = ...) -> None: ...

class ChangeSummary(_message.Message):
    __slots__ = ("created", "modified", "deleted", "moved")
    CREATED_FIELD_NUMBER: _ClassVar[int]
    MODIFIED_FIELD_NUMBER: _ClassVar[int]
    DELETED_FIELD_NUMBER: _ClassVar[int]
    MOVED_FIELD_NUMBER: _ClassVar[int]
    created: int
    modified: int
    deleted: int
    moved: int
    def __init__(self, created: _Optional[int] = ..., modified: _Optional[int] = ..., deleted: _Optional[int] = ..., moved: _Optional[int] = ...) -> None: ...

class Snapshot(_message.Message):
    __slots__ = ("id", "workspace", "run_id", "created_at", "size_bytes", "sha256", "file_count", "labels", "changes", "parent", "recovered", "recovered_reason", "tree_bytes", "tarballs")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    SHA256_FIELD_NUMBER: _ClassVar[int]
    FILE_COUNT_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    CHANGES_FIELD_NUMBER: _ClassVar[int]
    PARENT_FIELD_NUMBER: _ClassVar[int]
    RECOVERED_FIELD_NUMBER: _ClassVar[int]
    RECOVERED_REASON_FIELD_NUMBER: _ClassVar[int]
    TREE_BYTES_FIELD_NUMBER: _ClassVar[int]
    TARBALLS_FIELD_NUMBER: _ClassVar[int]
    id: str
    workspace: str
    run_id: str
    created_at: _timestamp_pb2.Timestamp
    size_bytes: int
    sha256: str
    file_count: int
    labels: _containers.ScalarMap[str, str]
    changes: ChangeSummary
    parent: str
    recovered: bool
    recovered_reason: str
    tree_bytes: int
    tarballs: int
    def __init__(self, id: _Optional[str] = ..., workspace: _Optional[str] = ..., run_id: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., size_bytes: _Optional[int] = ..., sha256: _Optional[str] = ..., file_count: _Optional[int] = ..., labels: _Optional[_Mapping[str, str]] = ..., changes: _Optional[_Union[ChangeSummary, _Mapping]] = ..., parent: _Optional[str] = ..., recovered: _Optional[bool] = ..., recovered_reason: _Optional[str] = ..., tree_bytes: _Optional[int] = ..., tarballs: _Optional[int] = ...) -> None: ...

class FinishRunRequest(_message.Message):
    __slots__ = ("workspace", "run_id", "snapshot", "labels")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    run_id: str
    snapshot: bool
    labels: _containers.ScalarMap[str, str]
    def __init__(self, workspace: _Optional[str] = ..., run_id: _Optional[str] = ..., snapshot: _Optional[bool] = ..., labels: _Optional[_Mapping[str, str]] = ...) -> None: ...

class FinishRunResponse(_message.Message):
    __slots__ = ("snapshot", "changes")
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    CHANGES_FIELD_NUMBER: _ClassVar[int]
    snapshot: Snapshot
    changes: ChangeSummary
    def __init__(self, snapshot: _Optional[_Union[Snapshot, _Mapping]] = ..., changes: _Optional[_Union[ChangeSummary, _Mapping]] = ...) -> None: ...

class Change(_message.Message):
    __slots__ = ("kind", "path", "source_path", "sha256_before", "sha256_after", "time")
    KIND_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    SOURCE_PATH_FIELD_NUMBER: _ClassVar[int]
    SHA256_BEFORE_FIELD_NUMBER: _ClassVar[int]
    SHA256_AFTER_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    kind: ChangeKind
    path: str
    source_path: str
    sha256_before: str
    sha256_after: str
    time: _timestamp_pb2.Timestamp
    def __init__(self, kind: _Optional[_Union[ChangeKind, str]] = ..., path: _Optional[str] = ..., source_path: _Optional[str] = ..., sha256_before: _Optional[str] = ..., sha256_after: _Optional[str] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class GetChangeSetRequest(_message.Message):
    __slots__ = ("workspace", "run_id")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    run_id: str
    def __init__(self, workspace: _Optional[str] = ..., run_id: _Optional[str] = ...) -> None: ...

class GetChangeSetResponse(_message.Message):
    __slots__ = ("changes",)
    CHANGES_FIELD_NUMBER: _ClassVar[int]
    changes: _containers.RepeatedCompositeFieldContainer[Change]
    def __init__(self, changes: _Optional[_Iterable[_Union[Change, _Mapping]]] = ...) -> None: ...

class ListSnapshotsRequest(_message.Message):
    __slots__ = ("workspace", "labels", "created_after", "created_before", "include_recovered")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AFTER_FIELD_NUMBER: _ClassVar[int]
    CREATED_BEFORE_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_RECOVERED_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    labels: _containers.ScalarMap[str, str]
    created_after: _timestamp_pb2.Timestamp
    created_before: _timestamp_pb2.Timestamp
    include_recovered: bool
    def __init__(self, workspace: _Optional[str] = ..., labels: _Optional[_Mapping[str, str]] = ..., created_after: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., created_before: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., include_recovered: _Optional[bool] = ...) -> None: ...

class ListSnapshotsResponse(_message.Message):
    __slots__ = ("snapshots",)
    SNAPSHOTS_FIELD_NUMBER: _ClassVar[int]
    snapshots: _containers.RepeatedCompositeFieldContainer[Snapshot]
    def __init__(self, snapshots: _Optional[_Iterable[_Union[Snapshot, _Mapping]]] = ...) -> None: ...

class DiffSnapshotsRequest(_message.Message):
    __slots__ = ("workspace", "to", "live")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    LIVE_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    to: str
    live: bool
    def __init__(self, workspace: _Optional[str] = ..., to: _Optional[str] = ..., live: _Optional[bool] = ..., **kwargs) -> None: ...

class DiffEntry(_message.Message):
    __slots__ = ("path", "kind", "size_before", "size_after", "sha256_before", "sha256_after", "mode_before", "mode_after", "type_before", "type_after", "link_before", "link_after")
    PATH_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    SIZE_BEFORE_FIELD_NUMBER: _ClassVar[int]
    SIZE_AFTER_FIELD_NUMBER: _ClassVar[int]
    SHA256_BEFORE_FIELD_NUMBER: _ClassVar[int]
    SHA256_AFTER_FIELD_NUMBER: _ClassVar[int]
    MODE_BEFORE_FIELD_NUMBER: _ClassVar[int]
    MODE_AFTER_FIELD_NUMBER: _ClassVar[int]
    TYPE_BEFORE_FIELD_NUMBER: _ClassVar[int]
    TYPE_AFTER_FIELD_NUMBER: _ClassVar[int]
    LINK_BEFORE_FIELD_NUMBER: _ClassVar[int]
    LINK_AFTER_FIELD_NUMBER: _ClassVar[int]
    path: str
    kind: DiffKind
    size_before: int
    size_after: int
    sha256_before: str
    sha256_after: str
    mode_before: int
    mode_after: int
    type_before: DiffEntryType
    type_after: DiffEntryType
    link_before: str
    link_after: str
    def __init__(self, path: _Optional[str] = ..., kind: _Optional[_Union[DiffKind, str]] = ..., size_before: _Optional[int] = ..., size_after: _Optional[int] = ..., sha256_before: _Optional[str] = ..., sha256_after: _Optional[str] = ..., mode_before: _Optional[int] = ..., mode_after: _Optional[int] = ..., type_before: _Optional[_Union[DiffEntryType, str]] = ..., type_after: _Optional[_Union[DiffEntryType, str]] = ..., link_before: _Optional[str] = ..., link_after: _Optional[str] = ...) -> None: ...

class DiffSummary(_message.Message):
    __slots__ = ("to", "added", "removed", "modified", "unchanged")
    FROM_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    ADDED_FIELD_NUMBER: _ClassVar[int]
    REMOVED_FIELD_NUMBER: _ClassVar[int]
    MODIFIED_FIELD_NUMBER: _ClassVar[int]
    UNCHANGED_FIELD_NUMBER: _ClassVar[int]
    to: str
    added: int
    removed: int
    modified: int
    unchanged: int
    def __init__(self, to: _Optional[str] = ..., added: _Optional[int] = ..., removed: _Optional[int] = ..., modified: _Optional[int] = ..., unchanged: _Optional[int] = ..., **kwargs) -> None: ...

class DiffSnapshotsResponse(_message.Message):
    __slots__ = ("entries", "summary")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    entries: DiffEntries
    summary: DiffSummary
    def __init__(self, entries: _Optional[_Union[DiffEntries, _Mapping]] = ..., summary: _Optional[_Union[DiffSummary, _Mapping]] = ...) -> None: ...

class DiffEntries(_message.Message):
    __slots__ = ("entries",)
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[DiffEntry]
    def __init__(self, entries: _Optional[_Iterable[_Union[DiffEntry, _Mapping]]] = ...) -> None: ...

class ExportSnapshotRequest(_message.Message):
    __slots__ = ("workspace", "snapshot_id", "live", "include", "presign", "presign_seconds")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_ID_FIELD_NUMBER: _ClassVar[int]
    LIVE_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_FIELD_NUMBER: _ClassVar[int]
    PRESIGN_FIELD_NUMBER: _ClassVar[int]
    PRESIGN_SECONDS_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    snapshot_id: str
    live: bool
    include: _containers.RepeatedScalarFieldContainer[str]
    presign: bool
    presign_seconds: int
    def __init__(self, workspace: _Optional[str] = ..., snapshot_id: _Optional[str] = ..., live: _Optional[bool] = ..., include: _Optional[_Iterable[str]] = ..., presign: _Optional[bool] = ..., presign_seconds: _Optional[int] = ...) -> None: ...

class ExportHeader(_message.Message):
    __slots__ = ("size", "sha256", "file_count", "url", "url_expires_at")
    SIZE_FIELD_NUMBER: _ClassVar[int]
    SHA256_FIELD_NUMBER: _ClassVar[int]
    FILE_COUNT_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    URL_EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    size: int
    sha256: str
    file_count: int
    url: str
    url_expires_at: _timestamp_pb2.Timestamp
    def __init__(self, size: _Optional[int] = ..., sha256: _Optional[str] = ..., file_count: _Optional[int] = ..., url: _Optional[str] = ..., url_expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ExportSnapshotResponse(_message.Message):
    __slots__ = ("header", "chunk")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    header: ExportHeader
    chunk: _common_pb2.DataChunk
    def __init__(self, header: _Optional[_Union[ExportHeader, _Mapping]] = ..., chunk: _Optional[_Union[_common_pb2.DataChunk, _Mapping]] = ...) -> None: ...

class RestoreSnapshotRequest(_message.Message):
    __slots__ = ("workspace", "snapshot_id")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_ID_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    snapshot_id: str
    def __init__(self, workspace: _Optional[str] = ..., snapshot_id: _Optional[str] = ...) -> None: ...

class RestoreSnapshotResponse(_message.Message):
    __slots__ = ("snapshot",)
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    snapshot: Snapshot
    def __init__(self, snapshot: _Optional[_Union[Snapshot, _Mapping]] = ...) -> None: ...

class ImportHeader(_message.Message):
    __slots__ = ("workspace", "path")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    path: str
    def __init__(self, workspace: _Optional[str] = ..., path: _Optional[str] = ...) -> None: ...

class ImportArchiveRequest(_message.Message):
    __slots__ = ("header", "chunk")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    header: ImportHeader
    chunk: _common_pb2.DataChunk
    def __init__(self, header: _Optional[_Union[ImportHeader, _Mapping]] = ..., chunk: _Optional[_Union[_common_pb2.DataChunk, _Mapping]] = ...) -> None: ...

class ImportArchiveResponse(_message.Message):
    __slots__ = ("file_count", "size_bytes")
    FILE_COUNT_FIELD_NUMBER: _ClassVar[int]
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    file_count: int
    size_bytes: int
    def __init__(self, file_count: _Optional[int] = ..., size_bytes: _Optional[int] = ...) -> None: ...
