"""`aidp run --backlog` with the real agent CLIs against the scripted model server:
the agent closes each claimed task with its own shell tool, and the completion gate
holds a task open while its TODO list has open items."""

from __future__ import annotations

import re

import pytest
from fakemodel import Conversation, Scenario, shell, text
from harness import AgentWorld


def task_prompt(tid: str) -> str:
    return f"claimed for you (as bot):\n\n  {tid}"


@pytest.mark.parametrize("cli", ["claude", "codex"])
def test_backlog_drains_the_queue_with_a_real_agent(cli: str, request, fake_model) -> None:
    world: AgentWorld = request.getfixturevalue(cli)
    first = world.aidp("tasks", "add", "First task", "-p", "high", "-q").stdout.strip()
    second = world.aidp("tasks", "add", "Second task", "-q", "--blocked-by", first).stdout.strip()
    fake_model.scenario = Scenario((
        Conversation((shell(f"aidp tasks done {first}"), text("Closed it.")),
                     when=task_prompt(first)),
        Conversation((shell(f"aidp tasks done {second}"), text("Closed it.")),
                     when=task_prompt(second)),
    ))
    result = world.aidp_run(None, "--backlog", "--as", "bot")
    assert result.exit_code == 0, str(result)
    found = {t["id"]: t for t in world.tasks()}
    assert [found[first]["status"], found[second]["status"]] == ["done", "done"]
    assert found[first]["assignee"] == found[second]["assignee"] == "bot"
    # Named by its short id, as `tasks list` shows it.
    shown = re.search(r"✓ Task done: Second task \(([0-9a-f]{4,8})\)", result.stdout)
    assert shown is not None, result.stdout
    assert second.rpartition("_")[2].startswith(shown[1])
    assert "Backlog run: 2 claimed, 2 tasks closed" in result.stdout


@pytest.mark.parametrize("cli", ["claude", "codex"])
def test_completion_gate_with_a_real_agent(cli: str, request, fake_model) -> None:
    world: AgentWorld = request.getfixturevalue(cli)
    tid = world.aidp("tasks", "add", "Gated task", "-q").stdout.strip()
    fake_model.scenario = Scenario((
        # The follow-up after the gate: finish the list, close the task again.
        Conversation((shell("aidp todo tick 2"), shell(f"aidp tasks done {tid}"),
                      text("All done now.")), when="still has open items"),
        Conversation((shell('aidp todo add "Step one"'), shell('aidp todo add "Step two"'),
                      shell("aidp todo tick 1"), shell(f"aidp tasks done {tid}"),
                      text("Done, I think.")), when=task_prompt(tid)),
    ))
    result = world.aidp_run(None, "--backlog", "--as", "bot")
    assert result.exit_code == 0, str(result)
    history = [h["status"] for h in world.json("tasks", "history", tid, "--json")]
    assert history == ["pending", "in_progress", "done", "in_progress", "done"], str(result)
    assert "was marked done with TODO items still open" in result.stderr
