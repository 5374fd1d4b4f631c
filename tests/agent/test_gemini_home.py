"""`aidp run` gives Gemini CLI `aidp mcp` for one run: a home of its own
(GEMINI_CLI_HOME) whose settings are the user's plus aidp's server, and whose other
files are the user's own (aidp.agent.agents.gemini_home)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from aidp.agent import agents, mcp_handover

RUN_ENV = {"AIDP_DIR": "/work/project", "AIDP_SESSION": "fix-login"}
USER_SETTINGS = {"security": {"auth": {"selectedType": "gemini-api-key"}},
                 "mcpServers": {"github": {"command": "gh-mcp", "args": []}}}


@pytest.fixture
def user_home(tmp_path: Path) -> Path:
    home = tmp_path / "user"
    (home / ".gemini" / "tmp").mkdir(parents=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps(USER_SETTINGS))
    (home / ".gemini" / "oauth_creds.json").write_text('{"refresh_token": "r"}')
    (home / ".gemini" / "GEMINI.md").write_text("Be brief.\n")
    return home


def hand(env: dict[str, str]) -> tuple[list[str], dict[str, str]] | None:
    gemini = agents.load("gemini")
    server = mcp_handover.server_for({**env, **RUN_ENV})
    return gemini.hand_mcp(["gemini", "-p", "x"], server, env, registered=lambda: False)


def test_the_run_gets_a_home_with_the_users_settings_and_aidps_server(user_home: Path) -> None:
    before = (user_home / ".gemini" / "settings.json").read_bytes()
    given = hand({"HOME": str(user_home)})
    assert given is not None
    argv, env = given
    assert argv == ["gemini", "-p", "x"]
    run_home = Path(env["GEMINI_CLI_HOME"])
    assert run_home != user_home
    settings = json.loads((run_home / ".gemini" / "settings.json").read_text())
    assert settings["security"] == USER_SETTINGS["security"]
    assert settings["mcpServers"]["github"] == USER_SETTINGS["mcpServers"]["github"]
    aidp = settings["mcpServers"]["aidp"]
    assert aidp["args"] == ["-m", "aidp", "mcp"] and aidp["command"] == sys.executable
    assert aidp["env"] == RUN_ENV and aidp["trust"] is True
    # Everything else is the user's own, in place.
    for name in ("oauth_creds.json", "GEMINI.md", "tmp"):
        assert (run_home / ".gemini" / name).resolve() == (user_home / ".gemini" / name)
    assert (user_home / ".gemini" / "settings.json").read_bytes() == before
    # One home per run: the next invocation of the same run gets the same.
    assert hand({"HOME": str(user_home)}) == given


def test_gemini_cli_home_of_the_user_is_where_the_settings_come_from(
        user_home: Path, tmp_path: Path) -> None:
    given = hand({"HOME": str(tmp_path / "elsewhere"), "GEMINI_CLI_HOME": str(user_home)})
    assert given is not None
    settings = json.loads((Path(given[1]["GEMINI_CLI_HOME"]) / ".gemini" /
                           "settings.json").read_text())
    assert "github" in settings["mcpServers"] and "aidp" in settings["mcpServers"]


def test_no_gemini_folder_yet_gives_settings_with_aidps_server_only(tmp_path: Path) -> None:
    given = hand({"HOME": str(tmp_path / "new-user")})
    assert given is not None
    run_home = Path(given[1]["GEMINI_CLI_HOME"])
    assert [p.name for p in (run_home / ".gemini").iterdir()] == ["settings.json"]
    assert list(json.loads((run_home / ".gemini" / "settings.json").read_text())
                ["mcpServers"]) == ["aidp"]
    assert not (tmp_path / "new-user").exists()


@pytest.mark.parametrize("text", [
    '{\n  // Gemini allows comments\n  "theme": "Dracula"\n}',
    '["not", "an", "object"]',
    '{"mcpServers": {"aidp": {"command": "aidp", "args": ["mcp"]}}}',
    '{"mcpServers": "bad"}',
])
def test_settings_aidp_cannot_extend_are_left_alone_and_nothing_is_given(
        user_home: Path, text: str) -> None:
    (user_home / ".gemini" / "settings.json").write_text(text)
    assert hand({"HOME": str(user_home)}) is None
    assert (user_home / ".gemini" / "settings.json").read_text() == text


def test_the_runs_home_is_removed_when_aidp_ends(user_home: Path) -> None:
    script = (
        "import sys; from aidp.agent.agents.gemini_home import run_home; "
        "from aidp.agent.mcp_handover import server_for; "
        f"print(run_home({{'HOME': {str(user_home)!r}}}, server_for({{}})))")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    made = Path(proc.stdout.strip())
    assert made.name.startswith("aidp-gemini-home-")
    assert not made.exists()
    assert (user_home / ".gemini" / "oauth_creds.json").read_text() == '{"refresh_token": "r"}'
