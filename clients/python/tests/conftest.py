"""Fixtures that run a real filetoolsd for the tests.

The daemon is started as ``node <repo>/dist/server/main.js --listen
127.0.0.1:0 --data-dir <temp dir>`` (build it first with ``npm run build``).
Set FILETOOLSD to another command (split like a shell would) to run it in
place of ``node <repo>/dist/server/main.js``; the flags are appended to it.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import grpc
import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
LISTENING = re.compile(r"listening on (\S+):(\d+)")


@dataclass
class Daemon:
    address: str
    data_dir: Path
    process: subprocess.Popen[str]


def _command() -> list[str]:
    override = os.environ.get("FILETOOLSD", "").strip()
    if override:
        return shlex.split(override)
    main_js = REPO_ROOT / "dist" / "server" / "main.js"
    if not main_js.exists():
        pytest.fail(f"{main_js} is missing: run `npm run build` first (or set FILETOOLSD)")
    return ["node", str(main_js)]


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    """A filetoolsd on a free loopback port with a fresh data directory."""
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    cmd = [*_command(), "--listen", "127.0.0.1:0", "--data-dir", str(data_dir)]
    stderr_path = tmp_path / "filetoolsd.stderr"
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
        yield Daemon(address=found["address"], data_dir=data_dir, process=proc)
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
def channel(daemon: Daemon) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(daemon.address) as ch:
        grpc.channel_ready_future(ch).result(timeout=10)
        yield ch
