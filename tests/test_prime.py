"""`aidp prime`: the session-start context, bounded whatever the backlog's size."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from aidp import todos
from aidp.app import prime
from aidp.tasklist.log import TaskLog

LIMIT = 6000


def _task(n: int, *, status: str, priority: str, description: str) -> dict:
    stamp = f"2026-01-{1 + n % 28:02d}T{n % 24:02d}:00:{n % 60:02d}.{n % 1_000_000:06d}Z"
    return {"id": f"task_{1_700_000_000 + n}_{n:08x}", "description": description,
            "status": status, "priority": priority, "created_at": stamp,
            "updated_at": stamp, "tags": ["bulk", "x" * 30]}


def _big_log(project: Path, events: int) -> None:
    """`events` lines: tasks filed and moved on, long descriptions, plus a long TODO list."""
    folder = project / ".aidp"
    folder.mkdir(exist_ok=True)
    statuses = ("pending", "in_progress", "done", "pending", "abandoned")
    lines = []
    for n in range(events):
        lines.append(orjson.dumps(_task(
            n % (events // 2 or 1), status=statuses[n % 5], priority=("high", "medium", "low")[n % 3],
            description=f"Task {n} " + "long words " * 18,
        )))
    items = [{"id": str(i), "content": f"Step {i} " + "y" * 180, "status": "pending",
              "priority": "medium", "subtasks": [{"id": f"{i}.1", "content": "z" * 150,
                                                  "status": "pending"}]}
             for i in range(120)]
    lines.append(orjson.dumps({"type": "todo_list", "id": "todo_list:s", "session": "s",
                               "items": items, "active": True, "paused": False,
                               "updated_at": "2026-02-01T00:00:00.000000Z"}))
    (folder / "tasklist.jsonl").write_bytes(b"\n".join(lines) + b"\n")


def test_prime_stays_under_the_limit_at_100k_events(project: Path, cli) -> None:
    _big_log(project, 100_000)
    result = cli("--session", "s", "prime")
    assert result.code == 0, result
    assert len(result.out) < LIMIT
    assert "## Your TODO list" in result.out
    assert "Step 0 " in result.out and "more lines: run `aidp todo show`" in result.out
    assert "## In progress (" in result.out and "more: `aidp tasks list in_progress`" in result.out
    assert "more: `aidp tasks ready`" in result.out
    assert "aidp tasks add" in result.out and 'Todo pause: "REASON"' in result.out
    # Twice: the second read goes through the snapshot the first one built.
    again = cli("--session", "s", "prime", "--json")
    assert again.code == 0, again
    data = json.loads(again.out)
    assert len(data["text"]) < LIMIT
    assert data["todo"]["items_left_out"] > 0 and data["todo"]["items"]
    assert len(data["ready"]) == prime.READY_SHOWN and data["ready_count"] > 10_000
    # The longest form: through a hook, commands naming a session id as long as Claude's.
    fold = TaskLog(project).read()
    hooked = prime.build(fold, "s", session_flag=True, hooked=True)
    hooked.session = "0b5f8c8e-1f0e-4c51-9a3e-6b2b2c1d9e7f"
    text = hooked.text()
    assert len(text) < LIMIT and "(cut:" not in text


def test_ready_is_high_priority_first_then_oldest(log: TaskLog, cli) -> None:
    from aidp.backlog import tasks

    old_low = tasks.add(log, "old low", priority="low")
    mid = tasks.add(log, "medium one")
    high1 = tasks.add(log, "first high", priority="high")
    high2 = tasks.add(log, "second high", priority="high")
    busy = tasks.add(log, "under way")
    tasks.set_status(log, [busy["id"]], "in_progress")
    done = tasks.add(log, "finished")
    tasks.set_status(log, [done["id"]], "done")
    data = json.loads(cli("prime", "--json").out)
    assert [t["id"] for t in data["ready"]] == [high1["id"], high2["id"], mid["id"],
                                                old_low["id"]]
    assert [t["id"] for t in data["in_progress"]] == [busy["id"]]
    assert data["pending_count"] == 4 and data["in_progress_count"] == 1
    text = cli("prime").out
    assert text.index("first high") < text.index("medium one") < text.index("old low")
    assert "finished" not in text


def test_prime_of_an_empty_project_creates_nothing(project: Path, cli) -> None:
    result = cli("prime")
    assert result.code == 0 and result.err == ""
    assert "No active TODOs" in result.out and "No pending tasks." in result.out
    assert not (project / ".aidp").exists()


def test_prime_shows_the_session_list_and_names_a_non_default_session(log: TaskLog) -> None:
    todos.change(log, "abc-123", lambda t: todos.add(t, "last", "Write the parser")[0])
    built = prime.build(log.read(), "abc-123", session_flag=True, hooked=True)
    text = built.text()
    assert "1. [PENDING] (MEDIUM) Write the parser" in text
    assert "`aidp --session abc-123 todo tick N`" in text
    assert "mirror your own TODO tool" in text
    plain = prime.build(log.read(), "abc-123").text()
    assert "`aidp todo tick N`" in plain and "mirror" not in plain
    data = built.to_json()
    assert data["session"] == "abc-123" and data["todo"]["items"][0]["content"] == (
        "Write the parser")
    assert "aidp --session abc-123 todo show" in data["commands"]


@pytest.mark.parametrize("session", ["a b", "it's"])
def test_session_names_are_quoted_for_the_shell(log: TaskLog, session: str) -> None:
    text = prime.build(log.read(), session, session_flag=True).text()
    import shlex

    assert f"aidp --session {shlex.quote(session)} todo show" in text


def test_control_characters_in_tasks_are_made_inert(log: TaskLog) -> None:
    folder = log.path.parent
    folder.mkdir(exist_ok=True)
    task = _task(1, status="pending", priority="high", description="evil \x1b[31mred")
    log.path.write_bytes(orjson.dumps(task) + b"\n")
    text = prime.build(log.read(), "s").text()
    assert "\x1b" not in text and "evil" in text


def test_a_new_session_is_told_of_another_open_list(log: TaskLog) -> None:
    todos.change(log, "main", lambda t: todos.add(t, "last", "Refactor the parser")[0])
    todos.change(log, "done", lambda t: todos.tick(todos.add(t, "last", "Old")[0], "1")[0])
    built = prime.build(log.read(), "fresh-id", session_flag=True)
    text = built.text()
    assert ("Session main has a list with 1 open item (first: Refactor the parser); to "
            "continue it here: `aidp --session fresh-id todo load main`") in text
    assert [s["session"] for s in built.to_json()["other_open_lists"]] == ["main"]
    # A session with a list of its own is not distracted by others.
    todos.change(log, "fresh-id", lambda t: todos.add(t, "last", "Mine")[0])
    assert "todo load" not in prime.build(log.read(), "fresh-id").text()


def test_prime_counts_the_ready_tasks_it_does_not_show_and_shows_their_links(
        log: TaskLog, cli) -> None:
    """The count of ready tasks is every pending task not waiting on an open one (the
    ready list's length, counted without listing it); a task shown carries its holder,
    read from its own records alone."""
    from aidp.backlog import queue, tasks

    filed = [tasks.add(log, f"task {n}") for n in range(prime.READY_SHOWN + 4)]
    epic = tasks.add(log, "epic")
    queue.edit(log, filed[0]["id"], parent=epic["id"])  # the epic waits on its child
    blocker = tasks.add(log, "blocker")
    for waiting in filed[-3:]:
        queue.block(log, waiting["id"], [blocker["id"]])
    busy = queue.claim(log, filed[2]["id"], "bob").shown
    listed = json.loads(cli("tasks", "ready", "--json").out)
    data = json.loads(cli("prime", "--json").out)
    # 12 filed + blocker + epic pending; the epic and three filed wait; one claimed.
    assert data["ready_count"] == len(listed) == len(filed) + 1 - 3 - 1
    assert data["pending_count"] == len(filed) + 2 - 1
    assert [t["id"] for t in data["ready"]] == [t["id"] for t in listed][:prime.READY_SHOWN]
    assert [(t["id"], t.get("assignee")) for t in data["in_progress"]] == [(busy["id"], "bob")]
    assert cli("tasks", "ready").out.splitlines()[0] == f"READY ({len(listed)})"
    assert cli("tasks", "ready", "-n", "2").out.splitlines()[0] == f"READY (2 of {len(listed)})"


def test_the_claimed_task_and_its_body_fit_the_limit_and_say_where_it_was_cut(
        project: Path, cli, monkeypatch) -> None:
    """The task this session works on comes with its body, cut to the room the biggest
    other sections leave, saying so; the text stays under the limit."""
    _big_log(project, 2_000)
    body = "\n".join(f"Criterion {n}: " + "w" * 60 for n in range(1000))[:65_000]
    tid = cli("tasks", "add", "The claimed one", "--type", "bug", "--body", body, "-q"
              ).out.strip()
    monkeypatch.setenv("AIDP_ACTOR", "agent-7")
    assert cli("tasks", "claim", tid).code == 0
    for extra in ((), ("--json",)):
        result = cli("--session", "s", "prime", *extra)
        assert result.code == 0, result
        text = json.loads(result.out)["text"] if extra else result.out
        assert len(text) < LIMIT
        head = f"- {tid} [medium] The claimed one (claimed by agent-7) (bug)"
        assert f"## Your task\n\n{head}\n\nCriterion 0: " in text
        assert "… the body is cut here: " in text
        assert f"more characters (`aidp tasks show {tid}` prints it whole)" in text
    claimed = json.loads(cli("--session", "s", "prime", "--json").out)["claimed"]
    assert claimed["id"] == tid and claimed["body"].startswith("Criterion 0: ")
    assert len(claimed["body"]) + claimed["body_left_out"] == len(body)
    # another actor holds nothing: no task of its own
    monkeypatch.setenv("AIDP_ACTOR", "someone-else")
    assert "## Your task" not in cli("--session", "s", "prime").out
    # the task `aidp run` hands its agent (AIDP_TASK), whoever holds it
    monkeypatch.setenv("AIDP_TASK", tid)
    assert "## Your task" in cli("--session", "s", "prime").out


def test_a_short_body_is_shown_whole(log: TaskLog, cli, monkeypatch) -> None:
    tid = cli("tasks", "add", "Small", "--body", "Just this.\n\n- and\tthat", "-q").out.strip()
    monkeypatch.setenv("AIDP_TASK", tid)
    text = cli("prime").out
    assert f"## Your task\n\n- {tid} [medium] Small\n\nJust this.\n\n- and\tthat\n\n" in text
    assert "cut here" not in text
