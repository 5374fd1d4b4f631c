"""`aidp setup AGENT`: merges its hooks into the agent's project settings, and only those."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

CLAUDE = ".claude/settings.json"
GEMINI = ".gemini/settings.json"

THEIRS = {
    "model": "opus",
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        "PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "fmt"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard"}]}],
    },
}


def read(project: Path, name: str = CLAUDE) -> dict:
    return json.loads((project / name).read_text())


def commands(data: dict, event: str) -> list[str]:
    return [h["command"] for g in data["hooks"].get(event, []) for h in g["hooks"]]


def test_setup_claude_in_a_fresh_project(project: Path, cli) -> None:
    result = cli("setup", "claude")
    assert result.code == 0, result
    assert result.out.startswith("Claude Code: added aidp hooks to .claude/settings.json")
    data = read(project)
    assert data == {"hooks": {
        "SessionStart": [{"hooks": [{"type": "command",
                                     "command": "aidp hook claude SessionStart"}]}],
        "UserPromptSubmit": [{"hooks": [{"type": "command",
                                         "command": "aidp hook claude UserPromptSubmit"}]}],
        "PostToolUse": [{"matcher": "TodoWrite|TaskCreate|TaskUpdate",
                         "hooks": [{"type": "command",
                                    "command": "aidp hook claude PostToolUse"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "aidp hook claude Stop"}]}],
    }}
    check = cli("setup", "claude", "--check")
    assert check.code == 0 and "aidp hooks are set up in .claude/settings.json" in check.out


def test_setup_keeps_everything_else_is_idempotent_and_removes_exactly_its_own(
    project: Path, cli
) -> None:
    path = project / CLAUDE
    path.parent.mkdir()
    path.write_text(json.dumps(THEIRS, indent=4))
    assert cli("setup", "claude").code == 0
    data = read(project)
    assert data["model"] == "opus" and data["permissions"] == THEIRS["permissions"]
    assert commands(data, "Stop") == ["notify-send done", "aidp hook claude Stop"]
    assert commands(data, "PostToolUse") == ["fmt", "aidp hook claude PostToolUse"]
    assert data["hooks"]["PreToolUse"] == THEIRS["hooks"]["PreToolUse"]
    before = path.read_bytes()
    again = cli("setup", "claude")
    assert again.code == 0 and "already set up" in again.out and "nothing changed" in again.out
    assert path.read_bytes() == before
    removed = cli("setup", "claude", "--remove")
    assert removed.code == 0 and "removed aidp hooks from .claude/settings.json" in removed.out
    assert read(project) == THEIRS
    assert "nothing changed" in cli("setup", "claude", "--remove").out


def test_idempotent_even_when_other_hooks_follow_ours(project: Path, cli) -> None:
    assert cli("setup", "claude").code == 0
    data = read(project)
    data["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "later"}]})
    (project / CLAUDE).write_text(json.dumps(data))
    before = (project / CLAUDE).read_bytes()
    assert "nothing changed" in cli("setup", "claude").out
    assert (project / CLAUDE).read_bytes() == before


def test_setup_repairs_a_changed_aidp_hook_and_check_reports_it(project: Path, cli) -> None:
    assert cli("setup", "claude").code == 0
    data = read(project)
    data["hooks"]["PostToolUse"][0]["matcher"] = "TodoWrite"
    (project / CLAUDE).write_text(json.dumps(data))
    check = cli("setup", "claude", "--check")
    assert check.code == 1
    assert "hooks missing in .claude/settings.json: PostToolUse" in check.out
    assert cli("setup", "claude").code == 0
    fixed = read(project)
    assert fixed["hooks"]["PostToolUse"] == [
        {"matcher": "TodoWrite|TaskCreate|TaskUpdate",
         "hooks": [{"type": "command", "command": "aidp hook claude PostToolUse"}]}]
    assert cli("setup", "claude", "--check").code == 0


def test_remove_deletes_a_file_that_held_only_our_hooks(project: Path, cli) -> None:
    assert cli("setup", "gemini").code == 0
    assert cli("setup", "gemini", "--remove").code == 0
    assert not (project / GEMINI).exists()


def test_setup_gemini(project: Path, cli) -> None:
    result = cli("setup", "gemini")
    assert result.code == 0 and result.out.startswith("Gemini CLI: added aidp hooks")
    data = read(project, GEMINI)
    assert data["hooks"]["AfterTool"] == [{"matcher": "write_todos", "hooks": [
        {"type": "command", "command": "aidp hook gemini AfterTool", "name": "aidp-plan"}]}]
    assert data["hooks"]["AfterAgent"][0]["hooks"][0]["name"] == "aidp-continue"
    assert set(data["hooks"]) == {"SessionStart", "BeforeAgent", "AfterTool", "AfterAgent"}
    assert cli("setup", "gemini", "--check").code == 0
    assert cli("setup", "claude", "--check").code == 1  # the other agent is not set up


@pytest.mark.parametrize(("content", "why"), [
    ("{not json", "it is not valid JSON"),
    ("[1, 2]", "it holds a JSON list, expected an object"),
    ('{"hooks": []}', '"hooks" is not an object'),
    ('{"hooks": {"Stop": {"command": "x"}}}', "hooks.Stop is not a list of hook groups"),
    ('{"hooks": {"Stop": [{"hooks": "x"}]}}', "a hooks.Stop group's \"hooks\" is not a list"),
    ('// a comment\n{"a": 1}', "it is not valid JSON"),
])
def test_a_malformed_settings_file_is_refused_and_left_as_it_was(
    project: Path, cli, content: str, why: str
) -> None:
    path = project / CLAUDE
    path.parent.mkdir()
    path.write_text(content)
    for args in (("setup", "claude"), ("setup", "claude", "--remove"),
                 ("setup", "claude", "--check")):
        result = cli(*args)
        assert result.code == 2, result
        assert result.err.startswith("Error: Cannot edit ") and why in result.err
        assert result.err.count("\n") == 1
        assert path.read_text() == content


def test_unknown_agent_and_conflicting_options(project: Path, cli) -> None:
    result = cli("setup", "cursor")
    assert result.code == 2
    assert result.err == "Error: Unknown agent 'cursor': use one of claude, gemini, codex\n"
    both = cli("setup", "claude", "--remove", "--check")
    assert both.code == 2 and "give --remove or --check, not both" in both.err
    assert not (project / ".claude").exists()


def test_instructions_snippet_between_markers(project: Path, cli) -> None:
    claude_md = project / "CLAUDE.md"
    claude_md.write_text("# My project\n\nBe nice.\n")
    result = cli("setup", "claude", "--instructions")
    assert result.code == 0 and "Added the aidp snippet to CLAUDE.md" in result.out
    text = claude_md.read_text()
    assert text.startswith("# My project\n\nBe nice.\n\n<!-- aidp:begin")
    assert text.endswith("<!-- aidp:end -->\n") and "aidp todo pause" in text
    again = cli("setup", "claude", "--instructions")
    assert "is up to date" in again.out and claude_md.read_text() == text
    assert cli("setup", "claude", "--check", "--instructions").code == 0
    removed = cli("setup", "claude", "--remove")
    assert "Removed the aidp snippet from CLAUDE.md" in removed.out
    assert claude_md.read_text() == "# My project\n\nBe nice.\n"


def test_instructions_in_a_new_file_and_broken_markers(project: Path, cli) -> None:
    assert cli("setup", "gemini", "--instructions").code == 0
    assert (project / "GEMINI.md").read_text().startswith("<!-- aidp:begin")
    check = cli("setup", "claude", "--check", "--instructions")
    assert check.code == 1 and "aidp snippet missing or changed in CLAUDE.md" in check.out
    assert cli("setup", "gemini", "--remove").code == 0
    assert not (project / "GEMINI.md").exists()
    broken = project / "CLAUDE.md"
    broken.write_text("x\n<!-- aidp:end -->\n")
    result = cli("setup", "claude", "--instructions")
    assert result.code == 2 and "fix the markers by hand" in result.err
    assert broken.read_text() == "x\n<!-- aidp:end -->\n"


def test_setup_only_ever_writes_aidp_hook_commands(project: Path, cli) -> None:
    for agent, name in (("claude", CLAUDE), ("gemini", GEMINI), ("codex", ".codex/hooks.json")):
        assert cli("setup", agent, "--instructions").code == 0
        data = read(project, name)
        for groups in data["hooks"].values():
            for group in groups:
                for handler in group["hooks"]:
                    assert handler["command"].startswith(f"aidp hook {agent} ")


def test_setup_codex_writes_its_hooks_json(project: Path, cli) -> None:
    result = cli("setup", "codex")
    assert result.code == 0 and result.out.startswith("Codex CLI: added aidp hooks to "
                                                      ".codex/hooks.json")
    assert "trust" in result.err and "tools.update_plan.enabled=true" in result.err
    data = read(project, ".codex/hooks.json")
    assert data["hooks"]["PostToolUse"] == [{"matcher": "update_plan", "hooks": [
        {"type": "command", "command": "aidp hook codex PostToolUse"}]}]
    assert set(data["hooks"]) == {"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"}
    assert cli("setup", "codex", "--check").code == 0
    assert cli("setup", "codex", "--remove").code == 0
    assert not (project / ".codex" / "hooks.json").exists()


def test_links_out_of_the_project_are_refused(project: Path, tmp_path: Path, cli) -> None:
    """A cloned repository may plant links to the user's own files."""
    outside = tmp_path / "home-claude"
    outside.mkdir()
    (outside / "settings.json").write_text('{"model": "mine"}')
    (project / ".claude").symlink_to(outside)
    result = cli("setup", "claude")
    assert result.code == 1 and ".claude: it is a symbolic link" in result.err, result
    assert (outside / "settings.json").read_text() == '{"model": "mine"}'
    bashrc = tmp_path / "bashrc"
    bashrc.write_text("alias x=y\n")
    (project / "GEMINI.md").symlink_to(bashrc)
    result = cli("setup", "gemini", "--instructions")
    assert result.code == 1 and "GEMINI.md: it is a symbolic link" in result.err, result
    assert bashrc.read_text() == "alias x=y\n"


def test_a_link_inside_the_project_is_refused_too(project: Path, cli) -> None:
    """No link is followed on the way from the root (aidp.tasklist.files): one inside the project
    could be swapped for one leading out between a check and the write."""
    (project / "shared").mkdir()
    (project / ".claude").symlink_to(project / "shared")
    result = cli("setup", "claude")
    assert result.code == 1 and ".claude: it is a symbolic link" in result.err, result
    assert not (project / "shared" / "settings.json").exists()


def test_max_continuations_is_written_kept_and_checked(project: Path, cli) -> None:
    assert cli("setup", "claude", "--max-continuations", "5").code == 0
    assert commands(read(project), "Stop") == ["aidp hook claude Stop --max-continuations 5"]
    # A plain setup keeps the user's choice; --check accepts it.
    assert "nothing changed" in cli("setup", "claude").out
    assert cli("setup", "claude", "--check").code == 0
    assert cli("setup", "claude", "--check", "--max-continuations", "5").code == 0
    other = cli("setup", "claude", "--check", "--max-continuations", "2")
    assert other.code == 1 and "missing in .claude/settings.json: Stop" in other.out
    assert cli("setup", "claude", "--max-continuations", "0").code == 0
    assert commands(read(project), "Stop") == ["aidp hook claude Stop --max-continuations 0"]
    assert cli("setup", "claude", "--remove").code == 0
    assert not (project / CLAUDE).exists()
    bad = cli("setup", "claude", "--max-continuations", "-1")
    assert bad.code == 2 and "--max-continuations" in bad.err
    both = cli("setup", "claude", "--remove", "--max-continuations", "4")
    assert both.code == 2 and "applies when adding the hooks" in both.err


@pytest.mark.parametrize("command", ["setup", "hook"])
def test_help_names_every_hooked_agent_and_the_files_setup_writes(cli, command: str) -> None:
    """The help is the adapters' own (agents.hooked(), their Setup and Hooks): an agent
    with hooks added to the registry is named with its files, not left out of a list."""
    from aidp.agent.agents import hooked

    result = cli(command, "--help")
    assert result.code == 0, result
    shown = " ".join(result.out.replace("│", " ").split())
    for adapter in hooked():
        assert adapter.name in shown
        assert adapter.setup is not None and adapter.hooks is not None
        if command == "setup":
            for path in (adapter.setup.settings, adapter.setup.instructions,
                         adapter.setup.mcp_settings):
                assert path in shown, (adapter.name, path)
        else:
            assert f"{adapter.name} {next(iter(adapter.hooks.events))}" in shown \
                or f"{adapter.name} as " in shown
    names = [adapter.name for adapter in hooked()]  # the choices as a sentence says them
    assert f"{', '.join(names[:-1])} or {names[-1]}." in shown
