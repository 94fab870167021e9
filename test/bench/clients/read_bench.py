"""The Python client's bench driver (run by test/bench/clients.ts with .venv/bin/python).

One scenario of reads through ``filetools.Client`` against a running daemon;
the result as JSON on stdout. Takes the same JSON argument and prints the same
JSON as read_bench.ts (see Job there).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

from filetools import Client
from filetools.v1 import files_pb2

job: dict[str, Any] = json.loads(sys.argv[1])
client = Client(job["address"])


def read_small() -> int:
    """The whole small file: its size in UTF-8 bytes."""
    return len(client.read_text(job["workspace"], job["path"]).text.encode())


def latency() -> dict[str, Any]:
    for _ in range(job["warmup"]):
        read_small()
    samples_ms = []
    size = 0
    for _ in range(job["calls"]):
        started = time.perf_counter_ns()
        size = read_small()
        samples_ms.append((time.perf_counter_ns() - started) / 1e6)
    return {"samplesMs": samples_ms, "bytes": size}


def stream() -> dict[str, Any]:
    """The whole file, window after window of windowBytes, each from the previous one's next line; chunk by chunk."""
    started = time.perf_counter()
    size = lines = windows = 0
    line = 1
    while line:
        with client.read(job["workspace"], job["path"], line, max_bytes=job["windowBytes"]) as window:
            for event in window:
                if isinstance(event, files_pb2.ReadChunk):
                    lines += event.text.count("\n")
        trailer = window.summary
        assert trailer is not None, "the stream ended without a trailer"
        size += trailer.bytes_returned
        line = trailer.next_line
        windows += 1
    return {"seconds": time.perf_counter() - started, "bytes": size, "lines": lines, "windows": windows}


def concurrent() -> dict[str, Any]:
    """`concurrency` threads share the calls (a blocking client: a thread per call in flight)."""
    for _ in range(job["warmup"]):
        read_small()
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
            n = read_small()
            with lock:
                size += n

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
    client.close()
