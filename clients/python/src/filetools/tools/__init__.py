"""The catalogue's tools for a model: definitions for OpenAI function calling and
Anthropic tool use, and ``call(name, arguments)`` -> the text a model reads
plus the structured result, the same text, byte for byte, as the TypeScript
and Go dispatchers write (catalogue/README.md specifies it).

    tools = ToolDispatcher(client, "my-workspace")
    result = tools.call("read", '{"path": "/src/main.py", "line_count": 50}')
    result.text, result.is_error, result.structured
"""

from filetools.tools._catalogue import CATALOGUE, CATALOGUE_FILE, ToolAnnotations, ToolDefinition
from filetools.tools._dispatcher import (
    DEFAULT_READ_LINES,
    READ_MAX_BYTES,
    AsyncToolDispatcher,
    ToolDispatcher,
    ToolResult,
)

__all__ = [
    "CATALOGUE",
    "CATALOGUE_FILE",
    "DEFAULT_READ_LINES",
    "READ_MAX_BYTES",
    "AsyncToolDispatcher",
    "ToolAnnotations",
    "ToolDefinition",
    "ToolDispatcher",
    "ToolResult",
]
