"""`aidp run` hands `aidp mcp` to each preset whose CLI takes MCP servers for one run
(docs/mcp.md, "How each agent gets it in `aidp run`"): the arguments and environment each preset's CLI gets, and a scripted
agent that starts the server from what it was given and plans with todo_write."""

from __future__ import annotations

import json
import os
import shlex
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from aidp import todos
from aidp.agent.agents.base import AGENT_COMMANDS
from aidp.tasklist.log import TaskLog

TOOLS = ["todo_write", "todo_read", "tasks_file", "tasks_show", "tasks_list", "tasks_ready",
         "tasks_claim", "tasks_update"]

# A stand-in for an agent CLI: records its argv, environment and stdin; with PLAN set,
# it starts the MCP server it was given, as the real CLI would, and keeps its plan
# with todo_write.
FAKE_AGENT = r'''
import json, os, subprocess, sys, tomllib

stdin = sys.stdin.read()
argv = sys.argv[1:]
record = {"argv": argv, "stdin": stdin, "env": dict(os.environ)}
if os.environ.get("GEMINI_CLI_HOME"):  # Gemini CLI: its user settings, in that home
    home = os.path.join(os.environ["GEMINI_CLI_HOME"], ".gemini")
    with open(os.path.join(home, "settings.json")) as handle:
        record["gemini_settings"] = json.load(handle)
    record["gemini_home"] = sorted(os.listdir(home))
with open(os.environ["FAKE_RECORD"], "w") as handle:
    json.dump(record, handle)

def server_config():
    if "gemini_settings" in record:
        return record["gemini_settings"]["mcpServers"]["aidp"]
    if "--mcp-config" in argv:  # Claude Code
        return json.loads(argv[argv.index("--mcp-config") + 1])["mcpServers"]["aidp"]
    found = {}
    for n, arg in enumerate(argv):  # Codex: -c mcp_servers.aidp.KEY=TOML
        if arg == "-c" and argv[n + 1].startswith("mcp_servers.aidp."):
            key, _, value = argv[n + 1].removeprefix("mcp_servers.aidp.").partition("=")
            found[key] = tomllib.loads(f"v = {value}")["v"]
    return found

plan = os.environ.get("PLAN")
if plan:
    config = server_config()
    env = {"PATH": os.environ["PATH"], "HOME": os.environ["HOME"], **config["env"]}
    server = subprocess.Popen([config["command"], *config["args"]], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, env=env, cwd="/")
    def ask(n, method, params):
        server.stdin.write((json.dumps({"jsonrpc": "2.0", "id": n, "method": method,
                                        "params": params}) + "\n").encode())
        server.stdin.flush()
        return json.loads(server.stdout.readline())
    ask(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                          "clientInfo": {"name": "fake", "version": "1"}})
    items = [{"content": c, "status": "pending"} for c in plan.split(";")]
    answer = ask(2, "tools/call", {"name": "todo_write", "arguments": {"items": items}})
    print("todo_write:", answer["result"]["content"][0]["text"])
    server.stdin.close()
    server.wait()
print("fake agent done")
'''


@pytest.fixture
def fake_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """fake_cli(program) puts the fake agent on PATH as `program`; .seen() reads what
    the last invocation got."""
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir()
    record = tmp_path / "fake.json"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_RECORD", str(record))

    class Fake:
        def __call__(self, program: str) -> None:
            fake = bin_dir / program
            fake.write_text(f"#!{sys.executable}\n{FAKE_AGENT}", encoding="utf-8")
            fake.chmod(0o755)

        def seen(self) -> dict[str, Any]:
            return json.loads(record.read_text(encoding="utf-8"))

    return Fake()


def program_of(preset: str) -> str:
    from aidp.agent.presets import PRESETS

    return shlex.split(PRESETS[preset])[0]


def run(cli, preset: str, fake_cli) -> dict[str, Any]:
    fake_cli(program_of(preset))
    result = cli("run", "Do the work", "--agent", preset, "--session", "mcp-run")
    assert result.code == 0, result
    return fake_cli.seen()


def expect_server(config: dict[str, Any], project: Path) -> None:
    # this very aidp, never one found on PATH; the run's project and session
    assert config["command"] == sys.executable
    assert config["args"] == ["-m", "aidp", "mcp"]
    assert config["env"]["AIDP_SESSION"] == "mcp-run"
    assert Path(config["env"]["AIDP_DIR"]) == project


def test_claude_gets_the_server_and_its_tools_allowed(cli, fake_cli, project: Path) -> None:
    seen = run(cli, "claude", fake_cli)
    argv = seen["argv"]
    config = json.loads(argv[argv.index("--mcp-config") + 1])["mcpServers"]["aidp"]
    expect_server(config, project)
    assert config["type"] == "stdio"
    at = argv.index("--allowedTools")
    # the preset's own allowance stays, the server's tools are allowed by name
    assert argv[at + 1:] == [*[f"mcp__aidp__{t}" for t in TOOLS],
                             *[f"Bash({command}:*)" for command in AGENT_COMMANDS]]
    assert "todo_write" in seen["stdin"]  # the prompt says to plan with it
    # Claude waits for the server before its first request (its tools in the first turn)
    assert seen["env"]["MCP_CONNECTION_NONBLOCKING"] == "false"


def test_claude_keeps_the_users_own_mcp_wait_setting(cli, fake_cli, monkeypatch) -> None:
    monkeypatch.setenv("MCP_CONNECTION_NONBLOCKING", "true")
    seen = run(cli, "claude", fake_cli)
    assert seen["env"]["MCP_CONNECTION_NONBLOCKING"] == "true"


def test_codex_gets_the_server_as_config_overrides(cli, fake_cli, project: Path) -> None:
    seen = run(cli, "codex", fake_cli)
    argv = seen["argv"]
    assert argv[0] == "exec" and argv[-1] == "-"
    found = {}
    for n, arg in enumerate(argv):
        if arg == "-c" and argv[n + 1].startswith("mcp_servers.aidp."):
            key, _, value = argv[n + 1].removeprefix("mcp_servers.aidp.").partition("=")
            found[key] = tomllib.loads(f"v = {value}")["v"]  # each value is TOML
    expect_server(found, project)
    assert found["default_tools_approval_mode"] == "approve"
    assert found["required"] is True  # Codex waits for the server before its first request


def test_copilot_gets_an_additional_mcp_config(cli, fake_cli, project: Path) -> None:
    argv = run(cli, "copilot", fake_cli)["argv"]
    given = next(a for a in argv if a.startswith("--additional-mcp-config="))
    config = json.loads(given.partition("=")[2])["mcpServers"]["aidp"]
    expect_server(config, project)
    assert config["type"] == "local" and config["tools"] == ["*"]
    assert "--allow-tool=aidp" in argv
    assert argv[-1].startswith("--prompt=Do the work")


def test_opencode_gets_an_inline_config(cli, fake_cli, project: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENCODE_CONFIG_CONTENT", json.dumps({"theme": "mine"}))
    seen = run(cli, "opencode", fake_cli)
    config = json.loads(seen["env"]["OPENCODE_CONFIG_CONTENT"])
    assert config["theme"] == "mine"  # the user's own inline config is kept
    server = config["mcp"]["aidp"]
    assert server["type"] == "local" and server["enabled"] is True
    expect_server({"command": server["command"][0], "args": server["command"][1:],
                   "env": server["environment"]}, project)


def test_gemini_gets_the_server_in_a_home_of_its_own_for_the_run(
        cli, fake_cli, project: Path) -> None:
    # Gemini CLI takes no MCP server on its command line: its user settings, in a home
    # of its own for the run (GEMINI_CLI_HOME), are the user's plus aidp's server.
    user = Path(os.environ["HOME"]) / ".gemini"
    user.mkdir(parents=True, exist_ok=True)
    (user / "settings.json").write_text('{"ui": {"theme": "Dracula"}}')
    (user / "oauth_creds.json").write_text("{}")
    seen = run(cli, "gemini", fake_cli)
    assert not any("mcp" in arg for arg in seen["argv"])
    assert Path(seen["env"]["GEMINI_CLI_HOME"]) != Path(os.environ["HOME"])
    settings = seen["gemini_settings"]
    assert settings["ui"] == {"theme": "Dracula"}
    expect_server(settings["mcpServers"]["aidp"], project)
    assert settings["mcpServers"]["aidp"]["trust"] is True
    assert seen["gemini_home"] == ["oauth_creds.json", "settings.json"]
    prompt = next(a for a in seen["argv"] if a.startswith("--prompt="))
    assert "todo_write" in prompt
    assert (user / "settings.json").read_text() == '{"ui": {"theme": "Dracula"}}'


def test_gemini_uses_the_server_the_project_registered(cli, fake_cli, project: Path) -> None:
    assert cli("setup", "gemini", "--mcp").code == 0
    seen = run(cli, "gemini", fake_cli)
    assert "GEMINI_CLI_HOME" not in seen["env"]  # no home of its own: the project's server
    prompt = next(a for a in seen["argv"] if a.startswith("--prompt="))
    assert "todo_write" in prompt
    # the server Gemini starts from the project's settings gets the run's session
    assert seen["env"]["AIDP_SESSION"] == "mcp-run"


def test_gemini_settings_aidp_cannot_read_run_without_the_server(cli, fake_cli) -> None:
    user = Path(os.environ["HOME"]) / ".gemini"
    user.mkdir(parents=True, exist_ok=True)
    (user / "settings.json").write_text('{\n  // a comment, as Gemini allows\n}')
    seen = run(cli, "gemini", fake_cli)
    assert "GEMINI_CLI_HOME" not in seen["env"]
    assert "todo_write" not in " ".join(seen["argv"])


@pytest.mark.parametrize("preset", ["aider", "cursor"])
def test_clis_without_a_per_run_mcp_config_run_as_before(cli, fake_cli, preset: str) -> None:
    seen = run(cli, preset, fake_cli)
    assert not any("mcp" in arg for arg in seen["argv"])
    assert "todo_write" not in seen["stdin"] + " ".join(seen["argv"])


def test_a_command_line_of_your_own_is_run_as_given(cli, fake_cli) -> None:
    fake_cli("claude")
    result = cli("run", "Go", "--agent", "claude -p --verbose")
    assert result.code == 0, result
    assert fake_cli.seen()["argv"] == ["-p", "--verbose"]


@pytest.mark.parametrize("preset", ["claude", "codex", "gemini"])
def test_an_agent_that_plans_with_todo_write_changes_the_runs_todo_list(
        cli, fake_cli, project: Path, monkeypatch: pytest.MonkeyPatch, preset: str) -> None:
    monkeypatch.setenv("PLAN", "Read the code;Write the fix")
    seen = run(cli, preset, fake_cli)
    assert seen  # the fake ran
    todo = todos.current(TaskLog(project).read(), "mcp-run")
    assert [(i["content"], i["status"]) for i in todo.visible] == [
        ("Read the code", "pending"), ("Write the fix", "pending")]
    assert todo.active


def test_run_backlog_gives_each_task_its_own_session_in_the_server(
        cli, fake_cli, project: Path) -> None:
    tid = cli("tasks", "add", "One task", "-q").out.strip()
    fake_cli("claude")
    result = cli("run", "--backlog", "--max-tasks", "1", "--agent", "claude",
                 "--max-continuations", "0")
    assert "fake agent done" in result.out, result
    argv = fake_cli.seen()["argv"]
    config = json.loads(argv[argv.index("--mcp-config") + 1])["mcpServers"]["aidp"]
    assert config["env"]["AIDP_SESSION"] == fake_cli.seen()["env"]["AIDP_SESSION"]
    assert tid.split("_")[2] in config["env"]["AIDP_SESSION"]
