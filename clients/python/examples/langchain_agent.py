"""An agent loop with LangChain tools on a workspace, run without a network.

    python examples/langchain_agent.py --address 127.0.0.1:7447 --workspace demo

In place of a real model, LangChain's GenericFakeChatModel answers from a
script that reads the tool messages it was given, as a model would: it
searches a 30,000-line build log for the failure, reads a window around it,
takes the version of the config file, and edits the config with that version.
Meanwhile a teammate changes the config, so the edit fails with
CONTENT_CHANGED; the model takes the current version from the message, reads
the file again and retries, then finishes. Each tool message is printed as
the model got it; the last line is the model's final answer.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

import filetools
from filetools.integrations.langchain import filetools_tools

LOG = "/logs/build.log"
CONFIG = "/config.ini"
FAILED_AT = 21_347


def setup(client: filetools.Client, workspace: str) -> None:
    try:
        client.create_workspace(workspace)
    except filetools.AlreadyExists:
        pass
    lines = [f"step {n} status=ok\n" for n in range(1, 30_001)]
    lines[FAILED_AT - 1] = f"step {FAILED_AT} status=FAILED (upload timed out after 0 retries)\n"
    client.write_text(workspace, LOG, "".join(lines))
    client.write_text(workspace, CONFIG, "[upload]\ntimeout = 30\nretries = 0\n")


def scripted_model(messages: list[BaseMessage]) -> Iterator[AIMessage]:
    """The model's turns: each reads the conversation so far (``messages``) and asks for the next tool call."""

    def ask(name: str, args: dict[str, Any]) -> AIMessage:
        return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call-{len(messages)}", "type": "tool_call"}])

    def last_tool_text() -> str:
        message = messages[-1]
        assert isinstance(message, ToolMessage)
        return str(message.content)

    yield ask("search", {"pattern": "status=FAILED", "path": "/logs"})
    line = int(re.search(r"^\s*(\d+):step \d+ status=FAILED", last_tool_text(), re.M).group(1))  # type: ignore[union-attr]
    yield ask("read", {"path": LOG, "start_line": line - 2, "line_count": 5})
    yield ask("stat", {"path": CONFIG})
    version = re.search(r"version (\w+)", last_tool_text()).group(1)  # type: ignore[union-attr]
    edit = {"path": CONFIG, "edits": [{"old_text": "retries = 0", "new_text": "retries = 3"}]}
    yield ask("edit", {**edit, "if_version": version})
    failure = last_tool_text()
    if failure.startswith("Error (CONTENT_CHANGED)"):
        current = re.search(r"retry with if_version (\w+)", failure).group(1)  # type: ignore[union-attr]
        yield ask("read", {"path": CONFIG})
        yield ask("edit", {**edit, "if_version": current})
    yield AIMessage(content=f"Step {line} failed on an upload with no retries; {CONFIG} now allows 3.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", default=None, help="HOST:PORT (default $FILETOOLS_ADDRESS or 127.0.0.1:7447)")
    parser.add_argument("--workspace", default="demo")
    args = parser.parse_args()

    with filetools.Client(args.address) as client:
        setup(client, args.workspace)
        tools = {tool.name: tool for tool in filetools_tools(args.workspace, client=client)}
        messages: list[BaseMessage] = [HumanMessage("The nightly build failed. Find out why and fix the config.")]
        model = GenericFakeChatModel(messages=scripted_model(messages))

        while True:
            reply = model.invoke(messages)
            messages.append(reply)
            if not isinstance(reply, AIMessage) or not reply.tool_calls:
                break
            for call in reply.tool_calls:
                result = tools[call["name"]].invoke(call)  # a ToolMessage: the dispatcher's text, status "error" on failure
                messages.append(result)
                print(f"> {call['name']} {call['args']}\n[{result.status}] {result.content}", end="")
                if call["name"] == "stat":
                    # Meanwhile, a teammate changes the config: the version the model holds is stale now.
                    client.edit(args.workspace, CONFIG, "timeout = 30", "timeout = 60")
        print(f"final: {reply.content}")


if __name__ == "__main__":
    main()
