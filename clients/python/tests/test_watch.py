"""Watch and the journal from Python: the sync and asyncio iterators resume by themselves from their cursor."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import filetools
from filetools import errors
from filetools.v1 import journal_pb2

from conftest import start_daemon


def test_watch_resumes_by_itself_across_a_daemon_restart(tmp_path: Path) -> None:
    (tmp_path / "first").mkdir()
    with start_daemon(tmp_path / "first") as first:
        address = first.address
        data_dir = first.data_dir
        client = filetools.Client(address)
        client.create_workspace("py")
        for i in range(5):
            client.write_text("py", f"/f{i}.txt", f"{i}\n")
        watch = client.watch("py", since=0)
        seen = [next(watch) for _ in range(5)]
        assert [e.path for e in seen] == [f"/f{i}.txt" for i in range(5)]
        assert [e.cursor for e in seen] == [1, 2, 3, 4, 5]
        assert seen[0].kind == journal_pb2.JOURNAL_KIND_CREATED and seen[0].actor.rpc == "Write"
    # The daemon is gone; another one on the same address and data directory takes its place.
    (tmp_path / "second").mkdir()
    with start_daemon(tmp_path / "second", "--listen", address, "--data-dir", str(data_dir)):
        with filetools.Client(address) as other:
            other.write_text("py", "/after.txt", "x")
        entry = next(watch)  # the same iterator: resumed after cursor 5
        assert (entry.cursor, entry.path) == (6, "/after.txt")
        watch.close()
        client.close()


def test_watch_from_a_cursor_the_journal_no_longer_holds_is_cursor_out_of_range(tmp_path: Path) -> None:
    with start_daemon(tmp_path, "--journal-max-entries", "20") as daemon, filetools.Client(daemon.address) as client:
        client.create_workspace("small")
        for i in range(100):
            client.write_text("small", f"/f{i % 3}.txt", str(i))
        with pytest.raises(errors.CursorOutOfRange) as caught:
            next(client.watch("small", since=1))
        assert int(caught.value.metadata["oldest_cursor"]) > 2
        assert caught.value.metadata["last_cursor"] == "100"
        entries = list(client.journal("small", after_cursor=95))
        assert [e.cursor for e in entries] == [96, 97, 98, 99, 100]


def test_async_watch_and_journal(tmp_path: Path) -> None:
    async def main(address: str) -> None:
        async with filetools.AsyncClient(address) as client:
            await client.create_workspace("aio")
            await client.make_dir("aio", "/docs")
            await client.write_text("aio", "/docs/a.md", "a")
            await client.write_text("aio", "/skip.txt", "s")
            await client.write_text("aio", "/docs/b.md", "b")
            got = []
            async for entry in client.watch("aio", ["*.md"], since=0):
                got.append(entry.path)
                if len(got) == 2:
                    break
            assert got == ["/docs/a.md", "/docs/b.md"]
            entries = [e async for e in client.journal("aio", globs=["docs/**"])]
            assert [(e.path, e.kind) for e in entries] == [
                ("/docs", journal_pb2.JOURNAL_KIND_MADE_DIRECTORY),
                ("/docs/a.md", journal_pb2.JOURNAL_KIND_CREATED),
                ("/docs/b.md", journal_pb2.JOURNAL_KIND_CREATED),
            ]

    with start_daemon(tmp_path) as daemon:
        asyncio.run(main(daemon.address))


def test_async_watch_resumes_by_itself_across_a_daemon_restart(tmp_path: Path) -> None:
    (tmp_path / "first").mkdir()
    (tmp_path / "second").mkdir()

    async def main() -> None:
        with start_daemon(tmp_path / "first") as first:
            address, data_dir = first.address, first.data_dir
            client = filetools.AsyncClient(address)
            await client.create_workspace("aio")
            await client.write_text("aio", "/one.txt", "1")
            watch = client.watch("aio", since=0).__aiter__()
            assert (await watch.__anext__()).path == "/one.txt"
        with start_daemon(tmp_path / "second", "--listen", address, "--data-dir", str(data_dir)):
            async with filetools.AsyncClient(address) as other:
                await other.write_text("aio", "/two.txt", "2")
            entry = await watch.__anext__()  # resumed after cursor 1 on the new daemon
            assert (entry.cursor, entry.path) == (2, "/two.txt")
            await watch.aclose()  # type: ignore[attr-defined]
            await client.close()

    asyncio.run(main())
