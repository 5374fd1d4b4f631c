"""`aidp board`'s web application (Starlette): the page and its own script and style,
the live stream of changes (server-sent events), one task's detail, and the edits; all
behind the guard (aidp.board.guard) and with headers that keep the page to itself.

Starlette is imported here and in nothing that another command loads (ruff's TID253,
tests/test_startup.py): it comes with the MCP SDK aidp depends on already.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from importlib import resources
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from aidp.board import api
from aidp.board.guard import Guard
from aidp.board.hub import Hub
from aidp.core.errors import AidpError, ExitCode, TaskNotFound

MAX_BODY = 256 * 1024  # a write's JSON: a 64 KiB body, escaped, fits
PING = 15.0  # seconds between two comments on a quiet stream (a closed page is noticed)
STATIC = {"board.js": "text/javascript; charset=utf-8", "board.css": "text/css; charset=utf-8"}
# Nothing but this server, and no inline script or style: a task's text that slipped
# into the markup could run nothing.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
       "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
HEADERS = [(b"content-security-policy", CSP.encode()),
           (b"x-content-type-options", b"nosniff"),
           (b"referrer-policy", b"no-referrer"),
           (b"x-frame-options", b"DENY"),
           (b"cross-origin-resource-policy", b"same-origin"),
           (b"cache-control", b"no-store")]


def _asset(name: str) -> bytes:
    return resources.files("aidp.board").joinpath("static", name).read_bytes()


class Guarded:
    """The guard in front of every request, and the headers on every answer."""

    def __init__(self, app: ASGIApp, guard: Guard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope["headers"]}
        token, path = self.guard.split_path(scope["path"])
        query = scope.get("query_string", b"").decode("latin-1")
        refused = self.guard.refusal(scope["method"], headers, token, query)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *HEADERS]}
            await send(message)

        if refused is not None:
            status, line = refused
            await PlainTextResponse(line + "\n", status_code=status)(
                scope, receive, send_with_headers)
            return
        if token is not None and path == "/" and not scope["path"].endswith("/"):
            await RedirectResponse(scope["path"] + "/", status_code=303)(
                scope, receive, send_with_headers)
            return
        scope = {**scope, "path": path, "board.token_in_path": token is not None}
        await self.app(scope, receive, send_with_headers)


def build(hub: Hub, guard: Guard) -> ASGIApp:
    """The application serving `hub`'s projects behind `guard`."""
    page = _asset("board.html")
    assets = {name: _asset(name) for name in STATIC}

    async def index(request: Request) -> Response:
        if not request.scope.get("board.token_in_path"):
            # The token came in the query: the page's relative URLs need it in the
            # path (and no cookie carries it: a browser sends a cookie of 127.0.0.1 to
            # every port there, another user's server included).
            return RedirectResponse(f"/t/{guard.token}/", status_code=303)
        return Response(page, media_type="text/html; charset=utf-8")

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in assets:
            return PlainTextResponse("Not found\n", status_code=404)
        return Response(assets[name], media_type=STATIC[name])

    async def events(request: Request) -> Response:
        queue = hub.subscribe()

        async def stream() -> AsyncIterator[bytes]:
            try:
                yield b"retry: 1000\n\n"
                while True:
                    try:
                        message = await asyncio.wait_for(queue.get(), PING)
                    except TimeoutError:
                        yield b": ping\n\n"
                        continue
                    if message is None:  # the board is stopping
                        return
                    yield message
            finally:
                hub.unsubscribe(queue)

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"x-accel-buffering": "no"})

    async def task(request: Request) -> Response:
        repo, tid = request.query_params.get("repo", ""), request.query_params.get("id", "")
        return await _answer(lambda: hub.read(repo, lambda p: api.detail(p, tid)))

    async def act(request: Request) -> Response:
        action = api.ACTIONS.get(request.path_params["action"])
        if action is None:
            return _error(404, f"No such action {request.path_params['action']!r}: use "
                               f"{', '.join(api.ACTIONS)}")
        size = request.headers.get("content-length")
        if size is None or not size.isdigit() or int(size) > MAX_BODY:
            return _error(413, f"Refused: a write is at most {MAX_BODY // 1024} KiB of JSON "
                               "with its Content-Length")
        try:
            payload = orjson.loads(await request.body())
        except orjson.JSONDecodeError:
            return _error(400, "Invalid request: the body is not JSON")
        if not isinstance(payload, dict) or not isinstance(payload.get("repo"), str):
            return _error(400, "Invalid request: give a JSON object with the project's 'repo'")
        return await _answer(lambda: hub.act(payload["repo"], lambda p: action(p, payload)))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        hub.start(asyncio.get_running_loop())
        try:
            yield
        finally:
            hub.close()

    app = Starlette(routes=[
        Route("/", index, methods=["GET", "HEAD"]),
        Route("/static/{name}", static, methods=["GET", "HEAD"]),
        Route("/events", events, methods=["GET"]),
        Route("/api/task", task, methods=["GET"]),
        Route("/api/{action}", act, methods=["POST"]),
    ], lifespan=lifespan)
    return Guarded(app, guard)


def _error(status: int, line: str) -> Response:
    return Response(orjson.dumps({"error": line}), status_code=status,
                    media_type="application/json")


async def _answer(work: Callable[[], Any]) -> Response:
    """Run a use case in a worker thread (it may wait for the tasklist's lock): its
    result as JSON, or its error as one line with the status its exit code says."""
    try:
        result = await run_in_threadpool(work)
    except TaskNotFound as exc:
        return _error(404, str(exc))
    except AidpError as exc:
        return _error(400 if exc.exit_code == ExitCode.USAGE else 409, str(exc))
    except OSError as exc:
        return _error(500, f"Cannot complete it: {exc}")
    return Response(orjson.dumps(result), media_type="application/json")

