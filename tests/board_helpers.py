"""Running `aidp board` in tests: a real process on 127.0.0.1, its start-up line read,
plain HTTP requests and its event stream read as a client would, SIGTERM at the end."""

from __future__ import annotations

import http.client
import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit


class Running:
    def __init__(self, proc: subprocess.Popen[str], url: str, port: int) -> None:
        self.proc = proc
        self.url = url
        self.port = port
        parts = urlsplit(url)
        self.base = parts.path  # /t/TOKEN/
        self.token = parts.path.split("/")[2]
        self.started: dict[str, object] = {}  # the start-up line as printed (--json)

    def request(self, method: str, path: str, body: object = None, *,
                headers: dict[str, str] | None = None, raw: bytes | None = None
                ) -> tuple[int, dict[str, str], bytes]:
        """`path` relative to the board's base (`api/move`), or absolute (`/x`)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        sent = {"Host": f"127.0.0.1:{self.port}", **(headers or {})}
        data = raw
        if body is not None:
            data = json.dumps(body).encode()
            sent.setdefault("Content-Type", "application/json")
        target = path if path.startswith("/") else self.base + path
        conn.request(method, target, body=data, headers=sent)
        response = conn.getresponse()
        out = (response.status, {k.lower(): v for k, v in response.getheaders()},
               response.read())
        conn.close()
        return out

    def post(self, action: str, body: dict[str, object]) -> tuple[int, dict[str, object]]:
        status, _headers, data = self.request("POST", f"api/{action}", body)
        return status, json.loads(data)

    @contextmanager
    def events(self) -> Iterator[Events]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        conn.request("GET", self.base + "events", headers={"Host": f"127.0.0.1:{self.port}"})
        response = conn.getresponse()
        assert response.status == 200
        try:
            yield Events(response)
        finally:
            conn.close()


class Events:
    """The board's server-sent events, read one at a time."""

    def __init__(self, response: http.client.HTTPResponse) -> None:
        self.response = response

    def whole(self) -> dict:
        """The whole board a page gets first: its `board` event, then the `rest`."""
        _kind, first = self.next("board")
        _kind, rest = self.next("rest")
        for project, more in zip(first["projects"], rest["projects"], strict=True):
            assert project["meta"] == more["meta"]
            project["cards"] += more["cards"]
        return first

    def next(self, kind: str | None = None, timeout: float = 20) -> tuple[str, dict]:
        end = time.monotonic() + timeout
        name, data = "message", []
        while time.monotonic() < end:
            line = self.response.fp.readline().decode()
            if not line:
                raise AssertionError("the stream ended")
            line = line.rstrip("\n")
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data.append(line[6:])
            elif line == "" and data:
                found = (name, json.loads("\n".join(data)))
                name, data = "message", []
                if kind is None or found[0] == kind:
                    return found
        raise AssertionError(f"no {kind or 'event'} within {timeout} s")

    def until(self, check, timeout: float = 20) -> dict:
        """The first patch for which `check(patch)` holds."""
        end = time.monotonic() + timeout
        while True:
            _kind, data = self.next("patch", max(0.1, end - time.monotonic()))
            if check(data):
                return data


def board_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "aidp", "board", "--no-open", "--port", "0", "--json", *args]


@contextmanager
def running(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None
            ) -> Iterator[Running]:
    """`aidp board --no-open --port 0 --json ARGS` until the block ends (SIGTERM: it
    must exit 0)."""
    proc = subprocess.Popen(board_command(*args), cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})})
    try:
        ready, _w, _x = select.select([proc.stdout], [], [], 60)
        assert ready, "no start-up line within 60 s"
        line = proc.stdout.readline()
        assert line, proc.stderr.read()
        found = json.loads(line)
        board = Running(proc, found["url"], found["port"])
        board.started = found
        yield board
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise AssertionError("aidp board did not stop on SIGTERM") from None
    assert proc.returncode == 0, proc.stderr.read()
