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
    assert result.stdout.startswith("tools: read, write, edit, apply_patch, delete, move, make_dir, list, search, stat, changes, list_snapshots, export_archive, import_archive\n")
    assert "Error (CONTENT_CHANGED): /app.py changed: its version is " in result.stdout
    assert result.stdout.endswith('> read {"path": "/app.py"}\n     1\tDEBUG = None\n')


def test_langchain_agent_reads_a_window_searches_and_recovers_from_a_stale_version(daemon: Daemon) -> None:
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "langchain_agent.py"), "--address", daemon.address, "--workspace", "agent"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    calls = [line.split(" ", 2)[1] for line in out.splitlines() if line.startswith("> ")]
    assert calls == ["search", "read", "stat", "edit", "read", "edit"]
    statuses = [line.split("]")[0] + "]" for line in out.splitlines() if line.startswith("[")]
    assert statuses == ["[success]", "[success]", "[success]", "[error]", "[success]", "[success]"]
    # What the model was given: the match, the window around it with the paging hint, the stale-version error.
    assert "[success] /logs/build.log\n21347:step 21347 status=FAILED (upload timed out after 0 retries)\n" in out
    assert " 21347\tstep 21347 status=FAILED" in out
    assert "… call read with start_line 21350 for more; 30,000 lines in all\n" in out
    with filetools.Client(daemon.address) as client:
        final_version = client.stat("agent", "/config.ini").version  # the retried edit's
        changed = [line for line in out.splitlines() if line.startswith("[error] Error (CONTENT_CHANGED): /config.ini changed")]
        assert len(changed) == 1
        retry = out.split("retry with if_version ", 1)[1].split(" ", 1)[0]
        assert f"'if_version': '{retry}'" in out.split("retry with if_version", 1)[1]
        assert f"Version {final_version}." in out
        assert client.read_text("agent", "/config.ini").text == "[upload]\ntimeout = 60\nretries = 3\n"
        assert client.read_text("agent", "/logs/build.log", 21347, 1).text.startswith("step 21347 status=FAILED")
    assert out.endswith("final: Step 21347 failed on an upload with no retries; /config.ini now allows 3.\n")
