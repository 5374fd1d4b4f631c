"""`aidp mcp` answers `initialize` and `tools/list` while the MCP SDK is still loading
(aidp.toolserver.front): the same answers the SDK gives, given before it has loaded,
and the SDK serves everything after, each request answered once."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.test_mcp import ANSWER_GUARD, Client

HELLO = {"protocolVersion": "2025-06-18", "capabilities": {"roots": {"listChanged": True}},
         "clientInfo": {"name": "aidp-tests", "version": "1"}}


def _line(message: dict[str, Any]) -> str:
    return json.dumps(message) + "\n"


def _session(project: Path, lines: list[str]) -> dict[Any, list[dict[str, Any]]]:
    """Every answer to `lines` (stdin closed after them), by id."""
    proc = subprocess.run([sys.executable, "-m", "aidp", "mcp"], cwd=project,
                          input="".join(lines), capture_output=True, text=True,
                          timeout=ANSWER_GUARD, env={**os.environ, "AIDP_SESSION": "front"})
    assert proc.returncode == 0, proc.stderr
    found: dict[Any, list[dict[str, Any]]] = {}
    for answer in map(json.loads, proc.stdout.splitlines()):
        found.setdefault(answer["id"], []).append(answer)
    return found


@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18", "2025-11-25", "2026-07-28",
                                     "1999-01-01"])
def test_the_first_answers_are_the_sdks_own(project: Path, version: str) -> None:
    # Answered early (initialize first), and by the SDK (a ping first: nothing after it
    # is answered early): the same results, each id answered once.
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {**HELLO, "protocolVersion": version}}
    rest = [_line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            _line({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
            _line({"jsonrpc": "2.0", "id": "three", "method": "tools/list", "params": {}})]
    early = _session(project, [_line(hello), *rest])
    by_sdk = _session(project, [_line({"jsonrpc": "2.0", "id": 0, "method": "ping"}),
                                _line(hello), *rest])
    assert sorted(early, key=str) == [1, 2, "three"]
    assert all(len(answers) == 1 for answers in [*early.values(), *by_sdk.values()])
    for rid in (1, 2, "three"):
        assert early[rid] == by_sdk[rid], rid
    assert early[1][0]["result"]["serverInfo"]["name"] == "aidp"


def test_the_versions_it_agrees_to_are_the_sdks() -> None:
    from mcp_types import version

    from aidp.toolserver import front

    assert front.HANDSHAKE_VERSIONS == version.HANDSHAKE_PROTOCOL_VERSIONS
    assert front.NEWEST_HANDSHAKE == version.LATEST_HANDSHAKE_VERSION


BLOCK_THE_SDK = """
import os, sys, time
class Held:
    # Holds the import of the SDK's types until the test says so.
    def find_spec(self, name, path=None, target=None):
        if name == "mcp_types":
            while not os.path.exists(os.environ["AIDP_TEST_RELEASE"]):
                time.sleep(0.01)
        return None
sys.meta_path.insert(0, Held())
from aidp.cli import main
sys.argv = ["aidp", "mcp"]
main()
"""


def test_initialize_and_tools_list_are_answered_before_the_sdk_has_loaded(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    release = project.parent / "release"
    monkeypatch.setenv("AIDP_TEST_RELEASE", str(release))
    monkeypatch.setenv("AIDP_SESSION", "front")
    client = _held_client(project)
    try:
        # Sent in two pieces: a line is answered once it is whole.
        raw = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HELLO})
        assert client.proc.stdin is not None
        client.proc.stdin.write(raw[:30].encode())
        client.proc.stdin.flush()
        client.send_line(raw[30:].encode())
        assert client.answer()["result"]["protocolVersion"] == "2025-06-18"
        client.send_line(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        client.next_id = 1
        listed = client.request("tools/list")["result"]["tools"]
        assert "todo_write" in [tool["name"] for tool in listed]
        assert not release.exists()  # all that while, the SDK's types were held
        client.next_id = 2
        release.touch()
        written = client.call("todo_write", {"items": [{"content": "Plan", "status": "pending"}]})
        assert written["isError"] is False
        assert client.close() == 0
        assert client.lines.get(timeout=ANSWER_GUARD) == b""  # nothing answered twice
    finally:
        release.touch()
        if client.proc.poll() is None:
            client.proc.kill()
            client.proc.wait()


def _held_client(project: Path) -> Client:
    """A Client of `aidp mcp` run by BLOCK_THE_SDK."""
    client = Client.__new__(Client)
    client.proc = subprocess.Popen([sys.executable, "-c", BLOCK_THE_SDK], cwd=project,
                                   env=dict(os.environ), stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    client.lines = queue.Queue()
    threading.Thread(target=client._read, daemon=True).start()
    client.next_id = 0
    return client


def test_anything_else_first_is_left_to_the_sdk(project: Path) -> None:
    # Not JSON, a bad id, an initialize of another shape: answered as the SDK's server
    # answers them (a parse error, an invalid request, invalid params), then serving
    # goes on as usual.
    for first, code in (("{not json", -32700),
                        (_line({"jsonrpc": "2.0", "id": None, "method": "initialize",
                                "params": HELLO}), -32600),
                        (_line({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                "params": {}}), -32602)):
        found = _session(project, [first.rstrip("\n") + "\n", _line(
            {"jsonrpc": "2.0", "id": 5, "method": "initialize", "params": HELLO})])
        errors = [a for answers in found.values() for a in answers if "error" in a]
        assert [e["error"]["code"] for e in errors] == [code], found
        assert found[5][0]["result"]["serverInfo"]["name"] == "aidp"
