"""`aidp run`'s agent names its task by AIDP_TASK, and a signal that cannot be applied
is a warning, never silence (docs/agents.md, "Signals"). Stand-in agents are shell
scripts, as an agent's own shell command would print its signal."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def actor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIDP_ACTOR", "runner")


def shell_agent(tmp_path: Path, script: str) -> str:
    """An agent command: /bin/sh running `script` after reading its prompt."""
    path = tmp_path / "agent.sh"
    path.write_text("cat > /dev/null\n" + script)
    return f"/bin/sh {shlex.quote(str(path))}"


def add(cli, text: str, *args: str) -> str:
    result = cli("tasks", "add", text, "-q", *args)
    assert result.code == 0, result
    return result.out.strip()


def statuses(cli) -> dict[str, str]:
    return {t["id"]: t["status"]
            for t in json.loads(cli("tasks", "list", "--all", "--json").out)}


def test_run_backlog_gives_the_agent_the_tasks_full_id(cli, tmp_path: Path) -> None:
    # The case: `run --backlog` (one agent) gave no AIDP_TASK, so the agent's
    # `Update task: $AIDP_TASK status: done` named nothing and was dropped silently.
    first = add(cli, "First", "-p", "high")
    second = add(cli, "Second")
    seen = tmp_path / "seen.txt"
    agent = shell_agent(tmp_path, f'echo "$AIDP_TASK" >> {shlex.quote(str(seen))}\n'
                                  'echo "Update task: $AIDP_TASK status: done"\n')
    result = cli("run", "--backlog", "--agent", agent)
    assert result.code == 0, result
    assert seen.read_text().split() == [first, second]
    assert statuses(cli) == {first: "done", second: "done"}
    assert "Ignored" not in result.err and "Backlog run: 2 claimed, 2 tasks closed" in result.out


def test_a_plain_run_has_no_task_and_says_the_signal_names_none(cli, tmp_path: Path) -> None:
    task = add(cli, "Open work")
    agent = shell_agent(tmp_path, 'echo "Update task: $AIDP_TASK status: done"\n')
    result = cli("run", "do it", "--agent", agent)
    assert result.code == 0, result
    assert statuses(cli) == {task: "pending"}
    assert result.err.count("Ignored Update task signal") == 1
    assert ("Warning: Ignored Update task signal: no task id before status: (write: Update "
            "task: ID status: done; statuses: pending, in_progress, done, abandoned)"
            in result.err)


@pytest.mark.parametrize(("line", "says"), [
    ("Update task:", "no task id and no status"),
    ("Update task: {id}", "no status: after '{id}'"),
    ("Update task: {id} status:", "an empty status:"),
    ("Update task: {id} status: \"done\"", "status '\"done\"' is no status word"),
    ("Update task: `` status: done", "no task id before status:"),
    ("Update task: {id} status: finished", "Invalid status 'finished': use one of pending"),
    ("Update task: ffff0000 status: done", "Task not found: ffff0000"),
])
def test_a_signal_that_cannot_be_applied_is_a_warning_and_skipped(cli, tmp_path: Path,
                                                                  line: str, says: str) -> None:
    task = add(cli, "Open work")
    other = add(cli, "Other work")
    bad = line.format(id=task)
    agent = shell_agent(tmp_path, f"printf '%s\\n' {shlex.quote(bad)}\n"
                                  f"echo 'Update task: {other} status: done'\n")
    result = cli("run", "go", "--agent", agent)
    assert result.code == 0, result  # the run goes on
    assert statuses(cli) == {task: "pending", other: "done"}  # skipped; the next applied
    warnings = [w for w in result.err.splitlines() if w.startswith("Warning: Ignored")]
    assert len(warnings) == 1, result.err
    assert warnings[0].startswith("Warning: Ignored Update task signal: ")
    assert says.format(id=task) in warnings[0]
