"""Client and AsyncClient against a real filetoolsd: every test runs once per client kind."""

from __future__ import annotations

import hashlib
import io
import os
import tarfile
from pathlib import Path
from typing import Any

import grpc
import pytest

import filetools
from filetools import TextEdit, errors
from filetools.v1 import common_pb2, files_pb2, files_pb2_grpc

from conftest import Daemon, start_daemon

WS = "py"
LINES = 1000
BIG = "".join(f"line {n:04d} of the log\n" for n in range(1, LINES + 1))


@pytest.fixture
def ws(client: Any) -> str:
    client.create_workspace(WS)
    return WS


def test_read_text_pages_through_a_file_to_its_end(client: Any, ws: str) -> None:
    client.write_text(ws, "logs/big.log", BIG)

    pages, start = [], 1
    while start is not None:
        window = client.read_text(ws, "logs/big.log", start, 300)
        pages.append(window)
        start = window.next_start_line

    assert "".join(p.text for p in pages) == BIG
    assert [(p.first_line, p.last_line) for p in pages] == [(1, 300), (301, 600), (601, 900), (901, 1000)]
    assert pages[-1].total_lines == LINES
    assert not any(p.truncated for p in pages)
    assert pages[0].numbered().splitlines()[1] == f"{2:6}\tline 0002 of the log"


def test_read_text_windows_tail_past_the_end_and_byte_cap(client: Any, ws: str) -> None:
    client.write_text(ws, "big.log", BIG)

    tail = client.read_text(ws, "big.log", tail=2)
    assert tail.text == "line 0999 of the log\nline 1000 of the log\n"
    assert (tail.first_line, tail.last_line, tail.total_lines, tail.next_start_line) == (999, 1000, LINES, None)

    past = client.read_text(ws, "big.log", LINES + 5)
    assert (past.text, past.next_start_line, past.last_line) == ("", None, LINES + 4)

    line_bytes = len("line 0001 of the log\n")
    capped = client.read_text(ws, "big.log", 10, max_bytes=3 * line_bytes + 1)
    assert capped.truncated
    assert (capped.first_line, capped.last_line, capped.next_start_line) == (10, 12, 13)
    assert capped.version == client.stat(ws, "big.log").version


def test_read_streams_a_header_then_chunks_then_the_trailer(client: Any, ws: str) -> None:
    client.write_text(ws, "big.log", BIG)
    stream = client.read(ws, "big.log", 101, 5)
    events = list(stream)
    assert isinstance(events[0], files_pb2.ReadHeader)
    assert "".join(e.text for e in events[1:]) == "".join(BIG.splitlines(keepends=True)[100:105])
    assert stream.summary.lines_returned == 5 and stream.summary.next_line == 106


def test_server_streams_are_read_on_the_calling_thread(daemon: Daemon) -> None:
    # grpcio honours SingleThreadedUnaryStream only under its exact key (a look at its private
    # flag: a misspelt key once left every stream on a helper thread, unnoticed).
    with filetools.Client(daemon.address) as client:
        assert client._channel._single_threaded_unary_stream is True


def test_write_and_edit_round_trip(client: Any, ws: str) -> None:
    written = client.write_text(ws, "src/app.py", "debug = True\nname = 'app'\n")
    assert written.created and written.sha256 == hashlib.sha256(b"debug = True\nname = 'app'\n").hexdigest()

    window = client.read_text(ws, "src/app.py")
    dry = client.edit(ws, "src/app.py", "debug = True", "debug = False", dry_run=True, if_version=window.version)
    assert "-debug = True\n+debug = False" in dry.diff
    assert client.read_text(ws, "src/app.py").text == "debug = True\nname = 'app'\n"

    edited = client.edit(ws, "src/app.py", "debug = True", "debug = False", if_version=window.version)
    assert edited.replacements == 1 and edited.version != window.version
    many = client.edit_many(
        ws, "src/app.py", [TextEdit(old_text="'app'", new_text="'svc'"), TextEdit(old_text="False", new_text="0")]
    )
    assert many.replacements == 2
    assert client.read_text(ws, "src/app.py").text == "debug = 0\nname = 'svc'\n"

    appended = client.write_text(ws, "src/app.py", "port = 80\n", mode="append")
    assert not appended.created
    assert client.read_text(ws, "src/app.py", tail=1).text == "port = 80\n"


def test_failed_edits_and_writes_raise_typed_exceptions(client: Any, ws: str) -> None:
    first = client.write_text(ws, "a.txt", "x = 1\nx = 1\ny = 2\n")

    with pytest.raises(errors.OldTextNotUnique) as not_unique:
        client.edit(ws, "a.txt", "x = 1", "x = 3")
    assert not_unique.value.reason == "OLD_TEXT_NOT_UNIQUE"
    assert not_unique.value.metadata["count"] == "2"
    assert isinstance(not_unique.value, errors.FailedPrecondition)

    with pytest.raises(errors.OldTextNotFound) as not_found:
        client.edit(ws, "a.txt", "y = 3", "y = 4")
    assert not_found.value.metadata["closest_text"] == "y = 2"

    client.edit(ws, "a.txt", "y = 2", "y = 5")
    with pytest.raises(errors.ContentChanged) as changed:
        client.write_text(ws, "a.txt", "stale\n", if_version=first.version)
    assert changed.value.metadata["current_version"] == client.stat(ws, "a.txt").version

    with pytest.raises(errors.AlreadyExists):
        client.write_text(ws, "a.txt", "again\n", mode="create_only")
    with pytest.raises(errors.NotFound) as missing:
        client.write_text(ws, "b.txt", "b\n", mode="replace_only")
    assert type(missing.value) is errors.NotFound and missing.value.reason == "NOT_FOUND"

    with pytest.raises(errors.PathEscapesWorkspace) as escape:
        client.read_text(ws, "../../etc/passwd")
    assert escape.value.code.name == "PERMISSION_DENIED"

    with pytest.raises(errors.WorkspaceNotFound) as no_workspace:
        client.stat("no-such-workspace", "a.txt")
    assert isinstance(no_workspace.value, errors.NotFound)

    client.write_bytes(ws, "blob.bin", b"\x00\x01\x02binary")
    with pytest.raises(errors.BinaryFile):
        client.read_text(ws, "blob.bin")

    client.make_dir(ws, "dir/sub")
    with pytest.raises(errors.IsADirectory):
        client.delete(ws, "dir")
    with pytest.raises(errors.InvalidArgument):
        client.edit(ws, "a.txt", "", "z")

    assert client.read_text(ws, "a.txt").text == "x = 1\nx = 1\ny = 5\n"  # nothing above changed it


def test_files_calls_move_list_stat_delete(client: Any, ws: str) -> None:
    assert client.make_dir(ws, "docs").created
    client.write_text(ws, "docs/a.md", "# a\n")
    client.write_text(ws, "docs/.hidden", "h\n")
    moved = client.move(ws, "docs/a.md", "docs/guide/b.md")
    assert moved.destination == "/docs/guide/b.md" and moved.file.type == common_pb2.FILE_TYPE_FILE

    listing = client.list_dir(ws, "docs", recursive=True)
    assert [e.path for e in listing] == ["/docs/.hidden", "/docs/guide", "/docs/guide/b.md"]
    assert listing.summary.total == 3 and not listing.summary.truncated
    assert [e.name for e in client.list_dir(ws, "docs", include_hidden=False)] == ["guide"]

    info = client.stat(ws, "docs/guide/b.md", count_lines=True, detect_binary=True)
    assert (info.size, info.line_count, info.is_binary) == (4, 1, False)

    assert client.delete(ws, "docs", recursive=True).existed
    assert not client.delete(ws, "docs").existed


def test_search_streams_matches_in_walk_order_then_a_summary(client: Any, ws: str) -> None:
    for name in ("b.txt", "a.txt", "c.log"):
        client.write_text(ws, name, "alpha\nTODO first\nbeta\nTODO second\n")

    results = client.search(ws, "TODO", include=["*.txt"], context_before=1)
    matches = list(results)
    assert [(m.path, m.line_number, m.line) for m in matches] == [
        ("/a.txt", 2, "TODO first"),
        ("/a.txt", 4, "TODO second"),
        ("/b.txt", 2, "TODO first"),
        ("/b.txt", 4, "TODO second"),
    ]
    assert list(matches[0].before) == ["alpha"] and list(matches[1].before) == ["beta"]
    assert (results.summary.files_searched, results.summary.matches) == (2, 4)

    counts = client.search(ws, "todo", case_insensitive=True, output_mode="count")
    assert [(c.path, c.count) for c in counts] == [("/a.txt", 2), ("/b.txt", 2), ("/c.log", 2)]
    files = client.search(ws, "second", fixed_strings=True, output_mode="files_with_matches", exclude=["b.*"])
    assert [f.path for f in files] == ["/a.txt", "/c.log"]

    with pytest.raises(errors.InvalidArgument):
        list(client.search(ws, "(unclosed"))

    # order="found": the same results, a file's matches together in line order; which file first is the daemon's.
    found = client.search(ws, "TODO", include=["*.txt"], context_before=1, order="found")
    found_matches = list(found)
    assert sorted((m.path, m.line_number) for m in found_matches) == [(m.path, m.line_number) for m in matches]
    assert [m.line_number for m in found_matches] == [2, 4, 2, 4]
    assert found.summary == results.summary


def _upload_large_search_target(client: Any, ws: str, tmp_path: Path) -> None:
    """A file whose matches each carry 1,000 long context lines: ~32 MB of responses,
    far more than the transport buffers, so the search cannot end before the client reads on."""
    block = "MATCH here\n" + ("x" * 490 + "\n") * 1000
    source = tmp_path / "huge.txt"
    source.write_text(block * 64)
    client.upload(ws, "huge.txt", from_=source)


def test_search_batches_give_the_single_messages_matches_in_order(client: Any, ws: str, channel: grpc.Channel) -> None:
    # Enough files that the daemon's answer takes several tasks and batches of matches.
    for i in range(150):
        client.write_text(ws, f"d{i % 3}/f{i:03}.txt", "".join(f"TODO {i}.{n}\nplain\n" for n in range(i % 4 + 1)))
    raw = files_pb2_grpc.FilesStub(channel)

    def singles(**request: Any) -> list[Any]:
        # A request without batch_matches, as an older client sends: one `match` per message.
        messages = list(raw.Search(files_pb2.SearchRequest(workspace=ws, pattern="TODO", **request), timeout=30))
        assert {m.WhichOneof("event") for m in messages[:-1]} <= {"match"} and messages[-1].HasField("summary")
        return [m.match for m in messages[:-1]]

    for request in ({"max_results": 10_000, "context_after": 1}, {"max_results": 77, "context_before": 2}):
        results = client.search(ws, "TODO", **request)
        assert list(results) == singles(**request)
        assert results.summary.truncated == (request["max_results"] == 77)

    batched = list(raw.Search(files_pb2.SearchRequest(workspace=ws, pattern="TODO", max_results=10_000, batch_matches=True), timeout=30))
    assert {m.WhichOneof("event") for m in batched[:-1]} == {"matches"}
    assert sum(len(m.matches.matches) for m in batched[:-1]) == len(singles(max_results=10_000)) == 373


def test_breaking_out_of_a_search_stops_the_daemon_s_work(client: Any, ws: str, daemon: Daemon, tmp_path: Path) -> None:
    _upload_large_search_target(client, ws, tmp_path)

    for match in client.search(ws, "MATCH", context_after=1000):
        assert match.line_number == 1 and len(match.after) == 1000
        break

    log = daemon.call_log("Files/Search")
    assert log["code"] == "CANCELLED", log


def test_closing_a_stream_cancels_the_call(client: Any, ws: str, daemon: Daemon, tmp_path: Path) -> None:
    _upload_large_search_target(client, ws, tmp_path)

    stream = client.search(ws, "MATCH", context_after=1000)
    items = iter(stream)
    next(items)
    stream.close()
    with pytest.raises(errors.Cancelled) as cancelled:
        for _ in items:  # what was already received may still come, then the cancellation
            pass
    assert cancelled.value.code.name == "CANCELLED"
    assert daemon.call_log("Files/Search")["code"] == "CANCELLED"


def test_a_call_past_its_deadline_raises_deadline_exceeded(
    client: Any, ws: str, daemon: Daemon, tmp_path: Path
) -> None:
    # The upload's source is a pipe nobody writes to: the header goes out, then the call waits.
    fifo = tmp_path / "stalled"
    os.mkfifo(fifo)
    writer = os.open(fifo, os.O_RDWR)  # keeps the pipe open so the reader blocks instead of seeing its end
    try:
        with pytest.raises(errors.DeadlineExceeded) as exceeded:
            client.upload(ws, "never.bin", from_=fifo, timeout=0.5)
    finally:
        os.close(writer)
    assert exceeded.value.code.name == "DEADLINE_EXCEEDED"
    assert daemon.call_log("Files/Upload")["code"] == "DEADLINE_EXCEEDED"
    with pytest.raises(errors.NotFound):
        client.stat(ws, "never.bin")


def test_upload_and_download_round_trip_with_a_checked_sha256(client: Any, ws: str, tmp_path: Path) -> None:
    payload = os.urandom(3 * (1 << 20) + 17)  # more than one 1 MiB chunk each way
    local = tmp_path / "local"
    local.mkdir()
    source = local / "payload.bin"
    source.write_bytes(payload)
    uploaded = client.upload(ws, "bin/payload.bin", from_=source, sha256=hashlib.sha256(payload).hexdigest())
    assert uploaded.size == len(payload) and uploaded.created

    seen: list[tuple[int, int]] = []
    saved = client.download(ws, "bin/payload.bin", to=local / "copy.bin", on_progress=lambda n, t: seen.append((n, t)))
    assert saved.path.read_bytes() == payload
    assert saved.sha256 == uploaded.sha256 and saved.size == len(payload)
    assert seen[-1] == (len(payload), len(payload))

    with pytest.raises(errors.InvalidArgument):
        client.upload(ws, "bin/bad.bin", from_=source, sha256="0" * 64)
    with pytest.raises(errors.NotFound):
        client.download(ws, "bin/missing.bin", to=local / "missing.bin")
    assert sorted(p.name for p in local.iterdir()) == ["copy.bin", "payload.bin"]  # no partial file left


def test_runs_snapshots_and_export_to_a_verified_file(client: Any, ws: str, tmp_path: Path) -> None:
    run = client.start_run(ws, labels={"crew": "py"})
    client.write_text(ws, "report/summary.md", "# Summary\n")
    client.write_text(ws, "report/data.csv", "a,b\n1,2\n")
    assert [(c.kind, c.path) for c in client.change_set(ws, run.id)] == [
        (1, "/report/summary.md"),
        (1, "/report/data.csv"),
    ]
    finished = client.finish_run(ws, run.id)
    snapshot = finished.snapshot
    assert finished.changes.created == 2 and snapshot.labels["crew"] == "py"
    assert [s.id for s in client.list_snapshots(ws)] == [snapshot.id]

    progress: list[tuple[int, int]] = []
    target = tmp_path / "out" / "snapshot.tar.gz"
    target.parent.mkdir()
    saved = client.export_snapshot(ws, snapshot.id, to=target, on_progress=lambda n, t: progress.append((n, t)))
    assert saved.sha256 == hashlib.sha256(target.read_bytes()).hexdigest() == snapshot.sha256
    assert saved.size == target.stat().st_size == snapshot.size_bytes
    assert progress[-1] == (saved.size, saved.size)
    with tarfile.open(target) as tar:
        assert {"report/summary.md", "report/data.csv"} <= {m.name.lstrip("./") for m in tar.getmembers()}
        member = next(m for m in tar.getmembers() if m.name.endswith("summary.md"))
        assert tar.extractfile(member).read() == b"# Summary\n"

    live = client.export_snapshot(ws, live=True, include=["**/*.csv"], to=tmp_path / "live.tgz")
    assert live.file_count == 1
    with tarfile.open(live.path) as tar:
        assert [m.name.lstrip("./") for m in tar.getmembers()] == ["report/data.csv"]

    client.write_text(ws, "report/summary.md", "# Summary, revised\n")
    diff = client.diff_snapshots(ws, snapshot.id)
    assert [(e.kind, e.path, e.size_before, e.size_after) for e in diff] == [(3, "/report/summary.md", 10, 19)]
    assert diff.summary is not None and (diff.summary.modified, diff.summary.unchanged, diff.summary.to) == (1, 1, "")

    client.delete(ws, "report", recursive=True)
    restored = client.restore_snapshot(ws)
    assert restored.id == snapshot.id
    assert client.read_text(ws, "report/summary.md").text == "# Summary\n"


def test_an_abandoned_run_is_seen_listed_ended_and_its_work_kept_as_a_recovered_snapshot(
    tmp_path: Path, client_kind: Any
) -> None:
    with start_daemon(tmp_path, "--node-name", "py-node") as daemon, client_kind(daemon.address) as client:
        first = client.start_run(WS)
        client.write_text(WS, "notes.md", "one\n")
        published = client.finish_run(WS, first.id).snapshot
        status = client.workspace_status(WS)
        assert status.workspace.id == WS and not status.HasField("active_run")
        assert (status.newest_snapshot, status.copy_of, status.unpublished_changes) == (published.id, published.id, False)

        run = client.start_run(WS)
        assert (run.node, run.started_from) == ("py-node", published.id)
        client.write_text(WS, "draft.md", "unpublished\n")
        status = client.workspace_status(WS)
        active = status.active_run
        assert (active.workspace, active.run_id, active.node, active.local) == (WS, run.id, "py-node", True)
        assert active.started_at == run.started_at
        assert status.unpublished_changes and status.copy_of == published.id
        assert [(r.workspace, r.run_id, r.node, r.local) for r in client.list_runs()] == [(WS, run.id, "py-node", True)]

        abandoned = client.abandon_run(WS, reason="stuck for an hour")
        assert (abandoned.run_id, abandoned.lease_broken) == (run.id, False)
        recovered = abandoned.recovered
        assert (recovered.workspace, recovered.run_id, recovered.parent, recovered.recovered) == (WS, run.id, published.id, True)
        assert "stuck for an hour" in recovered.recovered_reason and recovered.file_count == 2  # notes.md and the draft
        assert not client.workspace_status(WS).HasField("active_run")
        assert client.list_runs() == []
        with pytest.raises(errors.NotFound):
            client.abandon_run(WS)

        assert [s.id for s in client.list_snapshots(WS)] == [published.id]
        listed = client.list_snapshots(WS, include_recovered=True)
        # The main line first, then what was kept off it.
        assert [(s.id, s.recovered, s.run_id) for s in listed] == [(published.id, False, first.id), (recovered.id, True, run.id)]


def test_import_archive_unpacks_a_local_tarball(client: Any, ws: str, tmp_path: Path) -> None:
    archive = tmp_path / "in.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for name, body in (("notes/one.txt", b"one\n"), ("notes/two.txt", b"two\n")):
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
    imported = client.import_archive(ws, from_=archive, path="incoming")
    assert (imported.file_count, imported.size_bytes) == (2, 8)
    assert client.read_text(ws, "incoming/notes/two.txt").text == "two\n"

    unsafe = tmp_path / "unsafe.tar"
    with tarfile.open(unsafe, "w") as tar:
        info = tarfile.TarInfo("../escape.txt")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    with pytest.raises(errors.UnsafeArchive):
        client.import_archive(ws, from_=unsafe)


def test_export_into_and_import_from_stream_between_calls_inside_the_workspace(client: Any, ws: str, tmp_path: Path) -> None:
    blob = tmp_path / "blob.bin"
    blob.write_bytes(os.urandom(3 << 20))  # random: the archive does not shrink, three chunks or more
    client.upload(ws, "data/blob.bin", from_=blob)

    exported: list[tuple[int, int]] = []
    header, file = client.export_into(ws, "out/data.tar.gz", live=True, include=["data/**"], on_progress=lambda n, total: exported.append((n, total)))
    assert (file.path, file.size, file.sha256) == ("/out/data.tar.gz", header.size, header.sha256)
    assert header.file_count == 1
    assert [n for n, _ in exported] == sorted({n for n, _ in exported}) and exported[-1] == (header.size, header.size)
    with pytest.raises(errors.AlreadyExists):
        client.export_into(ws, "out/data.tar.gz", live=True, mode="create_only")

    imported: list[tuple[int, int]] = []
    archive, unpacked = client.import_from(ws, "out/data.tar.gz", path="copy", on_progress=lambda n, total: imported.append((n, total)))
    assert archive.file.path == "/out/data.tar.gz"
    assert (unpacked.file_count, unpacked.size_bytes) == (1, 3 << 20)
    assert imported[-1] == (header.size, header.size) and len(imported) >= 3
    assert client.stat(ws, "copy/data/blob.bin").size == 3 << 20

    with pytest.raises(errors.UnsafeArchive):  # not an archive: refused whole
        client.import_from(ws, "data/blob.bin", path="bad")
    with pytest.raises(errors.NotFound):
        client.import_from(ws, "none.tar.gz")
    assert [e.path for e in client.list_dir(ws, "/")] == ["/copy", "/data", "/out"]


def test_workspaces(client: Any) -> None:
    created = client.create_workspace("alpha")
    assert created.id == "alpha" and not created.bound
    client.create_workspace("beta")
    assert [w.id for w in client.list_workspaces()] == ["alpha", "beta"]
    assert client.get_workspace("beta").id == "beta"
    with pytest.raises(errors.AlreadyExists):
        client.create_workspace("alpha")
    assert client.delete_workspace("alpha") is None
    assert [w.id for w in client.list_workspaces()] == ["beta"]
    with pytest.raises(errors.InvalidArgument):
        client.create_workspace("Not A Valid Id")
