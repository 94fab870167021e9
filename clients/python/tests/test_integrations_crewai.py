"""filetools.integrations.crewai against crewai itself and a real daemon.

The pluggable file store is a crewAI proposal not yet shipped in crewai-tools,
so the store's calls are tested here the way the proposal's FileReadTool and
FileWriterTool make them (``read_file_tool`` and ``write_file_tool`` below).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from crewai.tools import BaseTool
from pydantic import ValidationError

import filetools
from filetools.integrations.crewai import (
    FileStoreError,
    FiletoolsFileStore,
    filetools_crewai_tools,
    schema_model,
)
from filetools.tools import CATALOGUE, ToolDispatcher

from conftest import Daemon

WORKSPACE = "crew"
BIG = "".join(f"row {n}\n" for n in range(1, 30001))


@pytest.fixture
def client(daemon: Daemon) -> Iterator[filetools.Client]:
    with filetools.Client(daemon.address) as connected:
        connected.create_workspace(WORKSPACE)
        yield connected


def _tools(client: filetools.Client, **kwargs: Any) -> dict[str, Any]:
    return {t.name: t for t in filetools_crewai_tools(client, WORKSPACE, **kwargs)}


# --- the tools ------------------------------------------------------------------


def test_the_tools_are_read_write_edit_search_and_list_with_the_catalogue_s_descriptions(client: filetools.Client) -> None:
    tools = _tools(client)
    assert sorted(tools) == ["edit", "list", "read", "search", "write"]
    definitions = {t["name"]: t for t in CATALOGUE["tools"]}
    for name, tool in tools.items():
        assert isinstance(tool, BaseTool)
        assert definitions[name]["description"] in tool.description
    assert sorted(_tools(client, read_only=True)) == ["list", "read", "search"]


@pytest.mark.parametrize("definition", CATALOGUE["tools"], ids=lambda d: d["name"])
def test_each_argument_schema_is_the_catalogue_s(definition: dict[str, Any]) -> None:
    catalogue = definition["input_schema"]
    generated = schema_model("Arguments", catalogue).model_json_schema()
    assert generated.get("additionalProperties") is False
    assert set(generated["properties"]) == set(catalogue["properties"])
    assert set(generated.get("required", [])) == set(catalogue.get("required", []))
    for name, want in catalogue["properties"].items():
        got = generated["properties"][name]
        choices = [got] + got.get("anyOf", [])  # optional fields are "X or null"
        typed = next(c for c in choices if c.get("type") not in (None, "null") or "enum" in c or "$ref" in c)
        assert got.get("description") == want.get("description"), name
        if "enum" in want:
            assert typed["enum"] == want["enum"], name
        elif "$ref" not in typed:
            assert typed["type"] == want["type"], name
        for bound in ("minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems"):
            if bound in want:
                assert typed[bound] == want[bound], (name, bound)


def test_the_generated_models_accept_and_refuse_what_the_catalogue_does() -> None:
    edit = schema_model("EditArguments", next(t for t in CATALOGUE["tools"] if t["name"] == "edit")["input_schema"])
    edit.model_validate({"path": "/a", "edits": [{"old_text": "a", "new_text": "b", "replace_all": True}]})
    for bad in (
        {"path": "/a"},  # edits missing
        {"path": "/a", "edits": []},  # minItems 1
        {"path": "/a", "edits": [{"old_text": "", "new_text": "b"}]},  # minLength 1
        {"path": "/a", "edits": [{"old_text": "a", "new_text": "b", "other": 1}]},  # additionalProperties false
        {"path": "/a", "edits": [{"old_text": "a", "new_text": "b"}], "bogus": 1},
    ):
        with pytest.raises(ValidationError):
            edit.model_validate(bad)
    write = schema_model("WriteArguments", next(t for t in CATALOGUE["tools"] if t["name"] == "write")["input_schema"])
    with pytest.raises(ValidationError):
        write.model_validate({"path": "/a", "content": "x", "mode": "overwrite"})


def test_run_and_crewai_s_structured_tool_return_the_dispatcher_s_text(client: filetools.Client) -> None:
    tools = _tools(client)
    dispatcher = ToolDispatcher(client, WORKSPACE)
    assert tools["write"].run(path="/big.txt", content=BIG).startswith("Wrote /big.txt (created)")
    window = {"path": "/big.txt", "start_line": 20000, "line_count": 2}
    expected = dispatcher.call("read", window).text
    assert tools["read"].run(**window) == expected
    assert expected.startswith(" 20000\trow 20000\n 20001\trow 20001\n")
    # How a crewAI agent calls a tool: its structured tool, which checks the pydantic schema first.
    structured = tools["edit"].to_structured_tool()
    edited = structured.invoke({"path": "/big.txt", "edits": [{"old_text": "row 20001\n", "new_text": "row twenty thousand one\n"}]})
    assert edited.startswith("Edited /big.txt: 1 replacement.")
    assert tools["search"].to_structured_tool().invoke({"pattern": "twenty", "output_mode": "files_with_matches"}).startswith("/big.txt")
    assert "big.txt" in tools["list"].run()
    nulls = {"pattern": "twenty", "path": None, "include": None, "context": None, "output_mode": "files_with_matches", "max_results": None}
    assert tools["search"].to_structured_tool().invoke(nulls).startswith("/big.txt")
    assert asyncio.run(tools["read"].arun(path="/big.txt", start_line=3, line_count=1)) == "     3\trow 3\n… call read with start_line 4 for more; 30,000 lines in all\n"
    assert client.read_text(WORKSPACE, "/big.txt", 20001, 1).text == "row twenty thousand one\n"


def test_errors_name_only_the_crew_s_tools_and_arguments(client: filetools.Client) -> None:
    tools = _tools(client)
    client.write_bytes(WORKSPACE, "/bytes.dat", b"\x00\x01\x02\x00")
    client.write_text(WORKSPACE, "/taken.txt", "x\n")
    assert tools["write"].run(path="/taken.txt", content="y", mode="create_only") == (
        "Error (ALREADY_EXISTS): /taken.txt already exists.\nChoose another path, or replace it (write mode create_or_replace).\n"
    )
    assert tools["read"].run(path="/bytes.dat") == (
        "Error (BINARY_FILE): /bytes.dat is a binary file.\nThe file is binary; it cannot be read or edited as text.\n"
    )


def test_an_agent_s_structured_tool_answers_bad_arguments_in_our_words_not_pydantic_s(client: filetools.Client) -> None:
    read = _tools(client)["read"].to_structured_tool()
    assert read.invoke({"path": 5}) == (
        "Error (INVALID_ARGUMENT): invalid arguments for read: path must be a string.\nFix the arguments and call the tool again.\n"
    )
    assert read.invoke({"path": "/a", "start_line": "ten"}).startswith("Error (INVALID_ARGUMENT): invalid arguments for read: start_line must be an integer.")
    assert read.invoke("{not json").startswith("Error (INVALID_ARGUMENT): invalid arguments for read: the arguments are not valid JSON.")
    assert read.invoke({"path": "/missing.txt", "tail": None}).startswith("Error (NOT_FOUND): /missing.txt does not exist.")


@pytest.mark.parametrize(
    ("name", "kwargs", "start"),
    [
        ("read", {"path": 5}, "Error (INVALID_ARGUMENT): invalid arguments for read: path must be a string."),
        ("read", {}, "Error (INVALID_ARGUMENT): invalid arguments for read: missing required argument path."),
        ("read", {"path": "/a", "bogus": True}, "Error (INVALID_ARGUMENT): invalid arguments for read: unknown argument bogus."),
        ("read", {"path": "/a", "line_count": 10**15}, "Error (INVALID_ARGUMENT): invalid arguments for read: line_count must be at most 100000."),
        ("read", {"path": "../../etc/passwd"}, "Error (PATH_ESCAPES_WORKSPACE): "),
        ("edit", {"path": "/a", "edits": [{"old_text": "x"}]}, "Error (INVALID_ARGUMENT): invalid arguments for edit: "),
        ("write", {"path": "/a", "content": "x", "mode": "clobber"}, "Error (INVALID_ARGUMENT): invalid arguments for write: "),
    ],
)
def test_bad_arguments_are_a_readable_error_text_never_an_exception(
    client: filetools.Client, name: str, kwargs: dict[str, Any], start: str
) -> None:
    text = _tools(client)[name].run(**kwargs)
    assert text.startswith(start), text
    assert text == ToolDispatcher(client, WORKSPACE).call(name, kwargs).text


# --- the file store ----------------------------------------------------------------


def read_file_tool(store: FiletoolsFileStore, file_path: str, start_line: int = 1, line_count: int | None = None) -> str:
    """What the proposal's FileReadTool does with a store."""
    try:
        path = store.resolve(file_path)
        with store.open_text(path, "utf-8") as handle:
            return handle.read_lines(start_line, line_count)
    except FileNotFoundError:
        return f"Error: File not found at path: {store.display(file_path)}"
    except ValueError as error:
        return f"Error: {error}"
    except FileStoreError as error:
        return f"Error: {store.label}: {error}"


def write_file_tool(store: FiletoolsFileStore, filename: str, content: str, directory: str = "/", overwrite: bool = False) -> str:
    """What the proposal's FileWriterTool does with a store."""
    try:
        path = store.resolve_within(directory, filename)
        store.ensure_parent(path)
        if store.exists(path) and not overwrite:
            return f"File {store.display(path)} already exists and overwrite option was not passed."
        store.write_text(path, content)
        return f"Content successfully written to {store.display(path)}"
    except ValueError as error:
        return f"Error: {error}"
    except FileStoreError as error:
        return f"Error: {store.label}: {error}"


class RecordingClient:
    """A Client that records the windows read through it."""

    def __init__(self, client: filetools.Client) -> None:
        self._client = client
        self.reads: list[tuple[int, int | None]] = []

    def read_text(self, workspace: str, path: str, start_line: int = 1, line_count: int | None = None, **kwargs: Any) -> Any:
        self.reads.append((start_line, line_count))
        return self._client.read_text(workspace, path, start_line, line_count, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def test_normalize_and_display_are_pure_string_work_that_never_raises() -> None:
    with filetools.Client("127.0.0.1:1") as nowhere:  # any I/O would fail
        store = FiletoolsFileStore(nowhere, WORKSPACE)
        assert store.normalize("a//b/./c.txt") == "/a/b/c.txt"
        assert store.normalize("/a/b/../c") == "/a/c"
        assert store.normalize("../../etc/passwd") == "/etc/passwd"
        assert store.normalize("dir\\file.txt") == "/dir/file.txt"
        assert store.display("./notes.md") == "/notes.md"
        for odd in ("", "\x00", "..", "/" * 5000, None, 42):
            assert store.normalize(odd) == "/"  # type: ignore[arg-type]
            assert store.display(odd) == "/"  # type: ignore[arg-type]
        assert store.label == f"filetools workspace {WORKSPACE}"


def test_resolve_keeps_every_path_in_bounds_and_shows_no_host_path(daemon: Daemon, client: filetools.Client) -> None:
    store = FiletoolsFileStore(client, WORKSPACE)
    assert store.resolve("src/app.py") == "/src/app.py"
    assert store.resolve("/src/../app.py") == "/app.py"
    assert store.resolve_within("/out", "report.md") == "/out/report.md"
    assert store.resolve_within("out", "sub/report.md") == "/out/sub/report.md"
    for bad in ("../secret", "/../../etc/passwd", "a/../../b", "", "a\x00b"):
        with pytest.raises(ValueError) as raised:
            store.resolve(bad)
        assert str(daemon.data_dir) not in str(raised.value)
    for directory, filename in (("/out", "../x"), ("/out", "/etc/passwd"), ("/out", "a/../../x"), ("/out", ""), ("/out", ".")):
        with pytest.raises(ValueError) as raised:
            store.resolve_within(directory, filename)
        assert str(daemon.data_dir) not in str(raised.value)
    # A link that leads out is refused by the daemon, and is a ValueError too.
    (daemon.data_dir.parent / "host-secret.txt").write_text("secret\n")
    workspace_root = next(p for p in daemon.data_dir.rglob("*") if p.is_dir() and p.name == WORKSPACE)
    (workspace_root / "link.txt").symlink_to(daemon.data_dir.parent / "host-secret.txt")
    message = read_file_tool(store, "/link.txt")
    assert message == "Error: /link.txt is outside the workspace"
    assert str(daemon.data_dir) not in message


def test_a_window_of_a_huge_file_is_one_read_of_that_window(client: filetools.Client) -> None:
    client.write_text(WORKSPACE, "/big.txt", BIG)
    recording = RecordingClient(client)
    store = FiletoolsFileStore(recording, WORKSPACE)  # type: ignore[arg-type]
    handle = store.open_text("/big.txt", "utf-8")
    assert recording.reads == []  # lazy: opening fetches nothing
    assert handle.read_lines(25000, 3) == "row 25000\nrow 25001\nrow 25002\n"
    assert recording.reads == [(25000, 3)]
    assert read_file_tool(store, "big.txt", 29999, 5) == "row 29999\nrow 30000\n"
    assert recording.reads[-1] == (29999, 5)
    # Iterating pages through windows; taking a few lines fetches one.
    recording.reads.clear()
    assert list(itertools.islice(store.open_text("/big.txt"), 2)) == ["row 1\n", "row 2\n"]
    assert len(recording.reads) == 1
    recording.reads.clear()
    assert store.open_text("/big.txt").read() == BIG
    assert len(recording.reads) == 15  # 30,000 lines, 2,000 a window


def test_the_file_tools_calls_write_check_and_read_through_the_store(client: filetools.Client) -> None:
    store = FiletoolsFileStore(client, WORKSPACE)
    assert not store.exists("/reports/q1.md")
    assert write_file_tool(store, "q1.md", "# Q1\nup\n", directory="reports") == "Content successfully written to /reports/q1.md"
    assert store.exists("reports/q1.md")
    assert write_file_tool(store, "q1.md", "again\n", directory="/reports") == (
        "File /reports/q1.md already exists and overwrite option was not passed."
    )
    assert write_file_tool(store, "q1.md", "# Q1\ndown\n", directory="/reports", overwrite=True).startswith("Content successfully")
    assert read_file_tool(store, "/reports/q1.md") == "# Q1\ndown\n"
    assert read_file_tool(store, "/reports/q1.md", 2, 1) == "down\n"
    assert read_file_tool(store, "/reports/missing.md") == "Error: File not found at path: /reports/missing.md"
    assert read_file_tool(store, "../outside.md") == "Error: ../outside.md is outside the workspace"
    assert write_file_tool(store, "../../x.md", "x", directory="/reports") == "Error: ../../x.md is outside /reports"
    store.ensure_parent("/deep/er/file.txt")
    assert client.stat(WORKSPACE, "/deep/er").type == filetools.v1.common_pb2.FILE_TYPE_DIRECTORY  # type: ignore[attr-defined]
    version = store.write_text("/deep/er/file.txt", "v\n")
    assert version == client.stat(WORKSPACE, "/deep/er/file.txt").version
    with pytest.raises(IsADirectoryError):
        store.open_text("/deep").read()


def test_an_unreachable_daemon_is_a_file_store_error() -> None:
    with filetools.Client("127.0.0.1:1") as nowhere:
        store = FiletoolsFileStore(nowhere, WORKSPACE)
        for call in (
            lambda: store.exists("/a.txt"),
            lambda: store.write_text("/a.txt", "x"),
            lambda: store.ensure_parent("/d/a.txt"),
            lambda: store.open_text("/a.txt").read_lines(1, 10),
        ):
            with pytest.raises(FileStoreError, match="UNAVAILABLE"):
                call()
        assert read_file_tool(store, "/a.txt").startswith(f"Error: filetools workspace {WORKSPACE}: /a.txt: ")
