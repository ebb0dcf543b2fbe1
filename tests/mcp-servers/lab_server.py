"""An MCP server for the runlet-mcp tests, built with the `mcp` package.

    lab_server.py http PORT   serves Streamable HTTP at http://127.0.0.1:PORT/mcp
    lab_server.py stdio       speaks on standard input and output
    lab_server.py stubborn    as stdio, but ignores SIGTERM and outlives its standard input

Its tools add numbers, sleep (and remember the calls that were cancelled), report progress,
fail, die, answer structured content that violates their own output schema, and echo the
`_meta` Runlet sends.
"""

import os
import signal
import sys
import time
from typing import Any, TypedDict

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations

server = MCPServer("lab", version="1.0.0")
cancelled: list[str] = []
seen_meta: list[dict] = []


class Reading(TypedDict):
    celsius: float


@server.tool()
def add(a: int, b: int) -> int:
    """The sum of two integers."""
    return a + b


@server.tool()
async def slow(tag: str, seconds: float) -> str:
    """Sleeps, then answers `tag`; a cancelled call's tag is remembered."""
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        cancelled.append(tag)
        raise
    return tag


@server.tool()
def cancelled_tags(after: str = "") -> list[str]:
    """The tags of the `slow` calls that were cancelled, in order (`after` only orders the call)."""
    return list(cancelled)


@server.tool()
def die(code: int) -> str:
    """Ends the server's process at once with exit status `code`."""
    os._exit(code)


@server.tool(annotations=ToolAnnotations(idempotentHint=True))
def die_idempotently(code: int) -> str:
    """As `die`, for a tool whose annotations say it is idempotent."""
    os._exit(code)


@server.tool()
async def steps(count: int, ctx: Context) -> str:
    """Reports progress `count` times, then answers."""
    for step in range(1, count + 1):
        await ctx.report_progress(step, count, f"step {step}")
        await anyio.sleep(0.05)
    return f"{count} steps"


@server.tool()
def fail(reason: str) -> str:
    """Always fails with `reason`."""
    return CallToolResult(content=[TextContent(type="text", text=reason)], is_error=True)


@server.tool()
def reading(city: str) -> Reading:
    """A temperature; its structured content breaks the declared output schema."""
    return CallToolResult(content=[TextContent(type="text", text="hot")], structured_content={"celsius": "hot"})


@server.tool(structured_output=True)
def meta(ctx: Context) -> dict[str, Any]:
    """The `_meta` of this request, without the reserved MCP keys."""
    return dict(ctx.request_context.meta or {})


# `reading` advertises its output schema without the server enforcing it.
server._tool_manager.get_tool("reading").fn_metadata.output_model = None

if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    elif mode == "stdio":
        server.run("stdio")
    elif mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        server.run("stdio")
        while True:
            time.sleep(1)
