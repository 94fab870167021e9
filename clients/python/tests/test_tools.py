"""The tool dispatcher against a real filetoolsd: the definitions are the catalogue's,
each tool's text is what catalogue/README.md specifies (the conformance table the
TypeScript and Go tests run too), and nothing a model sends raises."""

from __future__ import annotations

import asyncio
import base64
import json
import re
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import filetools
from filetools.tools import CATALOGUE, CATALOGUE_FILE, AsyncToolDispatcher, ToolDispatcher
from filetools.tools._arguments import KEYWORD_ORDER

from conftest import REPO_ROOT, Daemon, start_daemon

CONFORMANCE = json.loads((REPO_ROOT / "catalogue" / "conformance.json").read_text(encoding="utf-8"))
TOOL_NAMES = ["read", "write", "edit", "apply_patch", "delete", "move", "make_dir", "list", "search", "stat", "changes", "list_snapshots", "export_archive", "import_archive"]


@pytest.fixture(scope="module")
def shared_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with start_daemon(tmp_path_factory.mktemp("tools")) as running:
        yield running


@pytest.fixture(scope="module")
def sync_client(shared_daemon: Daemon) -> Iterator[filetools.Client]:
    with filetools.Client(shared_daemon.address) as connected:
        yield connected


@pytest.fixture(scope="module")
def tools(sync_client: filetools.Client) -> ToolDispatcher:
    sync_client.create_workspace("agent")
    sync_client.write_text("agent", "/src/a.py", "def main():\n    print('hello')\n\nmain()\n")
    return ToolDispatcher(sync_client, "agent")


# --- the catalogue ---------------------------------------------------------------


def test_the_packages_copy_is_catalogue_tools_json_byte_for_byte() -> None:
    assert CATALOGUE_FILE.read_bytes() == (REPO_ROOT / "catalogue" / "tools.json").read_bytes()


def test_every_tool_is_offered_in_the_three_shapes(tools: ToolDispatcher) -> None:
    assert [t["name"] for t in tools.definitions()] == TOOL_NAMES
    assert tools.definitions() == CATALOGUE["tools"]
    read = tools.openai_tools()[0]
    assert read["type"] == "function"
    assert read["function"]["name"] == "read"
    assert read["function"]["parameters"]["required"] == ["path"]
    assert tools.anthropic_tools()[0] == {
        "name": "read",
        "description": CATALOGUE["tools"][0]["description"],
        "input_schema": CATALOGUE["tools"][0]["input_schema"],
    }


def test_strict_openai_tools_are_the_ones_the_typescript_dispatcher_offers(tools: ToolDispatcher) -> None:
    # clients/ts/test/openai-strict.test.ts checks these schemas against OpenAI's strict-mode rules.
    shared = json.loads((REPO_ROOT / "clients" / "ts" / "catalogue" / "openai-strict.json").read_text(encoding="utf-8"))
    strict = tools.openai_tools(strict=True)
    assert [t["function"]["name"] for t in strict] == TOOL_NAMES
    for tool, definition in zip(strict, CATALOGUE["tools"]):
        assert tool == {
            "type": "function",
            "function": {"name": definition["name"], "description": definition["description"], "parameters": shared[definition["name"]], "strict": True},
        }
    strict[0]["function"]["parameters"]["required"].clear()  # a copy: the next call is whole again
    assert tools.openai_tools(strict=True)[0]["function"]["parameters"]["required"] == ["path", "start_line", "line_count", "tail", "at_snapshot"]


def test_definitions_are_copies_a_caller_may_change(tools: ToolDispatcher) -> None:
    tools.anthropic_tools()[0]["input_schema"]["properties"].clear()
    tools.definitions()[0]["input_schema"]["required"].append("tail")
    assert tools.definitions() == CATALOGUE["tools"]
    assert tools.call("read", {"path": "/src/a.py", "line_count": 1}).text == "     1\tdef main():\n… call read with start_line 2 for more\n"


def test_read_only_offers_and_runs_only_the_tools_that_change_nothing(
    sync_client: filetools.Client, tools: ToolDispatcher
) -> None:
    read_only = ToolDispatcher(sync_client, "agent", read_only=True)
    assert [t["name"] for t in read_only.definitions()] == ["read", "list", "search", "stat", "changes", "list_snapshots"]
    assert [t["name"] for t in read_only.anthropic_tools()] == ["read", "list", "search", "stat", "changes", "list_snapshots"]
    result = read_only.call("write", {"path": "/x", "content": "y"})
    assert result.is_error
    assert result.text == 'Error (UNKNOWN_TOOL): there is no tool named "write"; the tools are read, list, search, stat, changes, list_snapshots.\n'
    assert tools.call("stat", {"path": "/x"}).text.startswith("Error (NOT_FOUND): /x does not exist.")


def test_the_schemas_use_only_keywords_whose_errors_are_described_in_ajvs_order() -> None:
    def keywords(schema: dict[str, Any]) -> set[str]:
        found = {k for k in schema if k not in ("description", "properties", "items")}
        found |= {"properties"} if "properties" in schema else set()
        found |= {"items"} if "items" in schema else set()
        for sub in schema.get("properties", {}).values():
            found |= keywords(sub)
        if "items" in schema:
            found |= keywords(schema["items"])
        return found

    used = set().union(*(keywords(t["input_schema"]) for t in CATALOGUE["tools"]))
    assert used <= set(KEYWORD_ORDER)


# --- the conformance table, in order, on a fresh workspace --------------------------


class Table:
    def __init__(self, tools: ToolDispatcher) -> None:
        self.tools = tools
        self.saved: dict[str, Any] = {}


@pytest.fixture(scope="module")
def table(sync_client: filetools.Client) -> Table:
    sync_client.create_workspace("conformance")
    for path, content in CONFORMANCE["files"].items():
        if isinstance(content, dict):
            lines = (content["repeat_lines"].replace("{n}", str(n)) for n in range(1, content["count"] + 1))
            content = "".join(f"{line}\n" for line in lines)
        sync_client.write_text("conformance", path, content)
    if CONFORMANCE["snapshot"]:
        sync_client.finish_run("conformance", sync_client.start_run("conformance").id)
    return Table(ToolDispatcher(sync_client, "conformance"))


def substitute(args: Any, saved: dict[str, Any]) -> Any:
    """"${name}" in string arguments -> what an earlier call saved under that name."""
    if isinstance(args, str):
        return re.sub(r"^\$\{(\w+)\}$", lambda m: str(saved[m.group(1)]), args)
    if isinstance(args, list):
        return [substitute(a, saved) for a in args]
    if isinstance(args, dict):
        return {k: substitute(v, saved) for k, v in args.items()}
    return args


@pytest.mark.parametrize(
    "call", CONFORMANCE["calls"], ids=[f"{i} {c['tool']} {json.dumps(c['args'])}" for i, c in enumerate(CONFORMANCE["calls"])]
)
def test_conformance(table: Table, call: dict[str, Any]) -> None:
    result = table.tools.call(call["tool"], substitute(call["args"], table.saved))
    if "text" in call:
        assert result.text == call["text"]
    else:
        assert re.fullmatch(call["pattern"], result.text), result.text
    assert result.is_error == call.get("is_error", False)
    for name, field in call.get("save", {}).items():
        table.saved[name] = result.structured[field]


@pytest.fixture(scope="module")
def media_table(sync_client: filetools.Client) -> Table:
    sync_client.create_workspace("conformance-media")
    for path, content in CONFORMANCE["media"]["files"].items():
        sync_client.write_bytes("conformance-media", path, base64.b64decode(content["base64"]))
    return Table(ToolDispatcher(sync_client, "conformance-media"))


@pytest.mark.parametrize(
    "call", CONFORMANCE["media"]["calls"], ids=[f"{i} read {json.dumps(c['args'])}" for i, c in enumerate(CONFORMANCE["media"]["calls"])]
)
def test_conformance_media(media_table: Table, call: dict[str, Any]) -> None:
    """The conformance table's reads of images and PDFs: the same texts, and the image content blocks."""
    result = media_table.tools.call(call["tool"], call["args"])
    if "text" in call:
        assert result.text == call["text"]
    else:
        assert re.fullmatch(call["pattern"], result.text), result.text
    assert result.is_error == call.get("is_error", False)
    assert [{"mime_type": i["mimeType"]} for i in result.images] == call.get("images", [])
    for image in result.images:
        data = base64.b64decode(image["data"])
        assert data.startswith(b"\x89PNG") if image["mimeType"] == "image/png" else data.startswith(b"\xff\xd8")


def test_an_image_read_in_anthropics_and_openais_shapes(sync_client: filetools.Client, media_table: Table) -> None:
    result = media_table.tools.call("read", {"path": "/img/dot.png"})
    png = base64.b64encode(sync_client.read_media("conformance-media", "/img/dot.png").image.data).decode()  # type: ignore[union-attr]
    text = "Image /img/dot.png (PNG, 4x3 pixels, 95 bytes).\n"
    assert result.anthropic_content() == [
        {"type": "text", "text": text},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}},
    ]
    assert result.openai_output() == [
        {"type": "input_text", "text": text},
        {"type": "input_image", "image_url": f"data:image/png;base64,{png}"},
    ]
    plain = media_table.tools.call("read", {"path": "/doc.pdf", "start_line": 3})
    assert (plain.anthropic_content(), plain.openai_output()) == (plain.text, plain.text)


def test_the_async_dispatcher_reads_images_and_pdfs_the_same(shared_daemon: Daemon, media_table: Table) -> None:
    calls = [{"path": "/img/dot.png"}, {"path": "/doc.pdf", "line_count": 1}, {"path": "/img/dot.png", "tail": 1}]

    async def run_async() -> list[Any]:
        async with filetools.AsyncClient(shared_daemon.address) as client:
            tools = AsyncToolDispatcher(client, "conformance-media")
            return [await tools.call("read", args) for args in calls]

    assert asyncio.run(run_async()) == [media_table.tools.call("read", args) for args in calls]


def test_read_media_on_the_client_and_its_errors(sync_client: filetools.Client) -> None:
    pdf = sync_client.read_media("conformance-media", "/doc.pdf", start_page=2, page_count=1)
    assert (pdf.media_type, pdf.page_count, [p.number for p in pdf.pages], pdf.next_page, pdf.eof) == ("application/pdf", 3, [2], 3, False)
    with pytest.raises(filetools.MediaUnreadable, match="MEDIA_UNREADABLE: /cut.pdf cannot be read as a PDF"):
        sync_client.read_media("conformance-media", "/cut.pdf")
    sync_client.write_text("conformance-media", "/notes.txt", "text\n")
    with pytest.raises(filetools.NotMedia):
        sync_client.read_media("conformance-media", "/notes.txt")


# --- arguments: described as the TypeScript dispatcher describes them ---------------

# Each case's text is what clients/ts/src/tools/dispatcher.ts returns for it
# (ajv's first error, through describe()): where several errors exist, the
# first one ajv meets is the one reported.
VALIDATION = [
    ("write", {"path": 5, "content": 3}, "path must be a string"),
    ("write", {"content": "x", "bogus": 1, "path": 5}, "unknown argument bogus"),
    ("write", {"path": "/a", "content": "x", "zzz": 1, "aaa": 2}, "unknown argument zzz"),
    ("write", {"bogus": 1}, "missing required argument path"),
    # JavaScript orders an object's array-index keys first, and ajv reports the first unknown one in that order.
    ("read", {"path": "/x", "zeta": 1, "10": 2, "2": 3}, "unknown argument 2"),
    ("read", {"path": "/x", "zeta": 1, "01": 2}, "unknown argument zeta"),
    ("read", {"path": "/x", "zeta": 1, "4294967295": 2, "4294967294": 3}, "unknown argument 4294967294"),
    ("write", {"path": "/a", "mode": 7, "content": "x"}, "mode must be a string"),
    ("write", {"path": "", "content": "x"}, "path must not be empty"),
    ("write", {"path": "/a", "content": "x", "if_version": "v" * 65}, "if_version must be at most 64 characters"),
    ("edit", {"path": "/a", "edits": "nope"}, "edits must be an array"),
    ("edit", {"path": "/a", "edits": [5]}, "edits.0 must be an object"),
    ("edit", {"path": "/a", "edits": [{"old_text": 1, "new_text": 2, "zz": 1}]}, "edits.0 unknown argument zz"),
    (
        "edit",
        {"path": "/a", "edits": [{"old_text": "a", "new_text": "b"}, {"old_text": "a", "new_text": "b", "replace_all": "yes"}]},
        "edits.1.replace_all must be a boolean",
    ),
    ("edit", {"path": "/a", "edits": [{"old_text": "a"}], "dry_run": "x"}, "edits.0 missing required argument new_text"),
    ("edit", {"path": "/a", "edits": [{"old_text": "a", "new_text": "b"}] * 101}, "edits must have at most 100 items"),
    ("search", {"pattern": "a", "include": "x"}, "include must be an array"),
    ("search", {"pattern": "a", "include": [1]}, "include.0 must be a string"),
    ("search", {"pattern": "a", "context": 1.5}, "context must be an integer"),
    ("search", {"pattern": "a", "context": True}, "context must be an integer"),
    ("search", {"pattern": "a", "context": -1}, "context must be at least 0"),
    ("search", {"pattern": "a", "output_mode": "lines"}, "output_mode must be one of content, files_with_matches, count"),
    ("read", {"path": "/x", "start_line": None, "colour": None}, "unknown argument colour"),  # a null optional argument is left out; an unknown one is not
    ("edit", {"path": "/a", "edits": [{"old_text": "a", "new_text": None, "replace_all": None}]}, "edits.0.new_text must be a string"),
    ("read", {"path": None}, "path must be a string"),
    ("read", '{"path": "/x", "line_count": 1e400}', "line_count must be an integer"),
    ("read", '{"path": "/x", "line_count": NaN}', "the arguments are not valid JSON"),
    ("read", '"just a string"', "the arguments must be a JSON object"),
    ("read", "null", "the arguments must be a JSON object"),
    ("read", "", "missing required argument path"),
    ("read", None, "missing required argument path"),
    ("read", 5, "the arguments must be a JSON object"),
    ("read", [1], "the arguments must be a JSON object"),
    ("list", {"max_depth": 0}, "max_depth must be at least 1"),
]


@pytest.mark.parametrize("tool, args, problem", VALIDATION, ids=[f"{t} {a!r}"[:80] for t, a, _ in VALIDATION])
def test_bad_arguments_are_described_as_the_typescript_dispatcher_does(
    tools: ToolDispatcher, tool: str, args: Any, problem: str
) -> None:
    result = tools.call(tool, args)
    assert result.is_error
    assert result.text == (
        f"Error (INVALID_ARGUMENT): invalid arguments for {tool}: {problem}.\nFix the arguments and call the tool again.\n"
    )
    assert result.structured == {"error": {"reason": "INVALID_ARGUMENT", "message": f"invalid arguments for {tool}: {problem}"}}


@pytest.mark.parametrize(
    "name, quoted", [("READ", '"READ"'), ("", '""'), ("tab\tname\u0001", '"tab\\tname\\u0001"'), ("bad\ud800", '"bad\\ud800"')]
)
def test_an_unknown_tool_is_named_as_json_stringify_writes_it(tools: ToolDispatcher, name: str, quoted: str) -> None:
    result = tools.call(name, {})
    assert result.is_error
    assert result.text == f"Error (UNKNOWN_TOOL): there is no tool named {quoted}; the tools are {', '.join(TOOL_NAMES)}.\n"


def test_integers_written_as_floats_are_integers(tools: ToolDispatcher) -> None:
    result = tools.call("read", '{"path": "/src/a.py", "start_line": 2.0, "line_count": 1.0}')
    assert result.text == "     2\t    print('hello')\n… call read with start_line 3 for more\n"


def test_a_lone_surrogate_is_written_as_u_fffd_as_javascript_would(
    tools: ToolDispatcher, sync_client: filetools.Client
) -> None:
    result = tools.call("write", '{"path": "/half.txt", "content": "\\ud83d!"}')
    assert not result.is_error, result.text
    assert sync_client.read_text("agent", "/half.txt").text == "\ufffd!"


@pytest.mark.parametrize("depth", [900, 100_000])
def test_deeply_nested_arguments_are_a_tool_error(tools: ToolDispatcher, depth: int) -> None:
    result = tools.call("read", '{"path": ' + "[" * depth + "]" * depth + "}")
    assert result.is_error
    # JSON.parse reads both; Python's json gives up on the deeper one.
    problem = "path must be a string" if depth < 1000 else "the arguments are not valid JSON"
    assert result.text.startswith(f"Error (INVALID_ARGUMENT): invalid arguments for read: {problem}.")


def test_a_start_line_beyond_int64_is_a_tool_error(tools: ToolDispatcher) -> None:
    result = tools.call("read", {"path": "/src/a.py", "start_line": 10**20})
    assert result.is_error
    assert result.text.startswith("Error (INVALID_ARGUMENT): invalid arguments for read: ")


def test_an_unreachable_daemon_is_a_tool_error() -> None:
    with filetools.Client("127.0.0.1:1") as nowhere:
        result = ToolDispatcher(nowhere, "agent").call("stat", {}, timeout=5)
    assert result.is_error
    assert result.text == "Error (UNAVAILABLE): the filetools daemon cannot be reached.\nIt is not running, or not at the address this client was given. Nothing was done: tell the operator, or call again once the daemon is back.\n"  # the same words in every language (catalogue/tools.json, unreachable)
    assert result.structured["error"]["code"] == "UNAVAILABLE"


def test_a_daemon_error_carries_its_reason_and_metadata(tools: ToolDispatcher) -> None:
    tools.call("write", {"path": "/twice.py", "content": "x = 1\nx = 1\n"})
    result = tools.call("edit", {"path": "/twice.py", "edits": [{"old_text": "x = 1", "new_text": "x = 2"}]})
    assert result.is_error
    error = result.structured["error"]
    assert (error["reason"], error["code"], error["metadata"]["count"]) == ("OLD_TEXT_NOT_UNIQUE", "FAILED_PRECONDITION", "2")
    assert result.text.endswith("Make old_text unique by adding the lines around it, or set replace_all to change all 2.\n")


def test_structured_results_have_snake_case_fields(tools: ToolDispatcher) -> None:
    window = tools.call("read", {"path": "/src/a.py", "line_count": 2}).structured
    assert {k: v for k, v in window.items() if k != "version"} == {
        "path": "/src/a.py",
        "first_line": 1,
        "last_line": 2,
        "total_lines": None,
        "next_start_line": 3,
        "eof": False,
        "text": "def main():\n    print('hello')\n",
    }
    matches = tools.call("search", {"pattern": "main", "path": "/src", "context": 1}).structured
    assert matches["matches"][0] == {"path": "/src/a.py", "line_number": 1, "line": "def main():", "before": [], "after": ["    print('hello')"]}
    assert (matches["files_searched"], matches["files_matched"], matches["truncated"], matches["timed_out"]) == (1, 1, False, False)


def test_read_list_and_stat_at_a_snapshot(shared_daemon: Daemon, sync_client: filetools.Client, tmp_path: Path) -> None:
    sync_client.create_workspace("history")
    sync_client.write_text("history", "/notes.txt", "first\nsecond\n")
    run = sync_client.start_run("history")
    snapshot = sync_client.finish_run("history", run.id).snapshot.id
    sync_client.write_text("history", "/notes.txt", "rewritten\n")
    sync_client.write_text("history", "/new.txt", "later\n")
    history = ToolDispatcher(sync_client, "history")

    then = history.call("read", {"path": "/notes.txt", "at_snapshot": snapshot})
    assert then.text == "     1\tfirst\n     2\tsecond\n"
    assert then.structured["version"].startswith("snapshot:")
    assert history.call("read", {"path": "/notes.txt"}).text == "     1\trewritten\n"
    assert history.call("list", {"at_snapshot": snapshot}).text == "/notes.txt (13 bytes)\n"
    assert history.call("stat", {"path": "/notes.txt", "at_snapshot": snapshot, "count_lines": True}).structured["line_count"] == 2
    missing = history.call("read", {"path": "/new.txt", "at_snapshot": snapshot})
    assert missing.is_error and missing.structured["error"]["reason"] == "NOT_FOUND"

    # The client's own option, sync and async.
    assert sync_client.read_text("history", "/notes.txt", at_snapshot=snapshot).text == "first\nsecond\n"
    assert sync_client.stat("history", "/notes.txt", at_snapshot=snapshot).size == 13
    assert [e.path for e in sync_client.list_dir("history", at_snapshot=snapshot)] == ["/notes.txt"]
    saved = sync_client.download("history", "/notes.txt", to=tmp_path / "notes.txt", at_snapshot=snapshot)
    assert (tmp_path / "notes.txt").read_bytes() == b"first\nsecond\n" and saved.size == 13
    with pytest.raises(filetools.NotFound):
        sync_client.stat("history", "/notes.txt", at_snapshot="20200101T000000000Z-00000000")

    async def run_async() -> str:
        async with filetools.AsyncClient(shared_daemon.address) as client:
            return (await client.read_text("history", "/notes.txt", at_snapshot=snapshot)).text

    assert asyncio.run(run_async()) == "first\nsecond\n"


# --- the async twin ---------------------------------------------------------------


def test_the_async_dispatcher_writes_the_same_texts(shared_daemon: Daemon, tools: ToolDispatcher) -> None:
    calls = [
        ("read", {"path": "/src/a.py", "start_line": 2, "line_count": 2}),
        ("search", {"pattern": "print", "path": "/src"}),
        ("list", {"path": "/src"}),
        ("read", {"path": "/missing.txt"}),
        ("read", '{"path": 1}'),
        ("nope", {}),
    ]

    async def run() -> list[tuple[str, bool]]:
        async with filetools.AsyncClient(shared_daemon.address) as client:
            async_tools = AsyncToolDispatcher(client, "agent")
            assert async_tools.definitions() == tools.definitions()
            return [((r := await async_tools.call(name, args)).text, r.is_error) for name, args in calls]

    expected = [((r := tools.call(name, args)).text, r.is_error) for name, args in calls]
    assert asyncio.run(run()) == expected
    assert expected[0][0] == "     2\t    print('hello')\n     3\t\n… call read with start_line 4 for more\n"
    assert [is_error for _, is_error in expected] == [False, False, False, True, True, True]


def test_cancelling_an_async_call_raises_cancelled_error_rather_than_returning_a_result() -> None:
    # A listener that accepts and never answers: the call waits until it is cancelled.
    with socket.create_server(("127.0.0.1", 0)) as silent:

        async def run() -> None:
            async with filetools.AsyncClient(f"127.0.0.1:{silent.getsockname()[1]}") as client:
                task = asyncio.ensure_future(AsyncToolDispatcher(client, "agent").call("stat", {}, timeout=30))
                await asyncio.sleep(0.5)
                assert not task.done()
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task

        asyncio.run(run())


# --- texts the table does not reach ------------------------------------------------


def test_an_edit_whose_diff_is_longer_than_the_daemon_sends_says_so(tools: ToolDispatcher, sync_client: filetools.Client) -> None:
    # The same call as the TypeScript and Go dispatcher tests: 100,000 lines, each changed.
    sync_client.write_text("agent", "/every.txt", "".join(f"value {i}\n" for i in range(100_000)))
    result = tools.call("edit", {"path": "/every.txt", "edits": [{"old_text": "value", "new_text": "VALUE", "replace_all": True}]})
    assert not result.is_error
    assert re.match(
        r"Edited /every\.txt: 100,000 replacements\. Version [0-9a-f]{16}\.\n\n--- a/every\.txt\n\+\+\+ b/every\.txt\n@@ -1,\d+ \+1,\d+ @@\n-value 0\n\+VALUE 0\n",
        result.text,
    )
    assert result.text.endswith("\n(the diff stops here, at 1 MiB; the rest of the change is not shown)\n")
    assert result.structured["replacements"] == 100_000 and result.structured["diff_truncated"] is True


def test_texts_for_what_a_fresh_workspace_rarely_shows() -> None:
    from google.protobuf.timestamp_pb2 import Timestamp

    from filetools.tools import _texts as texts
    from filetools.v1 import common_pb2 as c
    from filetools.v1 import files_pb2 as f

    entries = [
        c.FileInfo(path="/link", type=c.FILE_TYPE_SYMLINK),
        c.FileInfo(path="/fifo", type=c.FILE_TYPE_OTHER),
        c.FileInfo(path="/one", type=c.FILE_TYPE_FILE, size=1),
    ]
    assert texts.listing(entries, True) == (
        "/link (symbolic link)\n/fifo (special file)\n/one (1 byte)\n"
        "… stopped at 3 entries: narrow it with pattern or max_depth, or raise max_entries\n"
    )
    hits = [
        f.SearchMatch(path="/a", line_number=2, line="x", before=["w"]),
        f.SearchMatch(path="/a", line_number=9, line="x", after=["y"]),
    ]
    summary = f.SearchSummary(files_searched=1234, files_matched=1, matches=2, timed_out=True)
    assert texts.search_matches(hits, summary, True, "path") == (
        "/a\n1-w\n2:x\n--\n9:x\n10-y\n"
        "(2 matching lines in 1 file; 1,234 files searched; the search ran out of time, so results are partial)\n"
    )
    assert texts.search_matches(hits, summary, True, "found").endswith(
        '; the search ran out of time, so results are partial; files in the order found: order "path" sorts them, '
        "for the same page every time)\n"
    )
    far = c.FileInfo(path="/f", type=c.FILE_TYPE_FILE, mode=0o600, mtime=Timestamp(seconds=253402300800, nanos=5_000_000))
    assert texts.stat(far) == "/f: file, 0 bytes, mode 0600, modified +010000-01-01T00:00:00.005Z, version \n"
    assert texts.stat(c.FileInfo(path="/d", type=c.FILE_TYPE_DIRECTORY, mode=0o755)).startswith("/d: directory, 0 bytes, mode 0755, modified unknown,")


def test_the_responses_api_apply_patch_operations_are_applied_together(tools: ToolDispatcher, sync_client: filetools.Client) -> None:
    sync_client.write_text("agent", "/ops/keep.txt", "one\ntwo\n")
    applied = tools.apply_patch_operations(
        [
            {"type": "create_file", "path": "/ops/new.txt", "diff": "+hello\n"},
            {"type": "update_file", "path": "/ops/keep.txt", "diff": "@@\n one\n-two\n+2\n"},
        ]
    )
    assert (applied.is_error, applied.text) == (False, "Applied the patch: 2 files changed.\nadded /ops/new.txt\nupdated /ops/keep.txt\n")
    failing = tools.apply_patch_operations(
        [{"type": "delete_file", "path": "/ops/new.txt"}, {"type": "update_file", "path": "/ops/keep.txt", "diff": "@@\n-absent\n+x\n"}]
    )
    assert failing.is_error and failing.text.startswith("Error (OLD_TEXT_NOT_FOUND): hunk 1 of /ops/keep.txt")
    assert sync_client.read_text("agent", "/ops/new.txt").text == "hello\n"
    for bad in ([], "ops", [{"type": "rename_file", "path": "/a"}], [{"type": "update_file", "path": "/a"}], [None]):
        assert tools.apply_patch_operations(bad).text.startswith("Error (INVALID_ARGUMENT): invalid apply_patch operations")


def test_changes_before_any_snapshot_answers_that_every_file_is_new(sync_client: filetools.Client) -> None:
    sync_client.create_workspace("fresh")
    fresh = ToolDispatcher(sync_client, "fresh")
    assert fresh.call("changes", {}).text == "No snapshot yet (one is taken when a run finishes), and no files yet.\n"
    sync_client.write_text("fresh", "/a.txt", "abc")
    sync_client.write_text("fresh", "/b/.hidden", "12")
    result = fresh.call("changes", {"max_entries": 1})
    assert (result.is_error, result.text) == (
        False,
        "No snapshot yet (one is taken when a run finishes), so every file is new: 2 added.\nadded /a.txt (3 bytes)\n… 1 more change not shown: raise max_entries\n",
    )
    assert {k: result.structured[k] for k in ("since", "added", "truncated")} == {"since": "", "added": 2, "truncated": True}
    assert fresh.call("changes", {"since": "nope"}).text.startswith('Error (NOT_FOUND): snapshot "nope" does not exist')
