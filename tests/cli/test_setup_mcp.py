"""`aidp setup AGENT --mcp`: the hooks and `aidp mcp` registered in the agent's project
settings, idempotent, other servers kept; `--remove` takes out all of it and nothing
else (docs/mcp.md, "`aidp setup AGENT --mcp`")."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

OURS = {"command": "aidp", "args": ["mcp"]}
JSON_FILES = {"claude": ".mcp.json", "gemini": ".gemini/settings.json"}


def read_json(project: Path, name: str) -> dict:
    return json.loads((project / name).read_text())


@pytest.mark.parametrize("agent", ["claude", "gemini"])
def test_setup_mcp_registers_the_server_and_keeps_other_servers(project: Path, cli,
                                                                agent: str) -> None:
    path = project / JSON_FILES[agent]
    path.parent.mkdir(exist_ok=True)
    theirs = {"mcpServers": {"github": {"command": "gh-mcp", "args": ["--x"]}}, "theme": "dark"}
    path.write_text(json.dumps(theirs))
    result = cli("setup", agent, "--mcp")
    assert result.code == 0, result
    assert "Registered aidp's MCP server ('aidp mcp')" in result.out
    data = read_json(project, JSON_FILES[agent])
    expected = dict(OURS, trust=True) if agent == "gemini" else OURS
    assert data["mcpServers"] == {"github": theirs["mcpServers"]["github"], "aidp": expected}
    assert data["theme"] == "dark"
    before = path.read_bytes()
    again = cli("setup", agent, "--mcp")
    assert again.code == 0 and "already registered" in again.out
    assert path.read_bytes() == before  # idempotent
    assert cli("setup", agent, "--check", "--mcp").code == 0
    # --remove takes out the server (and the hooks), and nothing else
    assert cli("setup", agent, "--remove").code == 0
    assert read_json(project, JSON_FILES[agent]) == theirs


def test_claude_mcp_json_made_by_setup_goes_with_remove(project: Path, cli) -> None:
    assert cli("setup", "claude", "--mcp").code == 0
    assert read_json(project, ".mcp.json") == {"mcpServers": {"aidp": OURS}}
    # the hooks too: the server started by this agent finds their session
    assert "aidp hook claude Stop" in (project / ".claude" / "settings.json").read_text()
    result = cli("setup", "claude", "--remove")
    assert result.code == 0 and "Removed aidp's MCP server from .mcp.json" in result.out
    assert not (project / ".mcp.json").exists()
    assert not (project / ".claude" / "settings.json").exists()


def test_codex_config_toml_gets_a_table_and_loses_only_it(project: Path, cli) -> None:
    config = project / ".codex" / "config.toml"
    config.parent.mkdir()
    text = ('# my settings\nmodel = "o3"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n'
            'args = ["serve"]\n')
    config.write_text(text)
    assert cli("setup", "codex", "--mcp").code == 0
    parsed = tomllib.loads(config.read_text())
    assert parsed["mcp_servers"] == {"docs": {"command": "docs-mcp", "args": ["serve"]},
                                     "aidp": OURS}
    assert parsed["model"] == "o3" and config.read_text().startswith(text)
    before = config.read_bytes()
    assert cli("setup", "codex", "--mcp").code == 0
    assert config.read_bytes() == before
    assert cli("setup", "codex", "--remove").code == 0
    assert config.read_text() == text  # exactly as it was


def test_codex_config_made_by_setup_goes_with_remove(project: Path, cli) -> None:
    assert cli("setup", "codex", "--mcp").code == 0
    assert tomllib.loads((project / ".codex" / "config.toml").read_text()) == {
        "mcp_servers": {"aidp": OURS}}
    assert cli("setup", "codex", "--remove").code == 0
    assert not (project / ".codex" / "config.toml").exists()


def test_check_reports_a_missing_server(project: Path, cli) -> None:
    assert cli("setup", "claude").code == 0
    result = cli("setup", "claude", "--check", "--mcp")
    assert result.code == 1
    assert "aidp's MCP server missing in .mcp.json (run 'aidp setup claude --mcp')" in result.out
    assert cli("setup", "claude", "--check").code == 0  # without --mcp, hooks only


def test_a_server_of_your_own_named_aidp_is_never_replaced(project: Path, cli) -> None:
    mine = {"mcpServers": {"aidp": {"command": "/opt/my-aidp", "args": []}}}
    (project / ".mcp.json").write_text(json.dumps(mine))
    result = cli("setup", "claude", "--mcp")
    assert result.code == 2 and "a server named 'aidp' that is not 'aidp mcp'" in result.err
    assert read_json(project, ".mcp.json") == mine
    assert cli("setup", "claude", "--remove").code == 0
    assert read_json(project, ".mcp.json") == mine  # not ours: left alone


def test_extra_keys_of_the_user_on_our_entry_are_kept(project: Path, cli) -> None:
    ours_with_env = {"mcpServers": {"aidp": {**OURS, "env": {"AIDP_ACTOR": "me"}}}}
    (project / ".mcp.json").write_text(json.dumps(ours_with_env))
    assert cli("setup", "claude", "--mcp").code == 0
    assert read_json(project, ".mcp.json") == ours_with_env


@pytest.mark.parametrize(("content", "says"), [
    ('mcp_servers = { docs = { command = "d" } }\n', "edit it by hand"),
    ("model = \n", "not valid TOML"),
])
def test_a_codex_config_aidp_cannot_edit_safely_is_left_as_it_was(
        project: Path, cli, content: str, says: str) -> None:
    config = project / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(content)
    result = cli("setup", "codex", "--mcp")
    assert result.code == 2 and says in result.err, result
    assert config.read_text() == content


def test_malformed_mcp_servers_is_refused(project: Path, cli) -> None:
    (project / ".mcp.json").write_text('{"mcpServers": []}')
    result = cli("setup", "claude", "--mcp")
    assert result.code == 2 and '"mcpServers" is not an object' in result.err
    assert (project / ".mcp.json").read_text() == '{"mcpServers": []}'


def test_mcp_json_linked_out_of_the_project_is_refused(project: Path, tmp_path: Path,
                                                       cli) -> None:
    outside = tmp_path / "elsewhere.json"
    outside.write_text("{}")
    (project / ".mcp.json").symlink_to(outside)
    result = cli("setup", "claude", "--mcp")
    assert result.code == 1 and ".mcp.json: it is a symbolic link" in result.err, result
    assert outside.read_text() == "{}"
