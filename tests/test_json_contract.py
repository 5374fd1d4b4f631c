"""The `--json` contract: every command that takes `--json` is run here against a small
project (tasks in every status, dependencies, an epic, a claim, a note, a TODO list with
a checklist, two git commits) and its output is checked against the shapes documented
in docs/reference.md "JSON output" (held in tests/json_shapes.py). A new `--json`
command fails `test_every_json_command_is_under_contract` until it is added here."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from tests import json_shapes as S
from tests.test_git import git


def _run(cli, *args: str):
    result = cli(*args)
    assert result.code == 0, result
    return json.loads(result.out)


@pytest.fixture
def world(project: Path, cli, monkeypatch) -> dict[str, str]:
    """A project with something for every key to show, committed twice in git."""
    monkeypatch.setenv("AIDP_ACTOR", "tester")
    git(project, "init", "-q", "-b", "main")
    git(project, "config", "user.name", "t")
    git(project, "config", "user.email", "t@example.invalid")
    assert cli("init").code == 0
    add = lambda *a: cli("tasks", "add", *a, "-q").out.strip()  # noqa: E731
    ids = {
        "epic": add("Epic", "-p", "high", "-t", "big"),
        "done": add("Finished", "--discovered-during", "setup"),
        "gone": add("Dropped", "-p", "low"),
    }
    ids["child"] = add("Child", "--parent", ids["epic"], "-t", "x", "--type", "bug",
                       "--body", "## Steps\n1. run it")
    ids["waits"] = add("Waits", "--blocked-by", ids["child"])
    assert cli("tasks", "done", ids["done"], "--reason", "Shipped").code == 0
    assert cli("tasks", "abandon", ids["gone"], "no", "longer").code == 0
    assert cli("tasks", "note", ids["child"], "a note").code == 0
    for args in (("add", "Build"), ("add", "1.1", "Tokenize"), ("add", "Ship", "-p", "low")):
        assert cli("todo", *args).code == 0
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "one")
    assert cli("tasks", "edit", ids["waits"], "-d", "Waits longer", "-p", "high").code == 0
    assert cli("tasks", "start", ids["epic"]).code == 0
    assert cli("todo", "tick", "1.1").code == 0
    ids["new"] = add("Filed after the commit")
    return ids


# (arguments, shape) for every --json command; ids are names in `world`, put in by `_args`
CONTRACT: list[tuple[tuple[str, ...], object]] = [
    (("tasks", "list", "--json"), S.TASKS),
    (("tasks", "list", "--all", "--json"), S.TASKS),
    (("tasks", "list", "--all", "--with-body", "--json"), S.TASKS),
    (("tasks", "show", "{child}", "--json"), S.TASK_SHOWN),
    (("tasks", "show", "{epic}", "--json"), S.TASK_SHOWN),
    (("tasks", "add", "Another", "-t", "a", "--blocked-by", "{epic}", "--json"), S.TASK),
    (("tasks", "start", "{new}", "--json"), S.TASK),
    (("tasks", "done", "{new}", "--json"), S.TASK),
    (("tasks", "reopen", "{new}", "{done}", "--json"), S.TASKS),
    (("tasks", "abandon", "{new}", "why", "--json"), S.TASK),
    (("tasks", "history", "{waits}", "--json"), S.TASKS),
    (("tasks", "undo", "{waits}", "--json"), S.TASK),
    (("tasks", "stats", "--json"), S.STATS),
    (("tasks", "ready", "--json"), S.TASKS),
    (("tasks", "blocked", "--json"), S.BLOCKED),
    (("tasks", "claim", "--json"), S.TASK),
    (("tasks", "release", "{epic}", "--json"), S.TASK_OR_TASKS),
    (("tasks", "block", "{new}", "--on", "{epic}", "--json"), S.TASK),
    (("tasks", "unblock", "{new}", "--on", "{epic}", "--json"), S.TASK),
    (("tasks", "edit", "{new}", "--add-tag", "t", "--json"), S.TASK),
    (("tasks", "note", "{new}", "noted", "--json"), S.NOTE_ADDED),
    (("tasks", "changes", "--json"), S.CHANGES),
    (("tasks", "changes", "HEAD~1..HEAD", "--json"), S.CHANGES),
    (("tasks", "import", "{csv}", "--from", "csv", "--json"), S.IMPORTED),
    (("tasks", "repair", "--dry-run", "--json"), S.REPAIRED),
    (("tasks", "compact", "--json"), S.COMPACTED),
    (("todo", "show", "--json"), S.TODO),
    (("todo", "list", "--json"), S.TODO_LIST),
    (("todo", "add", "More", "--json"), S.TODO),
    (("todo", "start", "2", "--json"), S.TODO),
    (("todo", "tick", "3", "--json"), S.TODO),
    (("todo", "untick", "3", "--json"), S.TODO),
    (("todo", "delete", "3", "--json"), S.TODO),
    (("todo", "pause", "waiting", "--json"), S.TODO),
    (("todo", "resume", "--json"), S.TODO),
    (("todo", "clear", "--json"), S.TODO),
    (("todo", "load", "1", "--json"), S.TODO),
    (("todo", "list", "--all", "--json"), S.TODO_LIST),
    (("init", "--json"), S.INIT),
    (("run", "go", "--agent", "{agent}", "--max-continuations", "1", "--json"), S.RUN),
    (("prime", "--json"), S.PRIME),
    (("agents", "--json"), S.AGENTS),
]


def _args(args: tuple[str, ...], ids: dict[str, str]) -> list[str]:
    return [a.format(**ids) if a.startswith("{") else a for a in args]


def test_every_json_command_matches_its_documented_shape(world, cli, project) -> None:
    (project / "in.csv").write_text("description,priority\nFrom CSV,high\n")
    agent = project.parent / "agent.py"  # a scripted stand-in agent (never a real one)
    agent.write_text("print('File task: \"From the agent\"')\n"
                     f"print('Update task: {world['child']} status: in_progress')\n")
    ids = {**world, "csv": str(project / "in.csv"),
           "agent": f"{shlex.quote(sys.executable)} {shlex.quote(str(agent))}"}
    git(project, "commit", "-q", "-am", "two")
    seen_keys: set[str] = set()
    for args, shape in CONTRACT:
        out = _run(cli, *_args(args, ids))
        assert out, f"{args}: empty output proves nothing"
        found = S.problems(out, shape)
        assert not found, f"aidp {' '.join(args)}: drifted from docs/reference.md: {found}"
        for value in out if isinstance(out, list) else [out]:
            if isinstance(value, dict):
                seen_keys |= set(value)
    # the optional queue keys were really exercised, not just allowed
    assert {"blocked_by", "parent", "assignee", "claimed_at", "notes", "blocks",
            "children", "waiting_on", "task_type", "close_reason", "body"} <= seen_keys


def test_history_and_changes_show_edits_and_statuses(world, cli) -> None:
    history = _run(cli, "tasks", "history", world["waits"], "--json")
    assert [t["description"] for t in history] == ["Waits", "Waits longer"]
    changes = _run(cli, "tasks", "changes", "--json")
    S.check(changes, S.CHANGES)
    assert [t["id"] for t in changes["filed"]] == [world["new"]]
    assert changes["edited"][0]["fields"]["priority"] == {"from": "medium", "to": "high"}
    assert {"id": world["epic"], "description": "Epic", "from": "pending",
            "to": "in_progress"} in changes["status"]


def test_a_drifted_shape_is_caught() -> None:
    """The checker itself: each kind of drift is named with its path."""
    task = {"id": "task_1_0", "description": "d", "status": "pending", "priority": "high",
            "created_at": "2026-11-22T02:25:33.123456Z",
            "updated_at": "2026-11-22T02:25:33.123456Z", "tags": []}
    S.check(task, S.TASK)
    assert S.problems({**task, "surprise": 1}, S.TASK) == ["$: undocumented key 'surprise'"]
    assert S.problems({**task, "status": "doing"}, S.TASK)[0].startswith("$.status:")
    assert S.problems({**task, "tags": "a,b"}, S.TASK)[0].startswith("$.tags:")
    assert S.problems({**task, "updated_at": "yesterday"}, S.TASK)[0].startswith("$.updated_at")
    assert S.problems([task, {"id": 1}], S.TASKS)[0].startswith("$[1]")
    assert S.problems({"total": True}, S.STATS)[0]  # a bool is not an integer
    missing = {k: v for k, v in task.items() if k != "tags"}
    assert S.problems(missing, S.TASK) == ["$: missing key 'tags'"]


def _json_commands(group, prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    found: set[tuple[str, ...]] = set()
    for name, command in group.commands.items():
        if getattr(command, "commands", None):
            found |= _json_commands(command, (*prefix, name))
        elif any("--json" in getattr(p, "opts", ()) for p in command.params):
            found.add((*prefix, name))
    return found


def test_the_board_start_up_line_matches_its_documented_shape(cli, project) -> None:
    """`aidp board --json` serves until stopped: its contract is the one line it prints
    first (the server's own tests, tests/test_board.py, use that line to reach it)."""
    from tests.board_helpers import running

    assert cli("init").code == 0
    with running(cwd=project) as board:
        line = board.started
    assert not S.problems(line, S.BOARD)  # url and port only, typed
    assert line["url"].startswith(f"http://127.0.0.1:{line['port']}/")


# Commands whose --json is checked by a test of its own above, not by running to the end
SERVING = {("board",)}


def test_every_json_command_is_under_contract() -> None:
    from aidp.cli import startup

    everything = _json_commands(startup.command())
    covered = {tuple(a for a in args if not a.startswith(("-", "{")))[:2]
               if args[0] in ("tasks", "todo") else args[:1] for args, _ in CONTRACT}
    covered |= SERVING
    assert everything - covered == set(), "add these --json commands to CONTRACT"
