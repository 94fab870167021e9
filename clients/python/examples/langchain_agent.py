"""A LangChain agent (``create_agent``) with filetools' tools on a workspace, run without a network.

    python examples/langchain_agent.py --address 127.0.0.1:7447 --workspace demo

In place of a real model, a scripted chat model answers from the conversation
it is given, as a model would: it searches a 30,000-line build log for the
failure, reads a window around it, takes the version of the config file, and
edits the config with that version. Meanwhile a teammate changes the config,
so the edit fails with CONTENT_CHANGED; the model takes the current version
from the message, reads the file again and retries, then finishes. Each tool
message is printed as the model got it; the last line is the model's final
answer.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Sequence
from typing import Any

from langchain.agents import create_agent
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult

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


class ScriptedModel(BaseChatModel):
    """A chat model whose every turn is ``turn(messages)``: what a real model would answer to the conversation so far."""

    turn: Callable[[Sequence[BaseMessage]], AIMessage]

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:  # type: ignore[override]
        return self  # the script knows the tools by name

    def _generate(
        self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self.turn(messages))])


def scripted_turn(client: filetools.Client, workspace: str) -> Callable[[Sequence[BaseMessage]], AIMessage]:
    """The model's turns: each reads the tool messages so far and asks for the next tool call."""

    def turn(messages: Sequence[BaseMessage]) -> AIMessage:
        results = [str(m.content) for m in messages if isinstance(m, ToolMessage)]

        def ask(name: str, args: dict[str, Any]) -> AIMessage:
            return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call-{len(results)}", "type": "tool_call"}])

        edit = {"path": CONFIG, "edits": [{"old_text": "retries = 0", "new_text": "retries = 3"}]}
        if len(results) == 0:
            return ask("search", {"pattern": "status=FAILED", "path": "/logs"})
        line = int(re.search(r"^\s*(\d+):step \d+ status=FAILED", results[0], re.M).group(1))  # type: ignore[union-attr]
        if len(results) == 1:
            return ask("read", {"path": LOG, "start_line": line - 2, "line_count": 5})
        if len(results) == 2:
            return ask("stat", {"path": CONFIG})
        if len(results) == 3:
            # Meanwhile, a teammate changes the config: the version the model takes from stat is stale now.
            client.edit(workspace, CONFIG, "timeout = 30", "timeout = 60")
            return ask("edit", {**edit, "if_version": re.search(r"version (\w+)", results[2]).group(1)})  # type: ignore[union-attr]
        if results[-1].startswith("Error (CONTENT_CHANGED)"):
            return ask("read", {"path": CONFIG})
        if len(results) == 5:
            current = re.search(r"retry with if_version (\w+)", results[3]).group(1)  # type: ignore[union-attr]
            return ask("edit", {**edit, "if_version": current})
        return AIMessage(content=f"Step {line} failed on an upload with no retries; {CONFIG} now allows 3.")

    return turn


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", default=None, help="HOST:PORT (default $FILETOOLS_ADDRESS or 127.0.0.1:7447)")
    parser.add_argument("--workspace", default="demo")
    args = parser.parse_args()

    with filetools.Client(args.address) as client:
        setup(client, args.workspace)
        agent = create_agent(ScriptedModel(turn=scripted_turn(client, args.workspace)), tools=filetools_tools(args.workspace, client=client))
        state = agent.invoke({"messages": [HumanMessage("The nightly build failed. Find out why and fix the config.")]})
        calls = {call["id"]: call for m in state["messages"] if isinstance(m, AIMessage) for call in m.tool_calls}
        for message in state["messages"]:
            if isinstance(message, ToolMessage):  # the dispatcher's text, status "error" on failure
                call = calls[message.tool_call_id]
                print(f"> {call['name']} {call['args']}\n[{message.status}] {message.content}", end="")
        print(f"final: {state['messages'][-1].content}")


if __name__ == "__main__":
    main()
