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

class JournalKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    JOURNAL_KIND_UNSPECIFIED: _ClassVar[JournalKind]
    JOURNAL_KIND_CREATED: _ClassVar[JournalKind]
    JOURNAL_KIND_MODIFIED: _ClassVar[JournalKind]
    JOURNAL_KIND_DELETED: _ClassVar[JournalKind]
    JOURNAL_KIND_MOVED: _ClassVar[JournalKind]
    JOURNAL_KIND_MADE_DIRECTORY: _ClassVar[JournalKind]
    JOURNAL_KIND_REPLACED: _ClassVar[JournalKind]
JOURNAL_KIND_UNSPECIFIED: JournalKind
JOURNAL_KIND_CREATED: JournalKind
JOURNAL_KIND_MODIFIED: JournalKind
JOURNAL_KIND_DELETED: JournalKind
JOURNAL_KIND_MOVED: JournalKind
JOURNAL_KIND_MADE_DIRECTORY: JournalKind
JOURNAL_KIND_REPLACED: JournalKind

class JournalActor(_message.Message):
    __slots__ = ("token_name", "run_id", "rpc", "call_id")
    TOKEN_NAME_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    RPC_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    token_name: str
    run_id: str
    rpc: str
    call_id: str
    def __init__(self, token_name: _Optional[str] = ..., run_id: _Optional[str] = ..., rpc: _Optional[str] = ..., call_id: _Optional[str] = ...) -> None: ...

class JournalEntry(_message.Message):
    __slots__ = ("cursor", "time", "kind", "path", "from_path", "type", "size", "sha256", "version_before", "version_after", "actor", "outside")
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    FROM_PATH_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    SHA256_FIELD_NUMBER: _ClassVar[int]
    VERSION_BEFORE_FIELD_NUMBER: _ClassVar[int]
    VERSION_AFTER_FIELD_NUMBER: _ClassVar[int]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    OUTSIDE_FIELD_NUMBER: _ClassVar[int]
    cursor: int
    time: _timestamp_pb2.Timestamp
    kind: JournalKind
    path: str
    from_path: str
    type: _common_pb2.FileType
    size: int
    sha256: str
    version_before: str
    version_after: str
    actor: JournalActor
    outside: bool
    def __init__(self, cursor: _Optional[int] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., kind: _Optional[_Union[JournalKind, str]] = ..., path: _Optional[str] = ..., from_path: _Optional[str] = ..., type: _Optional[_Union[_common_pb2.FileType, str]] = ..., size: _Optional[int] = ..., sha256: _Optional[str] = ..., version_before: _Optional[str] = ..., version_after: _Optional[str] = ..., actor: _Optional[_Union[JournalActor, _Mapping]] = ..., outside: _Optional[bool] = ...) -> None: ...

class WatchRequest(_message.Message):
    __slots__ = ("workspace", "globs", "cursor")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    GLOBS_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    globs: _containers.RepeatedScalarFieldContainer[str]
    cursor: int
    def __init__(self, workspace: _Optional[str] = ..., globs: _Optional[_Iterable[str]] = ..., cursor: _Optional[int] = ...) -> None: ...

class WatchResponse(_message.Message):
    __slots__ = ("changes", "live", "missed", "notice")
    CHANGES_FIELD_NUMBER: _ClassVar[int]
    LIVE_FIELD_NUMBER: _ClassVar[int]
    MISSED_FIELD_NUMBER: _ClassVar[int]
    NOTICE_FIELD_NUMBER: _ClassVar[int]
    changes: JournalEntries
    live: WatchLive
    missed: WatchMissed
    notice: WatchNotice
    def __init__(self, changes: _Optional[_Union[JournalEntries, _Mapping]] = ..., live: _Optional[_Union[WatchLive, _Mapping]] = ..., missed: _Optional[_Union[WatchMissed, _Mapping]] = ..., notice: _Optional[_Union[WatchNotice, _Mapping]] = ...) -> None: ...

class JournalEntries(_message.Message):
    __slots__ = ("entries",)
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[JournalEntry]
    def __init__(self, entries: _Optional[_Iterable[_Union[JournalEntry, _Mapping]]] = ...) -> None: ...

class WatchLive(_message.Message):
    __slots__ = ("cursor",)
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    cursor: int
    def __init__(self, cursor: _Optional[int] = ...) -> None: ...

class WatchMissed(_message.Message):
    __slots__ = ("count", "resume_cursor")
    COUNT_FIELD_NUMBER: _ClassVar[int]
    RESUME_CURSOR_FIELD_NUMBER: _ClassVar[int]
    count: int
    resume_cursor: int
    def __init__(self, count: _Optional[int] = ..., resume_cursor: _Optional[int] = ...) -> None: ...

class WatchNotice(_message.Message):
    __slots__ = ("message", "time")
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    message: str
    time: _timestamp_pb2.Timestamp
    def __init__(self, message: _Optional[str] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class GetJournalRequest(_message.Message):
    __slots__ = ("workspace", "run_id", "since", "until", "after_cursor", "globs")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    UNTIL_FIELD_NUMBER: _ClassVar[int]
    AFTER_CURSOR_FIELD_NUMBER: _ClassVar[int]
    GLOBS_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    run_id: str
    since: _timestamp_pb2.Timestamp
    until: _timestamp_pb2.Timestamp
    after_cursor: int
    globs: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, workspace: _Optional[str] = ..., run_id: _Optional[str] = ..., since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., until: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., after_cursor: _Optional[int] = ..., globs: _Optional[_Iterable[str]] = ...) -> None: ...

class GetJournalResponse(_message.Message):
    __slots__ = ("entries", "oldest_cursor", "last_cursor")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    OLDEST_CURSOR_FIELD_NUMBER: _ClassVar[int]
    LAST_CURSOR_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[JournalEntry]
    oldest_cursor: int
    last_cursor: int
    def __init__(self, entries: _Optional[_Iterable[_Union[JournalEntry, _Mapping]]] = ..., oldest_cursor: _Optional[int] = ..., last_cursor: _Optional[int] = ...) -> None: ...
