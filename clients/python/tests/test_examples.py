"""The examples run against a real daemon, as a user would run them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import filetools

from conftest import Daemon

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_page_and_edit_pages_to_the_failing_line_and_fixes_it(daemon: Daemon) -> None:
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "page_and_edit.py"), "--address", daemon.address, "--workspace", "agent"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    pages = [line for line in result.stdout.splitlines() if line.startswith("read lines")]
    assert pages == [f"read lines {n}-{n + 1999}" for n in range(1, 12002, 2000)]
    assert "found at line 13579: step 13579 status=FAILED" in result.stdout
    assert "-step 13579 status=FAILED\n+step 13579 status=retried" in result.stdout

    with filetools.Client(daemon.address) as client:
        assert client.read_text("agent", "logs/build.log", 13579, 1).text == "step 13579 status=retried\n"
        assert not list(client.search("agent", "FAILED"))


def test_tool_calls_prints_what_a_model_reads_and_recovers_from_a_stale_version(daemon: Daemon) -> None:
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "tool_calls.py"), "--address", daemon.address, "--workspace", "agent"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("tools: read, write, edit, delete, move, make_dir, list, search, stat\n")
    assert "Error (CONTENT_CHANGED): /app.py changed: its version is " in result.stdout
    assert result.stdout.endswith('> read {"path": "/app.py"}\n     1\tDEBUG = None\n')
