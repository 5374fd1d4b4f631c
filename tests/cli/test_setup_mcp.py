"""`aidp setup AGENT --mcp`: the hooks and `aidp mcp` registered in the agent's project
settings, idempotent, other servers kept; `--remove` takes out all of it and nothing
else (docs/mcp.md, "`aidp setup AGENT --mcp`")."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

OURS = {"command": "aidp", "args": ["mcp"]}
CODEX_OURS = {**OURS, "default_tools_approval_mode": "approve"}  # codex exec asks nobody
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
                                     "aidp": CODEX_OURS}
    assert parsed["model"] == "o3" and config.read_text().startswith(text)
    before = config.read_bytes()
    assert cli("setup", "codex", "--mcp").code == 0
    assert config.read_bytes() == before
    assert cli("setup", "codex", "--remove").code == 0
    assert config.read_text() == text  # exactly as it was


def test_codex_config_made_by_setup_goes_with_remove(project: Path, cli) -> None:
    assert cli("setup", "codex", "--mcp").code == 0
    assert tomllib.loads((project / ".codex" / "config.toml").read_text()) == {
        "mcp_servers": {"aidp": CODEX_OURS}}
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


# --- the tools allowed where the agent would ask (issue 35, item 14) ---------------------


def aidp_tool_rules() -> list[str]:
    from aidp.toolserver.tools import TOOLS

    return [f"mcp__aidp__{tool}" for tool in TOOLS]


@pytest.mark.parametrize("style", ["orjson", "python", "indent4"])
def test_claude_setup_mcp_allows_the_tools_and_remove_gives_the_file_back(
        project: Path, cli, style: str) -> None:
    """Headless Claude Code 2.1.332 refused the registered server's tools ("Claude
    requested permissions to use mcp__aidp__todo_write, but you haven't granted it
    yet"): setup now allows each of them in .claude/settings.json; `--remove` takes out
    exactly that, and a file in the user's own style comes back byte for byte."""
    import orjson

    mine = {"permissions": {"allow": ["Bash(npm test:*)"], "deny": ["Read(.env)"]},
            "model": "opus", "note": "café"}
    raw = {"orjson": orjson.dumps(mine),  # compact, no final newline
           "python": json.dumps(mine).encode(),  # compact with spaces, ASCII escapes
           "indent4": json.dumps(mine, indent=4, ensure_ascii=False).encode() + b"\n"}[style]
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_bytes(raw)
    result = cli("setup", "claude", "--mcp")
    assert result.code == 0, result
    assert "Allowed aidp's MCP tools in .claude/settings.json" in result.out
    data = read_json(project, ".claude/settings.json")
    assert data["permissions"] == {"allow": ["Bash(npm test:*)", *aidp_tool_rules()],
                                   "deny": ["Read(.env)"]}
    assert data["model"] == "opus" and "Stop" in data["hooks"]
    written = path.read_bytes()  # in the file's own style
    assert written.startswith(b'{\n    "') if style == "indent4" else b"\n" not in written
    again = cli("setup", "claude", "--mcp")
    assert again.code == 0 and "aidp's MCP tools are already allowed" in again.out
    assert path.read_bytes() == written
    assert cli("setup", "claude", "--check", "--mcp").code == 0
    removed = cli("setup", "claude", "--remove")
    assert removed.code == 0, removed
    assert "Removed the rules allowing aidp's MCP tools" in removed.out
    assert path.read_bytes() == raw  # byte for byte


def test_check_says_when_the_tools_are_not_allowed(project: Path, cli) -> None:
    assert cli("setup", "claude", "--mcp").code == 0
    path = project / ".claude" / "settings.json"
    data = json.loads(path.read_text())
    data["permissions"]["allow"].remove("mcp__aidp__todo_write")
    path.write_text(json.dumps(data))
    checked = cli("setup", "claude", "--check", "--mcp")
    assert checked.code == 1 and ("aidp's MCP tools not allowed in .claude/settings.json "
                                  "(run 'aidp setup claude --mcp')") in checked.out, checked
    assert cli("setup", "claude", "--mcp").code == 0
    assert cli("setup", "claude", "--check", "--mcp").code == 0


@pytest.mark.parametrize("agent", ["claude", "gemini", "codex"])
def test_remove_takes_away_the_files_and_folders_setup_made(project: Path, cli,
                                                            agent: str) -> None:
    before = sorted(p.relative_to(project) for p in project.rglob("*"))
    assert cli("setup", agent, "--mcp", "--instructions").code == 0
    assert sorted(p.relative_to(project) for p in project.rglob("*")) != before
    assert cli("setup", agent, "--remove").code == 0
    assert sorted(p.relative_to(project) for p in project.rglob("*")) == before


def test_a_folder_holding_anything_else_stays(project: Path, cli) -> None:
    (project / ".claude" / "commands").mkdir(parents=True)
    assert cli("setup", "claude", "--mcp").code == 0
    assert cli("setup", "claude", "--remove").code == 0
    assert (project / ".claude" / "commands").is_dir()
    assert not (project / ".claude" / "settings.json").exists()


def test_malformed_permissions_are_refused_and_left_as_they_were(project: Path, cli) -> None:
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    for bad, says in (('{"permissions": []}', '"permissions" is not an object'),
                      ('{"permissions": {"allow": "x"}}', '"permissions.allow" is not a list')):
        path.write_text(bad)
        result = cli("setup", "claude", "--mcp")
        assert result.code == 2 and says in result.err, result
        assert path.read_text() == bad and not (project / ".mcp.json").exists()
