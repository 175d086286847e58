#!/usr/bin/env python3
"""An independent MCP client for `pi-index mcp`: the official Python SDK
(`mcp`, pinned in requirements.txt) drives the server over stdio.

    client.py STEPS.json -- COMMAND [ARGS...]   the server over stdio
    client.py STEPS.json --url URL             a server on streamable HTTP

STEPS.json is a list of steps, run in order on one connection:

    {"call": "search", "args": {"query": "tokio"}}   one tool call
    {"bench": "search", "args": {...}, "n": 200}     n calls, timed in the client
    {"write": PATH, "text": "..."}                   append to a file (a session
                                                     growing between two calls;
                                                     its directories made)
    {"remove": PATH}                                 delete a file
    {"rename": PATH, "to": PATH}                     move a file (the target's
                                                     directories made)

stdout gets one JSON object: the server's name and version and the
negotiated protocol version, the tools as listed (name, description, input
and output schema, annotations), and one result per step: a call's
`is_error`, its text content and its structured content; a bench's
per-call times in milliseconds; a write's, remove's or rename's `null`.
Nothing waits between steps: a call right after a write is made as soon
as the write returned. A call the server
answers with a protocol error (not a tool error) gives `protocol_error`. Nothing is asserted here: the Rust test
(tests/mcp.rs) does that. The server inherits this process's environment
(HOME, PI_CODING_AGENT_DIR, ...), which the SDK would otherwise filter.
"""

import asyncio
import json
import os
import sys
import time

from mcp import ClientSession, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def connect(target):
    if target[0] == "--url":
        return streamable_http_client(target[1])
    params = StdioServerParameters(command=target[1], args=target[2:], env=dict(os.environ))
    return stdio_client(params)


async def main(steps, target):
    out = {"results": []}
    async with connect(target) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            out["server"] = {
                "name": init.server_info.name,
                "version": init.server_info.version,
                "protocol_version": init.protocol_version,
                "instructions": init.instructions,
            }
            listed = await session.list_tools()
            out["tools"] = [dump(t) for t in listed.tools]
            for step in steps:
                if "write" in step:
                    os.makedirs(os.path.dirname(step["write"]), exist_ok=True)
                    with open(step["write"], "a") as f:
                        f.write(step["text"])
                    out["results"].append(None)
                elif "remove" in step:
                    os.remove(step["remove"])
                    out["results"].append(None)
                elif "rename" in step:
                    os.makedirs(os.path.dirname(step["to"]), exist_ok=True)
                    os.rename(step["rename"], step["to"])
                    out["results"].append(None)
                elif "call" in step:
                    try:
                        r = await session.call_tool(step["call"], step.get("args", {}))
                    except MCPError as e:
                        out["results"].append({"protocol_error": str(e)})
                        continue
                    out["results"].append(
                        {
                            "is_error": r.is_error,
                            "text": "".join(c.text for c in r.content if c.type == "text"),
                            "structured": r.structured_content,
                        }
                    )
                else:
                    times = []
                    errors = 0
                    for _ in range(step.get("n", 100)):
                        t = time.perf_counter()
                        r = await session.call_tool(step["bench"], step.get("args", {}))
                        times.append((time.perf_counter() - t) * 1000)
                        errors += bool(r.is_error)
                    out["results"].append({"times_ms": times, "errors": errors})
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    if len(sys.argv) < 4 or sys.argv[2] not in ("--", "--url"):
        sys.exit("usage: client.py STEPS.json -- COMMAND [ARGS...] | client.py STEPS.json --url URL")
    with open(sys.argv[1]) as f:
        steps = json.load(f)
    asyncio.run(main(steps, sys.argv[2:]))
