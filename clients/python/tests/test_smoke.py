"""Smoke tests of the generated Python code against a real filetoolsd."""

from __future__ import annotations

import hashlib

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from filetools.v1 import (
    common_pb2,
    files_pb2,
    files_pb2_grpc,
    workspaces_pb2,
    workspaces_pb2_grpc,
)

TIMEOUT = 30
CONTENT = "one\ntwo\nthree\nfour\n"


def test_write_then_stat_and_read_a_line_window(channel: grpc.Channel) -> None:
    workspaces = workspaces_pb2_grpc.WorkspacesStub(channel)
    files = files_pb2_grpc.FilesStub(channel)

    created = workspaces.CreateWorkspace(
        workspaces_pb2.CreateWorkspaceRequest(workspace="smoke-py"), timeout=TIMEOUT
    )
    assert created.workspace.id == "smoke-py"

    written = files.Write(
        files_pb2.WriteRequest(workspace="smoke-py", path="notes/hello.txt", content=CONTENT),
        timeout=TIMEOUT,
    )
    assert written.path == "/notes/hello.txt"
    assert written.size == len(CONTENT)
    assert written.created
    assert written.sha256 == hashlib.sha256(CONTENT.encode()).hexdigest()
    assert written.version

    stat = files.Stat(
        files_pb2.StatRequest(workspace="smoke-py", path="/notes/hello.txt", count_lines=True),
        timeout=TIMEOUT,
    )
    assert stat.file.path == "/notes/hello.txt"
    assert stat.file.name == "hello.txt"
    assert stat.file.type == common_pb2.FILE_TYPE_FILE
    assert stat.file.size == len(CONTENT)
    assert stat.file.HasField("line_count") and stat.file.line_count == 4
    assert stat.file.version == written.version

    messages = list(
        files.Read(
            files_pb2.ReadRequest(
                workspace="smoke-py", path="/notes/hello.txt", start_line=2, line_count=2
            ),
            timeout=TIMEOUT,
        )
    )
    kinds = [m.WhichOneof("event") for m in messages]
    assert kinds[0] == "header" and kinds[-1] == "trailer", kinds
    assert set(kinds[1:-1]) <= {"chunk"}, kinds
    header, trailer = messages[0].header, messages[-1].trailer
    chunks = [m.chunk for m in messages[1:-1]]
    assert header.file.path == "/notes/hello.txt"
    assert header.encoding == "utf-8"
    assert "".join(c.text for c in chunks) == "two\nthree\n"
    assert chunks[0].first_line == 2
    assert trailer.lines_returned == 2
    assert trailer.bytes_returned == len("two\nthree\n")
    assert trailer.next_line == 4
    assert not trailer.eof
    assert not trailer.truncated


def test_path_escaping_the_workspace_is_permission_denied(channel: grpc.Channel, daemon) -> None:
    workspaces = workspaces_pb2_grpc.WorkspacesStub(channel)
    files = files_pb2_grpc.FilesStub(channel)
    workspaces.CreateWorkspace(
        workspaces_pb2.CreateWorkspaceRequest(workspace="smoke-py"), timeout=TIMEOUT
    )

    try:
        files.Write(
            files_pb2.WriteRequest(workspace="smoke-py", path="../x", content="escape\n"),
            timeout=TIMEOUT,
        )
    except grpc.RpcError as err:
        error = err
    else:
        raise AssertionError("Write ../x succeeded; want PERMISSION_DENIED")

    assert error.code() == grpc.StatusCode.PERMISSION_DENIED, error
    status = rpc_status.from_call(error)
    assert status is not None, "no google.rpc.Status in the trailers"
    infos = []
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            infos.append(info)
    assert len(infos) == 1, status.details
    assert infos[0].reason == "PATH_ESCAPES_WORKSPACE"
    assert infos[0].domain == "filetools"
    assert str(daemon.data_dir) not in error.details()
