"""The prompts aidp run sends."""

from __future__ import annotations

from aidp.agent import prompt
from aidp.agent.signals import FileTask, TodoPause, UpdateTask, parse_text
from aidp.core.model import format_ts, new_task

NOW = 1_795_314_333_000_000
DAY = 86_400_000_000


def test_the_user_prompt_comes_first_then_todo_backlog_and_grammar() -> None:
    task = new_task("Fix the flaky test", priority="high", tags=["ci"], now=NOW - 3 * DAY)
    text = prompt.build("Refactor the parser", todo_text="No active TODOs", backlog=[task], now=NOW)
    assert text.splitlines()[0] == "Refactor the parser"
    assert "## Your TODO list\n\nNo active TODOs" in text
    assert f"- {task['id']} [high] Fix the flaky test (3d ago) #ci" in text
    for needle in ('File task: "DESCRIPTION"', "Update task: ID status:", 'Todo pause: "REASON"',
                   "aidp todo tick", "aidp tasks list", "priority comes before tags"):
        assert needle in text
    order = [text.index(h) for h in ("## Your TODO list", "## Open backlog", "## Keeping")]
    assert order == sorted(order)


def test_the_grammar_in_the_prompt_shows_only_placeholders() -> None:
    text = prompt.build("x", todo_text="No active TODOs", backlog=[], now=NOW)
    found = parse_text(text)
    assert {type(s) for s in found} == {FileTask, UpdateTask, TodoPause}
    assert {s.description for s in found if isinstance(s, FileTask)} == {"DESCRIPTION"}
    assert {s.ref for s in found if isinstance(s, UpdateTask)} == {"ID"}
    assert {s.reason for s in found if isinstance(s, TodoPause)} == {"REASON"}


def test_a_long_backlog_is_cut_with_the_command_to_see_all() -> None:
    tasks = [new_task(f"task {n}", now=NOW) for n in range(25)]
    lines = prompt.backlog_lines(tasks, NOW, limit=20)
    assert len(lines) == 21
    assert lines[-1] == "- … and 5 more (run `aidp tasks list` to see all)"


def test_in_progress_tasks_say_so() -> None:
    task = dict(new_task("Half done", now=NOW), status="in_progress", updated_at=format_ts(NOW))
    expected = f"- {task['id']} [medium, in_progress] Half done (today)"
    assert prompt.backlog_lines([task], NOW) == [expected]


def test_the_continuation_prompt_names_the_task_on_its_first_line() -> None:
    todo_text = "1. [PENDING] (MEDIUM) Write the tests"
    text = prompt.continuation("Write   the\ttests", todo_text=todo_text)
    lines = text.splitlines()
    assert lines[0] == "You have an active task: Write the tests"
    assert "aidp todo tick" in text and 'Todo pause: "REASON"' in text
    assert "1. [PENDING] (MEDIUM) Write the tests" in text
