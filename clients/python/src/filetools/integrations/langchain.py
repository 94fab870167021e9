"""The catalogue's tools as LangChain tools (``pip install filetools[langchain]``).

    from langchain.agents import create_agent
    from filetools.integrations.langchain import FiletoolsToolkit

    tools = FiletoolsToolkit(workspace="demo", client=client).get_tools()
    agent = create_agent(model, tools=tools)
    tools[0].invoke({"path": "/src/main.py", "line_count": 50})

Each tool's ``args_schema`` is the catalogue's JSON Schema itself (LangChain
takes a dict), so the schema a model is shown is written in one place. The
dispatcher checks the arguments against that schema and runs the call; the
tool returns its text unchanged (a read of an image: the text and the image as
standard content blocks), with the structured result as the ``ToolMessage``'s
artifact. A failed call (bad arguments, an unknown path, a
stale version) raises ``ToolException`` inside the tool, which LangChain turns
into a ``ToolMessage`` with status "error" and the dispatcher's text: nothing a
model sends makes ``invoke`` raise.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from langchain_core.tools import BaseTool, BaseToolkit, ToolException
from pydantic import ConfigDict, Field

from filetools.aio import AsyncClient
from filetools.client import Client
from filetools.tools import AsyncToolDispatcher, ToolDispatcher, ToolResult

__all__ = ["FiletoolsTool", "FiletoolsToolkit", "filetools_tools"]


class FiletoolsTool(BaseTool):
    """One tool of the catalogue on one workspace: ``invoke`` runs it on a ``Client``, ``ainvoke`` on an ``AsyncClient``.

    Made by ``filetools_tools`` (or ``FiletoolsToolkit``); one without an
    ``AsyncClient`` runs ``ainvoke`` on the blocking client in a thread.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    handle_tool_error: bool = True
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"
    dispatcher: ToolDispatcher | None = Field(default=None, exclude=True)
    async_dispatcher: AsyncToolDispatcher | None = Field(default=None, exclude=True)

    def _to_args_and_kwargs(self, tool_input: str | dict[str, Any], tool_call_id: str | None) -> tuple[tuple[str, ...], dict[str, Any]]:
        # The arguments go to the dispatcher as they came, in one parameter: it checks them against the
        # catalogue's schema and says what is wrong in the words every client uses. (LangChain's own
        # spreading would raise on a string input, or on an argument named like one of _run's parameters.)
        return (), {"arguments": tool_input}

    def _run(self, arguments: object = None, **_: Any) -> tuple[str | list[dict[str, Any]], dict[str, Any]]:
        if self.dispatcher is None:
            raise RuntimeError(f"the {self.name} tool was made with an AsyncClient only: call it with ainvoke")
        return _answer(self.dispatcher.call(self.name, arguments))

    async def _arun(self, arguments: object = None, **_: Any) -> tuple[str | list[dict[str, Any]], dict[str, Any]]:
        if self.async_dispatcher is not None:
            return _answer(await self.async_dispatcher.call(self.name, arguments))
        if self.dispatcher is None:  # pragma: no cover - filetools_tools makes every tool with one
            raise RuntimeError(f"the {self.name} tool has no client")
        return _answer(await asyncio.to_thread(self.dispatcher.call, self.name, arguments))


def _answer(result: ToolResult) -> tuple[str | list[dict[str, Any]], dict[str, Any]]:
    if result.is_error:
        raise ToolException(result.text)
    if result.images:
        # A read of an image: the text and the image as LangChain's standard content blocks (the model sees it).
        blocks: list[dict[str, Any]] = [{"type": "text", "text": result.text}]
        blocks += [{"type": "image", "base64": i["data"], "mime_type": i["mimeType"]} for i in result.images]
        return blocks, result.structured
    return result.text, result.structured


def filetools_tools(
    workspace: str,
    *,
    client: Client | None = None,
    async_client: AsyncClient | None = None,
    read_only: bool = False,
) -> list[FiletoolsTool]:
    """The catalogue's tools (with ``read_only``, only read, list, search and stat) on ``workspace``.

    Give a ``Client`` for ``invoke``, an ``AsyncClient`` for ``ainvoke``, or both.
    """
    dispatcher = None if client is None else ToolDispatcher(client, workspace, read_only=read_only)
    async_dispatcher = None if async_client is None else AsyncToolDispatcher(async_client, workspace, read_only=read_only)
    if dispatcher is not None:
        definitions = dispatcher.definitions()
    elif async_dispatcher is not None:
        definitions = async_dispatcher.definitions()
    else:
        raise ValueError("filetools_tools needs a client, an async_client or both")
    return [
        FiletoolsTool(
            name=d["name"],
            description=d["description"],
            args_schema=d["input_schema"],
            dispatcher=dispatcher,
            async_dispatcher=async_dispatcher,
        )
        for d in definitions
    ]


class FiletoolsToolkit(BaseToolkit):
    """The catalogue's tools on one workspace, as a LangChain toolkit: ``get_tools()``."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    workspace: str
    client: Client | None = None
    async_client: AsyncClient | None = None
    read_only: bool = False

    def get_tools(self) -> list[BaseTool]:
        return list(
            filetools_tools(self.workspace, client=self.client, async_client=self.async_client, read_only=self.read_only)
        )
