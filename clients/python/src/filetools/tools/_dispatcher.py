"""The tools of the catalogue, callable by name, on a Client or an AsyncClient.

``ToolDispatcher`` and ``AsyncToolDispatcher`` differ only in how they run a
client call: what each tool asks of the client and how its answer becomes the
result (``_Call``) is written once, below, for both.
"""

from __future__ import annotations

import base64
import copy
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from filetools.aio import AsyncClient
from filetools.client import Client
from filetools.errors import FileToolsError
from filetools.models import MediaRead, Progress, TextWindow
from filetools.tools import _texts as texts
from filetools.tools._arguments import Args, Schema, parse, well_formed
from filetools.tools._catalogue import CATALOGUE, OPENAI_STRICT_SCHEMAS, ToolDefinition
from filetools.v1 import common_pb2 as c
from filetools.v1 import files_pb2 as f
from filetools.v1 import workspaces_pb2 as w

#: Lines a read returns unless told otherwise, and the text it may carry: a window a model can take in.
DEFAULT_READ_LINES = 2000
READ_MAX_BYTES = 100_000
#: Pages a read of a PDF returns unless told otherwise (line_count counts pages there).
DEFAULT_PDF_PAGES = 20
DEFAULT_LIST_ENTRIES = 1000
#: The most entries List gives at once: a workspace's files, when changes has no snapshot to compare with.
LIST_MAX_ENTRIES = 100_000


@dataclass(frozen=True)
class ToolResult:
    """What a tool call gives back."""

    #: What the model reads.
    text: str
    #: True when the call failed; ``text`` then says why and what to do next.
    is_error: bool
    #: The result as data (snake_case keys), for programs and MCP's structuredContent.
    structured: dict[str, Any]
    #: What the model sees besides the text: the image a read of an image returns, in MCP's image
    #: content shape ({"type": "image", "data": base64, "mimeType": ...}).
    images: tuple[dict[str, str], ...] = ()

    def anthropic_content(self) -> str | list[dict[str, Any]]:
        """The ``content`` of an Anthropic ``tool_result`` block: the text, or text and image blocks."""
        if not self.images:
            return self.text
        blocks: list[dict[str, Any]] = [{"type": "text", "text": self.text}]
        for i in self.images:
            blocks.append({"type": "image", "source": {"type": "base64", "media_type": i["mimeType"], "data": i["data"]}})
        return blocks

    def openai_output(self) -> str | list[dict[str, Any]]:
        """The ``output`` of an OpenAI Responses API ``function_call_output`` item: the text, or
        input_text and input_image parts (a data URL). Chat Completions' tool messages carry text only."""
        if not self.images:
            return self.text
        parts: list[dict[str, Any]] = [{"type": "input_text", "text": self.text}]
        for i in self.images:
            parts.append({"type": "input_image", "image_url": f"data:{i['mimeType']};base64,{i['data']}"})
        return parts


@dataclass(frozen=True)
class _Call:
    """A client call a tool makes: a method that Client and AsyncClient both have, by name, with its arguments."""

    method: str
    kwargs: dict[str, Any]
    #: The client's answer (for a stream: its items and its summary) -> the result, or the tool's next call.
    finish: Callable[[Any], ToolResult | _Call]
    stream: bool = False
    #: The method takes on_progress (it moves bytes).
    progress: bool = False
    #: A failure of the call -> the call to make (or the result to give) instead, or None to report the failure.
    recover: Callable[[FileToolsError], _Call | ToolResult | None] | None = None

    def arguments(self, on_progress: Progress | None) -> dict[str, Any]:
        """The method's keyword arguments, with ``on_progress`` where it takes one."""
        return {**self.kwargs, "on_progress": on_progress} if self.progress else self.kwargs


class _Tools:
    """What the two dispatchers share: the tools offered, their definitions, and turning a call into a ``_Call``."""

    def __init__(self, workspace: str, read_only: bool, tool_set: str | None) -> None:
        self._workspace = workspace
        self._tool_set = tool_set
        self._tools = [t for t in CATALOGUE["tools"] if not read_only or t["annotations"]["readOnlyHint"]]
        self._schemas = {t["name"]: Schema(t["input_schema"]) for t in self._tools}

    def definitions(self) -> list[ToolDefinition]:
        """The tools offered, as the catalogue defines them (copies: a caller may change them)."""
        return copy.deepcopy(self._tools)

    def openai_tools(self, *, strict: bool = False) -> list[dict[str, Any]]:
        """For OpenAI-style function calling (``tools`` of a chat completion request).

        With ``strict``, the definitions OpenAI's strict mode takes (``strict: true``, every
        argument required, the optional ones nullable): a model then sends null for each
        argument it leaves out, which ``call`` reads as left out.
        """
        if strict:
            return [
                {
                    "type": "function",
                    "function": {
                        "name": t["name"],
                        "description": t["description"],
                        "parameters": copy.deepcopy(OPENAI_STRICT_SCHEMAS[t["name"]]),
                        "strict": True,
                    },
                }
                for t in self._tools
            ]
        return [
            {"type": "function", "function": {"name": t["name"], "description": t["description"], "parameters": t["input_schema"]}}
            for t in self.definitions()
        ]

    def anthropic_tools(self) -> list[dict[str, Any]]:
        """For Anthropic tool use (``tools`` of a Messages request)."""
        return [
            {"name": t["name"], "description": t["description"], "input_schema": t["input_schema"]} for t in self.definitions()
        ]

    def _prepare(self, name: str, arguments: object) -> _Call | ToolResult:
        """The client call for ``name`` with ``arguments``, or the result that says why there is none."""
        schema = self._schemas.get(name)
        if schema is None:
            tools = ", ".join(t["name"] for t in self._tools)
            quoted = _json_string(name)
            return _failure("UNKNOWN_TOOL", f"there is no tool named {quoted}; the tools are {tools}")
        args = parse(arguments)
        if isinstance(args, str):
            return _failure("INVALID_ARGUMENT", f"invalid arguments for {name}: {args}")
        given = schema.accept(args)
        if isinstance(given, str):
            return _failure("INVALID_ARGUMENT", f"invalid arguments for {name}: {given}")
        return _CALLS[name](well_formed(given))


def patch_of_operations(operations: object) -> str | None:
    """The OpenAI Responses API's apply_patch operations as one patch in apply_patch's format; None when not well formed."""
    if not isinstance(operations, list) or not operations:
        return None
    sections: list[str] = []
    for op in operations:
        if not isinstance(op, dict) or not isinstance(op.get("path"), str):
            return None
        if op.get("type") == "delete_file":
            sections.append(f"*** Delete File: {op['path']}")
        elif op.get("type") in ("create_file", "update_file") and isinstance(op.get("diff"), str):
            sections.append(f"*** {'Add' if op['type'] == 'create_file' else 'Update'} File: {op['path']}")
            if op["diff"]:
                sections.append(op["diff"].removesuffix("\n"))
        else:
            return None
    return "*** Begin Patch\n" + "\n".join(sections) + "\n*** End Patch\n"


_BAD_OPERATIONS = "invalid apply_patch operations: each is {type: create_file or update_file, path, diff} or {type: delete_file, path}"


class ToolDispatcher(_Tools):
    """The catalogue's tools on one workspace of a ``filetools.Client``.

    ``read_only`` offers only the tools that change nothing (read, list, search, stat, changes, list_snapshots).
    ``tool_set`` names the catalogue's tool set (``tool_sets``) whose words the daemon's errors are told in,
    for an adapter that offers only some of the tools (crewAI's: "crewai").
    """

    def __init__(self, client: Client, workspace: str, *, read_only: bool = False, tool_set: str | None = None) -> None:
        super().__init__(workspace, read_only, tool_set)
        self._client = client

    def call(
        self, name: str, arguments: object = None, *, timeout: float | None = None, on_progress: Progress | None = None
    ) -> ToolResult:
        """Calls tool ``name`` with ``arguments`` (a mapping, or its JSON text as OpenAI sends it).

        Bad arguments, unknown tools and failed calls come back as results with
        ``is_error``; nothing a model sends raises. ``on_progress(bytes, total)``
        hears how the bytes of export_archive and import_archive move.
        """
        step = self._prepare(name, arguments)
        while isinstance(step, _Call):
            method = getattr(self._client, step.method)
            kwargs = step.arguments(on_progress)
            try:
                if step.stream:
                    stream = method(self._workspace, timeout=timeout, **kwargs)
                    answer = (list(stream), stream.summary)
                else:
                    answer = method(self._workspace, timeout=timeout, **kwargs)
            except (FileToolsError, ValueError) as error:
                instead = step.recover(error) if step.recover is not None and isinstance(error, FileToolsError) else None
                if instead is None:
                    return _failed(name, error, self._tool_set)
                if isinstance(instead, ToolResult):
                    return instead
                step = instead
                continue
            step = step.finish(answer)
        return step

    def apply_patch_operations(self, operations: object, *, timeout: float | None = None) -> ToolResult:
        """For the OpenAI Responses API's built-in apply_patch tool (``tools=[{"type": "apply_patch"}]``): the
        operations of a response's apply_patch_call items applied together, as one apply_patch (all or nothing).
        The text is the apply_patch_call_output's output; ``is_error`` means its status "failed"."""
        patch = patch_of_operations(operations)
        if patch is None:
            return _failure("INVALID_ARGUMENT", _BAD_OPERATIONS)
        return self.call("apply_patch", {"patch": patch}, timeout=timeout)


class AsyncToolDispatcher(_Tools):
    """``ToolDispatcher`` on a ``filetools.AsyncClient``: ``await tools.call(name, arguments)``.

    Cancelling the task that awaits a call cancels the call, and raises as usual.
    """

    def __init__(self, client: AsyncClient, workspace: str, *, read_only: bool = False, tool_set: str | None = None) -> None:
        super().__init__(workspace, read_only, tool_set)
        self._client = client

    async def call(
        self, name: str, arguments: object = None, *, timeout: float | None = None, on_progress: Progress | None = None
    ) -> ToolResult:
        """See ``ToolDispatcher.call``."""
        step = self._prepare(name, arguments)
        while isinstance(step, _Call):
            method = getattr(self._client, step.method)
            kwargs = step.arguments(on_progress)
            try:
                if step.stream:
                    stream = method(self._workspace, timeout=timeout, **kwargs)
                    answer = ([item async for item in stream], stream.summary)
                else:
                    answer = await method(self._workspace, timeout=timeout, **kwargs)
            except (FileToolsError, ValueError) as error:
                instead = step.recover(error) if step.recover is not None and isinstance(error, FileToolsError) else None
                if instead is None:
                    return _failed(name, error, self._tool_set)
                if isinstance(instead, ToolResult):
                    return instead
                step = instead
                continue
            step = step.finish(answer)
        return step

    async def apply_patch_operations(self, operations: object, *, timeout: float | None = None) -> ToolResult:
        """See ``ToolDispatcher.apply_patch_operations``."""
        patch = patch_of_operations(operations)
        if patch is None:
            return _failure("INVALID_ARGUMENT", _BAD_OPERATIONS)
        return await self.call("apply_patch", {"patch": patch}, timeout=timeout)


def _json_string(text: str) -> str:
    """``text`` as JSON.stringify writes it: non-ASCII as it is, a lone surrogate escaped."""
    return re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m.group()):04x}", json.dumps(text, ensure_ascii=False))


def _ok(text: str, structured: dict[str, Any]) -> ToolResult:
    return ToolResult(text, False, structured)


def _failure(reason: str, message: str) -> ToolResult:
    """A failure of the dispatcher's own (no daemon call was made): the same text shape as a daemon error."""
    return ToolResult(texts.error_text(reason, message, {}), True, {"error": {"reason": reason, "message": message}})


def _failed(name: str, error: FileToolsError | ValueError, tool_set: str | None) -> ToolResult:
    if isinstance(error, ValueError):
        # The one value the schema leaves unbounded and protobuf refuses: an int64 out of range (start_line).
        return _failure("INVALID_ARGUMENT", f"invalid arguments for {name}: {error}")
    reason = error.reason or error.code.name
    details = {"reason": reason, "code": error.code.name, "message": error.message, "metadata": error.metadata}
    return ToolResult(texts.error(error, name, tool_set), True, {"error": details})


def _int(args: Args, name: str) -> int | None:
    """An integer argument (JSON may write 2 as 2.0, which the schema lets through as an integer)."""
    value = args.get(name)
    return None if value is None else int(value)


# --- each tool: its client call, and its answer as a result --------------------


def _read(args: Args) -> _Call:
    tail = _int(args, "tail")
    if tail is None:
        window: dict[str, Any] = {
            "start_line": _int(args, "start_line") or 1,
            "line_count": _int(args, "line_count") or DEFAULT_READ_LINES,
        }
    else:
        window = {"tail": tail}

    def finish(w: TextWindow) -> ToolResult:
        return _ok(
            texts.read(w, READ_MAX_BYTES),
            {
                "path": w.path,
                "first_line": w.first_line,
                "last_line": w.last_line,
                "total_lines": w.total_lines,
                "next_start_line": w.next_start_line,
                "eof": w.eof,
                "version": w.version,
                "text": w.text,
            },
        )

    def media(error: FileToolsError) -> _Call | ToolResult | None:
        # An image or a PDF: the daemon's Read names its media type, and ReadMedia reads it.
        media_type = error.metadata.get("media_type", "")
        if error.reason != "BINARY_FILE" or not media_type:
            return None
        if tail is not None:
            return _failure("INVALID_ARGUMENT", texts.media_tail_refused(args["path"], media_type))
        return _read_media(args)

    request = {"path": args["path"], **window, "max_bytes": READ_MAX_BYTES, "at_snapshot": args.get("at_snapshot") or ""}
    return _Call("read_text", request, finish, recover=media)


def _read_media(args: Args) -> _Call:
    """read of an image (the image, and a line about it) or of a PDF (a window of its pages as text;
    start_line and line_count count pages)."""
    start_page = _int(args, "start_line") or 1

    def finish(m: MediaRead) -> ToolResult:
        common = {"path": m.path, "version": m.version, "media_type": m.media_type}
        if m.image is not None:
            i = m.image
            shown = {
                "media_type": i.media_type,
                "size": len(i.data),
                "width": i.width,
                "height": i.height,
                "original_width": i.original_width,
                "original_height": i.original_height,
                "downscaled": i.downscaled,
            }
            structured = {**common, "first_line": 0, "last_line": 0, "total_lines": None, "next_start_line": None, "eof": True}
            image = {"type": "image", "data": base64.b64encode(i.data).decode("ascii"), "mimeType": i.media_type}
            return ToolResult(texts.image(m.path, m.media_type, m.size, i), False, {**structured, "image": shown}, (image,))
        return _ok(
            texts.pdf(m.pages, m.page_count, m.next_page, READ_MAX_BYTES),
            {
                **common,
                "first_line": m.pages[0].number if m.pages else start_page,
                "last_line": m.pages[-1].number if m.pages else start_page - 1,
                "total_lines": m.page_count,
                "next_start_line": m.next_page,
                "eof": m.eof,
                "text": "".join(p.text for p in m.pages),
            },
        )

    kwargs = {
        "path": args["path"],
        "start_page": start_page,
        "page_count": _int(args, "line_count") or DEFAULT_PDF_PAGES,
        "max_bytes": READ_MAX_BYTES,
        "at_snapshot": args.get("at_snapshot") or "",
    }
    return _Call("read_media", kwargs, finish)


def _write(args: Args) -> _Call:
    mode = args.get("mode", "create_or_replace")

    def finish(r: f.WriteResponse) -> ToolResult:
        appended = mode == "append" and not r.created
        return _ok(
            texts.write(r.path, r.size, r.created, appended, r.version),
            {"path": r.path, "size": r.size, "created": r.created, "version": r.version, "sha256": r.sha256},
        )

    kwargs = {"path": args["path"], "text": args["content"], "mode": mode, "if_version": args.get("if_version")}
    return _Call("write_text", kwargs, finish)


def _edit(args: Args) -> _Call:
    edits = [
        f.TextEdit(old_text=e["old_text"], new_text=e["new_text"], replace_all=e.get("replace_all", False))
        for e in args["edits"]
    ]
    dry_run = args.get("dry_run", False)

    def finish(r: f.EditResponse) -> ToolResult:
        return _ok(
            texts.edit(r.path, r.replacements, r.diff, r.diff_truncated, dry_run, r.version),
            {
                "path": r.path,
                "replacements": r.replacements,
                "diff": r.diff,
                "diff_truncated": r.diff_truncated,
                "dry_run": dry_run,
                "version": r.version,
            },
        )

    kwargs = {"path": args["path"], "edits": edits, "dry_run": dry_run, "if_version": args.get("if_version")}
    return _Call("edit_many", kwargs, finish)


_PATCH_ACTIONS = {f.PATCH_ACTION_ADDED: "added", f.PATCH_ACTION_UPDATED: "updated", f.PATCH_ACTION_DELETED: "deleted", f.PATCH_ACTION_MOVED: "moved"}


def _apply_patch(args: Args) -> _Call:
    dry_run = args.get("dry_run", False)

    def finish(r: f.ApplyPatchResponse) -> ToolResult:
        files = [(p.path, _PATCH_ACTIONS.get(p.action, "updated"), p.moved_from, p.version) for p in r.files]
        return _ok(
            texts.patch([(path, action, source) for path, action, source, _ in files], dry_run),
            {
                "files": [{"path": path, "action": action, "moved_from": source, "version": version} for path, action, source, version in files],
                "dry_run": dry_run,
            },
        )

    return _Call("apply_patch", {"patch": args["patch"], "dry_run": dry_run}, finish)


def _delete(args: Args) -> _Call:
    def finish(r: f.DeleteResponse) -> ToolResult:
        return _ok(texts.delete(r.path, r.existed), {"path": r.path, "existed": r.existed})

    kwargs = {"path": args["path"], "recursive": args.get("recursive", False), "if_version": args.get("if_version")}
    return _Call("delete", kwargs, finish)


def _move(args: Args) -> _Call:
    def finish(r: f.MoveResponse) -> ToolResult:
        version = r.file.version if r.HasField("file") else ""
        return _ok(texts.move(r.source, r.destination), {"source": r.source, "destination": r.destination, "version": version})

    kwargs = {
        "source": args["source"],
        "destination": args["destination"],
        "overwrite": args.get("overwrite", False),
        "if_version": args.get("if_version"),
    }
    return _Call("move", kwargs, finish)


def _make_dir(args: Args) -> _Call:
    def finish(r: f.MakeDirResponse) -> ToolResult:
        return _ok(texts.make_dir(r.path, r.created), {"path": r.path, "created": r.created})

    return _Call("make_dir", {"path": args["path"]}, finish)


#: FileType -> the structured result's name for it.
_FILE_TYPES = {c.FILE_TYPE_FILE: "file", c.FILE_TYPE_DIRECTORY: "directory", c.FILE_TYPE_SYMLINK: "symlink"}


def _list(args: Args) -> _Call:
    def finish(answer: tuple[list[c.FileInfo], f.ListSummary | None]) -> ToolResult:
        entries, summary = answer
        truncated = summary.truncated if summary else False
        return _ok(
            texts.listing(entries, truncated),
            {
                "entries": [
                    {"path": e.path, "type": _FILE_TYPES.get(e.type, "other"), "size": e.size, "version": e.version}
                    for e in entries
                ],
                "truncated": truncated,
            },
        )

    kwargs = {
        "path": args.get("path", "/"),
        "pattern": args.get("pattern", ""),
        "recursive": args.get("recursive", False),
        "max_depth": _int(args, "max_depth"),
        "include_hidden": args.get("include_hidden", True),
        "at_snapshot": args.get("at_snapshot") or "",
        "respect_gitignore": args.get("respect_gitignore", True),
        "max_entries": _int(args, "max_entries") or DEFAULT_LIST_ENTRIES,
    }
    return _Call("list_dir", kwargs, finish, stream=True)


def _summary_fields(summary: f.SearchSummary | None) -> dict[str, Any]:
    return {
        "files_searched": summary.files_searched if summary else 0,
        "files_matched": summary.files_matched if summary else 0,
        "truncated": summary.truncated if summary else False,
        "timed_out": summary.timed_out if summary else False,
    }


def _search(args: Args) -> _Call:
    context = _int(args, "context") or 0
    mode = args.get("output_mode", "content")
    # The first page soonest unless the model asks for a stable one (catalogue: search's "order").
    order = args.get("order", "found")

    def files(answer: tuple[list[f.SearchFile], f.SearchSummary | None]) -> ToolResult:
        hits, summary = answer
        paths = [hit.path for hit in hits]
        return _ok(texts.search_files(paths, summary, order), {"files": paths, **_summary_fields(summary)})

    def counts(answer: tuple[list[f.SearchCount], f.SearchSummary | None]) -> ToolResult:
        hits, summary = answer
        structured = [{"path": hit.path, "count": hit.count} for hit in hits]
        return _ok(texts.search_counts(hits, summary, order), {"counts": structured, **_summary_fields(summary)})

    def matches(answer: tuple[list[f.SearchMatch], f.SearchSummary | None]) -> ToolResult:
        hits, summary = answer
        structured = [
            {"path": h.path, "line_number": h.line_number, "line": h.line, "before": list(h.before), "after": list(h.after)}
            for h in hits
        ]
        return _ok(texts.search_matches(hits, summary, context > 0, order), {"matches": structured, **_summary_fields(summary)})

    finish = {"files_with_matches": files, "count": counts}.get(mode, matches)
    kwargs = {
        "pattern": args["pattern"],
        "path": args.get("path", "/"),
        "fixed_strings": args.get("fixed_strings", False),
        "case_insensitive": args.get("case_insensitive", False),
        "include": args.get("include", []),
        "exclude": args.get("exclude", []),
        "context_before": context,
        "context_after": context,
        "max_results": _int(args, "max_results"),
        "output_mode": mode,
        "order": order,
    }
    return _Call("search", kwargs, finish, stream=True)


def _stat(args: Args) -> _Call:
    def finish(file: c.FileInfo) -> ToolResult:
        return _ok(
            texts.stat(file),
            {
                "path": file.path,
                "type": _FILE_TYPES.get(file.type, "other"),
                "size": file.size,
                "mode": file.mode,
                "version": file.version,
                "line_count": file.line_count if file.HasField("line_count") else None,
            },
        )

    request = {
        "path": args.get("path", "/"),
        "count_lines": args.get("count_lines", False),
        "at_snapshot": args.get("at_snapshot") or "",
    }
    return _Call("stat", request, finish)


def _changes(args: Args) -> _Call:
    max_entries = _int(args, "max_entries") or DEFAULT_LIST_ENTRIES

    def finish(answer: tuple[list[w.DiffEntry], w.DiffSummary | None]) -> ToolResult:
        entries, summary = answer
        summary = summary or w.DiffSummary()
        shown = entries[:max_entries]
        changes = []
        for e in shown:
            removed = e.kind == w.DIFF_KIND_REMOVED
            link = (e.type_before if removed else e.type_after) == w.DIFF_ENTRY_TYPE_SYMLINK
            changes.append(
                {
                    "path": e.path,
                    "kind": _DIFF_KINDS.get(e.kind, "modified"),
                    "type": "symlink" if link else "file",
                    "size_before": e.size_before,
                    "size_after": e.size_after,
                }
            )
        structured = {
            "since": getattr(summary, "from"),
            "changes": changes,
            "added": summary.added,
            "modified": summary.modified,
            "removed": summary.removed,
            "unchanged": summary.unchanged,
            "truncated": len(shown) < len(entries),
        }
        return _ok(texts.changes(shown, summary), structured)

    def everything_new(listing: tuple[list[c.FileInfo], f.ListSummary | None]) -> ToolResult:
        entries = [
            w.DiffEntry(
                path=e.path,
                kind=w.DIFF_KIND_ADDED,
                type_after=w.DIFF_ENTRY_TYPE_SYMLINK if e.type == c.FILE_TYPE_SYMLINK else w.DIFF_ENTRY_TYPE_FILE,
                size_after=e.size,
            )
            for e in listing[0]
            if e.type in (c.FILE_TYPE_FILE, c.FILE_TYPE_SYMLINK)
        ]
        return finish((entries, w.DiffSummary(added=len(entries))))

    def no_snapshot_yet(error: FileToolsError) -> _Call | None:
        # With no snapshot yet (a first run not finished), every file of the live tree is new (summary "from" "").
        if args.get("since", "") != "" or error.reason != "NOT_FOUND":
            return None
        listing = {"path": "/", "recursive": True, "include_hidden": True, "respect_gitignore": False, "max_entries": LIST_MAX_ENTRIES}
        return _Call("list_dir", listing, everything_new, stream=True)

    return _Call("diff_snapshots", {"from_id": args.get("since", "")}, finish, stream=True, recover=no_snapshot_yet)


_DIFF_KINDS = {w.DIFF_KIND_ADDED: "added", w.DIFF_KIND_MODIFIED: "modified", w.DIFF_KIND_REMOVED: "removed"}


def _list_snapshots(args: Args) -> _Call:
    def finish(snapshots: list[w.Snapshot]) -> ToolResult:
        structured = [
            {
                "id": s.id,
                "created_at": texts.snapshot_time(s),
                "run_id": s.run_id,
                "file_count": s.file_count,
                "size_bytes": s.size_bytes,
                "labels": dict(s.labels),
            }
            for s in snapshots
        ]
        return _ok(texts.snapshots(snapshots), {"snapshots": structured})

    return _Call("list_snapshots", {}, finish)


def archive_includes(path: str, is_directory: bool, globs: list[str]) -> list[str]:
    """The daemon's include globs (matched against workspace paths without the leading "/") for a path and globs relative to it.

    The directory's name is escaped, so that a "[" or "*" in it is taken literally.
    """
    base = re.sub(r"[\\*?[\]{}()!+@]", lambda m: "\\" + m.group(), path.lstrip("/"))
    if not is_directory:
        return [base]
    if base == "":
        return globs
    return [f"{base}/**"] if not globs else [f"{base}/{glob}" for glob in globs]


def _export_archive(args: Args) -> _Call:
    mode = "create_or_replace" if args.get("overwrite", False) else "create_only"

    def exported(source: c.FileInfo) -> _Call:
        include = archive_includes(source.path, source.type == c.FILE_TYPE_DIRECTORY, list(args.get("include", [])))

        def finish(answer: tuple[w.ExportHeader, f.UploadResponse]) -> ToolResult:
            header, file = answer
            return _ok(
                texts.exported(source.path, file.path, header.file_count, file.size, file.version),
                {
                    "path": source.path,
                    "destination": file.path,
                    "file_count": header.file_count,
                    "size": file.size,
                    "sha256": file.sha256,
                    "version": file.version,
                },
            )

        kwargs = {"destination": args["destination"], "live": True, "include": include, "mode": mode}
        return _Call("export_into", kwargs, finish, progress=True)

    # Stat first: the daemon's include globs match nothing in a missing directory, and a model should hear that.
    return _Call("stat", {"path": args.get("path", "/")}, exported)


def _import_archive(args: Args) -> _Call:
    destination = args.get("destination", "/")

    def imported(answer: tuple[f.DownloadHeader, w.ImportArchiveResponse]) -> _Call:
        header, response = answer
        archive = header.file.path if header.HasField("file") else args["archive"]

        def finish(directory: c.FileInfo) -> ToolResult:
            return _ok(
                texts.imported(archive, directory.path, response.file_count, response.size_bytes),
                {"archive": archive, "destination": directory.path, "file_count": response.file_count, "size_bytes": response.size_bytes},
            )

        # The directory as the daemon names it (it exists now): "out" and "/out/" are both /out.
        return _Call("stat", {"path": destination}, finish)

    return _Call("import_from", {"archive": args["archive"], "path": destination}, imported, progress=True)


_CALLS: dict[str, Callable[[Args], _Call]] = {
    "read": _read,
    "write": _write,
    "edit": _edit,
    "apply_patch": _apply_patch,
    "delete": _delete,
    "move": _move,
    "make_dir": _make_dir,
    "list": _list,
    "search": _search,
    "stat": _stat,
    "changes": _changes,
    "list_snapshots": _list_snapshots,
    "export_archive": _export_archive,
    "import_archive": _import_archive,
}
