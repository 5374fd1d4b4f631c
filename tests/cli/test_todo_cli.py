"""`aidp todo …` through the command line: exit codes and output together."""

from __future__ import annotations

import json
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

FORMS = "use N, last, N.M or N.last (1-based, e.g. 2, last, 1.3, 1.last)"


def tasklist(project: Path) -> Path:
    return project / ".aidp" / "tasklist.jsonl"


def ok(cli, *args: str) -> str:
    result = cli(*args)
    assert result.code == 0 and result.err == "", result
    return result.out


def shown(cli, *args: str) -> dict:
    return json.loads(ok(cli, *args, "todo", "show", "--json"))


def records(project: Path) -> list[dict]:
    return [json.loads(line) for line in tasklist(project).read_bytes().splitlines()]


@pytest.fixture
def planned(cli) -> None:
    """1. Build parser (1.1 Lexer, 1.2 Grammar)  2. Docs"""
    ok(cli, "todo", "add", "Build parser", "-p", "high")
    ok(cli, "todo", "add", "Docs")
    ok(cli, "todo", "add", "1.last", "Lexer")
    ok(cli, "todo", "add", "1.last", "Grammar")


# --- show and add ---------------------------------------------------------------------


def test_show_with_nothing_recorded(cli, project: Path) -> None:
    assert ok(cli, "todo", "show") == "No active TODOs\n"
    assert shown(cli) == {"session": "default", "active": False, "paused": False, "items": []}
    assert not (project / ".aidp").exists()


def test_add_and_show(cli, planned) -> None:
    assert ok(cli, "todo", "tick", "1.1").startswith("✓ Ticked 1.1: Lexer (1/2)\n")
    assert ok(cli, "todo", "show") == (
        "TODO list (session: default) — 0/2 completed\n"
        "1. [IN_PROGRESS] (HIGH) Build parser (1/2)\n"
        "   1.1 [COMPLETED] Lexer\n"
        "   1.2 [PENDING] Grammar\n"
        "2. [PENDING] (MEDIUM) Docs\n"
    )
    data = shown(cli)
    assert list(data) == ["session", "active", "paused", "items"]
    assert data["active"] is True and data["paused"] is False
    first = data["items"][0]
    assert list(first) == ["id", "content", "status", "priority", "subtasks"]
    assert (first["content"], first["status"], first["priority"]) == ("Build parser", "in_progress", "high")
    assert [(s["content"], s["status"]) for s in first["subtasks"]] == [
        ("Lexer", "completed"), ("Grammar", "pending")]
    assert all(list(s) == ["id", "content", "status"] for s in first["subtasks"])


def test_add_reports_where_the_item_went(cli) -> None:
    assert ok(cli, "todo", "add", "b") == "✓ Added 1: b\n"
    assert ok(cli, "todo", "add", "1", "a") == "✓ Added 1: a\n"
    assert ok(cli, "todo", "add", "3", "c") == "✓ Added 3: c\n"  # one past the end
    assert ok(cli, "todo", "add", "last", "d") == "✓ Added 4: d\n"
    assert ok(cli, "todo", "add", "2.last", "b2") == "✓ Added 2.1: b2\n"
    assert ok(cli, "todo", "add", "2.1", "b1") == "✓ Added 2.1: b1\n"
    assert ok(cli, "todo", "add", "2.2", "b1.5") == "✓ Added 2.2: b1.5\n"
    assert ok(cli, "todo", "add", "2.4", "b3") == "✓ Added 2.4: b3\n"
    data = shown(cli)
    assert [i["content"] for i in data["items"]] == ["a", "b", "c", "d"]
    assert [s["content"] for s in data["items"][1]["subtasks"]] == ["b1", "b1.5", "b2", "b3"]


def test_add_validates_priority_and_description(cli, project: Path, planned) -> None:
    before = tasklist(project).read_bytes()
    cases = [
        (("x", "-p", "urgent"), "Error: Invalid priority 'urgent': use one of high, medium, low\n"),
        (("1.1", "x", "-p", "high"),
         "Error: Invalid --priority for subtask 1.1: subtasks are a checklist without priorities; "
         "give --priority to items (N or last) only\n"),
        (("   ",), "Error: Invalid TODO description: it is empty; give 1–200 characters\n"),
        (("x" * 201,), "Error: Invalid TODO description: 201 characters; at most 200 are accepted\n"),
        (("line\nbreak",), "Error: Invalid TODO description: it contains control characters "
                           "(newlines, escapes, …); plain text only\n"),
    ]
    for args, message in cases:
        result = cli("todo", "add", *args)
        assert (result.code, result.out, result.err) == (2, "", message)
    assert tasklist(project).read_bytes() == before


# --- positions ------------------------------------------------------------------------

MALFORMED = ["0", "-1", "1.2.3", "abc", "1.", "last.1", "LAST", "1.0", ".1", "+1"]


# For add, a first word not shaped like a position (abc, LAST) is text: see
# tests/cli/test_todo_team.py.
@pytest.mark.parametrize(("command", "position"), [
    (command, position) for command in ("add", "delete", "tick", "start") for position in MALFORMED
    if command != "add" or position not in ("abc", "LAST")])
def test_malformed_positions_are_rejected_and_change_nothing(cli, project, planned, command, position) -> None:
    before = tasklist(project).read_bytes()
    args = (position, "text") if command == "add" else (position,)
    result = cli("todo", command, *args)
    assert (result.code, result.out, result.err) == (2, "", f"Error: Invalid position {position!r}: {FORMS}\n")
    assert tasklist(project).read_bytes() == before


@pytest.mark.parametrize(
    ("command", "position", "why"),
    [
        ("add", "4", "the list has 2 items, so N goes from 1 to 3 (3 appends)"),
        ("add", "1.4", "item 1 has 2 subtasks, so M goes from 1 to 3 (1.3 appends)"),
        ("add", "2.2", "item 2 has 0 subtasks, so M goes from 1 to 1 (2.1 appends)"),
        ("add", "3.1", "there is no item 3 (the list has 2 items)"),
        ("delete", "3", "the list has 2 items, so N goes from 1 to 2"),
        ("delete", "1.3", "item 1 has 2 subtasks, so M goes from 1 to 2"),
        ("delete", "2.1", "item 2 has no subtasks"),
        ("delete", "2.last", "item 2 has no subtasks"),
        ("tick", "3.1", "there is no item 3 (the list has 2 items)"),
        ("tick", "99999999999999999999", "the list has 2 items, so N goes from 1 to 2"),
        ("start", "3", "the list has 2 items, so N goes from 1 to 2"),
    ],
)
def test_out_of_range_positions_are_rejected_and_change_nothing(cli, project, planned, command, position, why) -> None:
    before = tasklist(project).read_bytes()
    args = (position, "text") if command == "add" else (position,)
    result = cli("todo", command, *args)
    assert (result.code, result.out, result.err) == (
        2, "", f"Error: Invalid position {position!r}: {why}; {FORMS}\n")
    assert tasklist(project).read_bytes() == before


@pytest.mark.parametrize("command", ["delete", "tick", "start"])
def test_positions_on_an_empty_list_create_nothing(cli, project: Path, command) -> None:
    result = cli("todo", command, "last")
    assert (result.code, result.out, result.err) == (
        2, "", f"Error: Invalid position 'last': there are no active TODOs; {FORMS}\n")
    result = cli("todo", "add", "1.1", "sub")
    assert (result.code, result.err) == (
        2, f"Error: Invalid position '1.1': there are no active TODOs, so no item to hold a subtask; {FORMS}\n")
    assert not (project / ".aidp").exists()


@pytest.mark.parametrize(("args", "command"), [
    (("add", "--bogus", "x"), "add"), (("tick", "--prio=3"), "tick"), (("delete", "-x"), "delete"),
    (("start", "--json2"), "start"),
])
def test_a_mistyped_option_is_still_an_unknown_option(cli, project, planned, args, command) -> None:
    before = tasklist(project).read_bytes()
    result = cli("todo", *args)
    option = args[1].partition("=")[0]
    assert (result.code, result.out, result.err) == (
        2, "", f"Error: No such option: {option} (see 'aidp todo {command} --help')\n")
    assert tasklist(project).read_bytes() == before


# --- delete ---------------------------------------------------------------------------


def test_delete_a_parent_takes_its_subtasks(cli, planned) -> None:
    assert ok(cli, "todo", "delete", "1") == "✓ Deleted 1: Build parser (and its 2 subtasks)\n"
    assert [i["content"] for i in shown(cli)["items"]] == ["Docs"]
    assert ok(cli, "todo", "delete", "last") == "✓ Deleted 1: Docs\n"
    assert ok(cli, "todo", "show") == "No active TODOs\n"


def test_delete_a_subtask(cli, planned) -> None:
    ok(cli, "todo", "tick", "1.2")
    assert shown(cli)["items"][0]["status"] == "in_progress"
    assert ok(cli, "todo", "delete", "1.1") == "✓ Deleted 1.1: Lexer\n"
    item = shown(cli)["items"][0]
    assert [s["content"] for s in item["subtasks"]] == ["Grammar"]
    assert item["status"] == "completed"  # derived from what is left
    assert ok(cli, "todo", "delete", "1.last") == "✓ Deleted 1.1: Grammar\n"
    item = shown(cli)["items"][0]
    assert (item["subtasks"], item["status"]) == ([], "pending")  # its own status again


# --- tick and start -------------------------------------------------------------------


def test_tick_marks_completed_and_untick_reverts(cli, project: Path, planned) -> None:
    assert ok(cli, "todo", "tick", "1.1") == (
        "✓ Ticked 1.1: Lexer (1/2)\nRemaining in 1: 1.2 Grammar\n")
    assert shown(cli)["items"][0]["status"] == "in_progress"
    assert ok(cli, "todo", "tick", "1.last") == (
        "✓ Ticked 1.2: Grammar (2/2)\nItem 1 is now done: Build parser\n1 of 2 remaining: 2 Docs\n")
    assert shown(cli)["items"][0]["status"] == "completed"
    assert ok(cli, "todo", "untick", "1.1") == (
        "↺ Unticked 1.1: Lexer (1/2)\n2 of 2 remaining: 1 Build parser, 2 Docs\n")
    assert shown(cli)["items"][0]["status"] == "in_progress"
    ok(cli, "todo", "tick", "1.1")
    assert ok(cli, "todo", "tick", "2") == "✓ Ticked 2: Docs\nAll 2 items completed\n"
    assert ok(cli, "todo", "untick", "last") == (
        "↺ Unticked 2: Docs (pending again)\n1 of 2 remaining: 2 Docs\n")
    assert shown(cli)["items"][1]["status"] == "pending"


def test_a_retried_tick_never_undoes_it(cli, project: Path, planned) -> None:
    """Issue 35: tick toggled, so an agent that retried a tick unticked the item."""
    ok(cli, "todo", "tick", "2")
    before = tasklist(project).read_bytes()
    for position in ("2", "last"):
        assert ok(cli, "todo", "tick", position) == (
            "Already ticked, nothing changed: 2: Docs\n1 of 2 remaining: 1 Build parser\n")
    assert shown(cli)["items"][1]["status"] == "completed"
    assert tasklist(project).read_bytes() == before  # nothing written
    ok(cli, "todo", "tick", "1.2")
    assert ok(cli, "todo", "tick", "1.2") == (
        "Already ticked, nothing changed: 1.2: Grammar\n1 of 2 remaining: 1 Build parser\n")
    ok(cli, "todo", "untick", "2")
    before = tasklist(project).read_bytes()
    assert ok(cli, "todo", "untick", "2") == (
        "Not ticked, nothing changed: 2: Docs\n2 of 2 remaining: 1 Build parser, 2 Docs\n")
    assert tasklist(project).read_bytes() == before


def test_an_item_with_a_checklist_is_refused(cli, project: Path, planned) -> None:
    before = tasklist(project).read_bytes()
    for verb in ("tick", "start"):
        result = cli("todo", verb, "1")
        assert (result.code, result.out, result.err) == (
            2, "",
            f"Error: Cannot {verb} item 1: it has a checklist (1.1, 1.2) and its status follows it; "
            "tick its subtasks instead, e.g. 'aidp todo tick 1.1'\n",
        )
    result = cli("todo", "start", "1.2")
    assert (result.code, result.err) == (
        2, "Error: Cannot start subtask 1.2: subtasks are a checklist (pending or completed); "
           "use 'aidp todo tick 1.2' or start item 1\n")
    assert tasklist(project).read_bytes() == before


def test_start(cli, project: Path, planned) -> None:
    assert ok(cli, "todo", "start", "2") == "✓ Started 2: Docs\n"
    assert shown(cli)["items"][1]["status"] == "in_progress"
    before = tasklist(project).read_bytes()
    assert ok(cli, "todo", "start", "last") == "Already in_progress, nothing changed: 2: Docs\n"
    assert tasklist(project).read_bytes() == before


# --- clear ----------------------------------------------------------------------------


def test_clear_keeps_history_and_the_next_add_starts_fresh(cli, project: Path, planned) -> None:
    assert ok(cli, "todo", "clear") == (
        "✓ Cleared 2 items of session default (kept as history: 'aidp todo load' brings them back)\n")
    assert ok(cli, "todo", "show") == "No active TODOs\n"
    assert shown(cli) == {"session": "default", "active": False, "paused": False, "items": []}
    last = records(project)[-1]
    assert last["type"] == "todo_head" and last["active"] is False  # one small record
    [summary] = json.loads(ok(cli, "todo", "list", "--json"))
    assert (summary["active"], summary["items"], summary["first"]) == (False, 2, "Build parser")
    assert summary["counts"] == {"pending": 2, "in_progress": 0, "completed": 0}
    size = tasklist(project).stat().st_size
    assert ok(cli, "todo", "clear") == "No active TODOs; nothing to clear\n"
    assert tasklist(project).stat().st_size == size
    result = cli("todo", "tick", "1")
    assert (result.code, result.err) == (2, f"Error: Invalid position '1': there are no active TODOs; {FORMS}\n")
    assert ok(cli, "todo", "add", "Fresh") == (
        "✓ Added 1: Fresh (a new list: the previous one was cleared)\n")
    assert [i["content"] for i in shown(cli)["items"]] == ["Fresh"]


# --- pause ----------------------------------------------------------------------------


def test_pause(cli, project: Path, planned) -> None:
    assert ok(cli, "todo", "pause", "waiting", "for", "review") == "⏸ Paused: waiting for review\n"
    assert ok(cli, "todo", "show").endswith("2. [PENDING] (MEDIUM) Docs\nPaused: waiting for review\n")
    assert shown(cli)["paused"] is True
    assert records(project)[-1]["pause_reason"] == "waiting for review"
    before = tasklist(project).read_bytes()
    result = cli("todo", "pause", " ")
    assert (result.code, result.out, result.err) == (
        2, "", "Error: Invalid reason: it is empty; give 1–1000 characters\n")
    assert tasklist(project).read_bytes() == before


# --- sessions -------------------------------------------------------------------------


def test_session_options_and_environment(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    ok(cli, "--session", "global", "todo", "add", "g")
    ok(cli, "--session", "global", "todo", "add", "--session", "local", "l")
    ok(cli, "todo", "--session", "group", "add", "x")
    monkeypatch.setenv("AIDP_SESSION", "env")
    ok(cli, "todo", "add", "e")
    ok(cli, "todo", "add", "e2", "--session", "local")
    assert [i["content"] for i in shown(cli, "--session", "global")["items"]] == ["g"]
    assert [i["content"] for i in shown(cli, "--session", "local")["items"]] == ["l", "e2"]
    assert [i["content"] for i in shown(cli, "--session", "group")["items"]] == ["x"]
    assert shown(cli)["session"] == "env"
    assert [i["content"] for i in shown(cli)["items"]] == ["e"]
    monkeypatch.setenv("AIDP_SESSION", "")
    assert shown(cli)["session"] == "default"


def git(project: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=project, check=True, capture_output=True)


def test_the_git_branch_is_the_default_session(cli, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    git(project, "init", "-q", "-b", "feature/unborn")  # a branch with no commits yet
    monkeypatch.setenv("AIDP_SESSION", "")  # empty counts as unset
    monkeypatch.delenv("GIT_AUTHOR_EMAIL")  # no identity: the bare branch (see test_sessions)
    monkeypatch.delenv("GIT_AUTHOR_NAME")
    assert ok(cli, "todo", "add", "on the branch") == "✓ Added 1: on the branch\n"
    assert shown(cli)["session"] == "feature/unborn"
    git(project, "add", ".")
    git(project, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m",
        "first")
    git(project, "checkout", "-q", "-b", "other")
    assert shown(cli) == {"session": "other", "active": False, "paused": False, "items": []}
    listed = json.loads(ok(cli, "todo", "list", "--json"))
    assert [(s["session"], s["current"]) for s in listed] == [("feature/unborn", False)]
    git(project, "checkout", "-q", "--detach")
    assert shown(cli)["session"] == "default"


def test_any_string_is_a_session_name_and_never_a_path(cli, project: Path) -> None:
    names = ["../../escape", "/etc/passwd", "a b", "ünïcode", "x\x1b[31mred", "todo_list:x", ".aidp",
             "cache"]
    around = {project.parent: sorted(project.parent.iterdir())}
    for name in names:
        ok(cli, "--session", name, "todo", "add", f"in {name!r}"[:40].replace("\x1b", "?"))
    assert sorted(p.name for p in project.iterdir()) == [".aidp"]
    for path in (project / ".aidp").rglob("*"):
        assert not any(part in str(path.relative_to(project)) for part in (
            "escape", "passwd", "a b", "ünïcode", "red", "todo_list"))
    assert {p: sorted(p.iterdir()) for p in around} == around
    listed = json.loads(ok(cli, "todo", "list", "--json"))
    assert sorted(s["session"] for s in listed) == sorted(names)
    text = ok(cli, "--session", "x\x1b[31mred", "todo", "show")
    assert text.startswith("TODO list (session: x\\x1b[31mred) — 0/1 completed\n")
    text = ok(cli, "todo", "list")
    assert "\x1b" not in text and "x\\x1b[31mred" in text


# --- list and load --------------------------------------------------------------------


def test_list_orders_four_sessions(cli) -> None:
    for name in ("alpha", "beta", "gamma", "delta"):
        ok(cli, "--session", name, "todo", "add", f"{name} first")
    ok(cli, "--session", "beta", "todo", "add", "beta second")
    ok(cli, "--session", "beta", "todo", "tick", "1")
    ok(cli, "--session", "alpha", "todo", "start", "1")
    ok(cli, "--session", "delta", "todo", "clear")
    listed = json.loads(ok(cli, "--session", "gamma", "todo", "list", "--json"))
    assert [s["session"] for s in listed] == ["gamma", "delta", "alpha", "beta"]
    assert [s["current"] for s in listed] == [True, False, False, False]
    assert list(listed[0]) == ["session", "current", "updated_at", "active", "items", "counts", "first",
                              "owner"]
    beta = listed[3]
    assert (beta["active"], beta["items"], beta["first"]) == (True, 2, "beta first")
    assert beta["counts"] == {"pending": 1, "in_progress": 0, "completed": 1}
    assert listed[1]["active"] is False and listed[1]["items"] == 1
    stamps = [s["updated_at"] for s in listed[1:]]
    assert stamps == sorted(stamps, reverse=True)
    text = ok(cli, "--session", "gamma", "todo", "list")
    heads = [line for line in text.splitlines() if re.match(r"\d+\. ", line)]
    assert [h.split(" —")[0] for h in heads] == [
        "1. gamma [CURRENT SESSION]", "2. delta", "3. alpha", "4. beta"]
    assert re.search(r"^2\. delta — cleared, updated just now$", text, re.MULTILINE)
    assert "   2 items: 1 pending, 0 in_progress, 1 completed\n   First: beta first\n" in text
    # Another current session that has no list: the others in order of change.
    listed = json.loads(ok(cli, "--session", "none", "todo", "list", "--json"))
    assert [s["session"] for s in listed] == ["delta", "alpha", "beta", "gamma"]


def test_list_with_nothing(cli) -> None:
    assert ok(cli, "todo", "list") == "No TODO lists yet (current session: default)\n"
    assert ok(cli, "todo", "list", "--json") == "[]\n"


def test_load_by_name_and_by_number(cli, project: Path) -> None:
    ok(cli, "--session", "src", "todo", "add", "one")
    ok(cli, "--session", "src", "todo", "add", "1.1", "one.one")
    ok(cli, "--session", "src", "todo", "clear")
    ok(cli, "--session", "dst", "todo", "add", "will be replaced")
    assert ok(cli, "--session", "dst", "todo", "load", "--replace", "src") == (
        "✓ Loaded 1 item from session src into session dst\n")
    data = shown(cli, "--session", "dst")
    assert data["active"] is True
    assert [(i["content"], [s["content"] for s in i["subtasks"]]) for i in data["items"]] == [
        ("one", ["one.one"])]
    assert shown(cli, "--session", "src")["items"] == []  # the source stays as it was
    # `todo list` numbers: dst is current (1), then src (2).
    ok(cli, "--session", "third", "todo", "add", "three")
    assert ok(cli, "--session", "dst", "todo", "load", "2", "--replace") == (
        "✓ Loaded 1 item from session third into session dst\n")
    assert [i["content"] for i in shown(cli, "--session", "dst")["items"]] == ["three"]
    before = tasklist(project).read_bytes()
    assert ok(cli, "--session", "dst", "todo", "load", "1") == (
        "Session dst already has this list active; nothing changed\n")
    assert tasklist(project).read_bytes() == before
    assert ok(cli, "--session", "src", "todo", "load", "src") == (
        "✓ Restored 1 item of session src\n")  # its own list, cleared before
    assert [i["content"] for i in shown(cli, "--session", "src")["items"]] == ["one"]


def test_load_errors(cli, project: Path) -> None:
    result = cli("todo", "load", "99")  # no lists at all: out of range too (exit 2)
    assert (result.code, result.out, result.err) == (
        2, "", "Error: Invalid list number 99: there are no saved TODO lists yet; see 'aidp "
               "todo list'\n")
    result = cli("todo", "load", "\u202es")  # escaped once, as every message does
    assert (result.code, result.err) == (
        1, "Error: No saved TODO list for session '\\u202es'; see 'aidp todo list'\n")
    ok(cli, "--session", "a", "todo", "add", "x")
    before = tasklist(project).read_bytes()
    result = cli("todo", "load", "nope")
    assert (result.code, result.out, result.err) == (
        1, "", "Error: No saved TODO list for session 'nope'; see 'aidp todo list'\n")
    result = cli("todo", "load", "7")
    assert (result.code, result.out, result.err) == (
        2, "", "Error: Invalid list number 7: 'aidp todo list' shows 1; use a number from 1 to 1 "
               "or a session name\n")
    assert tasklist(project).read_bytes() == before


def test_load_onto_an_active_list_needs_replace_when_nobody_can_be_asked(cli,
                                                                          project: Path) -> None:
    ok(cli, "--session", "src", "todo", "add", "theirs")
    ok(cli, "todo", "add", "mine")
    before = tasklist(project).read_bytes()
    result = cli("todo", "load", "src", stdin="y\n")  # stdin is not a terminal: no asking
    assert (result.code, result.out, result.err) == (
        2, "", "Error: Session default has an active TODO list (1 item): give --replace to "
               "replace it with the list of session src\n")
    assert tasklist(project).read_bytes() == before
    assert [i["content"] for i in shown(cli)["items"]] == ["mine"]
    # nothing to lose: a cleared list, or the very same items, load without asking
    ok(cli, "todo", "clear")
    assert ok(cli, "todo", "load", "src") == "✓ Loaded 1 item from session src into session default\n"
    assert ok(cli, "todo", "load", "src") == (
        "Session default already has this list active; nothing changed\n")


def _load_on_a_terminal(project: Path, answer: bytes) -> tuple[int, str, str]:
    """`aidp todo load src` with stdin a real terminal (a pty), answering `answer`."""
    import os
    import pty
    import sys

    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "aidp", "todo", "load", "src"],
                                cwd=project, stdin=follower, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        os.close(follower)
        os.write(leader, answer)
        out, err = proc.communicate(timeout=60)
    finally:
        os.close(leader)
    return proc.returncode, out.decode(), err.decode()


@pytest.mark.parametrize(("answer", "code"), [(b"y\n", 0), (b"n\n", 1), (b"\n", 1)])
def test_load_onto_an_active_list_asks_on_a_terminal(cli, project: Path, answer: bytes,
                                                     code: int) -> None:
    ok(cli, "--session", "src", "todo", "add", "theirs")
    ok(cli, "todo", "add", "mine")
    ok(cli, "todo", "add", "more")
    before = tasklist(project).read_bytes()
    got, out, err = _load_on_a_terminal(project, answer)
    assert err.startswith("Replace the active TODO list of session default (2 items) with "
                          "the list of session src? [y/N] "), err
    assert got == code, (out, err)
    items = [i["content"] for i in shown(cli)["items"]]
    if code == 0:
        assert items == ["theirs"]
        assert "Loaded 1 item from session src into session default" in out + err
    else:
        assert items == ["mine", "more"]
        assert err.endswith("Error: Nothing loaded: session default keeps its list "
                            "(--replace replaces it without asking)\n")
        assert tasklist(project).read_bytes() == before


# --- the backlog never sees todo records ----------------------------------------------


def test_todo_records_never_show_up_as_tasks(cli, planned) -> None:
    ok(cli, "tasks", "add", "a real task")
    tasks = json.loads(ok(cli, "tasks", "list", "--all", "--json"))
    assert [t["description"] for t in tasks] == ["a real task"]
    assert json.loads(ok(cli, "tasks", "stats", "--json"))["total"] == 1
    result = cli("tasks", "show", "todo_list:default")
    assert (result.code, result.err) == (1, "Error: Task not found: todo_list:default\n")
    assert ok(cli, "tasks", "list", "--format", "ids").count("\n") == 1


# --- concurrency and damage -----------------------------------------------------------


def test_parallel_adds_lose_nothing(aidp_proc) -> None:
    with ThreadPoolExecutor(max_workers=16) as pool:
        results = list(pool.map(lambda n: aidp_proc("todo", "add", "last", f"item {n}"), range(16)))
    assert [(r.code, r.err) for r in results] == [(0, "")] * 16
    assert all(re.fullmatch(r"✓ Added \d+: item \d+\n", r.out) for r in results)
    data = json.loads(aidp_proc("todo", "show", "--json").out)
    assert sorted(i["content"] for i in data["items"]) == sorted(f"item {n}" for n in range(16))
    assert len({i["id"] for i in data["items"]}) == 16


def test_a_damaged_file_warns_once_and_still_takes_changes(cli, project: Path, planned) -> None:
    with tasklist(project).open("ab") as handle:
        handle.write(b"<<<<<<< HEAD\n")
    result = cli("todo", "add", "after damage")
    assert result.code == 0 and result.out == "✓ Added 3: after damage\n"
    assert result.err.count("Warning: skipped 1 damaged line") == 1


# --- help and docs --------------------------------------------------------------------


def test_every_command_has_help_and_a_section_in_the_docs(cli) -> None:
    from aidp.cli import startup

    docs = (Path(__file__).parents[2] / "docs" / "todo.md").read_text(encoding="utf-8")
    names = [c.name for c in startup.COMMANDS if c.group == "todo"]
    assert sorted(names) == sorted(["show", "add", "delete", "tick", "untick", "start", "clear",
                                    "pause", "resume", "list", "load"])
    for name in names:
        result = cli("todo", name, "--help")
        assert result.code == 0 and "--session" in result.out, result
        assert f"### `aidp todo {name}" in docs, name


def test_load_lifts_a_pause(cli) -> None:
    assert cli("--session", "s2", "todo", "add", "Plan B").code == 0
    assert cli("todo", "add", "Plan A").code == 0
    assert cli("todo", "pause", "blocked on X").code == 0
    result = cli("todo", "load", "--replace", "s2")
    assert result.code == 0, result
    shown = json.loads(cli("todo", "show", "--json").out)
    assert shown["paused"] is False and shown["active"] is True
    assert [i["content"] for i in shown["items"]] == ["Plan B"]
