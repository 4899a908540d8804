"""The official Python MCP client (the `mcp` package) driven line by line, for hak's MCP test
(tests/all/mcp.rs); the same protocol as client.mjs.

    python client.py stdio <command> [args...]   start the server and talk over its stdio
    python client.py http <url>                  streamable HTTP ($HAK_MCP_BEARER: bearer key)

stdin: one JSON command per line, {"op": "list"} or {"op": "call", "name", "arguments"};
stdout: one JSON line per command: the result as the SDK's model dumps it (by alias), or
{"clientError": message} when the SDK raised.
"""

import json
import os
import sys

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def server_of(argv):
    how, target, *rest = argv
    if how == "stdio":
        return StdioServerParameters(command=target, args=rest, env=dict(os.environ))
    if how == "http":
        bearer = os.environ.get("HAK_MCP_BEARER")
        headers = {"authorization": f"Bearer {bearer}"} if bearer else {}
        return streamable_http_client(target, http_client=create_mcp_http_client(headers=headers))
    raise SystemExit("usage: client.py stdio <command> [args...] | http <url>")


def dump(result):
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


async def main():
    async with Client(server_of(sys.argv[1:])) as client:
        while True:
            line = await anyio.to_thread.run_sync(sys.stdin.readline)
            if not line:
                break
            if not line.strip():
                continue
            command = json.loads(line)
            try:
                if command["op"] == "list":
                    out = dump(await client.list_tools())
                elif command["op"] == "call":
                    notes = []

                    async def progress(*_args):
                        notes.append(1)

                    result = await client.call_tool(
                        command["name"], command.get("arguments"), progress_callback=progress
                    )
                    out = dump(result)
                    out["progressNotes"] = len(notes)
                else:
                    out = {"clientError": f"unknown op {command['op']}"}
            except Exception as e:  # the SDK raised: a protocol error
                out = {"clientError": str(e)}
            print(json.dumps(out), flush=True)


anyio.run(main)
