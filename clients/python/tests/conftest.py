"""Fixtures that run a real filetoolsd for the tests.

The daemon is started as ``node <repo>/dist/server/main.js --listen
127.0.0.1:0 --data-dir <temp dir>`` (build it first with ``npm run build``).
Set FILETOOLSD to another command (split like a shell would) to run it in
place of ``node <repo>/dist/server/main.js``; the flags are appended to it.

``client`` runs each test body twice: with ``filetools.Client`` and with
``filetools.AsyncClient`` driven to completion on a private event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest

import filetools

REPO_ROOT = Path(__file__).resolve().parents[3]
LISTENING = re.compile(r"listening on (\S+):(\d+)")


@dataclass
class Daemon:
    address: str
    data_dir: Path
    process: subprocess.Popen[str]
    #: The daemon's stderr: one JSON log line per call, written when the call ends.
    stderr_path: Path

    def call_log(self, method: str, wait_seconds: float = 30) -> dict[str, Any]:
        """The log line of the first call of `method` ("Files/Search") to end, waiting for it to be written."""
        give_up = time.monotonic() + wait_seconds
        while True:
            for line in self.stderr_path.read_text().splitlines():
                with contextlib.suppress(ValueError):
                    entry = json.loads(line)
                    if entry.get("method") == f"filetools.v1.{method}":
                        return dict(entry)
            if time.monotonic() > give_up:
                pytest.fail(f"no log line for {method} within {wait_seconds} s:\n{self.stderr_path.read_text()}")
            time.sleep(0.05)


def _command() -> list[str]:
    override = os.environ.get("FILETOOLSD", "").strip()
    if override:
        return shlex.split(override)
    main_js = REPO_ROOT / "dist" / "server" / "main.js"
    if not main_js.exists():
        pytest.fail(f"{main_js} is missing: run `npm run build` first (or set FILETOOLSD)")
    return ["node", str(main_js)]


@contextlib.contextmanager
def start_daemon(directory: Path, *flags: str) -> Iterator[Daemon]:
    """A filetoolsd on a free loopback port with a fresh data directory under `directory`."""
    data_dir = directory / "data"
    data_dir.mkdir()
    cmd = [*_command(), "--listen", "127.0.0.1:0", "--data-dir", str(data_dir), *flags]
    stderr_path = directory / "filetoolsd.stderr"
    with open(stderr_path, "w") as stderr:
        proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=stderr, stdin=subprocess.DEVNULL, text=True
        )
    found: dict[str, str] = {}
    ready = threading.Event()

    def read_stdout() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:  # keep draining so the daemon never blocks
            match = LISTENING.search(line)
            if match and not found:
                found["address"] = f"{match.group(1)}:{match.group(2)}"
                ready.set()
        ready.set()

    reader = threading.Thread(target=read_stdout, daemon=True)
    reader.start()
    try:
        ready.wait(timeout=30)
        if "address" not in found:
            proc.poll()
            state = (
                f"exited with {proc.returncode}"
                if proc.returncode is not None
                else "printed no `listening on HOST:PORT` line within 30 s"
            )
            pytest.fail(f"filetoolsd {state}; stderr:\n{stderr_path.read_text()}")
        yield Daemon(address=found["address"], data_dir=data_dir, process=proc, stderr_path=stderr_path)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                pytest.fail("filetoolsd did not exit within 10 s of SIGTERM")
        reader.join(timeout=5)


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    with start_daemon(tmp_path) as running:
        yield running


@pytest.fixture
def channel(daemon: Daemon) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(daemon.address) as ch:
        grpc.channel_ready_future(ch).result(timeout=10)
        yield ch


class BlockingStream:
    """An AsyncStream iterated with a plain ``for``; leaving the loop closes it as ``async for`` would."""

    def __init__(self, loop: asyncio.AbstractEventLoop, stream: filetools.AsyncStream[Any, Any]) -> None:
        self._loop = loop
        self._stream = stream

    @property
    def summary(self) -> Any:
        return self._stream.summary

    def close(self) -> None:
        self._stream.close()

    def __iter__(self) -> Iterator[Any]:
        items = self._stream.__aiter__()
        try:
            while True:
                try:
                    yield self._loop.run_until_complete(items.__anext__())
                except StopAsyncIteration:
                    return
        finally:
            self._loop.run_until_complete(items.aclose())


class BlockingAsyncClient:
    """Calls an AsyncClient's methods to completion on a private event loop, so one test body checks both clients."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._loop = asyncio.new_event_loop()

        async def connect() -> filetools.AsyncClient:  # grpc.aio binds a channel to the running loop
            return filetools.AsyncClient(*args, **kwargs)

        self._client = self._loop.run_until_complete(connect())

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)

        async def invoke(*args: Any, **kwargs: Any) -> Any:
            result = method(*args, **kwargs)  # grpc.aio starts even a stream's call on the running loop
            return result if isinstance(result, filetools.AsyncStream) else await result

        def call(*args: Any, **kwargs: Any) -> Any:
            result = self._loop.run_until_complete(invoke(*args, **kwargs))
            return BlockingStream(self._loop, result) if isinstance(result, filetools.AsyncStream) else result

        return call

    def close(self) -> None:
        self._loop.run_until_complete(self._client.close())
        self._loop.close()

    def __enter__(self) -> BlockingAsyncClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: Makes the client of either kind, with Client's constructor arguments.
CLIENT_KINDS = {"sync": filetools.Client, "async": BlockingAsyncClient}


@pytest.fixture(params=sorted(CLIENT_KINDS))
def client_kind(request: pytest.FixtureRequest) -> Any:
    return CLIENT_KINDS[request.param]


@pytest.fixture
def client(daemon: Daemon, client_kind: Any) -> Iterator[Any]:
    with client_kind(daemon.address) as connected:
        yield connected
