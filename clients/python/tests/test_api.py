"""The shape of the public API: mirrored clients, every RPC reachable, one exception per error reason."""

from __future__ import annotations

import inspect
import socket
from pathlib import Path

import grpc
import pytest

import filetools
from filetools import _ops, _rpc, errors
from filetools.v1 import common_pb2, daemon_pb2, files_pb2, journal_pb2, workspaces_pb2


def _public_methods(cls: type) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(member)
        for name, member in inspect.getmembers(cls, inspect.isfunction)
        if not name.startswith("_") and name != "close"
    }


def test_client_and_async_client_mirror_each_other() -> None:
    sync, asynchronous = _public_methods(filetools.Client), _public_methods(filetools.AsyncClient)
    assert sorted(sync) == sorted(asynchronous)
    for name, signature in sync.items():
        assert list(signature.parameters.values()) == list(asynchronous[name].parameters.values()), name
        assert "timeout" in signature.parameters, f"{name} takes no timeout"
    assert inspect.signature(filetools.Client.__init__) == inspect.signature(filetools.AsyncClient.__init__)


def test_every_rpc_of_the_proto_has_a_typed_descriptor() -> None:
    declared = {
        f"/{service.full_name}/{method.name}"
        for module in (files_pb2, workspaces_pb2, daemon_pb2, journal_pb2)
        for service in module.DESCRIPTOR.services_by_name.values()
        for method in service.methods
    }
    described = {value.path for value in vars(_rpc).values() if isinstance(value, _rpc.Rpc)}
    assert described == declared


def test_every_error_reason_has_its_own_exception_class() -> None:
    for value in common_pb2.ErrorReason.values():
        if value == common_pb2.ERROR_REASON_UNSPECIFIED:
            continue
        reason = common_pb2.ErrorReason.Name(value).removeprefix("ERROR_REASON_")
        cls = errors.BY_REASON.get(reason)
        assert cls is not None, f"no exception class for {reason}"
        assert cls.reason_value == value and issubclass(cls, filetools.FileToolsError)
        assert getattr(filetools, cls.__name__) is cls


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (grpc.StatusCode.DEADLINE_EXCEEDED, errors.DeadlineExceeded),
        (grpc.StatusCode.CANCELLED, errors.Cancelled),
        (grpc.StatusCode.UNAVAILABLE, errors.Unavailable),
        (grpc.StatusCode.DATA_LOSS, errors.DataLoss),
        (grpc.StatusCode.UNKNOWN, errors.FileToolsError),
    ],
)
def test_a_status_without_error_info_maps_to_its_code_s_class(code: grpc.StatusCode, expected: type) -> None:
    error = errors.error_from_status(code, "message", ())
    assert type(error) is expected and error.reason == "" and error.code == code


def test_an_unreachable_daemon_is_unavailable() -> None:
    with socket.socket() as probe:  # a port that nothing listens on once the socket is closed
        probe.bind(("127.0.0.1", 0))
        address = "127.0.0.1:%d" % probe.getsockname()[1]
    with filetools.Client(address) as client, pytest.raises(errors.Unavailable) as unavailable:
        client.list_workspaces(timeout=10)
    assert unavailable.value.code == grpc.StatusCode.UNAVAILABLE


def test_bytes_that_do_not_match_the_header_leave_nothing_at_the_destination(tmp_path: Path) -> None:
    # The daemon never sends such a stream on purpose, so the responses are made here, from the real messages.
    op = _ops.export_snapshot("w", "", True, (), tmp_path / "out.tgz", None)
    folder = op.start()
    folder.add(workspaces_pb2.ExportSnapshotResponse(header=workspaces_pb2.ExportHeader(size=3, sha256="0" * 64)))
    folder.add(workspaces_pb2.ExportSnapshotResponse(chunk=common_pb2.DataChunk(data=b"abc")))
    with pytest.raises(errors.ChecksumMismatch) as mismatch:
        folder.finish()
    assert mismatch.value.code == grpc.StatusCode.DATA_LOSS
    assert list(tmp_path.iterdir()) == []
