"""What only AsyncClient has: ``async for``, ``async with`` and task cancellation, on a running event loop."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import filetools
from filetools import errors

from conftest import Daemon


def _big_search_target(tmp_path: Path) -> Path:
    """Matches with 1,000 long context lines each: far more responses than the transport buffers."""
    source = tmp_path / "huge.txt"
    source.write_text(("MATCH\n" + ("y" * 490 + "\n") * 1000) * 64)
    return source


def test_breaking_out_of_async_for_cancels_the_call(daemon: Daemon, tmp_path: Path) -> None:
    async def main() -> None:
        async with filetools.AsyncClient(daemon.address) as client:
            await client.create_workspace("w")
            await client.upload("w", "huge.txt", from_=_big_search_target(tmp_path))
            async for match in client.search("w", "MATCH", context_after=1000):
                assert match.line_number == 1
                break
            # The loop keeps running while the log is awaited: asyncio closes the abandoned
            # async generator, whose cleanup cancels the call.
            log = await asyncio.to_thread(daemon.call_log, "Files/Search")
            assert log["code"] == "CANCELLED", log

    asyncio.run(main())


def test_cancelling_the_task_cancels_its_stream(daemon: Daemon, tmp_path: Path) -> None:
    async def main() -> None:
        async with filetools.AsyncClient(daemon.address) as client:
            await client.create_workspace("w")
            await client.upload("w", "huge.txt", from_=_big_search_target(tmp_path))
            first_match = asyncio.Event()

            async def consume() -> None:
                async for _ in client.search("w", "MATCH", context_after=1000):
                    first_match.set()
                    await asyncio.Event().wait()  # an agent busy with the first match

            task = asyncio.create_task(consume())
            await first_match.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            log = await asyncio.to_thread(daemon.call_log, "Files/Search")
            assert log["code"] == "CANCELLED", log

    asyncio.run(main())


def test_concurrent_calls_share_one_client(daemon: Daemon) -> None:
    async def main() -> None:
        async with filetools.AsyncClient(daemon.address) as client:
            await client.create_workspace("w")
            await asyncio.gather(*(client.write_text("w", f"f{i}.txt", f"{i}\n") for i in range(20)))
            windows = await asyncio.gather(*(client.read_text("w", f"f{i}.txt") for i in range(20)))
            assert [w.text for w in windows] == [f"{i}\n" for i in range(20)]
            with pytest.raises(errors.WorkspaceNotFound):
                await client.read_text("missing", "f0.txt")

    asyncio.run(main())
