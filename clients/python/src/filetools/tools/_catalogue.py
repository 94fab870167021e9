"""The tool catalogue as this package ships it.

Its one source is catalogue/tools.json at the repository root; ``npm run
generate`` copies it to filetools/catalogue/tools.json, package data read
here through importlib.resources, so it is found in a wheel as in a clone.
Beside it, openai-strict.json: the argument schemas in OpenAI's strict mode,
derived by the same step (scripts/openai-strict.mjs).
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any, TypedDict


class ToolAnnotations(TypedDict):
    readOnlyHint: bool
    destructiveHint: bool
    idempotentHint: bool
    openWorldHint: bool


class _ToolErrorHints(TypedDict, total=False):
    #: This tool's own sentences for some error reasons, used instead of the shared ones (Catalogue.error_hints).
    error_hints: dict[str, list[str]]


class ToolDefinition(_ToolErrorHints):
    #: snake_case, e.g. "read", "make_dir".
    name: str
    title: str
    #: The RPC the tool calls, e.g. "filetools.v1.Files/Read".
    rpc: str
    #: Model-facing: what the tool does and how to use it well.
    description: str
    annotations: ToolAnnotations
    #: JSON Schema (draft 7) of the arguments.
    input_schema: dict[str, Any]


class _ToolSetErrorLine(TypedDict, total=False):
    #: An error's first line ({reason}, {message}), when not ``Error ({reason}): {message}.``.
    error_line: str


class ToolSet(_ToolSetErrorLine):
    """Another tool set over the same daemon, in its own words (catalogue/README.md, "Tool sets")."""

    #: Every tool and argument name it has: the only ones its texts may name.
    tools: list[str]
    arguments: list[str]
    #: Replacements, in order, of the daemon's words in its error messages.
    words: list[tuple[str, str]]
    #: Sentences that replace the shared ones for the reasons listed.
    error_hints: dict[str, list[str]]


class Catalogue(TypedDict):
    version: int
    tools: list[ToolDefinition]
    #: Sentences appended to an error's message, by reason; see catalogue/README.md.
    error_hints: dict[str, list[str]]
    #: The other tool sets, by name ("server-filesystem", "deepagents", "crewai"); "$comment" is a string.
    tool_sets: dict[str, ToolSet]
    #: What a call that never reached the daemon says, in every language: {"message": ...}.
    unreachable: dict[str, str]


CATALOGUE_FILE = resources.files("filetools") / "catalogue" / "tools.json"

CATALOGUE: Catalogue = json.loads(CATALOGUE_FILE.read_text(encoding="utf-8"))

#: Each tool's argument schema in OpenAI's strict mode: every property required, the optional ones nullable (None is "left out").
OPENAI_STRICT_SCHEMAS: dict[str, dict[str, Any]] = json.loads(
    (resources.files("filetools") / "catalogue" / "openai-strict.json").read_text(encoding="utf-8")
)
