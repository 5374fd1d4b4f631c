"""Claude Code specifics of the `claude` preset, with the real CLI (see test_scenarios.py
for the shared table)."""

from __future__ import annotations

import json

from fakemodel import FakeModelServer, Scenario, error, raw, shell, text
from harness import AgentWorld


def test_a_todowrite_claude_refuses_is_not_mirrored(claude: AgentWorld,
                                                   fake_model: FakeModelServer) -> None:
    """Claude Code 2.1.332 offers no TodoWrite headless, not even with the Tasks API
    off: a model that calls it all the same is told "No such tool available", and the
    TODO list stays as it was."""
    claude.env["CLAUDE_CODE_ENABLE_TASKS"] = "false"
    fake_model.scenario = Scenario.of(
        raw("TodoWrite", {"todos": [{"content": "Write the parser", "status": "in_progress",
                                     "activeForm": "Writing the parser"}]}),
        text("Planned."),
    )
    result = claude.aidp_run("Write a parser")
    assert result.exit_code == 0, str(result)
    assert not {"TodoWrite", "TaskCreate"} & fake_model.tools_offered(), fake_model.describe()
    refusal = json.dumps(fake_model.main_requests()[-1].body["messages"][-1])
    assert "No such tool available: TodoWrite" in refusal, refusal
    assert "🔧 TodoWrite: 1 item" in result.stdout, str(result)
    assert "TODO list follows" not in result.stdout, str(result)
    assert claude.todo()["items"] == [], str(result)


def test_the_preset_allows_aidps_agent_commands_and_nothing_broader(
        claude: AgentWorld, fake_model: FakeModelServer) -> None:
    """The agent's own aidp commands run; `aidp trust`, `aidp tasks export -o FILE`, a
    chain that smuggles a command behind an allowed one, and anything else need a
    person's approval, which headless nobody gives (issue 35, item 1)."""
    fake_model.scenario = Scenario.of(
        shell("touch made-by-the-agent.txt"),
        shell("aidp todo add 'Allowed item'"),
        shell("aidp tasks add 'Allowed task'"),
        shell("aidp trust"),
        shell("aidp tasks export -f csv -o exported.csv"),
        shell("aidp todo show && touch chained.txt"),
        text("Tried them all."),
    )
    result = claude.aidp_run("Try the commands")
    assert result.exit_code == 0, str(result)
    for made in ("made-by-the-agent.txt", "exported.csv", "chained.txt"):
        assert not (claude.project / made).exists(), str(result)
    assert "Agent: Claude Code refused 4 tool calls that need approval (Bash: touch " \
        "made-by-the-agent.txt; Bash: aidp trust; Bash: aidp tasks export" in result.stderr, \
        str(result)
    assert [i["content"] for i in claude.todo()["items"]] == ["Allowed item"], str(result)
    assert [t["description"] for t in claude.tasks()] == ["Allowed task"], str(result)


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
