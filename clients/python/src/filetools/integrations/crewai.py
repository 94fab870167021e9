"""crewAI tools and a file store on a filetools workspace (``pip install filetools[crewai]``).

    from filetools.integrations.crewai import FiletoolsFileStore, filetools_crewai_tools

    agent = Agent(..., tools=filetools_crewai_tools(client, "demo"))

``filetools_crewai_tools`` gives read, write, edit, search and list as
``crewai.tools.BaseTool`` subclasses. Their pydantic argument schemas are made
from the catalogue's JSON Schemas (``schema_model``), so crewAI shows a model
the catalogue's fields, types, bounds and descriptions; the arguments are then
checked by the dispatcher against the catalogue itself, and the tool returns
the dispatcher's text, an error included (``Error (REASON): …`` with what to do
next): nothing a model sends makes ``run`` raise.

``FiletoolsFileStore`` implements the pluggable file store that crewAI
proposes for ``FileReadTool`` and ``FileWriterTool`` (registered with
``register_file_store_factory(lambda: store)``; not yet in a crewai-tools
release): path resolution with containment, a lazy text handle that reads one
window of a huge file at a time, writes, and ``FileStoreError`` for what a
local disk cannot fail with, such as an unreachable daemon.
"""

from __future__ import annotations

import asyncio
import posixpath
from collections.abc import Iterator, Sequence
from types import TracebackType
from typing import Any, Literal

from crewai.tools import BaseTool
from crewai.tools.structured_tool import CrewStructuredTool
from pydantic import BaseModel, ConfigDict, Field, create_model

from filetools import errors
from filetools.client import Client
from filetools.tools import ToolDispatcher

__all__ = [
    "ArgumentsAsSentTool",
    "CREWAI_TOOLS",
    "FileStoreError",
    "FiletoolsCrewTool",
    "FiletoolsFileStore",
    "FiletoolsTextHandle",
    "filetools_crewai_tools",
    "schema_model",
]

#: The catalogue's tools offered to a crew.
CREWAI_TOOLS = ("read", "write", "edit", "search", "list")


# --- pydantic models from the catalogue's JSON Schemas --------------------------


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def _field_type(name: str, schema: dict[str, Any]) -> Any:
    if "enum" in schema:
        return Literal[tuple(schema["enum"])]
    kind = schema.get("type")
    if kind == "string":
        return str
    if kind == "integer":
        return int
    if kind == "boolean":
        return bool
    if kind == "array":
        return list[_field_type(name, schema.get("items", {}))]  # type: ignore[misc]
    if kind == "object":
        return schema_model(_camel(name), schema)
    return Any


def _constraints(schema: dict[str, Any]) -> dict[str, Any]:
    bounds: dict[str, Any] = {}
    for json_name, pydantic_name in (("minimum", "ge"), ("maximum", "le")):
        if json_name in schema:
            bounds[pydantic_name] = schema[json_name]
    for json_name, pydantic_name in (("minLength", "min_length"), ("maxLength", "max_length")):
        if json_name in schema:
            bounds[pydantic_name] = schema[json_name]
    for json_name, pydantic_name in (("minItems", "min_length"), ("maxItems", "max_length")):
        if json_name in schema:
            bounds[pydantic_name] = schema[json_name]
    if "description" in schema:
        bounds["description"] = schema["description"]
    return bounds


def schema_model(name: str, schema: dict[str, Any]) -> type[BaseModel]:
    """A pydantic model of a catalogue JSON Schema (an object of strings, integers, booleans, enums, arrays and objects).

    Required properties are required fields; the others default to None.
    ``additionalProperties: false`` forbids other fields.
    """
    required = set(schema.get("required", []))
    fields: dict[str, Any] = {}
    for prop, prop_schema in schema.get("properties", {}).items():
        kind = _field_type(prop, prop_schema)
        if prop in required:
            fields[prop] = (kind, Field(..., **_constraints(prop_schema)))
        else:
            fields[prop] = (kind | None, Field(None, **_constraints(prop_schema)))
    extra: Literal["forbid", "allow"] = "forbid" if schema.get("additionalProperties") is False else "allow"
    model: type[BaseModel] = create_model(name, __config__=ConfigDict(extra=extra), **fields)
    return model


# --- the tools --------------------------------------------------------------------


#: The keyword under which a structured tool hands the arguments, as a model sent them, to FiletoolsCrewTool._run.
SENT = "__arguments_as_sent__"


class _ArgumentsAsSent(CrewStructuredTool):
    """crewAI's structured tool, with the arguments passed on unchecked (the dispatcher checks them, in its words)."""

    def _parse_args(self, raw_args: str | dict[str, Any]) -> dict[str, Any]:
        return {SENT: raw_args}


class ArgumentsAsSentTool(BaseTool):
    """A crewAI tool whose arguments reach ``_run`` as a model sent them (under ``SENT`` from an agent's
    structured tool), for the tool to check in our words rather than pydantic's."""

    def _validate_kwargs(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        # The dispatcher checks the arguments against the catalogue and says what is wrong in the words every
        # client uses; crewAI's own check would raise a ValueError out of run() instead.
        return kwargs

    def to_structured_tool(self) -> CrewStructuredTool:
        # What a crewAI agent calls. Its own check of the arguments (pydantic's, against args_schema) would answer
        # a model in pydantic's words before ours: the arguments go to the dispatcher as they were sent instead.
        structured = super().to_structured_tool()
        sent = _ArgumentsAsSent.model_construct(**{name: getattr(structured, name) for name in CrewStructuredTool.model_fields})
        sent._original_tool = self
        return sent


class FiletoolsCrewTool(ArgumentsAsSentTool):
    """One tool of the catalogue on one workspace, for a crewAI agent."""

    dispatcher: ToolDispatcher = Field(exclude=True)

    def _run(self, *args: Any, **kwargs: Any) -> str:
        if args:
            return self.dispatcher.call(self.name, args[0] if len(args) == 1 else list(args)).text
        if SENT in kwargs:
            return self.dispatcher.call(self.name, kwargs[SENT]).text
        # pydantic's model_dump writes None for every optional field left out: the dispatcher reads a None as left out.
        return self.dispatcher.call(self.name, kwargs).text

    async def _arun(self, *args: Any, **kwargs: Any) -> str:
        """``arun``: the blocking call in a thread (the tools hold a ``Client``)."""
        return await asyncio.to_thread(self._run, *args, **kwargs)


def filetools_crewai_tools(
    client: Client, workspace: str, *, read_only: bool = False, names: Sequence[str] = CREWAI_TOOLS
) -> list[FiletoolsCrewTool]:
    """crewAI tools for ``names`` (by default read, write, edit, search, list; with ``read_only``, only those that change nothing)."""
    dispatcher = ToolDispatcher(client, workspace, read_only=read_only, tool_set="crewai")
    return [
        FiletoolsCrewTool(
            name=d["name"],
            description=d["description"],
            args_schema=schema_model(f"{_camel(d['name'])}Arguments", d["input_schema"]),
            dispatcher=dispatcher,
        )
        for d in dispatcher.definitions()
        if d["name"] in names
    ]


# --- the file store -----------------------------------------------------------------


class FileStoreError(Exception):
    """A failure a local disk cannot have: the daemon unreachable, a deadline, a refused token.

    The message names the workspace path and the daemon's reason, never a host path.
    """


#: Lines a text handle fetches per Read window when it is iterated or read whole.
WINDOW_LINES = 2000


def _store_error(error: errors.FileToolsError, path: str) -> Exception:
    """The exception a local disk would raise for the same failure, so a file tool's own handlers apply."""
    text = f"{path}: {error.message}"
    if isinstance(error, errors.NotFound) and not isinstance(error, errors.WorkspaceNotFound):
        return FileNotFoundError(text)
    if isinstance(error, errors.IsADirectory):
        return IsADirectoryError(text)
    if isinstance(error, errors.NotADirectory):
        return NotADirectoryError(text)
    if isinstance(error, errors.AlreadyExists):
        return FileExistsError(text)
    if isinstance(error, errors.PathEscapesWorkspace):
        return ValueError(f"{path} is outside the workspace")
    if isinstance(error, errors.PermissionDenied):
        return PermissionError(text)
    return FileStoreError(f"{path}: {error.reason or error.code.name}: {error.message}")


class FiletoolsTextHandle:
    """A file's text, fetched lazily in Read windows: nothing is read until asked for.

    ``read_lines(start_line, line_count)`` is one window (one Read call);
    iterating yields lines window by window; ``read()`` pages through the whole
    file. Usable as a context manager, like an open file.
    """

    def __init__(self, client: Client, workspace: str, path: str, encoding: str) -> None:
        self._client = client
        self._workspace = workspace
        self.path = path
        self.encoding = encoding

    def _window(self, start_line: int, line_count: int | None) -> tuple[str, int | None]:
        try:
            window = self._client.read_text(
                self._workspace, self.path, start_line, line_count, encoding=_daemon_encoding(self.encoding)
            )
        except errors.FileToolsError as error:
            raise _store_error(error, self.path) from None
        return window.text, window.next_start_line

    def read_lines(self, start_line: int = 1, line_count: int | None = None) -> str:
        """Lines ``start_line`` (1-based) on, ``line_count`` of them (None: to the end), as text."""
        if line_count is None:
            return "".join(self.iter_lines(start_line))
        if line_count <= 0:
            return ""
        text, _ = self._window(max(start_line, 1), line_count)
        return text

    def iter_lines(self, start_line: int = 1) -> Iterator[str]:
        """The lines from ``start_line`` on, each with its line break, fetched WINDOW_LINES at a time."""
        next_line: int | None = max(start_line, 1)
        while next_line is not None:
            text, next_line = self._window(next_line, WINDOW_LINES)
            yield from text.splitlines(keepends=True)

    def read(self) -> str:
        return self.read_lines(1)

    def __iter__(self) -> Iterator[str]:
        return self.iter_lines(1)

    def close(self) -> None:
        """Nothing is held open between windows."""

    def __enter__(self) -> FiletoolsTextHandle:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def _daemon_encoding(encoding: str) -> str:
    """The daemon's name for an encoding ("" = its default, UTF-8)."""
    return "" if encoding.lower().replace("_", "-") in ("utf-8", "utf8") else encoding


class FiletoolsFileStore:
    """crewAI's proposed pluggable file store, on one workspace of a daemon.

    Paths are workspace paths ("/" is the workspace root; relative ones are
    taken from it). ``resolve`` and ``resolve_within`` keep every path inside
    the workspace lexically, and the daemon holds that line again for links.
    """

    def __init__(self, client: Client, workspace: str) -> None:
        self._client = client
        self._workspace = workspace

    @property
    def label(self) -> str:
        """Names the store in messages and logs."""
        return f"filetools workspace {self._workspace}"

    # Pure string work: no I/O, never raising (they run while a crew is being deserialized).

    def normalize(self, path: str) -> str:
        """``path`` as a workspace path: absolute, separators and "." collapsed, ".." taken lexically (never above "/")."""
        try:
            text = (path if isinstance(path, str) else "").replace("\\", "/").replace("\x00", "")
            return posixpath.normpath("/" + text.lstrip("/"))
        except Exception:  # noqa: BLE001 - never raising is the contract
            return "/"

    def display(self, path: str) -> str:
        """How ``path`` is shown in a message: its workspace path."""
        return self.normalize(path)

    # Containment.

    def resolve(self, path: str) -> str:
        """The workspace path of ``path``; ValueError when it is empty, has a NUL or leads above the workspace root."""
        if not isinstance(path, str) or not path.strip():
            raise ValueError("a path is required")
        if "\x00" in path:
            raise ValueError("a path may not contain a NUL character")
        depth = 0
        for part in path.replace("\\", "/").split("/"):
            if part == "..":
                depth -= 1
                if depth < 0:
                    raise ValueError(f"{path} is outside the workspace")
            elif part not in ("", "."):
                depth += 1
        return self.normalize(path)

    def resolve_within(self, directory: str, filename: str) -> str:
        """The workspace path of ``filename`` inside ``directory``; ValueError when it would land outside ``directory``."""
        base = self.resolve(directory or "/")
        if not isinstance(filename, str) or not filename.strip():
            raise ValueError("a file name is required")
        if filename.replace("\\", "/").startswith("/"):
            raise ValueError(f"{filename} must be a name relative to {self.display(directory or '/')}")
        outside = ValueError(f"{filename} is outside {self.display(directory or '/')}")
        try:
            joined = self.resolve(f"{base}/{filename}")
        except ValueError:
            raise outside from None
        if joined == base or not joined.startswith(base.rstrip("/") + "/"):
            raise outside
        return joined

    # I/O through the daemon.

    def exists(self, path: str) -> bool:
        resolved = self.resolve(path)
        try:
            self._client.stat(self._workspace, resolved)
        except errors.NotFound as error:
            if isinstance(error, errors.WorkspaceNotFound):
                raise _store_error(error, resolved) from None
            return False
        except errors.FileToolsError as error:
            raise _store_error(error, resolved) from None
        return True

    def ensure_parent(self, path: str) -> None:
        """Makes the directories above ``path`` (writes make them too; this is for a tool that asks first)."""
        parent = posixpath.dirname(self.resolve(path))
        if parent == "/":
            return
        try:
            self._client.make_dir(self._workspace, parent)
        except errors.FileToolsError as error:
            raise _store_error(error, parent) from None

    def open_text(self, path: str, encoding: str = "utf-8") -> FiletoolsTextHandle:
        """A lazy handle on the file's text: no call is made until it is read."""
        return FiletoolsTextHandle(self._client, self._workspace, self.resolve(path), encoding)

    def write_text(self, path: str, content: str, encoding: str = "utf-8") -> str:
        """Writes ``content`` atomically (making parent directories); returns the file's new version."""
        resolved = self.resolve(path)
        try:
            response = self._client.write_text(self._workspace, resolved, content, encoding=_daemon_encoding(encoding))
        except errors.FileToolsError as error:
            raise _store_error(error, resolved) from None
        return response.version



# The drop-ins for crewai-tools' FileReadTool and FileWriterTool (same names and arguments): a crew switches with
# `from filetools.integrations.crewai import FileReadTool, FileWriterTool`.
from filetools.integrations.crewai_file_tools import FileReadTool, FileWriterTool  # noqa: E402

__all__ += ["FileReadTool", "FileWriterTool"]
