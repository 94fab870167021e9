"""An agent-style loop: page through a big log with read_text, then fix one line with edit.

    python examples/page_and_edit.py --address 127.0.0.1:7447 --workspace demo

It writes a 20,000-line demo log into the workspace (created if missing),
reads it 2,000 lines at a time, as an agent with a small context window
would, until it finds the failing line, and edits just that line, guarded by
the version it read (a concurrent change makes the edit fail, not lose it).
"""

from __future__ import annotations

import argparse

import filetools

LOG = "logs/build.log"
NEEDLE = "status=FAILED"
PAGE_LINES = 2000


def demo_log(lines: int = 20_000, failing_line: int = 13_579) -> str:
    return "".join(
        f"step {n:05d} {NEEDLE if n == failing_line else 'status=ok'}\n" for n in range(1, lines + 1)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", default=None, help="HOST:PORT (default $FILETOOLS_ADDRESS or 127.0.0.1:7447)")
    parser.add_argument("--workspace", default="demo")
    parser.add_argument("--token", default=None, help="bearer token, if the daemon wants one")
    args = parser.parse_args()

    with filetools.Client(args.address, token=args.token) as client:
        try:
            client.create_workspace(args.workspace)
        except filetools.AlreadyExists:
            pass
        client.write_text(args.workspace, LOG, demo_log())

        start: int | None = 1
        while start is not None:
            window = client.read_text(args.workspace, LOG, start, PAGE_LINES, timeout=30)
            print(f"read lines {window.first_line}-{window.last_line}")
            for offset, line in enumerate(window.text.splitlines()):
                if NEEDLE in line:
                    print(f"found at line {window.first_line + offset}: {line}")
                    fixed = client.edit(
                        args.workspace, LOG, line, line.replace(NEEDLE, "status=retried"),
                        if_version=window.version, timeout=30,
                    )  # fmt: skip
                    print(fixed.diff, end="")
                    return
            start = window.next_start_line
        print(f"no line with {NEEDLE}")


if __name__ == "__main__":
    main()
