"""filetools.integrations.deepagents against deepagents itself and a real daemon."""

from __future__ import annotations

import asyncio
import base64
import os
import re
import struct
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from deepagents import create_deep_agent
from deepagents.backends.protocol import BackendProtocol, ReadResult
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

import filetools
from filetools.integrations.deepagents import FiletoolsBackend

from conftest import Daemon

WORKSPACE = "deep"
PROTOCOL = ["ls", "read", "grep", "glob", "write", "edit", "delete", "upload_files", "download_files"]
BIG = "".join(f"step {n} ok\n" for n in range(1, 20001)).replace("step 14321 ok", "step 14321 FAILED")


@pytest.fixture
def client(daemon: Daemon) -> Iterator[filetools.Client]:
    with filetools.Client(daemon.address) as connected:
        connected.create_workspace(WORKSPACE)
        yield connected


@pytest.fixture
def backend(client: filetools.Client) -> FiletoolsBackend:
    return FiletoolsBackend(client, WORKSPACE)


def test_it_implements_every_call_of_the_protocol_and_its_async_twin() -> None:
    assert issubclass(FiletoolsBackend, BackendProtocol)
    for name in PROTOCOL:
        for method in (name, f"a{name}"):
            assert getattr(FiletoolsBackend, method) is not getattr(BackendProtocol, method), method


def test_read_returns_one_window_with_the_protocol_s_paging(client: filetools.Client, backend: FiletoolsBackend) -> None:
    client.write_text(WORKSPACE, "/big.log", BIG)
    window = backend.read("/big.log", offset=14319, limit=3)
    assert window.error is None and window.file_data is not None
    assert window.file_data == {"content": "step 14320 ok\nstep 14321 FAILED\nstep 14322 ok\n", "encoding": "utf-8"}
    assert (window.start_line, window.end_line, window.next_offset, window.total_lines) == (14320, 14322, 14322, 20000)
    last = backend.read("/big.log", offset=19998)
    assert (last.start_line, last.end_line, last.next_offset, last.total_lines) == (19999, 20000, None, 20000)
    # Degenerate windows, as the protocol asks: a negative offset reads from the start, no lines is no lines.
    first = backend.read("/big.log", offset=-5, limit=1)
    assert first.file_data is not None and first.file_data["content"] == "step 1 ok\n" and first.start_line == 1
    assert backend.read("/big.log", limit=0) == ReadResult(file_data={"content": "", "encoding": "utf-8"}, no_lines_requested=True)
    assert backend.read("/big.log", offset=20000).error == "Line offset 20000 exceeds file length (20000 lines)"
    client.write_text(WORKSPACE, "/empty.txt", "")
    assert backend.read("/empty.txt") == ReadResult(file_data={"content": "", "encoding": "utf-8"})


def _png(width: int, height: int, *, noise: bool = False) -> bytes:
    """An RGB PNG: grey, or noise (which compresses to about 3 bytes a pixel)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + (os.urandom(width * 3) if noise else b"\x80" * (width * 3)) for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def _png_size(data: bytes) -> tuple[int, int]:
    assert data.startswith(b"\x89PNG\r\n\x1a\n"), data[:8]
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def _decoded(result: ReadResult) -> bytes:
    assert result.error is None and result.file_data is not None, result.error
    assert result.file_data["encoding"] == "base64"
    return base64.standard_b64decode(result.file_data["content"])


def test_an_image_within_the_cap_is_read_whole_as_base64_as_deep_agents_backends_do(
    client: filetools.Client, backend: FiletoolsBackend
) -> None:
    png = _png(40, 30)
    client.write_bytes(WORKSPACE, "/shots/screen.png", png)
    assert _decoded(backend.read("/shots/screen.png")) == png
    assert backend.read("/shots/missing.png").error == (
        "/shots/missing.png does not exist (NOT_FOUND).\nCheck the path with ls or glob, or create the file with write_file.\n"
    )


def test_an_image_past_the_caps_comes_back_downscaled_and_another_binary_file_past_them_is_refused(
    client: filetools.Client, backend: FiletoolsBackend
) -> None:
    client.write_bytes(WORKSPACE, "/wide.png", _png(8000, 100))
    assert _png_size(_decoded(backend.read("/wide.png"))) == (2000, 25)  # the daemon's 2,000 pixels a side

    small = FiletoolsBackend(client, WORKSPACE, read_max_media_bytes=100_000)
    noise = _png(300, 300, noise=True)  # 270 KB: within 100,000 bytes only as a JPEG
    client.write_bytes(WORKSPACE, "/noise.png", noise)
    assert small.read("/noise.png").error == (
        f"/noise.png (300x300 pixels, {len(noise)} bytes) fits in 100000 bytes only as image/jpeg, "
        "but read_file shows it as image/png, by its name (NOT_MEDIA).\n"
    )
    client.write_bytes(WORKSPACE, "/fake.png", b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40)  # a PNG's signature, then no image
    assert str(small.read("/fake.png").error).startswith("/fake.png cannot be decoded as an image")

    pdf = b"%PDF-1.4\n" + bytes(100_000)
    client.write_bytes(WORKSPACE, "/docs/big.pdf", pdf)
    assert small.read("/docs/big.pdf").error == (
        "/docs/big.pdf is 100009 bytes; read_file shows a file of this type only up to 100000 bytes (QUOTA_EXCEEDED).\n"
        "If no quota is named above, a size limit was hit: make the request smaller (read_file with a smaller limit, edit_file instead of write_file).\n"
    )
    client.write_bytes(WORKSPACE, "/docs/small.pdf", pdf[:1000])
    assert _decoded(small.read("/docs/small.pdf")) == pdf[:1000]
    assert list(Path(tempfile.gettempdir()).glob("filetools-read-*")) == []  # the scratch copies are gone


def test_failures_are_results_in_the_dispatcher_s_words_never_exceptions(backend: FiletoolsBackend) -> None:
    escaped = backend.read("/../../etc/passwd")
    assert escaped.error is not None and "(PATH_ESCAPES_WORKSPACE)." in escaped.error
    assert "/etc" not in escaped.error.replace('"/../../etc/passwd"', "")
    missing = backend.read("/missing.txt")
    assert missing.error == "/missing.txt does not exist (NOT_FOUND).\nCheck the path with ls or glob, or create the file with write_file.\n"
    assert backend.write("../outside.txt", "x").error is not None
    assert backend.ls("/missing").error is not None
    assert backend.glob("*.py", "/missing").error is not None
    assert backend.grep("x", "/../..").error is not None
    assert backend.edit("/missing.txt", "a", "b").error is not None
    deleted = backend.delete("/missing.txt")
    assert deleted.path is None and deleted.error is not None and deleted.error.startswith("nothing exists at /missing.txt (NOT_FOUND).")


def test_an_unreachable_daemon_is_an_error_result() -> None:
    with filetools.Client("127.0.0.1:1") as nowhere:
        backend = FiletoolsBackend(nowhere, WORKSPACE)
        result = backend.read("/a.txt")
        assert result.error is not None and "(UNAVAILABLE)." in result.error, result.error
        assert backend.upload_files([("/a.txt", b"x")])[0].error is not None


def test_write_edit_grep_glob_ls_delete(client: filetools.Client, backend: FiletoolsBackend) -> None:
    assert backend.write("/src/app.py", "DEBUG = True\nname = 'x'\n").path == "/src/app.py"
    assert backend.write("/src/app.py", "DEBUG = True\nDEBUG_X = True\n").error is None  # overwrites
    assert backend.write("/README.md", "DEBUG notes\n").error is None
    edited = backend.edit("/src/app.py", "DEBUG = True", "DEBUG = False")
    assert (edited.error, edited.path, edited.occurrences) == (None, "/src/app.py", 1)
    assert backend.edit("/src/app.py", "True", "1").occurrences == 1  # the one "True" left
    assert client.read_text(WORKSPACE, "/src/app.py").text == "DEBUG = False\nDEBUG_X = 1\n"
    every = backend.edit("/src/app.py", "DEBUG", "TRACE", replace_all=True)
    assert every.occurrences == 2
    ambiguous = backend.edit("/src/app.py", "TRACE", "X")
    assert ambiguous.error == (
        "old_string occurs 2 times in /src/app.py; include more surrounding text to make it unique, or set replace_all (OLD_TEXT_NOT_UNIQUE).\n"
        "Make old_string unique by adding the lines around it, or set replace_all to change all 2.\n"
    )

    literal = backend.grep("TRACE_X = 1")
    assert literal.matches == [{"path": "/src/app.py", "line": 2, "text": "TRACE_X = 1"}] and not literal.truncated
    assert backend.grep(".*").matches == []  # literal, not a regex
    assert [m["path"] for m in backend.grep("notes", glob="*.md").matches or []] == ["/README.md"]
    assert backend.grep("notes", glob="*.py").matches == []
    exact = backend.grep("TRACE", max_count=2)
    assert len(exact.matches or []) == 2 and not exact.truncated
    cut = backend.grep("TRACE", max_count=1)
    assert len(cut.matches or []) == 1 and cut.truncated

    assert [m["path"] for m in backend.glob("*.py").matches or []] == ["/src/app.py"]
    assert [m["path"] for m in backend.glob("/*.md").matches or []] == ["/README.md"]
    assert backend.glob("/*.py").matches == []
    entries = backend.ls("/").entries or []
    assert [(e["path"], e["is_dir"]) for e in entries] == [("/README.md", False), ("/src", True)]
    assert all("modified_at" in e for e in entries)

    assert backend.delete("/src").path == "/src"
    assert [e["path"] for e in backend.ls("/").entries or []] == ["/README.md"]


def test_upload_and_download_report_per_file_with_the_protocol_s_codes(backend: FiletoolsBackend) -> None:
    uploaded = backend.upload_files([("/data/blob.bin", b"\x00\xffbytes"), ("/../escape.bin", b"x")])
    assert [(u.path, u.error) for u in uploaded] == [("/data/blob.bin", None), ("/../escape.bin", "permission_denied")]
    downloaded = backend.download_files(["/data/blob.bin", "/nope.bin", "/data"])
    assert [(d.path, d.content, d.error) for d in downloaded] == [
        ("/data/blob.bin", b"\x00\xffbytes", None),
        ("/nope.bin", None, "file_not_found"),
        ("/data", None, "is_directory"),
    ]


def test_the_async_twins_on_an_async_client(daemon: Daemon, client: filetools.Client) -> None:
    client.write_text(WORKSPACE, "/big.log", BIG)

    async def main() -> list[Any]:
        async with filetools.AsyncClient(daemon.address) as aclient:
            backend = FiletoolsBackend(client, WORKSPACE, async_client=aclient)
            return [
                await backend.aread("/big.log", 14320, 1),
                await backend.agrep("FAILED", max_count=5),
                await backend.aedit("/big.log", "step 14321 FAILED", "step 14321 retried"),
                await backend.awrite("/b.txt", "b\n"),
                await backend.aglob("*.txt"),
                await backend.als("/"),
                await backend.aupload_files([("/c.bin", b"c")]),
                await backend.adownload_files(["/c.bin"]),
                await backend.adelete("/b.txt"),
                await backend.aread("/../x"),
                await backend.aread("/c.png"),
            ]

    client.write_bytes(WORKSPACE, "/c.png", _png(3, 2))
    read, grep, edit, write, glob, ls, up, down, delete, escaped, image = asyncio.run(main())
    assert image.file_data == {"content": base64.standard_b64encode(_png(3, 2)).decode(), "encoding": "base64"}
    assert read.file_data["content"] == "step 14321 FAILED\n"
    assert grep.matches == [{"path": "/big.log", "line": 14321, "text": "step 14321 FAILED"}]
    assert edit.occurrences == 1 and write.path == "/b.txt"
    assert [m["path"] for m in glob.matches] == ["/b.txt"]
    assert sorted(e["path"] for e in ls.entries) == ["/b.txt", "/big.log", "/c.png"]  # before the upload
    assert up[0].error is None and down[0].content == b"c"
    assert delete.path == "/b.txt"
    assert "(PATH_ESCAPES_WORKSPACE)." in escaped.error
    assert client.read_text(WORKSPACE, "/big.log", 14321, 1).text == "step 14321 retried\n"


class ScriptedModel(GenericFakeChatModel):
    """A chat model that answers with its script; deep agents binds tools to it, which changes nothing."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:  # type: ignore[override]
        return self


def _ask(name: str, args: dict[str, Any], n: int) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call-{n}", "type": "tool_call"}])


def test_a_deep_agent_works_on_the_workspace_through_its_own_file_tools(client: filetools.Client, backend: FiletoolsBackend) -> None:
    client.write_text(WORKSPACE, "/big.log", BIG)
    script = [
        _ask("grep", {"pattern": "FAILED"}, 1),
        _ask("read_file", {"file_path": "/big.log", "offset": 14319, "limit": 3}, 2),
        _ask("edit_file", {"file_path": "/big.log", "old_string": "step 14321 FAILED", "new_string": "step 14321 retried"}, 3),
        _ask("write_file", {"file_path": "/notes.md", "content": "retried 14321\n"}, 4),
        _ask("ls", {"path": "/"}, 5),
        _ask("glob", {"pattern": "*.md"}, 6),
        _ask("read_file", {"file_path": "/nope.txt"}, 7),
        AIMessage(content="done"),
    ]
    agent = create_deep_agent(model=ScriptedModel(messages=iter(script)), backend=backend)
    out = agent.invoke({"messages": [HumanMessage("fix the failed step")]})
    replies = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
    assert len(replies) == 7
    assert replies["call-1"].content == "/big.log"
    assert "step 14320 ok\nstep 14321 FAILED\nstep 14322 ok" in replies["call-2"].content
    assert "14320" in replies["call-2"].content  # where the window starts
    assert "Successfully replaced 1 instance" in replies["call-3"].content
    assert replies["call-5"].content == "['/big.log', '/notes.md']"
    assert replies["call-6"].content == "['/notes.md']"
    assert replies["call-7"].content == (
        "Error: /nope.txt does not exist (NOT_FOUND).\nCheck the path with ls or glob, or create the file with write_file.\n"
    )
    assert out["messages"][-1].content == "done"
    assert client.read_text(WORKSPACE, "/big.log", 14321, 1).text == "step 14321 retried\n"
    assert client.read_text(WORKSPACE, "/notes.md").text == "retried 14321\n"


def test_a_deep_agent_reads_a_huge_image_downscaled_and_is_told_why_a_large_pdf_is_not_shown(client: filetools.Client) -> None:
    client.write_bytes(WORKSPACE, "/wide.png", _png(8000, 100))
    client.write_bytes(WORKSPACE, "/big.pdf", b"%PDF-1.4\n" + bytes(200_000))
    script = [
        _ask("read_file", {"file_path": "/wide.png"}, 1),
        _ask("read_file", {"file_path": "/big.pdf"}, 2),
        AIMessage(content="done"),
    ]
    backend = FiletoolsBackend(client, WORKSPACE, read_max_media_bytes=100_000)
    agent = create_deep_agent(model=ScriptedModel(messages=iter(script)), backend=backend)
    out = agent.invoke({"messages": [HumanMessage("look at the picture and the document")]})
    replies = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
    [image] = replies["call-1"].content_blocks
    assert image["type"] == "image" and image["mime_type"] == "image/png"  # type: ignore[typeddict-item]
    assert _png_size(base64.standard_b64decode(image["base64"])) == (2000, 25)  # type: ignore[typeddict-item]
    assert replies["call-2"].content.startswith(  # type: ignore[union-attr]
        "Error: /big.pdf is 200009 bytes; read_file shows a file of this type only up to 100000 bytes (QUOTA_EXCEEDED).\n"
    )


#: Words of the catalogue's own tools and of the daemon's API that deep agents' tools do not have.
FOREIGN = re.compile(
    r"\b(old_text|new_text|if_version|start_line|line_count|tail_lines|make_dir|edits)\b"
    r"|\b(with|set|use|call)\s+(list|write|edit|read|search|stat|overwrite|recursive)\b"
    r"|\bDownload\b|\bRead and Write\b"
)


def test_what_the_model_reads_names_only_deep_agents_tools_and_arguments(client: filetools.Client, backend: FiletoolsBackend) -> None:
    client.write_text(WORKSPACE, "/twice.txt", "x\nx\n")
    client.write_bytes(WORKSPACE, "/bytes.txt", b"\x00\x01\x02\x00\x00")
    client.make_dir(WORKSPACE, "/dir")
    script = [
        _ask("read_file", {"file_path": "/missing.txt"}, 1),
        _ask("edit_file", {"file_path": "/twice.txt", "old_string": "absent", "new_string": "y"}, 2),
        _ask("edit_file", {"file_path": "/twice.txt", "old_string": "x", "new_string": "y"}, 3),
        _ask("edit_file", {"file_path": "/twice.txt", "old_string": "x", "new_string": "x"}, 4),
        _ask("edit_file", {"file_path": "/missing.txt", "old_string": "a", "new_string": "b"}, 5),
        _ask("read_file", {"file_path": "/dir"}, 6),
        _ask("ls", {"path": "/missing"}, 7),
        _ask("write_file", {"file_path": "/../out.txt", "content": "x"}, 8),
        _ask("read_file", {"file_path": "/bytes.txt"}, 9),
        AIMessage(content="done"),
    ]
    agent = create_deep_agent(model=ScriptedModel(messages=iter(script)), backend=backend)
    out = agent.invoke({"messages": [HumanMessage("look around")]})
    replies = [m.content for m in out["messages"] if isinstance(m, ToolMessage)]
    assert len(replies) == 9
    for reply in replies:
        prose = re.sub(r'/[^\s:;,)"]*|"[^"\n]*"', " ", str(reply))  # paths and quoted file text are not words of the tool set
        assert FOREIGN.search(prose) is None, reply
        assert "Error: Error" not in reply and not str(reply).startswith("Error (")
    assert "old_string not found in /twice.txt" in replies[1]
