"""Trace context from the Python clients to the daemon's spans, and the version.

A real OTLP/HTTP receiver (test/support/otlp_receiver.py, decoding with the
OpenTelemetry protos) gets the daemon's spans (--otlp-endpoint); the test's
process has the OpenTelemetry SDK, so the client sends the active span's W3C
trace context and the daemon's span of each call must be that span's child.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

import filetools
from conftest import REPO_ROOT, start_daemon

# The caller's side, as an agent framework sets it up (the API's default propagator is W3C trace context).
trace.set_tracer_provider(TracerProvider())
tracer = trace.get_tracer("test_traces")


class Receiver:
    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(REPO_ROOT / "test" / "support" / "otlp_receiver.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        self.url = self.process.stdout.readline().split()[-1]
        self.spans: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.spans.append(json.loads(line))

    def wait_for(self, name: str, parent_span_id: str, seconds: float = 30) -> dict[str, Any]:
        give_up = time.monotonic() + seconds
        while time.monotonic() < give_up:
            for span in list(self.spans):
                if span.get("name") == name and span.get("parent_span_id") == parent_span_id:
                    return span
            time.sleep(0.05)
        pytest.fail(f"no span {name} under {parent_span_id}; got {[s.get('name') for s in self.spans]}")

    def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=10)


@pytest.fixture
def traced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Receiver, str]]:
    receiver = Receiver()
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "100")  # the daemon's batch delay (5 s by default)
    try:
        with start_daemon(tmp_path, "--otlp-endpoint", receiver.url) as daemon:
            yield receiver, daemon.address
    finally:
        receiver.stop()


def test_the_daemons_span_of_a_call_is_the_child_of_the_callers_span(
    traced: tuple[Receiver, str], client_kind: Any
) -> None:
    receiver, address = traced
    with client_kind(address) as client:
        client.create_workspace("t")
        with tracer.start_as_current_span("agent.write") as caller:
            client.write_text("t", "/a.txt", "hello\n")
            with pytest.raises(filetools.NotFound):
                client.stat("t", "/missing")
    context = caller.get_span_context()
    parent = format(context.span_id, "016x")
    write = receiver.wait_for("filetools.v1.Files/Write", parent)
    assert write["trace_id"] == format(context.trace_id, "032x")
    assert write["attributes"]["rpc.grpc.status_code"] == 0
    assert write["attributes"]["filetools.workspace"] == "t"
    stat = receiver.wait_for("filetools.v1.Files/Stat", parent)
    assert stat["attributes"]["rpc.grpc.status_code"] == 5
    assert stat["status_code"] == 2


def test_server_version_is_the_repositorys_and_the_clients(daemon: Any, client_kind: Any) -> None:
    version = json.loads((REPO_ROOT / "package.json").read_text())["version"]
    assert filetools.__version__ == version
    with client_kind(daemon.address) as client:
        answer = client.server_version()
    assert (answer.version, answer.api) == (version, "filetools.v1")
    assert answer.runtime.startswith("node v")
