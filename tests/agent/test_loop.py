"""The loop as a library: it reports through its callback and never prints."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from aidp import todos
from aidp.agent.continuation import Limits, nothing_to_resume
from aidp.agent.loop import Loop, Message
from aidp.agent.pending import pending_summary
from aidp.agent.presets import parse
from aidp.app.project import Project
from aidp.backlog import tasks
from aidp.core.errors import InvalidInput
from aidp.tasklist.log import TaskLog


def make_loop(project: Path, tmp_path: Path, body: str, **options) -> tuple[Loop, list[Message]]:
    script = tmp_path / "agent.py"
    script.write_text("import sys\nprompt = sys.stdin.read()\n" + body, encoding="utf-8")
    messages: list[Message] = []
    loop = Loop(project=Project(project, create_root=True), session="lib",
                agent=parse([sys.executable, str(script)], source="test"),
                emit=messages.append, **options)
    return loop, messages


def test_the_loop_reports_through_its_callback_only(project: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    todos.change(TaskLog(project), "lib", lambda t: todos.add(t, "last", "Open item")[0])
    loop, messages = make_loop(project, tmp_path, (
        "print('hello')\n"
        "print('File task: \"From the library\" priority: low')\n"
        "print('warn', file=sys.stderr)\n"
    ), limits=Limits(max_continuations=2))
    result = loop.user_turn("go")
    loop.close()
    assert capsys.readouterr() == ("", "")
    assert result.exit_code == 0 and result.ended == "progress"  # filing is progress
    kinds = [(m.kind, m.text) for m in messages]
    assert ("agent", "hello") in kinds and ("agent_err", "warn") in kinds
    filed = [text for kind, text in kinds if kind == "filed"]
    assert len(filed) == 1 and re.fullmatch(r"📋 Filed task: From the library \([0-9a-f]{4,8}\)", filed[0])


def test_a_lazy_turn_ends_when_the_budget_is_spent(project: Path, tmp_path: Path) -> None:
    todos.change(TaskLog(project), "lib", lambda t: todos.add(t, "last", "Open item")[0])
    loop, messages = make_loop(project, tmp_path, "print('nothing done')\n",
                               limits=Limits(max_continuations=2))
    result = loop.user_turn("go")
    assert (result.exit_code, result.invocations, result.ended) == (0, 3, "continuations used up")
    continuations = [m.text for m in messages if m.kind == "continuation"]
    assert continuations == [
        "↻ Continuation 1/2: You have an active task: Open item",
        "↻ Continuation 2/2: You have an active task: Open item",
    ]


def test_bad_options_are_usage_errors(project: Path, tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="--max-continuations -1"):
        make_loop(project, tmp_path, "", limits=Limits(max_continuations=-1))
    with pytest.raises(InvalidInput, match="--timeout -2"):
        make_loop(project, tmp_path, "", limits=Limits(timeout=-2))


def test_pending_summary(project: Path) -> None:
    log = TaskLog(project)
    assert pending_summary(log.read()) == ["📋 No pending tasks"]
    for n in range(3):
        tasks.add(log, f"Task {n}")
    lines = pending_summary(log.read(), limit=2)
    assert lines[0] == "📋 Pending tasks (3):"
    assert len(lines) == 4 and lines[-1] == "  … and 1 more (see all: aidp tasks list pending)"


def test_nothing_to_resume_reasons() -> None:
    empty = todos.TodoList(session="s")
    assert "no active TODOs" in (nothing_to_resume(empty, max_continuations=3) or "")
    open_list, _ = todos.add(empty, "last", "Item")
    assert nothing_to_resume(open_list, max_continuations=3) is None
    assert "is 0" in (nothing_to_resume(open_list, max_continuations=0) or "")
    paused = todos.pause(open_list, "stuck")
    assert "paused (stuck)" in (nothing_to_resume(paused, max_continuations=3) or "")


def test_a_plan_applies_entry_by_entry_and_keeps_in_progress(project: Path,
                                                             tmp_path: Path) -> None:
    """A bad plan entry is skipped with a warning while the others apply; a plan that
    only says done or not (Codex's todo_list) leaves an item in progress as it was."""
    log = TaskLog(project)
    todos.change(log, "lib", lambda t: todos.add(t, "last", "Test it")[0])
    todos.change(log, "lib", lambda t: todos.start(t, "1")[0])
    codex_plan = (
        '{"type": "item.started", "item": {"id": "i1", "type": "todo_list", "items": ['
        '{"text": "Write code", "completed": true}, {"text": "Test it", "completed": false},'
        ' {"text": "bad \\u001b[31m entry", "completed": false}, 7]}}'
    )
    loop, messages = make_loop(project, tmp_path, f"print({codex_plan!r})\n")
    result = loop.user_turn("go")
    assert result.exit_code == 0
    items = todos.current(log.read(), "lib").visible
    assert [(i["content"], i["status"]) for i in items] == [
        ("Write code", "completed"), ("Test it", "in_progress")]
    warnings = [m.text for m in messages if m.kind == "warning"]
    assert len(warnings) == 2 and all(w.startswith("Left out of the agent's plan: entry")
                                      for w in warnings), warnings
    assert "entry 3: Invalid description" in warnings[0] and "entry 4" in warnings[1]
