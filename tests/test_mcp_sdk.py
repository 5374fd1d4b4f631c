"""`aidp mcp` loads the SDK's server parts only (aidp.toolserver.sdk), and the rest of
the SDK is still whole for whatever asks for it in the same process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

GUARD = 60  # against a hung process, never a timing assertion


def modules_of(stderr: str) -> set[str]:
    return {line.rsplit("|", 1)[1].strip() for line in stderr.splitlines()
            if line.startswith("import time:") and "|" in line}


def test_aidp_mcp_serves_without_the_sdks_client_or_high_level_server(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIDP_SESSION", "light")
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "aidp-tests", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "todo_write",
            "arguments": {"items": [{"content": "Start fast", "status": "pending"}]}}},
    ]
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "aidp", "mcp"], cwd=project,
        input="".join(json.dumps(r) + "\n" for r in requests), capture_output=True,
        text=True, timeout=GUARD, env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr[-2000:]
    answers = {a["id"]: a for a in map(json.loads, proc.stdout.splitlines())}
    assert answers[1]["result"]["serverInfo"]["name"] == "aidp"
    written = json.loads(answers[2]["result"]["content"][0]["text"])
    assert [i["content"] for i in written["items"]] == ["Start fast"]
    names = modules_of(proc.stderr)
    assert {"mcp.server.lowlevel.server", "mcp.server.stdio", "mcp_types"} <= names
    unused = sorted(n for n in names if n.startswith(("mcp.client", "mcp.server.mcpserver")))
    assert unused == []


def test_the_rest_of_the_sdk_is_whole_when_something_asks_for_it() -> None:
    script = """
import aidp.toolserver.sdk as sdk
import mcp, mcp.server
from mcp import Client, ClientSession, stdio_server
from mcp.server import MCPServer, Server
assert Server is sdk.Server and stdio_server is sdk.stdio_server
assert mcp.types.Tool is sdk.types.Tool and mcp.server.lowlevel.Server is Server
assert callable(Client) and callable(ClientSession) and callable(MCPServer)
try:
    mcp.no_such_name
except AttributeError as exc:
    print("AttributeError:", exc)
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=GUARD)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "AttributeError:" in proc.stdout and "no_such_name" in proc.stdout
