"""Drop-ins for crewai-tools' ``FileReadTool`` and ``FileWriterTool`` on a filetools workspace.

A crew switches with one import line::

    # from crewai_tools import FileReadTool, FileWriterTool
    from filetools.integrations.crewai import FileReadTool, FileWriterTool

The same class names, tool names, constructor arguments (``file_path``,
``base_dir``, ``encoding``) and call arguments (``file_path``, ``start_line``,
``line_count``; ``filename``, ``content``, ``directory``, ``overwrite``) as
crewai-tools 1.15, and the same kind of answers (a file's text; "Content
successfully written to …"; "Error: …"). The files are a daemon's workspace,
not the host's: paths are workspace paths ("/" is the workspace root),
``base_dir`` is a directory of the workspace (default "/") that runtime paths
must stay inside, and the daemon holds the workspace's line again for links.
The daemon is ``client`` (default: a ``Client`` on $FILETOOLS_ADDRESS) and the
workspace ``workspace`` (default: $FILETOOLS_WORKSPACE). A read returns at
most 100,000 bytes of text, with a note saying where to go on. Bad arguments
are answered in our words (``start_line must be an integer``), never pydantic's.
"""

from __future__ import annotations

import os
from typing import Any

from pydantic import BaseModel, Field, PrivateAttr

from filetools import errors
from filetools.client import Client
from filetools.models import WriteMode
from filetools.integrations.crewai import SENT, ArgumentsAsSentTool
from filetools.tools._arguments import Schema, parse

__all__ = ["FileReadTool", "FileReadToolSchema", "FileWriterTool", "FileWriterToolInput"]

#: The text a read returns at most (a model's context is the limit, not the file's size).
READ_MAX_BYTES = 100_000


class FileReadToolSchema(BaseModel):
    """Input for FileReadTool (crewai-tools' fields)."""

    file_path: str | None = Field(
        None,
        description="Workspace path of the file to read. Omit it to read the tool's default file, which only works when one was configured.",
    )
    start_line: int | None = Field(1, description="Line number to start reading from (1-indexed)")
    line_count: int | None = Field(None, description="Number of lines to read. If None, reads the entire file")


class FileWriterToolInput(BaseModel):
    """Input for FileWriterTool (crewai-tools' fields)."""

    filename: str = Field(..., description="Name of the file to write, relative to 'directory'. May include subdirectories, which are created if they do not exist.")
    content: str = Field(..., description="The text content to write to the file.")
    directory: str | None = Field("./", description="Directory to write the file into, inside the tool's allowed directory (its root by default). Created if it does not exist.")
    overwrite: str | bool = Field(
        False,
        description="Whether to replace the file when it already exists. Accepts true/false (also yes/no, on/off, 1/0). Defaults to false, which reports an error instead of replacing existing content.",
    )


# The arguments as JSON Schemas, checked by the dispatchers' validator: its words for what is wrong.
_READ_ARGS = Schema(
    {
        "type": "object",
        "properties": {"file_path": {"type": "string"}, "start_line": {"type": "integer"}, "line_count": {"type": "integer", "minimum": 0}},
        "additionalProperties": False,
    }
)
_WRITE_ARGS = Schema(
    {
        "type": "object",
        "properties": {
            "filename": {"type": "string"},
            "content": {"type": "string"},
            "directory": {"type": "string"},
            "overwrite": {"type": ["boolean", "string"]},
        },
        "required": ["filename", "content"],
        "additionalProperties": False,
    }
)
_TRUE, _FALSE = ("y", "yes", "t", "true", "on", "1"), ("n", "no", "f", "false", "off", "0")


def _arguments(schema: Schema, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any] | str:
    """The call's arguments (as a model sent them, or as run() got them) checked: a dict, or what is wrong."""
    sent: object = kwargs[SENT] if SENT in kwargs else args[0] if len(args) == 1 else kwargs
    parsed = parse(sent)
    if isinstance(parsed, str):
        return parsed
    return schema.accept({k: v for k, v in parsed.items() if v is not None})


def _inside(base: str, path: str) -> str | None:
    """The workspace path of ``path`` (relative ones from ``base``), or None when it leads out of ``base``."""
    if "\x00" in path:
        return None
    text = path.replace("\\", "/")
    parts: list[str] = []
    for part in (text if text.startswith("/") else f"{base}/{text}").split("/"):
        if part == "..":
            if not parts:
                return None
            parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    resolved = "/" + "/".join(parts)
    return resolved if resolved == base or resolved.startswith(base.rstrip("/") + "/") else None


def _workspace_of(workspace: str | None, tool: str) -> str:
    name = workspace or os.environ.get("FILETOOLS_WORKSPACE", "")
    if not name:
        raise ValueError(f"{tool} needs a workspace: pass workspace=... or set FILETOOLS_WORKSPACE")
    return name


def _daemon_encoding(encoding: str) -> str:
    return "" if encoding.lower().replace("_", "-") in ("utf-8", "utf8") else encoding


class FileReadTool(ArgumentsAsSentTool):
    """crewai-tools' FileReadTool on a filetools workspace: a file's text, or a window of its lines.

    ``file_path`` given here is the default file (read when the call omits
    ``file_path``, and always allowed); any other path must be inside
    ``base_dir`` (a workspace directory, default "/").
    """

    name: str = "Read a file's content"
    description: str = (
        "A tool that reads the content of a file. To use this tool, provide a 'file_path' parameter with the path to the file you want to read. "
        "Reads are confined to the tool's allowed directory; a path that resolves outside it is rejected. "
        "Optionally, provide 'start_line' to start reading from a specific line and 'line_count' to limit the number of lines read."
    )
    args_schema: type[BaseModel] = FileReadToolSchema
    file_path: str | None = None
    base_dir: str | None = None
    encoding: str = "utf-8"
    _client: Client = PrivateAttr()
    _workspace: str = PrivateAttr()
    _declared: str | None = PrivateAttr(default=None)

    def __init__(
        self,
        file_path: str | None = None,
        base_dir: str | None = None,
        encoding: str = "utf-8",
        *,
        client: Client | None = None,
        workspace: str | None = None,
        **kwargs: Any,
    ) -> None:
        base = _inside("/", base_dir or "/") or "/"
        declared = None if file_path is None else _inside("/", file_path if file_path.startswith("/") else f"{base}/{file_path}")
        if declared is not None:
            kwargs["description"] = (
                f"A tool that reads file content. The default file is {declared}, which is read when 'file_path' is omitted. "
                "You can also provide a different 'file_path' parameter to read another file, though reads are confined to the tool's allowed directory "
                "and a path that resolves outside it is rejected. Specify 'start_line' and 'line_count' to read specific parts of the file."
            )
        super().__init__(**kwargs)
        self.file_path, self.base_dir, self.encoding = file_path, base, encoding
        self._workspace = _workspace_of(workspace, "FileReadTool")
        self._client = client if client is not None else Client()
        self._declared = declared

    def _run(self, *args: Any, **kwargs: Any) -> str:
        given = _arguments(_READ_ARGS, args, kwargs)
        if isinstance(given, str):
            return f"Error: Invalid arguments: {given}."
        base = self.base_dir or "/"
        if given.get("file_path") is None:
            if self._declared is None:
                return "Error: No file path provided. Please provide a file path either in the constructor or as an argument."
            path = self._declared
        else:
            resolved = _inside(base, given["file_path"])
            if resolved is None and self._declared is not None and _inside("/", given["file_path"]) == self._declared:
                resolved = self._declared
            if resolved is None:
                return f"Error: Invalid file path: {given['file_path']} is outside {base}."
            path = resolved
        start_line = max(given.get("start_line") or 1, 1)
        line_count = given.get("line_count") or None
        try:
            window = self._client.read_text(
                self._workspace, path, start_line, line_count, max_bytes=READ_MAX_BYTES, encoding=_daemon_encoding(self.encoding)
            )
        except errors.NotFound as error:
            if isinstance(error, errors.WorkspaceNotFound):
                return f"Error: Failed to read file {path}. {error.message}."
            return f"Error: File not found at path: {path}"
        except errors.BinaryFile:
            return f"Error: Failed to decode file {path}: it is a binary file, not {self.encoding} text."
        except errors.FileToolsError as error:
            return f"Error: Failed to read file {path}. {error.message} ({error.reason or error.code.name})."
        if window.text == "" and start_line > 1:
            return f"Error: Start line {start_line} exceeds the number of lines in the file."
        if window.next_start_line is not None and (line_count is None or window.last_line < start_line + line_count - 1):
            # The cap stopped the window before what was asked for.
            return (
                f"{window.text}\n[{path} goes on: this is lines {window.first_line}-{window.last_line}, at most "
                f"{READ_MAX_BYTES:,} bytes of text a read; call again with start_line {window.next_start_line} for more.]"
            )
        return window.text


class FileWriterTool(ArgumentsAsSentTool):
    """crewai-tools' FileWriterTool on a filetools workspace: writes a text file atomically.

    Writes are confined to ``base_dir`` (a workspace directory, default "/");
    an existing file is replaced only with ``overwrite``.
    """

    name: str = "File Writer Tool"
    description: str = (
        "A tool to write content to a specified file. Accepts filename, content, and optionally a directory path and overwrite flag as input. "
        "Writes are confined to the tool's allowed directory; a filename or directory that resolves outside it is rejected."
    )
    args_schema: type[BaseModel] = FileWriterToolInput
    base_dir: str | None = None
    encoding: str = "utf-8"
    _client: Client = PrivateAttr()
    _workspace: str = PrivateAttr()

    def __init__(
        self,
        base_dir: str | None = None,
        encoding: str = "utf-8",
        *,
        client: Client | None = None,
        workspace: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.base_dir, self.encoding = _inside("/", base_dir or "/") or "/", encoding
        self._workspace = _workspace_of(workspace, "FileWriterTool")
        self._client = client if client is not None else Client()

    def _run(self, *args: Any, **kwargs: Any) -> str:
        given = _arguments(_WRITE_ARGS, args, kwargs)
        if isinstance(given, str):
            return f"Error: Invalid arguments: {given}."
        overwrite = given.get("overwrite", False)
        if isinstance(overwrite, str):
            if overwrite.lower() not in _TRUE + _FALSE:
                return f"Error: Invalid arguments: overwrite must be true or false (got {overwrite!r})."
            overwrite = overwrite.lower() in _TRUE
        base = self.base_dir or "/"
        directory = _inside(base, given.get("directory") or "./")
        if directory is None:
            return f"Error: Invalid directory: {given.get('directory')} is outside {base}."
        path = _inside(directory, given["filename"])
        if path is None or path == directory or given["filename"].replace("\\", "/").startswith("/"):
            return "Error: Invalid file path — the filename must not escape the target directory."
        mode: WriteMode = "create_or_replace" if overwrite else "create_only"
        try:
            self._client.write_text(self._workspace, path, given["content"], mode=mode, encoding=_daemon_encoding(self.encoding))
        except errors.AlreadyExists:
            return f"File {path} already exists and overwrite option was not passed."
        except errors.FileToolsError as error:
            return f"An error occurred while writing to the file: {path}: {error.message} ({error.reason or error.code.name})."
        return f"Content successfully written to {path}"
