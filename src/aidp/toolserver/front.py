"""`aidp mcp`'s first answers, given while the MCP SDK is still loading.

Importing the SDK takes most of a second (its ~500 pydantic models of the protocol:
bench/RESULTS.md, "aidp mcp start"), and an agent that connects its MCP servers without
waiting for them (Claude Code) leaves out the tools of a server that has not answered
by then. So `aidp mcp` loads the SDK in a thread and meanwhile answers what a client
sends first, itself:

- `initialize`, when it is the first message and of the usual shape: the result the
  SDK gives (this server's capabilities, instructions and name; the protocol version
  asked for when the SDK speaks it, else its newest handshake version); anything else
  first, or a shape the SDK might refuse, is left to the SDK;
- `tools/list` right after that (notifications between them are fine): the tools of
  aidp.toolserver.tools, as the SDK lists them.

Anything else, and everything after it, waits for the SDK. Once it has loaded, the
SDK's server (aidp.toolserver.serve) is given every byte read so far, in order, and
serves as before; its own answers to the requests answered here are not sent again.
tests/test_mcp_front.py holds these answers equal to the SDK's.
"""

from __future__ import annotations

import fcntl
import os
import select
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import orjson

from aidp import __version__
from aidp.toolserver.tools import TOOLS

# What the server says of itself at `initialize` (the SDK's server is built with it).
NAME = "aidp"
INSTRUCTIONS = (
    "aidp keeps this project's backlog (tasks_*) and your TODO list for this session "
    "(todo_write, todo_read). Keep your plan with todo_write when you have no plan tool "
    "of your own."
)
# The protocol versions the SDK's `initialize` agrees to (mcp_types.version's
# HANDSHAKE_PROTOCOL_VERSIONS; any other is answered with the newest of them).
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
NEWEST_HANDSHAKE = HANDSHAKE_VERSIONS[-1]

_REQUEST_KEYS = {"jsonrpc", "id", "method", "params"}


def _request_id(message: Any, method: str) -> str | int | None:
    """The id of `message` when it is a JSON-RPC request for `method` of the plain
    shape (an id that is a string or an integer; no key JSON-RPC does not have)."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" \
            or message.get("method") != method or not set(message) <= _REQUEST_KEYS:
        return None
    rid = message.get("id")
    return rid if isinstance(rid, (str, int)) and not isinstance(rid, bool) else None


def initialize_result(version: str) -> dict[str, Any]:
    """The `initialize` result for a client asking for protocol `version`."""
    return {"capabilities": {"tools": {"listChanged": False}}, "instructions": INSTRUCTIONS,
            "protocolVersion": version if version in HANDSHAKE_VERSIONS else NEWEST_HANDSHAKE,
            "serverInfo": {"name": NAME, "version": __version__}}


def tools_result() -> dict[str, Any]:
    """The `tools/list` result: every tool, as the SDK lists a `types.Tool`."""
    return {"tools": [{"description": description, "inputSchema": schema, "name": name}
                      for name, (description, schema) in TOOLS.items()]}


def _initialize(message: Any) -> tuple[str | int, dict[str, Any]] | None:
    """(id, result) for an `initialize` request of the usual shape, else None."""
    rid = _request_id(message, "initialize")
    params = message.get("params") if rid is not None else None
    if not isinstance(params, dict) or not set(params) <= {"protocolVersion", "capabilities",
                                                           "clientInfo"}:
        return None
    version, capabilities, info = (params.get("protocolVersion"), params.get("capabilities"),
                                   params.get("clientInfo"))
    if not (isinstance(version, str) and isinstance(capabilities, dict)
            and all(isinstance(v, dict) for v in capabilities.values())
            and isinstance(info, dict) and isinstance(info.get("name"), str)
            and isinstance(info.get("version"), str)
            and all(isinstance(v, str) for v in info.values())):
        return None
    assert rid is not None
    return rid, initialize_result(version)


class Front:
    """Reads the client's first messages from `wire` (a descriptor) and answers those it
    can on stdout, until `ready()` says the SDK has loaded or it reads one it cannot
    answer. `read` holds every byte read; `answered` the ids answered here (the SDK's
    own answers to those are dropped)."""

    def __init__(self, wire: int, ready: Callable[[], bool]) -> None:
        self.wire = wire
        self.ready = ready
        self.read = bytearray()
        self.answered: Counter[str | int] = Counter()
        self.ended = False  # stdin closed
        self.gone = False  # stdout closed: the client has gone
        self._at = 0  # where the next line to look at starts in `read`
        self._initialized = False  # `initialize` was answered here
        self._done = False  # a message was left to the SDK: answer nothing more

    def run(self, poll: float = 0.01) -> None:
        while not (self.ready() or self.ended or self._done):
            if not select.select([self.wire], [], [], poll)[0]:
                continue
            chunk = os.read(self.wire, 65536)
            if not chunk:
                self.ended = True
                break
            self.read += chunk
            self._answer_lines()

    def _answer_lines(self) -> None:
        while not self._done:
            end = self.read.find(b"\n", self._at)
            if end < 0:
                return
            line = bytes(self.read[self._at:end])
            self._at = end + 1
            self._take(line)

    def _take(self, line: bytes) -> None:
        try:
            message = orjson.loads(line)
        except orjson.JSONDecodeError:
            self._done = True
            return
        if not self._initialized:
            found = _initialize(message)
            if found is None:
                self._done = True
                return
            self._initialized = True
            self._send(found[0], found[1])
            return
        if isinstance(message, dict) and "id" not in message \
                and message.get("method") == "notifications/initialized" \
                and set(message) <= {"jsonrpc", "method", "params"} \
                and message.get("jsonrpc") == "2.0":
            return  # a notification: the SDK hears it when it takes over
        rid = _request_id(message, "tools/list")
        if rid is None or message.get("params", {}) != {}:
            self._done = True
            return
        self._send(rid, tools_result())

    def _send(self, rid: str | int, result: dict[str, Any]) -> None:
        self.answered[rid] += 1
        data = orjson.dumps({"jsonrpc": "2.0", "id": rid, "result": result}) + b"\n"
        try:
            while data:
                data = data[os.write(1, data):]
        except (BrokenPipeError, ConnectionResetError):
            self.gone = self._done = True  # the client stopped reading: nothing to serve


@contextmanager
def client_wire() -> Iterator[int]:
    """The descriptor the client's messages come on (the one stdin was); meanwhile fd 0
    reads the null device, so nothing a tool starts can take the client's bytes (the
    SDK's transport does the same for both descriptors; it still has stdout)."""
    wire = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        yield wire  # never closed: the server's reading thread may still block on it
    finally:
        os.dup2(wire, 0)


def serve_after(wire: int, serve: Callable[[], Callable[..., int]], *args: Any) -> int:
    """Answer the first messages on `wire` while `serve()` (importing the SDK) runs in a
    thread; then the server it returns serves everything, `*args` first, then what was
    read and the rest."""
    found: list[Callable[..., int]] = []
    failed: list[BaseException] = []
    loaded = threading.Event()

    def load() -> None:
        try:
            found.append(serve())
        except BaseException as exc:  # told in the main thread
            failed.append(exc)
        finally:
            loaded.set()

    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.001)  # the client's line is answered at once, not after 5 ms
    try:
        threading.Thread(target=load, name="aidp-mcp-load", daemon=True).start()
        front = Front(wire, loaded.is_set)
        front.run()
        if front.gone:
            return 0  # as the server does when the client stops reading
        loaded.wait()
    finally:
        sys.setswitchinterval(interval)
    if failed:
        raise failed[0]
    return found[0](*args, wire=wire, head=bytes(front.read), answered=front.answered)
