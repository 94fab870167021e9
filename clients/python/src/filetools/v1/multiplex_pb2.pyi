from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CallsRequest(_message.Message):
    __slots__ = ("id", "start", "cancel")
    ID_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    CANCEL_FIELD_NUMBER: _ClassVar[int]
    id: int
    start: CallStart
    cancel: CallCancel
    def __init__(self, id: _Optional[int] = ..., start: _Optional[_Union[CallStart, _Mapping]] = ..., cancel: _Optional[_Union[CallCancel, _Mapping]] = ...) -> None: ...

class CallStart(_message.Message):
    __slots__ = ("method", "request", "timeout_ms")
    METHOD_FIELD_NUMBER: _ClassVar[int]
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    method: str
    request: bytes
    timeout_ms: int
    def __init__(self, method: _Optional[str] = ..., request: _Optional[bytes] = ..., timeout_ms: _Optional[int] = ...) -> None: ...

class CallCancel(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CallsResponse(_message.Message):
    __slots__ = ("id", "message", "status")
    ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    id: int
    message: bytes
    status: bytes
    def __init__(self, id: _Optional[int] = ..., message: _Optional[bytes] = ..., status: _Optional[bytes] = ...) -> None: ...
