import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class FileType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FILE_TYPE_UNSPECIFIED: _ClassVar[FileType]
    FILE_TYPE_FILE: _ClassVar[FileType]
    FILE_TYPE_DIRECTORY: _ClassVar[FileType]
    FILE_TYPE_SYMLINK: _ClassVar[FileType]
    FILE_TYPE_OTHER: _ClassVar[FileType]

class ErrorReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ERROR_REASON_UNSPECIFIED: _ClassVar[ErrorReason]
    ERROR_REASON_PATH_ESCAPES_WORKSPACE: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_PATH: _ClassVar[ErrorReason]
    ERROR_REASON_NOT_FOUND: _ClassVar[ErrorReason]
    ERROR_REASON_WORKSPACE_NOT_FOUND: _ClassVar[ErrorReason]
    ERROR_REASON_ALREADY_EXISTS: _ClassVar[ErrorReason]
    ERROR_REASON_IS_A_DIRECTORY: _ClassVar[ErrorReason]
    ERROR_REASON_NOT_A_DIRECTORY: _ClassVar[ErrorReason]
    ERROR_REASON_BINARY_FILE: _ClassVar[ErrorReason]
    ERROR_REASON_OLD_TEXT_NOT_FOUND: _ClassVar[ErrorReason]
    ERROR_REASON_OLD_TEXT_NOT_UNIQUE: _ClassVar[ErrorReason]
    ERROR_REASON_CONTENT_CHANGED: _ClassVar[ErrorReason]
    ERROR_REASON_LOSSY_ENCODING: _ClassVar[ErrorReason]
    ERROR_REASON_RUN_ACTIVE: _ClassVar[ErrorReason]
    ERROR_REASON_QUOTA_EXCEEDED: _ClassVar[ErrorReason]
    ERROR_REASON_STORE_UNAVAILABLE: _ClassVar[ErrorReason]
    ERROR_REASON_UNSAFE_ARCHIVE: _ClassVar[ErrorReason]
    ERROR_REASON_SEARCH_TIMEOUT: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_ARGUMENT: _ClassVar[ErrorReason]
    ERROR_REASON_NOT_IMPLEMENTED: _ClassVar[ErrorReason]
    ERROR_REASON_NOT_A_REGULAR_FILE: _ClassVar[ErrorReason]
    ERROR_REASON_WORKSPACE_BOUND: _ClassVar[ErrorReason]
    ERROR_REASON_DIRECTORY_NOT_EMPTY: _ClassVar[ErrorReason]
    ERROR_REASON_INTERNAL: _ClassVar[ErrorReason]
    ERROR_REASON_CANCELLED: _ClassVar[ErrorReason]
    ERROR_REASON_DEADLINE_EXCEEDED: _ClassVar[ErrorReason]
    ERROR_REASON_UNAUTHENTICATED: _ClassVar[ErrorReason]
    ERROR_REASON_WORKSPACE_NOT_ALLOWED: _ClassVar[ErrorReason]
    ERROR_REASON_DATA_LOSS: _ClassVar[ErrorReason]
    ERROR_REASON_ACCESS_DENIED: _ClassVar[ErrorReason]
    ERROR_REASON_IO_ERROR: _ClassVar[ErrorReason]
    ERROR_REASON_SNAPSHOT_WITHOUT_FILE_LIST: _ClassVar[ErrorReason]
    ERROR_REASON_NO_SPACE: _ClassVar[ErrorReason]
    ERROR_REASON_SNAPSHOT_WITHOUT_CONTENTS: _ClassVar[ErrorReason]
    ERROR_REASON_NOT_MEDIA: _ClassVar[ErrorReason]
    ERROR_REASON_MEDIA_UNREADABLE: _ClassVar[ErrorReason]
    ERROR_REASON_CURSOR_OUT_OF_RANGE: _ClassVar[ErrorReason]
FILE_TYPE_UNSPECIFIED: FileType
FILE_TYPE_FILE: FileType
FILE_TYPE_DIRECTORY: FileType
FILE_TYPE_SYMLINK: FileType
FILE_TYPE_OTHER: FileType
ERROR_REASON_UNSPECIFIED: ErrorReason
ERROR_REASON_PATH_ESCAPES_WORKSPACE: ErrorReason
ERROR_REASON_INVALID_PATH: ErrorReason
ERROR_REASON_NOT_FOUND: ErrorReason
ERROR_REASON_WORKSPACE_NOT_FOUND: ErrorReason
ERROR_REASON_ALREADY_EXISTS: ErrorReason
ERROR_REASON_IS_A_DIRECTORY: ErrorReason
ERROR_REASON_NOT_A_DIRECTORY: ErrorReason
ERROR_REASON_BINARY_FILE: ErrorReason
ERROR_REASON_OLD_TEXT_NOT_FOUND: ErrorReason
ERROR_REASON_OLD_TEXT_NOT_UNIQUE: ErrorReason
ERROR_REASON_CONTENT_CHANGED: ErrorReason
ERROR_REASON_LOSSY_ENCODING: ErrorReason
ERROR_REASON_RUN_ACTIVE: ErrorReason
ERROR_REASON_QUOTA_EXCEEDED: ErrorReason
ERROR_REASON_STORE_UNAVAILABLE: ErrorReason
ERROR_REASON_UNSAFE_ARCHIVE: ErrorReason
ERROR_REASON_SEARCH_TIMEOUT: ErrorReason
ERROR_REASON_INVALID_ARGUMENT: ErrorReason
ERROR_REASON_NOT_IMPLEMENTED: ErrorReason
ERROR_REASON_NOT_A_REGULAR_FILE: ErrorReason
ERROR_REASON_WORKSPACE_BOUND: ErrorReason
ERROR_REASON_DIRECTORY_NOT_EMPTY: ErrorReason
ERROR_REASON_INTERNAL: ErrorReason
ERROR_REASON_CANCELLED: ErrorReason
ERROR_REASON_DEADLINE_EXCEEDED: ErrorReason
ERROR_REASON_UNAUTHENTICATED: ErrorReason
ERROR_REASON_WORKSPACE_NOT_ALLOWED: ErrorReason
ERROR_REASON_DATA_LOSS: ErrorReason
ERROR_REASON_ACCESS_DENIED: ErrorReason
ERROR_REASON_IO_ERROR: ErrorReason
ERROR_REASON_SNAPSHOT_WITHOUT_FILE_LIST: ErrorReason
ERROR_REASON_NO_SPACE: ErrorReason
ERROR_REASON_SNAPSHOT_WITHOUT_CONTENTS: ErrorReason
ERROR_REASON_NOT_MEDIA: ErrorReason
ERROR_REASON_MEDIA_UNREADABLE: ErrorReason
ERROR_REASON_CURSOR_OUT_OF_RANGE: ErrorReason

class FileInfo(_message.Message):
    __slots__ = ("path", "name", "type", "size", "mode", "mtime", "version", "is_binary", "line_count", "escaped")
    PATH_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    MTIME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    IS_BINARY_FIELD_NUMBER: _ClassVar[int]
    LINE_COUNT_FIELD_NUMBER: _ClassVar[int]
    ESCAPED_FIELD_NUMBER: _ClassVar[int]
    path: str
    name: str
    type: FileType
    size: int
    mode: int
    mtime: _timestamp_pb2.Timestamp
    version: str
    is_binary: bool
    line_count: int
    escaped: bool
    def __init__(self, path: _Optional[str] = ..., name: _Optional[str] = ..., type: _Optional[_Union[FileType, str]] = ..., size: _Optional[int] = ..., mode: _Optional[int] = ..., mtime: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., version: _Optional[str] = ..., is_binary: _Optional[bool] = ..., line_count: _Optional[int] = ..., escaped: _Optional[bool] = ...) -> None: ...

class DataChunk(_message.Message):
    __slots__ = ("data",)
    DATA_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    def __init__(self, data: _Optional[bytes] = ...) -> None: ...
