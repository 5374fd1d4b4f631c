"""Choosing the agent: presets, command lines, the {prompt} placeholder, config, env."""

from __future__ import annotations

import os
import re
import stat
import sys
from pathlib import Path

import pytest

from aidp.agent import presets
from aidp.agent.agents.base import AGENT_COMMANDS, AGENT_TASKS_COMMANDS
from aidp.agent.presets import AgentError, AgentSpec, check_startable, child_env, choose, parse
from aidp.trust import gate


def test_every_preset_is_a_command_line_split_like_a_shell() -> None:
    assert set(presets.PRESETS) == {"claude", "codex", "gemini", "aider", "cursor", "copilot",
                                    "opencode"}
    claude = parse("claude", source="--agent")
    assert claude.argv == ("claude", "-p", "--output-format", "stream-json", "--verbose",
                           "--allowedTools", "Bash(aidp prime:*)", "Bash(aidp todo:*)",
                           *(f"Bash(aidp tasks {c}:*)" for c in AGENT_TASKS_COMMANDS))
    assert claude.preset == "claude" and not claude.prompt_in_argv
    assert dict(claude.env) == {"CLAUDE_CODE_MAX_RETRIES": "3"}
    codex = parse("Codex", source="--agent")
    assert codex.argv == ("codex", "exec", "--json", "--sandbox", "workspace-write", "-c",
                          "tools.update_plan.enabled=true", "-c", "allow_login_shell=false",
                          "-") and not codex.prompt_in_argv


AGENTS_NEVER_RUN = ("trust", "setup", "run", "report", "mcp", "hook", "init", "sync",
                    "tasks export", "tasks import", "tasks textconv", "tasks repair",
                    "tasks compact")


def test_presets_allow_only_the_aidp_commands_an_agent_needs() -> None:
    """Issue 35, item 1: an agent may run `aidp tasks …`, `aidp todo …` and `aidp prime`,
    never `aidp trust`, `setup`, `run`, nor a command that takes a file to read or write
    (docs/security.md). Each CLI's own rule syntax, where it has one."""
    assert all(c.split()[1] in ("tasks", "todo", "prime") for c in AGENT_COMMANDS)
    for never in AGENTS_NEVER_RUN:
        assert not any(c == f"aidp {never}" or c.startswith(f"aidp {never} ")
                       for c in AGENT_COMMANDS), never
    claude = parse("claude", source="--agent").argv
    rules = claude[claude.index("--allowedTools") + 1:]
    assert rules == tuple(f"Bash({c}:*)" for c in AGENT_COMMANDS)  # Claude Code: prefix:*
    gemini = parse("gemini", source="--agent").argv
    [allowed] = [a for a in gemini if a.startswith("--allowed-tools=")]
    assert allowed.removeprefix("--allowed-tools=").split(",") == [
        *(f"run_shell_command({c})" for c in AGENT_COMMANDS), "write_todos"]  # by prefix
    # Copilot approves a shell command by its program name alone (but git's and gh's
    # subcommands): `shell(aidp todo)` never matches, so its preset allows `aidp`, and
    # `aidp trust` refuses itself there (tests/agents: trust_refused).
    assert "--allow-tool=shell(aidp)" in parse("copilot", source="--agent").argv
    for name in presets.PRESETS:
        assert "trust" not in presets.PRESETS[name] and "aidp:*" not in presets.PRESETS[name]


def test_the_agents_environment_carries_the_mark_of_an_agent(project) -> None:
    from aidp.trust.person import AGENT_MARK

    assert child_env(project, "s", base={})[AGENT_MARK] == "aidp run"
    assert child_env(project, "s", base={AGENT_MARK: ""})[AGENT_MARK] == "aidp run"


def test_the_prompt_goes_on_stdin_without_a_placeholder() -> None:
    spec = parse("claude", source="--agent")
    assert spec.command("do it") == (list(spec.argv), "do it")


def test_the_placeholder_takes_the_prompt_as_one_argument() -> None:
    spec = parse("my-agent --message={prompt} --flag '{prompt}'", source="--agent")
    prompt = "it's $HOME; `rm -rf /` \"quoted\"\nsecond line"
    argv, stdin = spec.command(prompt)
    assert argv == ["my-agent", f"--message={prompt}", "--flag", prompt]
    assert stdin is None


def test_a_command_line_is_split_never_run_by_a_shell() -> None:
    spec = parse("python3 'my agent.py' --x \"a b\" ; rm -rf x", source="--agent")
    assert spec.argv == ("python3", "my agent.py", "--x", "a b", ";", "rm", "-rf", "x")


@pytest.mark.parametrize("value", ["", "   ", "'unclosed", [], [""], 42])
def test_bad_agent_values_are_usage_errors(value: object) -> None:
    with pytest.raises(AgentError) as info:
        parse(value, source="--agent")
    assert info.value.exit_code == 2


def test_choose_prefers_option_then_env_then_config(project: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    (project / ".aidp").mkdir()
    (project / ".aidp" / "config.toml").write_text('agent = "gemini"\n', encoding="utf-8")
    assert choose(None, project).label == "gemini"
    assert choose(None, project).source == ".aidp/config.toml"
    monkeypatch.setenv("AIDP_AGENT", "aider")
    assert choose(None, project).label == "aider"
    assert choose("codex", project).label == "codex"


def test_config_may_give_the_command_as_a_list(project: Path) -> None:
    (project / ".aidp").mkdir()
    (project / ".aidp" / "config.toml").write_text(
        'agent = ["python3", "agent with space.py", "{prompt}"]\n', encoding="utf-8")
    gate.trust(project, presets=presets.PRESETS)  # a command line in config.toml runs only once trusted
    spec = choose(None, project)
    assert spec.argv == ("python3", "agent with space.py", "{prompt}")


def test_no_agent_anywhere_is_a_clear_usage_error(project: Path) -> None:
    with pytest.raises(AgentError, match=r"No agent configured.*--agent.*AIDP_AGENT.*config\.toml"):
        choose(None, project)


def test_a_broken_config_is_a_usage_error(project: Path) -> None:
    (project / ".aidp").mkdir()
    (project / ".aidp" / "config.toml").write_text("agent = \n", encoding="utf-8")
    with pytest.raises(gate.ConfigError, match=r"Invalid .*config\.toml") as info:
        choose(None, project)
    assert info.value.exit_code == 2


def test_child_env_points_the_agent_at_this_project_and_this_aidp(tmp_path: Path) -> None:
    env = child_env(tmp_path, "feature-x", base={"PATH": "/usr/bin:/bin", "KEEP": "1"})
    assert env["AIDP_DIR"] == str(tmp_path)
    assert env["AIDP_SESSION"] == "feature-x"
    assert env["KEEP"] == "1"
    assert env["PATH"].split(os.pathsep)[0] == str(Path(sys.executable).parent)
    assert env["PATH"].endswith("/usr/bin:/bin")


def test_child_env_turns_the_pager_off(tmp_path: Path) -> None:
    """An agent running `aidp tasks list` on a terminal of its own must not wait in
    `less`: whatever pager the person chose, the agent gets none."""
    env = child_env(tmp_path, "s", base={"PATH": "/bin", "AIDP_PAGER": "less", "PAGER": "most"})
    assert env["AIDP_PAGER"] == ""
    from aidp.views import pager

    assert pager.command("x\n" * 100, tty=True, columns=80, rows=24, env=env) is None


def test_check_startable(tmp_path: Path) -> None:
    env = {"PATH": str(tmp_path)}
    with pytest.raises(AgentError, match="Agent command not found: preset 'claude' runs 'claude'"):
        check_startable(parse("claude", source="--agent"), cwd=tmp_path, env=env)
    with pytest.raises(AgentError, match=re.escape("not found: './nope'")):
        check_startable(parse("./nope", source="--agent"), cwd=tmp_path, env=env)
    plain = tmp_path / "plain.sh"
    plain.write_text("#!/bin/sh\n", encoding="utf-8")
    with pytest.raises(AgentError, match=re.escape("cannot be started: './plain.sh' is not an executable")):
        check_startable(parse("./plain.sh", source="--agent"), cwd=tmp_path, env=env)
    plain.chmod(plain.stat().st_mode | stat.S_IXUSR)
    for command in ("./plain.sh", "plain.sh --x"):
        spec = parse(command, source="--agent")
        assert check_startable(spec, cwd=tmp_path, env=env) == str(plain)


def test_spec_label_for_a_list_is_shell_quoted() -> None:
    spec = parse(["a b", "c"], source="config")
    assert isinstance(spec, AgentSpec) and spec.label == "'a b' c"
