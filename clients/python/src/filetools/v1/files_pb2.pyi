from filetools.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class WriteMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    WRITE_MODE_UNSPECIFIED: _ClassVar[WriteMode]
    WRITE_MODE_CREATE_OR_REPLACE: _ClassVar[WriteMode]
    WRITE_MODE_CREATE_ONLY: _ClassVar[WriteMode]
    WRITE_MODE_REPLACE_ONLY: _ClassVar[WriteMode]
    WRITE_MODE_APPEND: _ClassVar[WriteMode]

class Newline(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    NEWLINE_UNSPECIFIED: _ClassVar[Newline]
    NEWLINE_PRESERVE: _ClassVar[Newline]
    NEWLINE_LF: _ClassVar[Newline]
    NEWLINE_CRLF: _ClassVar[Newline]

class PatchAction(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PATCH_ACTION_UNSPECIFIED: _ClassVar[PatchAction]
    PATCH_ACTION_ADDED: _ClassVar[PatchAction]
    PATCH_ACTION_UPDATED: _ClassVar[PatchAction]
    PATCH_ACTION_DELETED: _ClassVar[PatchAction]
    PATCH_ACTION_MOVED: _ClassVar[PatchAction]

class OutputMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    OUTPUT_MODE_UNSPECIFIED: _ClassVar[OutputMode]
    OUTPUT_MODE_CONTENT: _ClassVar[OutputMode]
    OUTPUT_MODE_FILES_WITH_MATCHES: _ClassVar[OutputMode]
    OUTPUT_MODE_COUNT: _ClassVar[OutputMode]

class SearchOrder(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SEARCH_ORDER_UNSPECIFIED: _ClassVar[SearchOrder]
    SEARCH_ORDER_PATH: _ClassVar[SearchOrder]
    SEARCH_ORDER_FOUND: _ClassVar[SearchOrder]
WRITE_MODE_UNSPECIFIED: WriteMode
WRITE_MODE_CREATE_OR_REPLACE: WriteMode
WRITE_MODE_CREATE_ONLY: WriteMode
WRITE_MODE_REPLACE_ONLY: WriteMode
WRITE_MODE_APPEND: WriteMode
NEWLINE_UNSPECIFIED: Newline
NEWLINE_PRESERVE: Newline
NEWLINE_LF: Newline
NEWLINE_CRLF: Newline
PATCH_ACTION_UNSPECIFIED: PatchAction
PATCH_ACTION_ADDED: PatchAction
PATCH_ACTION_UPDATED: PatchAction
PATCH_ACTION_DELETED: PatchAction
PATCH_ACTION_MOVED: PatchAction
OUTPUT_MODE_UNSPECIFIED: OutputMode
OUTPUT_MODE_CONTENT: OutputMode
OUTPUT_MODE_FILES_WITH_MATCHES: OutputMode
OUTPUT_MODE_COUNT: OutputMode
SEARCH_ORDER_UNSPECIFIED: SearchOrder
SEARCH_ORDER_PATH: SearchOrder
SEARCH_ORDER_FOUND: SearchOrder

class ReadRequest(_message.Message):
    __slots__ = ("workspace", "path", "start_line", "line_count", "tail_lines", "encoding", "max_bytes", "at_snapshot")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    START_LINE_FIELD_NUMBER: _ClassVar[int]
    LINE_COUNT_FIELD_NUMBER: _ClassVar[int]
    TAIL_LINES_FIELD_NUMBER: _ClassVar[int]
    ENCODING_FIELD_NUMBER: _ClassVar[int]
    MAX_BYTES_FIELD_NUMBER: _ClassVar[int]
    AT_SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    path: str
    start_line: int
    line_count: int
    tail_lines: int
    encoding: str
    max_bytes: int
    at_snapshot: str
    def __init__(self, workspace: _Optional[str] = ..., path: _Optional[str] = ..., start_line: _Optional[int] = ..., line_count: _Optional[int] = ..., tail_lines: _Optional[int] = ..., encoding: _Optional[str] = ..., max_bytes: _Optional[int] = ..., at_snapshot: _Optional[str] = ...) -> None: ...

class ReadResponse(_message.Message):
    __slots__ = ("header", "chunk", "trailer")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    TRAILER_FIELD_NUMBER: _ClassVar[int]
    header: ReadHeader
    chunk: ReadChunk
    trailer: ReadTrailer
    def __init__(self, header: _Optional[_Union[ReadHeader, _Mapping]] = ..., chunk: _Optional[_Union[ReadChunk, _Mapping]] = ..., trailer: _Optional[_Union[ReadTrailer, _Mapping]] = ...) -> None: ...

class ReadHeader(_message.Message):
    __slots__ = ("file", "encoding", "total_lines")
    FILE_FIELD_NUMBER: _ClassVar[int]
    ENCODING_FIELD_NUMBER: _ClassVar[int]
    TOTAL_LINES_FIELD_NUMBER: _ClassVar[int]
    file: _common_pb2.FileInfo
    encoding: str
    total_lines: int
    def __init__(self, file: _Optional[_Union[_common_pb2.FileInfo, _Mapping]] = ..., encoding: _Optional[str] = ..., total_lines: _Optional[int] = ...) -> None: ...

class ReadChunk(_message.Message):
    __slots__ = ("first_line", "text")
    FIRST_LINE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    first_line: int
    text: str
    def __init__(self, first_line: _Optional[int] = ..., text: _Optional[str] = ...) -> None: ...

class ReadTrailer(_message.Message):
    __slots__ = ("lines_returned", "bytes_returned", "next_line", "truncated", "eof", "line_cut", "total_lines")
    LINES_RETURNED_FIELD_NUMBER: _ClassVar[int]
    BYTES_RETURNED_FIELD_NUMBER: _ClassVar[int]
    NEXT_LINE_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    EOF_FIELD_NUMBER: _ClassVar[int]
    LINE_CUT_FIELD_NUMBER: _ClassVar[int]
    TOTAL_LINES_FIELD_NUMBER: _ClassVar[int]
    lines_returned: int
    bytes_returned: int
    next_line: int
    truncated: bool
    eof: bool
    line_cut: bool
    total_lines: int
    def __init__(self, lines_returned: _Optional[int] = ..., bytes_returned: _Optional[int] = ..., next_line: _Optional[int] = ..., truncated: _Optional[bool] = ..., eof: _Optional[bool] = ..., line_cut: _Optional[bool] = ..., total_lines: _Optional[int] = ...) -> None: ...

class WriteRequest(_message.Message):
    __slots__ = ("workspace", "path", "content", "data", "encoding", "create_dirs", "mode", "newline", "if_version")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    ENCODING_FIELD_NUMBER: _ClassVar[int]
    CREATE_DIRS_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    NEWLINE_FIELD_NUMBER: _ClassVar[int]
    IF_VERSION_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    path: str
    content: str
    data: bytes
    encoding: str
    create_dirs: bool
    mode: WriteMode
    newline: Newline
    if_version: str
    def __init__(self, workspace: _Optional[str] = ..., path: _Optional[str] = ..., content: _Optional[str] = ..., data: _Optional[bytes] = ..., encoding: _Optional[str] = ..., create_dirs: _Optional[bool] = ..., mode: _Optional[_Union[WriteMode, str]] = ..., newline: _Optional[_Union[Newline, str]] = ..., if_version: _Optional[str] = ...) -> None: ...

class WriteResponse(_message.Message):
    __slots__ = ("path", "size", "created", "sha256", "version")
    PATH_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    SHA256_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    path: str
    size: int
    created: bool
    sha256: str
    version: str
    def __init__(self, path: _Optional[str] = ..., size: _Optional[int] = ..., created: _Optional[bool] = ..., sha256: _Optional[str] = ..., version: _Optional[str] = ...) -> None: ...

class TextEdit(_message.Message):
    __slots__ = ("old_text", "new_text", "replace_all")
    OLD_TEXT_FIELD_NUMBER: _ClassVar[int]
    NEW_TEXT_FIELD_NUMBER: _ClassVar[int]
    REPLACE_ALL_FIELD_NUMBER: _ClassVar[int]
    old_text: str
    new_text: str
    replace_all: bool
    def __init__(self, old_text: _Optional[str] = ..., new_text: _Optional[str] = ..., replace_all: _Optional[bool] = ...) -> None: ...

class EditRequest(_message.Message):
    __slots__ = ("workspace", "path", "edits", "dry_run", "if_version", "encoding")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    EDITS_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    IF_VERSION_FIELD_NUMBER: _ClassVar[int]
    ENCODING_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    path: str
    edits: _containers.RepeatedCompositeFieldContainer[TextEdit]
    dry_run: bool
    if_version: str
    encoding: str
    def __init__(self, workspace: _Optional[str] = ..., path: _Optional[str] = ..., edits: _Optional[_Iterable[_Union[TextEdit, _Mapping]]] = ..., dry_run: _Optional[bool] = ..., if_version: _Optional[str] = ..., encoding: _Optional[str] = ...) -> None: ...

class ApplyPatchRequest(_message.Message):
    __slots__ = ("workspace", "patch", "dry_run")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    PATCH_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    patch: str
    dry_run: bool
    def __init__(self, workspace: _Optional[str] = ..., patch: _Optional[str] = ..., dry_run: _Optional[bool] = ...) -> None: ...

class ApplyPatchResponse(_message.Message):
    __slots__ = ("files",)
    FILES_FIELD_NUMBER: _ClassVar[int]
    files: _containers.RepeatedCompositeFieldContainer[PatchedFile]
    def __init__(self, files: _Optional[_Iterable[_Union[PatchedFile, _Mapping]]] = ...) -> None: ...

class PatchedFile(_message.Message):
    __slots__ = ("path", "action", "moved_from", "version", "sha256_before", "sha256_after")
    PATH_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    MOVED_FROM_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    SHA256_BEFORE_FIELD_NUMBER: _ClassVar[int]
    SHA256_AFTER_FIELD_NUMBER: _ClassVar[int]
    path: str
    action: PatchAction
    moved_from: str
    version: str
    sha256_before: str
    sha256_after: str
    def __init__(self, path: _Optional[str] = ..., action: _Optional[_Union[PatchAction, str]] = ..., moved_from: _Optional[str] = ..., version: _Optional[str] = ..., sha256_before: _Optional[str] = ..., sha256_after: _Optional[str] = ...) -> None: ...

class EditResponse(_message.Message):
    __slots__ = ("path", "replacements", "diff", "sha256_before", "sha256_after", "version", "diff_truncated")
    PATH_FIELD_NUMBER: _ClassVar[int]
    REPLACEMENTS_FIELD_NUMBER: _ClassVar[int]
    DIFF_FIELD_NUMBER: _ClassVar[int]
    SHA256_BEFORE_FIELD_NUMBER: _ClassVar[int]
    SHA256_AFTER_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    DIFF_TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    path: str
    replacements: int
    diff: str
    sha256_before: str
    sha256_after: str
    version: str
    diff_truncated: bool
    def __init__(self, path: _Optional[str] = ..., replacements: _Optional[int] = ..., diff: _Optional[str] = ..., sha256_before: _Optional[str] = ..., sha256_after: _Optional[str] = ..., version: _Optional[str] = ..., diff_truncated: _Optional[bool] = ...) -> None: ...

class DeleteRequest(_message.Message):
    __slots__ = ("workspace", "path", "recursive", "if_version")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    RECURSIVE_FIELD_NUMBER: _ClassVar[int]
    IF_VERSION_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    path: str
    recursive: bool
    if_version: str
    def __init__(self, workspace: _Optional[str] = ..., path: _Optional[str] = ..., recursive: _Optional[bool] = ..., if_version: _Optional[str] = ...) -> None: ...

class DeleteResponse(_message.Message):
    __slots__ = ("path", "existed")
    PATH_FIELD_NUMBER: _ClassVar[int]
    EXISTED_FIELD_NUMBER: _ClassVar[int]
    path: str
    existed: bool
    def __init__(self, path: _Optional[str] = ..., existed: _Optional[bool] = ...) -> None: ...

class MoveRequest(_message.Message):
    __slots__ = ("workspace", "source", "destination", "overwrite", "create_dirs", "if_version")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    DESTINATION_FIELD_NUMBER: _ClassVar[int]
    OVERWRITE_FIELD_NUMBER: _ClassVar[int]
    CREATE_DIRS_FIELD_NUMBER: _ClassVar[int]
    IF_VERSION_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    source: str
    destination: str
    overwrite: bool
    create_dirs: bool
    if_version: str
    def __init__(self, workspace: _Optional[str] = ..., source: _Optional[str] = ..., destination: _Optional[str] = ..., overwrite: _Optional[bool] = ..., create_dirs: _Optional[bool] = ..., if_version: _Optional[str] = ...) -> None: ...

class MoveResponse(_message.Message):
    __slots__ = ("source", "destination", "file")
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    DESTINATION_FIELD_NUMBER: _ClassVar[int]
    FILE_FIELD_NUMBER: _ClassVar[int]
    source: str
    destination: str
    file: _common_pb2.FileInfo
    def __init__(self, source: _Optional[str] = ..., destination: _Optional[str] = ..., file: _Optional[_Union[_common_pb2.FileInfo, _Mapping]] = ...) -> None: ...

class MakeDirRequest(_message.Message):
    __slots__ = ("workspace", "path", "parents")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    PARENTS_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    path: str
    parents: bool
    def __init__(self, workspace: _Optional[str] = ..., path: _Optional[str] = ..., parents: _Optional[bool] = ...) -> None: ...

class MakeDirResponse(_message.Message):
    __slots__ = ("path", "created")
    PATH_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    path: str
    created: bool
    def __init__(self, path: _Optional[str] = ..., created: _Optional[bool] = ...) -> None: ...

class StatRequest(_message.Message):
    __slots__ = ("workspace", "path", "detect_binary", "count_lines", "at_snapshot")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    DETECT_BINARY_FIELD_NUMBER: _ClassVar[int]
    COUNT_LINES_FIELD_NUMBER: _ClassVar[int]
    AT_SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    path: str
    detect_binary: bool
    count_lines: bool
    at_snapshot: str
    def __init__(self, workspace: _Optional[str] = ..., path: _Optional[str] = ..., detect_binary: _Optional[bool] = ..., count_lines: _Optional[bool] = ..., at_snapshot: _Optional[str] = ...) -> None: ...

class StatResponse(_message.Message):
    __slots__ = ("file",)
    FILE_FIELD_NUMBER: _ClassVar[int]
    file: _common_pb2.FileInfo
    def __init__(self, file: _Optional[_Union[_common_pb2.FileInfo, _Mapping]] = ...) -> None: ...

class ListRequest(_message.Message):
    __slots__ = ("workspace", "path", "pattern", "recursive", "max_depth", "include_hidden", "respect_gitignore", "max_entries", "at_snapshot")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    PATTERN_FIELD_NUMBER: _ClassVar[int]
    RECURSIVE_FIELD_NUMBER: _ClassVar[int]
    MAX_DEPTH_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_HIDDEN_FIELD_NUMBER: _ClassVar[int]
    RESPECT_GITIGNORE_FIELD_NUMBER: _ClassVar[int]
    MAX_ENTRIES_FIELD_NUMBER: _ClassVar[int]
    AT_SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    path: str
    pattern: str
    recursive: bool
    max_depth: int
    include_hidden: bool
    respect_gitignore: bool
    max_entries: int
    at_snapshot: str
    def __init__(self, workspace: _Optional[str] = ..., path: _Optional[str] = ..., pattern: _Optional[str] = ..., recursive: _Optional[bool] = ..., max_depth: _Optional[int] = ..., include_hidden: _Optional[bool] = ..., respect_gitignore: _Optional[bool] = ..., max_entries: _Optional[int] = ..., at_snapshot: _Optional[str] = ...) -> None: ...

class ListResponse(_message.Message):
    __slots__ = ("entries", "summary")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    entries: ListEntries
    summary: ListSummary
    def __init__(self, entries: _Optional[_Union[ListEntries, _Mapping]] = ..., summary: _Optional[_Union[ListSummary, _Mapping]] = ...) -> None: ...

class ListEntries(_message.Message):
    __slots__ = ("entries",)
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[_common_pb2.FileInfo]
    def __init__(self, entries: _Optional[_Iterable[_Union[_common_pb2.FileInfo, _Mapping]]] = ...) -> None: ...

class ListSummary(_message.Message):
    __slots__ = ("total", "truncated")
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    total: int
    truncated: bool
    def __init__(self, total: _Optional[int] = ..., truncated: _Optional[bool] = ...) -> None: ...

class SearchRequest(_message.Message):
    __slots__ = ("workspace", "path", "pattern", "fixed_strings", "case_insensitive", "include", "exclude", "context_before", "context_after", "max_results", "max_file_size", "respect_gitignore", "output_mode", "batch_matches", "order")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    PATTERN_FIELD_NUMBER: _ClassVar[int]
    FIXED_STRINGS_FIELD_NUMBER: _ClassVar[int]
    CASE_INSENSITIVE_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_FIELD_NUMBER: _ClassVar[int]
    EXCLUDE_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_BEFORE_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_AFTER_FIELD_NUMBER: _ClassVar[int]
    MAX_RESULTS_FIELD_NUMBER: _ClassVar[int]
    MAX_FILE_SIZE_FIELD_NUMBER: _ClassVar[int]
    RESPECT_GITIGNORE_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_MODE_FIELD_NUMBER: _ClassVar[int]
    BATCH_MATCHES_FIELD_NUMBER: _ClassVar[int]
    ORDER_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    path: str
    pattern: str
    fixed_strings: bool
    case_insensitive: bool
    include: _containers.RepeatedScalarFieldContainer[str]
    exclude: _containers.RepeatedScalarFieldContainer[str]
    context_before: int
    context_after: int
    max_results: int
    max_file_size: int
    respect_gitignore: bool
    output_mode: OutputMode
    batch_matches: bool
    order: SearchOrder
    def __init__(self, workspace: _Optional[str] = ..., path: _Optional[str] = ..., pattern: _Optional[str] = ..., fixed_strings: _Optional[bool] = ..., case_insensitive: _Optional[bool] = ..., include: _Optional[_Iterable[str]] = ..., exclude: _Optional[_Iterable[str]] = ..., context_before: _Optional[int] = ..., context_after: _Optional[int] = ..., max_results: _Optional[int] = ..., max_file_size: _Optional[int] = ..., respect_gitignore: _Optional[bool] = ..., output_mode: _Optional[_Union[OutputMode, str]] = ..., batch_matches: _Optional[bool] = ..., order: _Optional[_Union[SearchOrder, str]] = ...) -> None: ...

class SearchResponse(_message.Message):
    __slots__ = ("match", "file", "count", "summary", "matches")
    MATCH_FIELD_NUMBER: _ClassVar[int]
    FILE_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    match: SearchMatch
    file: SearchFile
    count: SearchCount
    summary: SearchSummary
    matches: SearchMatches
    def __init__(self, match: _Optional[_Union[SearchMatch, _Mapping]] = ..., file: _Optional[_Union[SearchFile, _Mapping]] = ..., count: _Optional[_Union[SearchCount, _Mapping]] = ..., summary: _Optional[_Union[SearchSummary, _Mapping]] = ..., matches: _Optional[_Union[SearchMatches, _Mapping]] = ...) -> None: ...

class SearchMatches(_message.Message):
    __slots__ = ("matches",)
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    matches: _containers.RepeatedCompositeFieldContainer[SearchMatch]
    def __init__(self, matches: _Optional[_Iterable[_Union[SearchMatch, _Mapping]]] = ...) -> None: ...

class SearchMatch(_message.Message):
    __slots__ = ("path", "line_number", "column", "line", "before", "after", "line_cut")
    PATH_FIELD_NUMBER: _ClassVar[int]
    LINE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    COLUMN_FIELD_NUMBER: _ClassVar[int]
    LINE_FIELD_NUMBER: _ClassVar[int]
    BEFORE_FIELD_NUMBER: _ClassVar[int]
    AFTER_FIELD_NUMBER: _ClassVar[int]
    LINE_CUT_FIELD_NUMBER: _ClassVar[int]
    path: str
    line_number: int
    column: int
    line: str
    before: _containers.RepeatedScalarFieldContainer[str]
    after: _containers.RepeatedScalarFieldContainer[str]
    line_cut: bool
    def __init__(self, path: _Optional[str] = ..., line_number: _Optional[int] = ..., column: _Optional[int] = ..., line: _Optional[str] = ..., before: _Optional[_Iterable[str]] = ..., after: _Optional[_Iterable[str]] = ..., line_cut: _Optional[bool] = ...) -> None: ...

class SearchFile(_message.Message):
    __slots__ = ("path",)
    PATH_FIELD_NUMBER: _ClassVar[int]
    path: str
    def __init__(self, path: _Optional[str] = ...) -> None: ...

class SearchCount(_message.Message):
    __slots__ = ("path", "count")
    PATH_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    path: str
    count: int
    def __init__(self, path: _Optional[str] = ..., count: _Optional[int] = ...) -> None: ...

class SearchSummary(_message.Message):
    __slots__ = ("files_searched", "files_matched", "matches", "binary_skipped", "too_large_skipped", "bytes_searched", "truncated", "timed_out")
    FILES_SEARCHED_FIELD_NUMBER: _ClassVar[int]
    FILES_MATCHED_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    BINARY_SKIPPED_FIELD_NUMBER: _ClassVar[int]
    TOO_LARGE_SKIPPED_FIELD_NUMBER: _ClassVar[int]
    BYTES_SEARCHED_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    TIMED_OUT_FIELD_NUMBER: _ClassVar[int]
    files_searched: int
    files_matched: int
    matches: int
    binary_skipped: int
    too_large_skipped: int
    bytes_searched: int
    truncated: bool
    timed_out: bool
    def __init__(self, files_searched: _Optional[int] = ..., files_matched: _Optional[int] = ..., matches: _Optional[int] = ..., binary_skipped: _Optional[int] = ..., too_large_skipped: _Optional[int] = ..., bytes_searched: _Optional[int] = ..., truncated: _Optional[bool] = ..., timed_out: _Optional[bool] = ...) -> None: ...

class UploadRequest(_message.Message):
    __slots__ = ("header", "chunk")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    header: UploadHeader
    chunk: _common_pb2.DataChunk
    def __init__(self, header: _Optional[_Union[UploadHeader, _Mapping]] = ..., chunk: _Optional[_Union[_common_pb2.DataChunk, _Mapping]] = ...) -> None: ...

class UploadHeader(_message.Message):
    __slots__ = ("workspace", "path", "mode", "create_dirs", "if_version", "sha256")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    CREATE_DIRS_FIELD_NUMBER: _ClassVar[int]
    IF_VERSION_FIELD_NUMBER: _ClassVar[int]
    SHA256_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    path: str
    mode: WriteMode
    create_dirs: bool
    if_version: str
    sha256: str
    def __init__(self, workspace: _Optional[str] = ..., path: _Optional[str] = ..., mode: _Optional[_Union[WriteMode, str]] = ..., create_dirs: _Optional[bool] = ..., if_version: _Optional[str] = ..., sha256: _Optional[str] = ...) -> None: ...

class UploadResponse(_message.Message):
    __slots__ = ("path", "size", "created", "sha256", "version")
    PATH_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    SHA256_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    path: str
    size: int
    created: bool
    sha256: str
    version: str
    def __init__(self, path: _Optional[str] = ..., size: _Optional[int] = ..., created: _Optional[bool] = ..., sha256: _Optional[str] = ..., version: _Optional[str] = ...) -> None: ...

class DownloadRequest(_message.Message):
    __slots__ = ("workspace", "path", "at_snapshot")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    AT_SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    path: str
    at_snapshot: str
    def __init__(self, workspace: _Optional[str] = ..., path: _Optional[str] = ..., at_snapshot: _Optional[str] = ...) -> None: ...

class DownloadResponse(_message.Message):
    __slots__ = ("header", "chunk")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    header: DownloadHeader
    chunk: _common_pb2.DataChunk
    def __init__(self, header: _Optional[_Union[DownloadHeader, _Mapping]] = ..., chunk: _Optional[_Union[_common_pb2.DataChunk, _Mapping]] = ...) -> None: ...

class DownloadHeader(_message.Message):
    __slots__ = ("file", "size", "sha256")
    FILE_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    SHA256_FIELD_NUMBER: _ClassVar[int]
    file: _common_pb2.FileInfo
    size: int
    sha256: str
    def __init__(self, file: _Optional[_Union[_common_pb2.FileInfo, _Mapping]] = ..., size: _Optional[int] = ..., sha256: _Optional[str] = ...) -> None: ...

class ReadMediaRequest(_message.Message):
    __slots__ = ("workspace", "path", "start_page", "page_count", "max_bytes", "max_image_bytes", "max_image_side", "at_snapshot")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    START_PAGE_FIELD_NUMBER: _ClassVar[int]
    PAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    MAX_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_IMAGE_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_IMAGE_SIDE_FIELD_NUMBER: _ClassVar[int]
    AT_SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    path: str
    start_page: int
    page_count: int
    max_bytes: int
    max_image_bytes: int
    max_image_side: int
    at_snapshot: str
    def __init__(self, workspace: _Optional[str] = ..., path: _Optional[str] = ..., start_page: _Optional[int] = ..., page_count: _Optional[int] = ..., max_bytes: _Optional[int] = ..., max_image_bytes: _Optional[int] = ..., max_image_side: _Optional[int] = ..., at_snapshot: _Optional[str] = ...) -> None: ...

class ReadMediaResponse(_message.Message):
    __slots__ = ("header", "image_data", "page", "trailer")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    IMAGE_DATA_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    TRAILER_FIELD_NUMBER: _ClassVar[int]
    header: MediaHeader
    image_data: _common_pb2.DataChunk
    page: PdfPage
    trailer: MediaTrailer
    def __init__(self, header: _Optional[_Union[MediaHeader, _Mapping]] = ..., image_data: _Optional[_Union[_common_pb2.DataChunk, _Mapping]] = ..., page: _Optional[_Union[PdfPage, _Mapping]] = ..., trailer: _Optional[_Union[MediaTrailer, _Mapping]] = ...) -> None: ...

class MediaHeader(_message.Message):
    __slots__ = ("file", "media_type", "image", "page_count")
    FILE_FIELD_NUMBER: _ClassVar[int]
    MEDIA_TYPE_FIELD_NUMBER: _ClassVar[int]
    IMAGE_FIELD_NUMBER: _ClassVar[int]
    PAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    file: _common_pb2.FileInfo
    media_type: str
    image: ImageInfo
    page_count: int
    def __init__(self, file: _Optional[_Union[_common_pb2.FileInfo, _Mapping]] = ..., media_type: _Optional[str] = ..., image: _Optional[_Union[ImageInfo, _Mapping]] = ..., page_count: _Optional[int] = ...) -> None: ...

class ImageInfo(_message.Message):
    __slots__ = ("media_type", "size", "width", "height", "original_width", "original_height", "downscaled")
    MEDIA_TYPE_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    WIDTH_FIELD_NUMBER: _ClassVar[int]
    HEIGHT_FIELD_NUMBER: _ClassVar[int]
    ORIGINAL_WIDTH_FIELD_NUMBER: _ClassVar[int]
    ORIGINAL_HEIGHT_FIELD_NUMBER: _ClassVar[int]
    DOWNSCALED_FIELD_NUMBER: _ClassVar[int]
    media_type: str
    size: int
    width: int
    height: int
    original_width: int
    original_height: int
    downscaled: bool
    def __init__(self, media_type: _Optional[str] = ..., size: _Optional[int] = ..., width: _Optional[int] = ..., height: _Optional[int] = ..., original_width: _Optional[int] = ..., original_height: _Optional[int] = ..., downscaled: _Optional[bool] = ...) -> None: ...

class PdfPage(_message.Message):
    __slots__ = ("number", "text", "cut")
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    CUT_FIELD_NUMBER: _ClassVar[int]
    number: int
    text: str
    cut: bool
    def __init__(self, number: _Optional[int] = ..., text: _Optional[str] = ..., cut: _Optional[bool] = ...) -> None: ...

class MediaTrailer(_message.Message):
    __slots__ = ("pages_returned", "next_page", "truncated", "eof")
    PAGES_RETURNED_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    EOF_FIELD_NUMBER: _ClassVar[int]
    pages_returned: int
    next_page: int
    truncated: bool
    eof: bool
    def __init__(self, pages_returned: _Optional[int] = ..., next_page: _Optional[int] = ..., truncated: _Optional[bool] = ..., eof: _Optional[bool] = ...) -> None: ...
