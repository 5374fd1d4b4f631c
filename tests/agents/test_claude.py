"""Claude Code specifics of the `claude` preset, with the real CLI (see test_scenarios.py
for the shared table)."""

from __future__ import annotations

from fakemodel import FakeModelServer, Scenario, error, plan, shell, text
from harness import AgentWorld


def test_todowrite_is_mirrored_when_the_tasks_api_is_off(claude: AgentWorld,
                                                         fake_model: FakeModelServer) -> None:
    claude.env["CLAUDE_CODE_ENABLE_TASKS"] = "false"
    fake_model.scenario = Scenario.of(
        plan([("Write the parser", "completed"), ("Test the parser", "in_progress")]),
        text("Planned."),
    )
    result = claude.aidp_run("Write a parser")
    assert result.exit_code == 0, str(result)
    assert "TodoWrite" in fake_model.tools_offered(), fake_model.describe()
    assert "🔧 TodoWrite: 2 items" in result.stdout, str(result)
    assert [(i["content"], i["status"]) for i in claude.todo()["items"]] == [
        ("Write the parser", "completed"), ("Test the parser", "in_progress")]


def test_the_preset_allows_aidp_and_nothing_broader(claude: AgentWorld,
                                                    fake_model: FakeModelServer) -> None:
    fake_model.scenario = Scenario.of(
        shell("touch made-by-the-agent.txt"),
        shell("aidp todo add 'Allowed item'"),
        text("Tried both."),
    )
    result = claude.aidp_run("Try two commands")
    assert result.exit_code == 0, str(result)
    assert not (claude.project / "made-by-the-agent.txt").exists(), str(result)
    assert "Agent: Claude Code refused 1 tool call that needs approval (Bash: touch " \
        "made-by-the-agent.txt)" in result.stderr, str(result)
    assert [i["content"] for i in claude.todo()["items"]] == ["Allowed item"], str(result)


def test_api_retries_are_bounded_and_shown(claude: AgentWorld,
                                           fake_model: FakeModelServer) -> None:
    fake_model.scenario = Scenario.of(error(500))
    result = claude.aidp_run("Anything")
    assert result.exit_code == 1, str(result)
    assert result.stderr.count("Agent: API error 500") == 3, str(result)
    assert len(fake_model.main_requests()) == 4, fake_model.describe()  # 1 + 3 retries


def test_your_own_retry_bound_wins(claude: AgentWorld, fake_model: FakeModelServer) -> None:
    claude.env["CLAUDE_CODE_MAX_RETRIES"] = "1"
    fake_model.scenario = Scenario.of(error(500))
    result = claude.aidp_run("Anything")
    assert result.exit_code == 1, str(result)
    assert len(fake_model.main_requests()) == 2, fake_model.describe()
