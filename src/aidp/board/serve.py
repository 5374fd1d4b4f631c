"""Running `aidp board`: the socket bound first (a port in use is one line, exit 2),
the start-up line printed and flushed at once, the browser opened, uvicorn serving in a
thread of its own until Ctrl-C or SIGTERM, then exit 0.

uvicorn runs in a worker thread so that the signals stay with the main thread here: it
asks the server to stop (`should_exit`) and ends every page's stream, and the process
exits 0 — uvicorn's own handlers would raise the signal again once stopped.
uvicorn is imported here only, and only `aidp board` imports this module.
"""

from __future__ import annotations

import errno
import logging
import secrets
import signal
import socket
import sys
import threading
from collections.abc import Callable
from types import FrameType

import uvicorn

from aidp.app.project import Project
from aidp.board.guard import Guard
from aidp.board.hub import Hub
from aidp.board.server import build
from aidp.core.errors import InvalidInput

DEFAULT_PORT = 6174
LOOPBACK = "127.0.0.1"


class Started:
    """What a running board tells its caller: its URL and port."""

    __slots__ = ("port", "url")

    def __init__(self, url: str, port: int) -> None:
        self.url = url
        self.port = port


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: a free one). A port in use, or an
    address this machine does not have, is InvalidInput (exit 2)."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise InvalidInput(f"Port {port} on {host} is in use: give another --port, or "
                               "--port 0 for a free one") from None
        if exc.errno in (errno.EACCES, errno.EPERM):
            raise InvalidInput(f"Port {port} on {host} needs privileges: give --port 1024 "
                               "or above, or --port 0 for a free one") from None
        raise InvalidInput(f"Invalid --host {host}: cannot listen there ({exc.strerror}); "
                           f"give an address of this machine, such as {LOOPBACK}") from None
    sock.set_inheritable(False)
    return sock


def url_host(host: str) -> str:
    """The host a URL names for `host` (any address: the loopback one)."""
    bare = host.strip("[]")
    if bare in ("0.0.0.0", "::"):
        return LOOPBACK
    return f"[{bare}]" if ":" in bare else bare


class _OneLine(logging.Handler):
    """uvicorn's log as one line each on stderr, never a traceback."""

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.WARNING:
            sys.stderr.write(f"aidp board: {record.getMessage().splitlines()[0]}\n")


def serve(projects: list[Project], *, host: str | None, port: int,
          on_start: Callable[[Started], None]) -> int:
    """Serve the board of `projects` until SIGINT or SIGTERM: exit code 0. `on_start`
    hears the URL once the socket listens (before the first request is answered)."""
    address = host or LOOPBACK
    sock = bind(address, port)
    actual = sock.getsockname()[1]
    token = secrets.token_urlsafe(24)
    guard = Guard(token, actual, host)
    hub = Hub(projects)
    hub.load()
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers[:] = [_OneLine()]
        logger.propagate = False
    config = uvicorn.Config(build(hub, guard), log_config=None, access_log=False,
                            lifespan="on", ws="none", http="h11", loop="asyncio",
                            server_header=False, date_header=False,
                            timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)

    def stop(_signum: int, _frame: FrameType | None) -> None:
        server.should_exit = True
        hub.close()

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    worker = threading.Thread(target=server.run, kwargs={"sockets": [sock]},
                              name="aidp-board-server", daemon=True)
    try:
        worker.start()
        on_start(Started(f"http://{url_host(address)}:{actual}/t/{token}/", actual))
        while worker.is_alive():
            worker.join(0.5)
    finally:
        server.should_exit = True
        hub.close()
        worker.join(5)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        sock.close()
    return 0
