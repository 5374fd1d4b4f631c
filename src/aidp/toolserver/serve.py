"""`aidp mcp`'s wire: the MCP SDK's low-level server over stdio, with aidp's tools.

The SDK (`mcp`, 2.x) is imported here and in .sdk (its server parts only) and nowhere
else, and only `aidp mcp` imports this module, so no other command pays for it
(tests/test_startup.py checks both).

What the stock transport does not do, done here (docs/mcp.md, "The wire"):
- a line that is not JSON gets a JSON-RPC parse error (-32700, id null), and a JSON
  value that is no JSON-RPC message an invalid-request error (-32600, with its id when
  it has one); the stock transport answers neither, and the client would wait forever;
- a message with an id that is no string or integer (`1.5`, `null`, `true`, `[1]`) gets
  an invalid-request error (-32600, id null): the stock transport reads it as a
  notification, drops the id and answers nothing (a `tools/call` is not even run).
  Hence stdin is read here, not by the SDK's transport (which only writes stdout);
- tool arguments are checked by aidp.toolserver.tools (one line per refusal), not by
  the SDK's validation, whose errors are multi-line;
- the SDK's own log (tracebacks of a failed handler) is kept off stderr: no traceback
  ever reaches the client or the agent's log;
- the client's first `initialize` and `tools/list` may have been answered while the
  SDK loaded (aidp.toolserver.front): the server reads them again with the rest, and
  its own answers to them are not sent twice.
"""

from __future__ import annotations

import io
import json
import logging
import os
import sys
from collections import Counter
from collections.abc import AsyncIterable, AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from pydantic import ValidationError
from pydantic_core import from_json

from aidp import __version__
from aidp.toolserver.front import INSTRUCTIONS, NAME
from aidp.toolserver.sdk import Server, SessionMessage, stdio_server, types
from aidp.toolserver.tools import TOOLS, Place, call


def tool_list() -> list[types.Tool]:
    return [types.Tool(name=name, description=description, input_schema=schema)
            for name, (description, schema) in TOOLS.items()]


def build(place: Place) -> Server[Any]:
    listed = types.ListToolsResult(tools=tool_list())

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return listed

    one_at_a_time = anyio.Lock()

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        # One call at a time, in the order they came (two plans sent at once are kept in
        # that order); in a thread, as a call may wait for the tasklist's lock.
        async with one_at_a_time:
            outcome = await anyio.to_thread.run_sync(call, place, params.name,
                                                     params.arguments)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text) for text in outcome.texts],
            is_error=outcome.is_error,
        )

    server: Server[Any] = Server(NAME, version=__version__, instructions=INSTRUCTIONS,
                                 on_list_tools=list_tools, on_call_tool=call_tool)
    server.middleware.clear()  # OpenTelemetry spans: nothing here exports them
    return server


def received(line: str) -> SessionMessage | types.JSONRPCError:
    """The message a line from the client holds, or the JSON-RPC error that answers it.

    An id must be a string or an integer (MCP: never null; JSON-RPC 2.0 allows any
    number and null, and MCP narrows it); one that is neither cannot be answered under
    its own id, so the error goes out with id null, as JSON-RPC 2.0 says for a request
    whose id could not be read. A message without an id is a notification: never
    answered, unless it is no JSON-RPC message at all."""
    try:
        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as exc:
        return refusal(exc)
    if isinstance(message, types.JSONRPCNotification):
        # The SDK's model ignores keys it does not know: a request with a bad id reads
        # as a notification with its id dropped. The line parsed just now, so it parses.
        parsed = from_json(line)
        if "id" in parsed:
            return _bad_id(parsed["id"])
    return SessionMessage(message)


def _bad_id(value: Any) -> types.JSONRPCError:
    shown = json.dumps(value, separators=(",", ":"))[:40]  # 1e3 shows as 1000.0
    return types.JSONRPCError(jsonrpc="2.0", id=None, error=types.ErrorData(
        code=types.INVALID_REQUEST,
        message=f"Invalid request: the id must be a string or an integer, not {shown}"))


def _valid_id(value: Any) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def refusal(exc: Exception) -> types.JSONRPCError:
    """The JSON-RPC error for a line that holds no JSON-RPC message."""
    errors = exc.errors() if isinstance(exc, ValidationError) else []
    if not errors or errors[0]["type"] == "json_invalid":
        # pydantic's one line: "Invalid JSON: EOF while parsing a value at line 1 column 5"
        why = " ".join(str(errors[0].get("msg", "")).split())[:200] if errors else ""
        return types.JSONRPCError(jsonrpc="2.0", id=None, error=types.ErrorData(
            code=types.PARSE_ERROR, message=f"Parse error: {why or 'the line is not JSON'}"))
    parsed = next((e["input"] for e in errors if isinstance(e.get("input"), dict)), None)
    if parsed is not None and "id" in parsed and not _valid_id(parsed["id"]):
        return _bad_id(parsed["id"])
    raw_id = parsed.get("id") if parsed is not None else None
    return types.JSONRPCError(jsonrpc="2.0", id=raw_id if _valid_id(raw_id) else None,
                              error=types.ErrorData(
        code=types.INVALID_REQUEST,
        message="Invalid request: expected a JSON-RPC 2.0 request or notification object"))


class _Replayed(io.RawIOBase):
    """The bytes already read from the client (`head`), then the rest from `wire`."""

    def __init__(self, head: bytes, wire: int) -> None:
        super().__init__()
        self._head = memoryview(head)
        self._wire = wire

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._head:
            size = min(len(buffer), len(self._head))
            buffer[:size] = self._head[:size]
            self._head = self._head[size:]
            return size
        data = os.read(self._wire, len(buffer))
        buffer[:len(data)] = data
        return len(data)


@asynccontextmanager
async def _client_lines(wire: int, head: bytes) -> AsyncIterator[AsyncIterable[str]]:
    """The client's lines: those read before the server started (`head`), then the
    rest from `wire`, the descriptor stdin was (fd 0 reads the null device while
    serving: aidp.toolserver.front.client_wire)."""
    text = io.TextIOWrapper(io.BufferedReader(_Replayed(head, wire)), encoding="utf-8",
                            errors="replace")
    yield anyio.wrap_file(text)


# How long, after stdin closed, the requests already read may take to be answered.
DRAIN_SECONDS = 30


async def _serve(place: Place, wire: int, head: bytes, early: Counter[str | int]) -> None:
    server = build(place)
    nothing = anyio.wrap_file(io.StringIO())  # stdin is read by _client_lines
    async with _client_lines(wire, head) as wire_in, \
            stdio_server(stdin=nothing) as (_, wire_out):
        # Relays on both sides of the server. Inbound, a line that holds no message the
        # server may take is answered here and goes no further. Both keep count of the requests
        # not yet answered: when stdin closes, those are answered before the server
        # stops (the SDK would cancel them, leaving a change made and never reported).
        to_server, server_in = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        server_out, from_server = anyio.create_memory_object_stream[SessionMessage](0)
        waiting: set[Any] = set()
        answered = anyio.Event()
        answered_early = Counter(early)

        async def inbound() -> None:
            nonlocal answered
            async with to_server:
                async for line in wire_in:
                    item = received(line)
                    if isinstance(item, types.JSONRPCError):
                        await wire_out.send(SessionMessage(item))
                        continue
                    if isinstance(item.message, types.JSONRPCRequest):
                        waiting.add(item.message.id)
                    await to_server.send(item)
                with anyio.move_on_after(DRAIN_SECONDS):
                    while waiting:
                        answered = anyio.Event()
                        await answered.wait()

        async def outbound() -> None:
            # Ends after the server (and so inbound) did: then stdout is closed.
            async with from_server, wire_out:
                async for item in from_server:
                    message = item.message
                    if not isinstance(message, (types.JSONRPCResponse, types.JSONRPCError)):
                        await wire_out.send(item)
                        continue
                    if message.id is not None and answered_early[message.id] > 0:
                        answered_early[message.id] -= 1  # already answered: not again
                    else:
                        await wire_out.send(item)
                    waiting.discard(message.id)
                    answered.set()

        async with anyio.create_task_group() as group:
            group.start_soon(inbound)
            group.start_soon(outbound)
            async with server_out:
                await server.run(server_in, server_out,
                                 server.create_initialization_options())


def serve(place: Place, *, wire: int, head: bytes = b"",
          answered: Counter[str | int] | None = None) -> int:
    """Serve the client on descriptor `wire` until it closes; 0 then, and on Ctrl-C.
    `head`: what was read from it already; `answered`: the ids answered already
    (aidp.toolserver.front). Reads go through the reader the command line installed
    (aidp.store), as for any command."""
    logging.getLogger("mcp").disabled = True
    logging.getLogger("mcp").propagate = False
    try:
        anyio.run(_serve, place, wire, head, answered or Counter())
    except KeyboardInterrupt:
        pass
    except Exception as exc:  # anyio reports what ended the tasks as an exception group
        leaves = list(_leaves(exc))
        if all(isinstance(e, (BrokenPipeError, ConnectionResetError)) for e in leaves):
            return 0  # the client stopped reading: it has gone, nothing to tell
        first = leaves[0] if leaves else exc
        reason = " ".join(str(first).split()) or type(first).__name__
        sys.stderr.write(f"Error: aidp mcp stopped: {reason}\n")
        return 1
    return 0


def _leaves(exc: BaseException) -> Iterator[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from _leaves(inner)
    else:
        yield exc
