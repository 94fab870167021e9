"""The Python client's bench driver (run by test/bench/clients.ts with .venv/bin/python).

One scenario of Read calls against a running daemon; the result as JSON on
stdout. Takes the same JSON argument and prints the same JSON as
read_bench.ts (see Job there).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

import grpc

from filetools.v1 import files_pb2, files_pb2_grpc

job: dict[str, Any] = json.loads(sys.argv[1])
channel = grpc.insecure_channel(job["address"], options=[("grpc.max_receive_message_length", 64 << 20)])
stub = files_pb2_grpc.FilesStub(channel)


def read_window(start_line: int, max_bytes: int | None = None) -> tuple[int, int, int]:
    """One whole Read window: its text's line feeds, and the trailer's bytes and next line."""
    request = files_pb2.ReadRequest(workspace=job["workspace"], path=job["path"], start_line=start_line, max_bytes=max_bytes)
    newlines = 0
    trailer = None
    for message in stub.Read(request):
        if message.HasField("chunk"):
            newlines += message.chunk.text.count("\n")
        elif message.HasField("trailer"):
            trailer = message.trailer
    assert trailer is not None, "the stream ended without a trailer"
    return newlines, trailer.bytes_returned, trailer.next_line


def latency() -> dict[str, Any]:
    for _ in range(job["warmup"]):
        read_window(1)
    samples_ms = []
    size = 0
    for _ in range(job["calls"]):
        started = time.perf_counter_ns()
        _, size, _ = read_window(1)
        samples_ms.append((time.perf_counter_ns() - started) / 1e6)
    return {"samplesMs": samples_ms, "bytes": size}


def stream() -> dict[str, Any]:
    """The whole file, window after window of windowBytes, each starting at the previous one's next line."""
    started = time.perf_counter()
    size = lines = windows = 0
    line = 1
    while line != 0:
        newlines, window_bytes, line = read_window(line, job["windowBytes"])
        size += window_bytes
        lines += newlines
        windows += 1
    return {"seconds": time.perf_counter() - started, "bytes": size, "lines": lines, "windows": windows}


def concurrent() -> dict[str, Any]:
    """`concurrency` threads share the calls (grpc's sync API: a thread per call in flight)."""
    for _ in range(job["warmup"]):
        read_window(1)
    remaining = job["calls"]
    size = 0
    lock = threading.Lock()

    def worker() -> None:
        nonlocal remaining, size
        while True:
            with lock:
                if remaining == 0:
                    return
                remaining -= 1
            _, window_bytes, _ = read_window(1)
            with lock:
                size += window_bytes

    threads = [threading.Thread(target=worker) for _ in range(job["concurrency"])]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {"seconds": time.perf_counter() - started, "calls": job["calls"], "bytes": size}


scenarios = {"latency": latency, "stream": stream, "concurrent": concurrent}
try:
    print(json.dumps(scenarios[job["scenario"]]()))
finally:
    channel.close()
