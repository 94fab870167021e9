"""filetools.integrations.langchain against langchain-core itself and a real daemon."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

import filetools
from filetools.integrations.langchain import FiletoolsToolkit, filetools_tools
from filetools.tools import CATALOGUE, ToolDispatcher

from conftest import REPO_ROOT, Daemon

WORKSPACE = "lc"


@pytest.fixture
def client(daemon: Daemon) -> Iterator[filetools.Client]:
    with filetools.Client(daemon.address) as connected:
        connected.create_workspace(WORKSPACE)
        yield connected


def _by_name(tools: list[Any]) -> dict[str, BaseTool]:
    return {tool.name: tool for tool in tools}


def _call(name: str, args: dict[str, Any], call_id: str = "call-1") -> dict[str, Any]:
    return {"type": "tool_call", "id": call_id, "name": name, "args": args}


def test_the_tools_are_the_catalogue_s_with_its_schemas_as_a_model_is_shown_them(client: filetools.Client) -> None:
    tools = FiletoolsToolkit(workspace=WORKSPACE, client=client).get_tools()
    assert [t.name for t in tools] == [t["name"] for t in CATALOGUE["tools"]]
    for tool, definition in zip(tools, CATALOGUE["tools"]):
        assert isinstance(tool, BaseTool)
        assert tool.description == definition["description"]
        function = convert_to_openai_tool(tool)["function"]
        assert function["name"] == definition["name"]
        assert function["parameters"] == definition["input_schema"]

    read_only = filetools_tools(WORKSPACE, client=client, read_only=True)
    assert [t.name for t in read_only] == ["read", "list", "search", "stat", "changes", "list_snapshots"]


def test_invoke_returns_the_dispatcher_s_text_and_a_tool_call_carries_the_structured_result(client: filetools.Client) -> None:
    tools = _by_name(filetools_tools(WORKSPACE, client=client))
    dispatcher = ToolDispatcher(client, WORKSPACE)
    text = "".join(f"line {n}\n" for n in range(1, 501))
    written = tools["write"].invoke({"path": "/big.txt", "content": text})
    assert written.startswith("Wrote /big.txt (created)")

    args = {"path": "/big.txt", "start_line": 100, "line_count": 3}
    assert tools["read"].invoke(args) == dispatcher.call("read", args).text
    message = tools["read"].invoke(_call("read", args))
    assert isinstance(message, ToolMessage)
    assert message.status == "success"
    assert message.content == "   100\tline 100\n   101\tline 101\n   102\tline 102\n… call read with start_line 103 for more\n"
    assert message.artifact["first_line"] == 100 and message.artifact["next_start_line"] == 103
    # A strict-mode model sends null for each argument it leaves out.
    nulls = tools["read"].invoke(_call("read", {"path": "/big.txt", "start_line": None, "line_count": 1, "tail": None}))
    assert (nulls.status, nulls.content) == ("success", "     1\tline 1\n… call read with start_line 2 for more\n")

    found = tools["search"].invoke(_call("search", {"pattern": "^line 42$"}))
    assert found.status == "success"
    assert "/big.txt" in found.content and "42:line 42" in found.content
    assert found.artifact["matches"][0]["line_number"] == 42


@pytest.mark.parametrize(
    ("name", "args", "start"),
    [
        ("read", {"path": 5}, "Error (INVALID_ARGUMENT): invalid arguments for read: path must be a string."),
        ("read", {}, "Error (INVALID_ARGUMENT): invalid arguments for read: missing required argument path."),
        ("read", {"path": "/a", "run_manager": 1}, "Error (INVALID_ARGUMENT): invalid arguments for read: unknown argument run_manager"),
        ("read", {"path": "/a", "line_count": 10**12}, "Error (INVALID_ARGUMENT): invalid arguments for read: line_count must be at most 100000."),
        ("read", {"path": "../../etc/passwd"}, "Error (PATH_ESCAPES_WORKSPACE): "),
        ("read", {"path": "/missing.txt"}, "Error (NOT_FOUND): "),
        ("edit", {"path": "/a", "edits": "x"}, "Error (INVALID_ARGUMENT): invalid arguments for edit: edits must be an array."),
    ],
)
def test_bad_arguments_come_back_as_an_error_tool_message_never_an_exception(
    client: filetools.Client, name: str, args: dict[str, Any], start: str
) -> None:
    tool = _by_name(filetools_tools(WORKSPACE, client=client))[name]
    expected = ToolDispatcher(client, WORKSPACE).call(name, args)
    assert expected.is_error
    message = tool.invoke(_call(name, args))
    assert message.status == "error"
    assert message.content == expected.text
    assert message.content.startswith(start), message.content
    # Invoked with bare arguments, the text alone, as LangChain returns content.
    assert tool.invoke(args) == expected.text


def test_a_string_input_is_a_readable_error_too(client: filetools.Client) -> None:
    read = _by_name(filetools_tools(WORKSPACE, client=client))["read"]
    assert read.invoke("/a.txt") == (
        "Error (INVALID_ARGUMENT): invalid arguments for read: the arguments are not valid JSON.\n"
        "Fix the arguments and call the tool again.\n"
    )
    # JSON text, as OpenAI sends arguments, is read as the arguments.
    client.write_text(WORKSPACE, "/a.txt", "alpha\n")
    assert read.invoke('{"path": "/a.txt"}') == "     1\talpha\n"


def test_ainvoke_runs_on_the_async_client(daemon: Daemon, client: filetools.Client) -> None:
    client.write_text(WORKSPACE, "/a.txt", "one\ntwo\n")

    async def main() -> tuple[Any, Any, Any]:
        async with filetools.AsyncClient(daemon.address) as aclient:
            tools = _by_name(filetools_tools(WORKSPACE, async_client=aclient))
            read = await tools["read"].ainvoke(_call("read", {"path": "/a.txt", "tail": 1}))
            edit = await tools["edit"].ainvoke(
                _call("edit", {"path": "/a.txt", "edits": [{"old_text": "two", "new_text": "2"}], "if_version": "stale"})
            )
            bad = await tools["stat"].ainvoke(_call("stat", {"path": ["/"]}))
            return read, edit, bad

    read, edit, bad = asyncio.run(main())
    assert read.status == "success" and read.content == "     2\ttwo\n"
    assert edit.status == "error" and edit.content.startswith("Error (CONTENT_CHANGED): /a.txt changed")
    assert bad.status == "error" and bad.content.startswith("Error (INVALID_ARGUMENT): invalid arguments for stat: path must be a string.")
    assert client.read_text(WORKSPACE, "/a.txt").text == "one\ntwo\n"


def test_ainvoke_without_an_async_client_runs_the_blocking_one(client: filetools.Client) -> None:
    read = _by_name(filetools_tools(WORKSPACE, client=client))["read"]
    client.write_text(WORKSPACE, "/a.txt", "alpha\n")
    assert asyncio.run(read.ainvoke({"path": "/a.txt"})) == "     1\talpha\n"


def test_a_tool_set_needs_a_client() -> None:
    with pytest.raises(ValueError, match="needs a client"):
        filetools_tools(WORKSPACE)


def test_a_read_of_an_image_is_a_tool_message_of_standard_content_blocks_and_a_pdf_its_pages_text(client: filetools.Client) -> None:
    media = json.loads((REPO_ROOT / "catalogue" / "conformance.json").read_text(encoding="utf-8"))["media"]["files"]
    png, pdf = (base64.b64decode(media[name]["base64"]) for name in ("/img/dot.png", "/doc.pdf"))
    client.write_bytes(WORKSPACE, "/dot.png", png)
    client.write_bytes(WORKSPACE, "/doc.pdf", pdf)
    tools = _by_name(filetools_tools(WORKSPACE, client=client))
    message = tools["read"].invoke(_call("read", {"path": "/dot.png"}))
    assert message.status == "success"
    assert message.content == [
        {"type": "text", "text": "Image /dot.png (PNG, 4x3 pixels, 95 bytes).\n"},
        {"type": "image", "base64": base64.b64encode(png).decode(), "mime_type": "image/png"},
    ]
    assert message.artifact["image"] == {"media_type": "image/png", "size": 95, "width": 4, "height": 3, "original_width": 4, "original_height": 3, "downscaled": False}
    pages = tools["read"].invoke(_call("read", {"path": "/doc.pdf", "start_line": 3}))
    assert (pages.status, pages.content) == ("success", "--- page 3 of 3 ---\nPage three\n")
