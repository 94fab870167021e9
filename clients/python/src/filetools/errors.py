"""The exceptions the clients raise, one class per ``ErrorInfo.reason``.

Every daemon error carries a ``google.rpc.ErrorInfo`` (domain ``filetools``)
whose reason is a name of the ``ErrorReason`` enum in
``proto/filetools/v1/common.proto`` without its ``ERROR_REASON_`` prefix.
Each class below names its enum value; the reason-to-class table is built
from those values, so the reason strings are written nowhere here. Classes
are grouped under a base per gRPC status code, so ``except FailedPrecondition``
catches every precondition failure at once. An error without an ErrorInfo
(a connection failure, the client's own deadline or cancellation) becomes
the base class of its status code.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePath
from typing import ClassVar

import grpc
import grpc.aio
# googleapis-common-protos ships no type stubs (and its stubs package needs grpc-stubs, which
# clashes with types-grpcio): the untyped values are turned into str right where they are read.
from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped]

from filetools.v1 import common_pb2

__all__ = [
    "AccessDenied",
    "AlreadyExists",
    "BY_CODE",
    "BY_REASON",
    "BinaryFile",
    "Cancelled",
    "ChecksumMismatch",
    "ContentChanged",
    "CursorOutOfRange",
    "DataLoss",
    "DeadlineExceeded",
    "DirectoryNotEmpty",
    "DiskError",
    "FailedPrecondition",
    "FileToolsError",
    "Internal",
    "InvalidArgument",
    "InvalidPath",
    "IsADirectory",
    "LossyEncoding",
    "MediaUnreadable",
    "NoSpace",
    "NotADirectory",
    "NotARegularFile",
    "NotFound",
    "NotMedia",
    "OldTextNotFound",
    "OutOfRange",
    "OldTextNotUnique",
    "PathEscapesWorkspace",
    "PermissionDenied",
    "QuotaExceeded",
    "ResourceExhausted",
    "RunActive",
    "SearchTimeout",
    "SnapshotWithoutContents",
    "SnapshotWithoutFileList",
    "StoreUnavailable",
    "Unauthenticated",
    "Unavailable",
    "Unimplemented",
    "UnsafeArchive",
    "WorkspaceBound",
    "WorkspaceNotAllowed",
    "WorkspaceNotFound",
    "error_from_rpc",
    "error_from_status",
]

_Reason = common_pb2.ErrorReason
_STATUS_DETAILS_KEY = "grpc-status-details-bin"
_REASON_PREFIX = "ERROR_REASON_"


class FileToolsError(Exception):
    """A failed call: its gRPC status code, its reason and the ErrorInfo metadata."""

    #: The ErrorReason a subclass stands for (unset on the grouping bases).
    reason_value: ClassVar[int | None] = None
    #: The status code a grouping base stands for.
    status_code: ClassVar[grpc.StatusCode | None] = None

    def __init__(
        self, code: grpc.StatusCode, reason: str, message: str, metadata: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        #: The ErrorInfo reason, e.g. "PATH_ESCAPES_WORKSPACE"; "" when the status had none.
        self.reason = reason
        self.message = message
        #: The ErrorInfo metadata, e.g. {"current_version": "..."} for CONTENT_CHANGED.
        self.metadata = metadata or {}

    def __str__(self) -> str:
        kind = f"{self.code.name} {self.reason}" if self.reason else self.code.name
        return f"{kind}: {self.message}"


# Grouping bases, one per status code the daemon uses.


class InvalidArgument(FileToolsError):
    """INVALID_ARGUMENT: a malformed field (reason INVALID_ARGUMENT) or path (InvalidPath)."""

    status_code = grpc.StatusCode.INVALID_ARGUMENT
    reason_value = _Reason.ERROR_REASON_INVALID_ARGUMENT


class NotFound(FileToolsError):
    """NOT_FOUND: a path (reason NOT_FOUND) or a workspace (WorkspaceNotFound)."""

    status_code = grpc.StatusCode.NOT_FOUND
    reason_value = _Reason.ERROR_REASON_NOT_FOUND


class AlreadyExists(FileToolsError):
    status_code = grpc.StatusCode.ALREADY_EXISTS
    reason_value = _Reason.ERROR_REASON_ALREADY_EXISTS


class PermissionDenied(FileToolsError):
    status_code = grpc.StatusCode.PERMISSION_DENIED


class Unauthenticated(FileToolsError):
    status_code = grpc.StatusCode.UNAUTHENTICATED
    reason_value = _Reason.ERROR_REASON_UNAUTHENTICATED


class FailedPrecondition(FileToolsError):
    status_code = grpc.StatusCode.FAILED_PRECONDITION


class ResourceExhausted(FileToolsError):
    status_code = grpc.StatusCode.RESOURCE_EXHAUSTED


class Unavailable(FileToolsError):
    """UNAVAILABLE: the daemon cannot be reached, or its store failed (StoreUnavailable)."""

    status_code = grpc.StatusCode.UNAVAILABLE


class DeadlineExceeded(FileToolsError):
    """The call's deadline (``timeout=``) passed before it finished."""

    status_code = grpc.StatusCode.DEADLINE_EXCEEDED
    reason_value = _Reason.ERROR_REASON_DEADLINE_EXCEEDED


class OutOfRange(FileToolsError):
    status_code = grpc.StatusCode.OUT_OF_RANGE


class Cancelled(FileToolsError):
    """The call was cancelled (by this client, or by the daemon shutting down)."""

    status_code = grpc.StatusCode.CANCELLED
    reason_value = _Reason.ERROR_REASON_CANCELLED


class Unimplemented(FileToolsError):
    status_code = grpc.StatusCode.UNIMPLEMENTED
    reason_value = _Reason.ERROR_REASON_NOT_IMPLEMENTED


class Internal(FileToolsError):
    status_code = grpc.StatusCode.INTERNAL
    reason_value = _Reason.ERROR_REASON_INTERNAL

    @classmethod
    def unexpected(cls, message: str) -> Internal:
        """A response stream that broke the protocol (found by the client; no reason)."""
        return cls(grpc.StatusCode.INTERNAL, "", message)


class DataLoss(FileToolsError):
    """DATA_LOSS: a stored snapshot is damaged (truncated, not matching its manifest, or missing).

    Nothing was changed in the workspace.
    """

    status_code = grpc.StatusCode.DATA_LOSS
    reason_value: ClassVar[int | None] = _Reason.ERROR_REASON_DATA_LOSS


class ChecksumMismatch(DataLoss):
    """A downloaded or exported file did not match the size or sha256 its header announced.

    Raised by the client itself (code DATA_LOSS, no reason); nothing is left at the destination.
    """

    reason_value = None

    @classmethod
    def of(cls, path: PurePath, size: int, sha256: str, received: int, digest: str) -> ChecksumMismatch:
        message = f"{path}: announced {size} bytes with sha256 {sha256}, received {received} bytes with sha256 {digest}"
        return cls(grpc.StatusCode.DATA_LOSS, "", message)


# One class per remaining reason, under the base of the code the daemon sends it with.


class InvalidPath(InvalidArgument):
    reason_value = _Reason.ERROR_REASON_INVALID_PATH


class WorkspaceNotFound(NotFound):
    reason_value = _Reason.ERROR_REASON_WORKSPACE_NOT_FOUND


class PathEscapesWorkspace(PermissionDenied):
    reason_value = _Reason.ERROR_REASON_PATH_ESCAPES_WORKSPACE


class WorkspaceNotAllowed(PermissionDenied):
    """The token may not use this workspace."""

    reason_value = _Reason.ERROR_REASON_WORKSPACE_NOT_ALLOWED


class AccessDenied(PermissionDenied):
    """The file system refused: permissions, a read-only file system, a busy program file."""

    reason_value = _Reason.ERROR_REASON_ACCESS_DENIED


class DiskError(Unavailable):
    """The file system failed (an I/O error, exhausted descriptors); may succeed later."""

    reason_value = _Reason.ERROR_REASON_IO_ERROR


class IsADirectory(FailedPrecondition):
    reason_value = _Reason.ERROR_REASON_IS_A_DIRECTORY


class NotADirectory(FailedPrecondition):
    reason_value = _Reason.ERROR_REASON_NOT_A_DIRECTORY


class NotARegularFile(FailedPrecondition):
    reason_value = _Reason.ERROR_REASON_NOT_A_REGULAR_FILE


class DirectoryNotEmpty(FailedPrecondition):
    reason_value = _Reason.ERROR_REASON_DIRECTORY_NOT_EMPTY


class BinaryFile(FailedPrecondition):
    reason_value = _Reason.ERROR_REASON_BINARY_FILE


class OldTextNotFound(FailedPrecondition):
    """Metadata: edit_index, closest_line, closest_text."""

    reason_value = _Reason.ERROR_REASON_OLD_TEXT_NOT_FOUND


class OldTextNotUnique(FailedPrecondition):
    """Metadata: edit_index, count."""

    reason_value = _Reason.ERROR_REASON_OLD_TEXT_NOT_UNIQUE


class ContentChanged(FailedPrecondition):
    """``if_version`` no longer matches. Metadata: current_version."""

    reason_value = _Reason.ERROR_REASON_CONTENT_CHANGED


class LossyEncoding(FailedPrecondition):
    reason_value = _Reason.ERROR_REASON_LOSSY_ENCODING


class RunActive(FailedPrecondition):
    reason_value = _Reason.ERROR_REASON_RUN_ACTIVE


class UnsafeArchive(FailedPrecondition):
    reason_value = _Reason.ERROR_REASON_UNSAFE_ARCHIVE


class WorkspaceBound(FailedPrecondition):
    reason_value = _Reason.ERROR_REASON_WORKSPACE_BOUND


class SnapshotWithoutFileList(FailedPrecondition):
    """DiffSnapshots named a snapshot written before manifests carried a file list."""

    reason_value = _Reason.ERROR_REASON_SNAPSHOT_WITHOUT_FILE_LIST


class SnapshotWithoutContents(FailedPrecondition):
    """A read at a snapshot named one in the older format, without a table of contents: restore it, or read at a newer one."""

    reason_value = _Reason.ERROR_REASON_SNAPSHOT_WITHOUT_CONTENTS


class NotMedia(FailedPrecondition):
    """ReadMedia of a file that is not a PNG, JPEG, GIF, WebP or PDF."""

    reason_value = _Reason.ERROR_REASON_NOT_MEDIA


class MediaUnreadable(FailedPrecondition):
    """An image or PDF that cannot be decoded (damaged, cut short, encrypted, or past the decode limits)."""

    reason_value = _Reason.ERROR_REASON_MEDIA_UNREADABLE


class QuotaExceeded(ResourceExhausted):
    """Over a size limit or the workspace's quota; ``metadata`` has usage_bytes, limit_bytes, usage_files, limit_files."""

    reason_value = _Reason.ERROR_REASON_QUOTA_EXCEEDED


class NoSpace(ResourceExhausted):
    """The daemon's disk is full (or its file system quota spent); nothing was changed."""

    reason_value = _Reason.ERROR_REASON_NO_SPACE


class CursorOutOfRange(OutOfRange):
    """A watch cursor the workspace's journal no longer holds (or past its last); ``metadata`` has oldest_cursor, last_cursor."""

    reason_value = _Reason.ERROR_REASON_CURSOR_OUT_OF_RANGE


class StoreUnavailable(Unavailable):
    reason_value = _Reason.ERROR_REASON_STORE_UNAVAILABLE


class SearchTimeout(DeadlineExceeded):
    reason_value = _Reason.ERROR_REASON_SEARCH_TIMEOUT


def _subclasses(cls: type[FileToolsError]) -> Iterable[type[FileToolsError]]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def _reason_name(value: int) -> str:
    return _Reason.Name(value).removeprefix(_REASON_PREFIX)


#: ErrorInfo.reason -> the class raised for it.
BY_REASON: dict[str, type[FileToolsError]] = {
    _reason_name(cls.reason_value): cls for cls in _subclasses(FileToolsError) if cls.reason_value is not None
}
#: Status code -> the class raised when a status carries no known reason.
BY_CODE: dict[grpc.StatusCode, type[FileToolsError]] = {
    cls.status_code: cls
    for cls in _subclasses(FileToolsError)
    if cls.status_code is not None and cls.__base__ is FileToolsError
}


def _error_info(trailers: Iterable[tuple[str, str | bytes]] | None) -> tuple[str, dict[str, str]] | None:
    """The reason and metadata of the ErrorInfo inside the google.rpc.Status trailer, if there is one."""
    for key, value in trailers or ():
        if key == _STATUS_DETAILS_KEY and isinstance(value, bytes):
            for detail in status_pb2.Status.FromString(value).details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    return str(info.reason), {str(k): str(v) for k, v in info.metadata.items()}
    return None


def error_from_status(
    code: grpc.StatusCode, message: str, trailers: Iterable[tuple[str, str | bytes]] | None
) -> FileToolsError:
    """The typed exception for a failed call's status and trailing metadata."""
    reason, metadata = _error_info(trailers) or ("", {})
    cls = BY_REASON.get(reason) or BY_CODE.get(code, FileToolsError)
    return cls(code, reason, message, metadata)


def error_from_rpc(error: grpc.RpcError) -> FileToolsError:
    """The typed exception for a failed call of the sync or the asyncio API."""
    if isinstance(error, (grpc.Call, grpc.aio.AioRpcError)):
        return error_from_status(error.code(), error.details() or "", error.trailing_metadata())
    return FileToolsError(grpc.StatusCode.UNKNOWN, "", str(error))
