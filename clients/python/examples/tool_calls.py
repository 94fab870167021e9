"""A model's tool calls, answered by the dispatcher: the texts a model would read.

    python examples/tool_calls.py --address 127.0.0.1:7447 --workspace demo

In place of a model, a fixed list of tool calls (JSON arguments, as OpenAI
sends them): write a file, read it, an edit guarded by a stale version, the
error that says which version to retry with, and the retry. Each call's text
is printed as a model would get it back.
"""

from __future__ import annotations

import argparse
import json

import filetools
from filetools.tools import ToolDispatcher, ToolResult


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", default=None, help="HOST:PORT (default $FILETOOLS_ADDRESS or 127.0.0.1:7447)")
    parser.add_argument("--workspace", default="demo")
    args = parser.parse_args()

    with filetools.Client(args.address) as client:
        try:
            client.create_workspace(args.workspace)
        except filetools.AlreadyExists:
            pass
        tools = ToolDispatcher(client, args.workspace)
        # What a request to a model would carry: tools=tools.openai_tools() (or tools.anthropic_tools()).
        print("tools:", ", ".join(tool["function"]["name"] for tool in tools.openai_tools()))

        def call(name: str, arguments: dict[str, object]) -> ToolResult:
            result = tools.call(name, json.dumps(arguments))
            print(f"\n> {name} {json.dumps(arguments)}\n{result.text}", end="")
            return result

        written = call("write", {"path": "/app.py", "content": "DEBUG = True\n"})
        stale = written.structured["version"]
        call("edit", {"path": "/app.py", "edits": [{"old_text": "True", "new_text": "False"}]})
        failed = call("edit", {"path": "/app.py", "edits": [{"old_text": "False", "new_text": "None"}], "if_version": stale})
        current = failed.structured["error"]["metadata"]["current_version"]
        call("edit", {"path": "/app.py", "edits": [{"old_text": "False", "new_text": "None"}], "if_version": current})
        call("read", {"path": "/app.py"})


if __name__ == "__main__":
    main()
