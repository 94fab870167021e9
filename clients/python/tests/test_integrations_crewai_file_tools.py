"""The drop-ins for crewai-tools' FileReadTool and FileWriterTool, on crewai itself and a real daemon.

A crew switches with one import line; the tools keep crewai-tools' names,
constructor and call arguments and kinds of answers, on a workspace's files.
They are driven as a crewAI agent drives a tool (its structured tool, which
hands over the arguments as the model sent them) and as code does (``run``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from crewai import Agent, Crew, Task
from crewai.llms.base_llm import BaseLLM
from crewai.tools import BaseTool

import filetools
from filetools.integrations.crewai import FileReadTool, FileWriterTool

from conftest import Daemon

WORKSPACE = "crew-drop-in"


@pytest.fixture
def client(daemon: Daemon) -> Iterator[filetools.Client]:
    with filetools.Client(daemon.address) as connected:
        if WORKSPACE not in [w.id for w in connected.list_workspaces()]:
            connected.create_workspace(WORKSPACE)
        yield connected


def test_the_names_and_arguments_are_crewai_tools_own(client: filetools.Client) -> None:
    read = FileReadTool(client=client, workspace=WORKSPACE)
    write = FileWriterTool(client=client, workspace=WORKSPACE)
    assert isinstance(read, BaseTool) and isinstance(write, BaseTool)
    assert (read.name, write.name) == ("Read a file's content", "File Writer Tool")
    assert list(read.args_schema.model_fields) == ["file_path", "start_line", "line_count"]
    assert list(write.args_schema.model_fields) == ["filename", "content", "directory", "overwrite"]
    # The constructor arguments crewai-tools takes.
    assert FileReadTool(file_path="notes.md", base_dir="docs", encoding="latin1", client=client, workspace=WORKSPACE).encoding == "latin1"
    assert FileWriterTool(base_dir="out", encoding="utf-8", client=client, workspace=WORKSPACE).base_dir == "/out"


def test_a_crew_writes_then_reads_through_an_agent_s_structured_tools(client: filetools.Client) -> None:
    write = FileWriterTool(client=client, workspace=WORKSPACE).to_structured_tool()
    read = FileReadTool(client=client, workspace=WORKSPACE).to_structured_tool()
    text = "".join(f"row {n}\n" for n in range(1, 101))
    assert write.invoke({"filename": "report.md", "content": text, "directory": "reports"}) == "Content successfully written to /reports/report.md"
    assert write.invoke({"filename": "report.md", "content": "x", "directory": "reports"}) == (
        "File /reports/report.md already exists and overwrite option was not passed."
    )
    assert write.invoke({"filename": "report.md", "content": text + "row 101\n", "directory": "/reports", "overwrite": "yes"}).startswith("Content successfully")
    assert read.invoke({"file_path": "/reports/report.md", "start_line": 100, "line_count": 2}) == "row 100\nrow 101\n"
    assert read.invoke({"file_path": "reports/report.md", "start_line": None, "line_count": None}) == text + "row 101\n"
    assert read.invoke({"file_path": "/reports/report.md", "start_line": 500}) == "Error: Start line 500 exceeds the number of lines in the file."
    assert client.read_text(WORKSPACE, "/reports/report.md").text == text + "row 101\n"


def test_bad_arguments_are_answered_in_our_words_not_pydantic_s(client: filetools.Client) -> None:
    read = FileReadTool(client=client, workspace=WORKSPACE).to_structured_tool()
    write = FileWriterTool(client=client, workspace=WORKSPACE).to_structured_tool()
    assert read.invoke({"file_path": "/a", "start_line": "ten"}) == "Error: Invalid arguments: start_line must be an integer."
    assert read.invoke({"file_path": 5}) == "Error: Invalid arguments: file_path must be a string."
    assert read.invoke({"file_path": "/a", "bogus": 1}) == "Error: Invalid arguments: unknown argument bogus."
    assert write.invoke({"content": "x"}) == "Error: Invalid arguments: missing required argument filename."
    assert write.invoke({"filename": "a", "content": "x", "overwrite": "perhaps"}) == (
        "Error: Invalid arguments: overwrite must be true or false (got 'perhaps')."
    )
    assert read.invoke("{not json") == "Error: Invalid arguments: the arguments are not valid JSON."


def test_paths_stay_inside_base_dir_and_the_workspace(client: filetools.Client) -> None:
    client.write_text(WORKSPACE, "/docs/inside.md", "inside\n")
    client.write_text(WORKSPACE, "/secret.md", "secret\n")
    read = FileReadTool(base_dir="docs", client=client, workspace=WORKSPACE)
    assert read.run(file_path="inside.md") == "inside\n"
    assert read.run(file_path="/docs/inside.md") == "inside\n"
    assert read.run(file_path="../secret.md") == "Error: Invalid file path: ../secret.md is outside /docs."
    assert read.run(file_path="/secret.md") == "Error: Invalid file path: /secret.md is outside /docs."
    # A default file named at construction is allowed even outside base_dir, by its path or by omitting file_path.
    pinned = FileReadTool(file_path="/secret.md", base_dir="docs", client=client, workspace=WORKSPACE)
    assert "The default file is /secret.md" in pinned.description
    assert (pinned.run(), pinned.run(file_path="/secret.md")) == ("secret\n", "secret\n")
    write = FileWriterTool(base_dir="out", client=client, workspace=WORKSPACE)
    assert write.run(filename="../escape.md", content="x") == "Error: Invalid file path — the filename must not escape the target directory."
    assert write.run(filename="a.md", content="x", directory="/elsewhere") == "Error: Invalid directory: /elsewhere is outside /out."
    assert write.run(filename="deep/a.md", content="x") == "Content successfully written to /out/deep/a.md"
    assert FileReadTool(client=client, workspace=WORKSPACE).run(file_path="../../etc/passwd") == "Error: Invalid file path: ../../etc/passwd is outside /."


def test_failures_are_error_texts_never_exceptions(client: filetools.Client) -> None:
    client.write_bytes(WORKSPACE, "/blob.bin", b"\x00\x01\x02\x00")
    read = FileReadTool(client=client, workspace=WORKSPACE)
    assert read.run(file_path="/missing.md") == "Error: File not found at path: /missing.md"
    assert read.run(file_path="/blob.bin") == "Error: Failed to decode file /blob.bin: it is a binary file, not utf-8 text."
    assert read.run() == "Error: No file path provided. Please provide a file path either in the constructor or as an argument."
    client.make_dir(WORKSPACE, "/dir.md")
    assert FileWriterTool(client=client, workspace=WORKSPACE).run(filename="dir.md", content="x", overwrite=True).startswith(
        "An error occurred while writing to the file: /dir.md: "
    )


def test_a_whole_read_is_capped_with_a_note_saying_where_to_go_on(client: filetools.Client) -> None:
    client.write_text(WORKSPACE, "/big.txt", "".join(f"{n:09d}\n" for n in range(1, 30001)))
    text = FileReadTool(client=client, workspace=WORKSPACE).run(file_path="/big.txt")
    assert text.startswith("000000001\n") and len(text.encode()) < 100_300
    assert text.endswith("\n[/big.txt goes on: this is lines 1-10000, at most 100,000 bytes of text a read; call again with start_line 10001 for more.]")


def test_the_daemon_and_workspace_come_from_the_environment(daemon: Daemon, client: filetools.Client, monkeypatch: pytest.MonkeyPatch) -> None:
    client.write_text(WORKSPACE, "/env.md", "from the environment\n")
    monkeypatch.setenv("FILETOOLS_ADDRESS", daemon.address)
    monkeypatch.setenv("FILETOOLS_WORKSPACE", WORKSPACE)
    assert FileReadTool().run(file_path="/env.md") == "from the environment\n"
    monkeypatch.delenv("FILETOOLS_WORKSPACE")
    with pytest.raises(ValueError, match="FileReadTool needs a workspace: pass workspace=... or set FILETOOLS_WORKSPACE"):
        FileReadTool()


class ScriptedLLM(BaseLLM):
    """A model that answers with the ReAct texts it was given, in order, and keeps what it was sent."""

    def __init__(self, replies: list[str]) -> None:
        super().__init__(model="scripted")
        self._replies = replies
        self.sent: list[Any] = []

    def call(self, messages: Any, *args: Any, **kwargs: Any) -> str:
        self.sent.append(messages)
        return self._replies.pop(0)

    def supports_function_calling(self) -> bool:
        return False

    def supports_stop_words(self) -> bool:
        return True

    def get_context_window_size(self) -> int:
        return 100_000


def test_a_crew_switched_by_its_import_line_writes_and_reads_the_workspace(client: filetools.Client, monkeypatch: pytest.MonkeyPatch) -> None:
    """A whole Crew (Agent, Task, kickoff) in ReAct mode with a scripted model: its observations are our tools' answers."""
    monkeypatch.setenv("CREWAI_DISABLE_TELEMETRY", "true")
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    llm = ScriptedLLM(
        [
            'Thought: write it\nAction: File Writer Tool\nAction Input: {"filename": "crew.md", "content": "hello crew\\n", "directory": "out"}',
            'Thought: read it\nAction: Read a file\'s content\nAction Input: {"file_path": "/out/crew.md", "start_line": "one"}',
            'Thought: read it\nAction: Read a file\'s content\nAction Input: {"file_path": "/out/crew.md"}',
            "Thought: I now know the final answer\nFinal Answer: hello crew",
        ]
    )
    tools = [FileReadTool(client=client, workspace=WORKSPACE), FileWriterTool(client=client, workspace=WORKSPACE)]
    agent = Agent(role="writer", goal="write a report", backstory="a careful writer", llm=llm, tools=tools)
    task = Task(description="Write crew.md into out, then read it back.", expected_output="its text", agent=agent)
    assert Crew(agents=[agent], tasks=[task]).kickoff().raw == "hello crew"
    seen = "\n".join(str(m.get("content")) for m in llm.sent[-1] if isinstance(m, dict))
    observations = [line for line in seen.splitlines() if line.startswith("Observation: ") and "result of the action" not in line]
    assert observations[:2] == [
        "Observation: Content successfully written to /out/crew.md",
        "Observation: Error: Invalid arguments: start_line must be an integer.",
    ]
    assert "Observation: hello crew" in seen
    assert client.read_text(WORKSPACE, "/out/crew.md").text == "hello crew\n"
