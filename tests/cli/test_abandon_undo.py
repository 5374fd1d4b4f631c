"""`tasks abandon ID… [--reason R]`, `tasks undo ID` and the id rule in the not-found
error, through the command line: exit code and output together, the file as it was
after a refused command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def add(cli, *args: str) -> str:
    result = cli("tasks", "add", *args, "-q")
    assert result.code == 0, result
    return result.out.strip()


def short(tid: str) -> str:
    return tid.rpartition("_")[2][:4]


def task(cli, tid: str) -> dict:
    result = cli("tasks", "show", tid, "--json")
    assert result.code == 0, result
    return json.loads(result.out)


def tasklist(project: Path) -> bytes:
    return (project / ".aidp" / "tasklist.jsonl").read_bytes()


# --- abandon -------------------------------------------------------------------------


def test_abandon_takes_several_ids_with_a_reason_option_only(cli) -> None:
    a, b = add(cli, "First"), add(cli, "Second")
    result = cli("tasks", "abandon", short(a), short(b), "--reason", "Both stale")
    assert result.code == 0, result
    assert result.out == (f"✓ Abandoned: [{short(a)}] First\n"
                          f"✓ Abandoned: [{short(b)}] Second\n")
    for tid in (a, b):
        assert task(cli, tid)["abandoned_reason"] == "Both stale"


def test_abandon_without_a_reason_option_reads_one_id_and_the_reason(cli) -> None:
    """Issue 35: the words after the id are the reason, even ones that name a task;
    the user is told how to abandon several (nothing else is done)."""
    a, b = add(cli, "First"), add(cli, "Second")
    result = cli("tasks", "abandon", short(a), short(b))
    assert (result.code, result.out) == (0, f"✓ Abandoned: [{short(a)}] First\n"), result
    assert result.err == (f"Note: '{short(b)}' was taken as the reason; to abandon several "
                          "tasks, give the reason with --reason (every argument is then "
                          "an id)\n")
    assert task(cli, a)["abandoned_reason"] == short(b)
    assert task(cli, b)["status"] == "pending"
    alone = cli("tasks", "abandon", short(b))  # no reason at all: fine
    assert alone.code == 0 and alone.err == "", alone
    assert task(cli, b)["status"] == "abandoned" and "abandoned_reason" not in task(cli, b)


def test_a_reason_word_that_names_a_task_is_never_an_id(cli, project) -> None:
    """Issue 35: `abandon 88b8 dead end, see notes` abandoned task dead… too."""
    tid = add(cli, "Parser rewrite")
    dead = "task_1795314333_deadbeef"
    with (project / ".aidp" / "tasklist.jsonl").open("a") as handle:
        handle.write(f'{{"id":"{dead}","description":"Keep me","status":"pending",'
                     '"priority":"medium","created_at":"2026-11-22T02:25:33.000000Z",'
                     '"updated_at":"2026-11-22T02:25:33.000000Z","tags":[]}\n')
    result = cli("tasks", "abandon", short(tid), "dead", "end,", "see", "notes")
    assert (result.code, result.err) == (0, ""), result
    assert result.out == f"✓ Abandoned: [{short(tid)}] Parser rewrite\n"
    assert task(cli, tid)["abandoned_reason"] == "dead end, see notes"
    assert task(cli, dead)["status"] == "pending"


def test_abandon_ids_with_a_reason_option(cli) -> None:
    a, b = add(cli, "First"), add(cli, "Second")
    result = cli("tasks", "abandon", a, short(b), "--reason", "Duplicates", "--json")
    assert result.code == 0, result
    shown = json.loads(result.out)
    assert [t["id"] for t in shown] == [a, b]
    assert {t["abandoned_reason"] for t in shown} == {"Duplicates"}


def test_abandon_id_reason_still_works(cli) -> None:
    a, b = add(cli, "First"), add(cli, "Second")
    # "dead" is hex: the reason all the same
    result = cli("tasks", "abandon", short(a), "dead", "code", "now")
    assert result.code == 0, result
    assert task(cli, a)["abandoned_reason"] == "dead code now"
    assert task(cli, b)["status"] == "pending"
    result = cli("tasks", "abandon", short(b), "Duplicate of", short(a))
    assert result.code == 0, result
    assert task(cli, b)["abandoned_reason"] == f"Duplicate of {short(a)}"


def test_abandon_with_reason_option_refuses_a_word_that_is_no_id(cli, project) -> None:
    a = add(cli, "First")
    before = tasklist(project)
    result = cli("tasks", "abandon", short(a), "zzzz", "--reason", "Old")
    assert (result.code, result.out, result.err) == (1, "", "Error: Task not found: zzzz\n")
    assert tasklist(project) == before


# --- undo ----------------------------------------------------------------------------


def test_undo_appends_the_previous_state_again(cli, project) -> None:
    tid = add(cli, "Ship it", "-p", "high")
    assert cli("tasks", "done", tid).code == 0
    lines = len(tasklist(project).splitlines())
    result = cli("tasks", "undo", short(tid))
    assert result.code == 0, result
    out = result.out.splitlines()
    assert out[0] == f"✓ Undone: [{short(tid)}] Ship it"
    assert "  status: done → pending" in out
    # one task record, after its task_fields record (docs/file-format.md, "Field-level merge")
    assert len(tasklist(project).splitlines()) == lines + 2
    assert b'"fields":["status"]' in tasklist(project).splitlines()[-2]
    restored = task(cli, tid)
    assert restored["status"] == "pending" and "completed_at" not in restored
    states = json.loads(cli("tasks", "history", tid, "--json").out)
    assert [s["status"] for s in states] == ["pending", "done", "pending"]
    assert states[2]["updated_at"] > states[1]["updated_at"]  # a fresh stamp: it wins
    human = cli("tasks", "history", tid).out
    assert "#3 " in human and "status: done → pending" in human
    # A second undo goes back to where the first began.
    again = cli("tasks", "undo", tid, "--json")
    assert again.code == 0, again
    assert json.loads(again.out)["status"] == "done"


def test_undo_restores_an_edit(cli) -> None:
    tid = add(cli, "Old text", "-p", "low")
    assert cli("tasks", "edit", tid, "-d", "New text", "-p", "high").code == 0
    result = cli("tasks", "undo", tid, "--json")
    assert result.code == 0, result
    shown = json.loads(result.out)
    assert (shown["description"], shown["priority"]) == ("Old text", "low")


def test_undo_takes_back_a_body_change_as_history_lists_it(cli, project) -> None:
    """The last change history lists is a body record: undo writes the body it had
    before (before: undo went back to the task's previous record, a priority change
    made before the body's, and left the body as it was)."""
    tid = add(cli, "Bodied", "--body", "first")
    assert cli("tasks", "edit", tid, "-p", "high").code == 0
    assert cli("tasks", "edit", tid, "--body", "second\nmore").code == 0
    result = cli("tasks", "undo", tid)
    assert result.code == 0, result
    assert result.out == (f"✓ Undone: [{short(tid)}] Bodied\n"
                          "  body: 'second' (2 lines) → 'first' (1 line)\n")
    shown = task(cli, tid)
    assert (shown["body"], shown["priority"]) == ("first", "high")
    assert "body: 'first' (1 line)" in cli("tasks", "history", tid).out.splitlines()[-1]
    again = json.loads(cli("tasks", "undo", tid, "--json").out)  # back where it began
    assert (again["body"], again["priority"]) == ("second\nmore", "high")
    # the priority, changed before the body, is never what an undo takes back now
    assert cli("tasks", "undo", tid).code == 0
    assert (task(cli, tid)["body"], task(cli, tid)["priority"]) == ("first", "high")


def test_undo_takes_back_a_type_and_an_edit_made_in_one_write(cli, project) -> None:
    """`tasks edit --type bug -p high` is one change: one undo takes both back, and a
    second undo gives both again."""
    tid = add(cli, "Typed", "-p", "low")
    assert cli("tasks", "edit", tid, "--type", "bug", "-p", "high").code == 0
    result = cli("tasks", "undo", tid)
    assert result.code == 0, result
    assert result.out == (f"✓ Undone: [{short(tid)}] Typed\n  priority: high → low\n"
                          "  type: bug → task\n")
    shown = task(cli, tid)
    assert (shown.get("task_type"), shown["priority"]) == (None, "low")
    again = json.loads(cli("tasks", "undo", tid, "--json").out)
    assert (again["task_type"], again["priority"]) == ("bug", "high")
    # a type set alone, then undone: the task's own type again
    assert cli("tasks", "edit", tid, "--type", "chore").code == 0
    assert json.loads(cli("tasks", "undo", tid, "--json").out)["task_type"] == "bug"


def test_a_body_filed_with_the_task_is_not_a_change_to_undo(cli, project) -> None:
    tid = add(cli, "Filed whole", "--body", "text", "--type", "feature")
    before = tasklist(project)
    result = cli("tasks", "undo", tid)
    assert result.code == 1 and "Nothing to undo" in result.err, result
    assert tasklist(project) == before


def test_undo_of_a_claim_releases_it(cli) -> None:
    tid = add(cli, "Take me")
    assert cli("tasks", "claim", tid, "--as", "alice").code == 0
    result = cli("tasks", "undo", tid, "--json")
    assert result.code == 0, result
    shown = json.loads(result.out)
    assert shown["status"] == "pending" and "assignee" not in shown
    assert cli("tasks", "claim", tid, "--as", "bob").code == 0


def test_undo_with_one_record_is_refused(cli, project) -> None:
    tid = add(cli, "Alone")
    before = tasklist(project)
    result = cli("tasks", "undo", short(tid))
    assert result.code == 1, result
    assert result.err == (f"Error: Nothing to undo: task {tid} has no earlier state "
                          "(see 'aidp tasks history')\n")
    assert result.out == "" and tasklist(project) == before


@pytest.mark.parametrize("args", [["tasks", "undo", "ffff"], ["tasks", "undo", "ffff", "--json"]])
def test_undo_of_an_unknown_task(cli, args) -> None:
    add(cli, "Something")
    result = cli(*args)
    assert (result.code, result.out, result.err) == (1, "", "Error: Task not found: ffff\n")


# --- the id rule ---------------------------------------------------------------------


@pytest.mark.parametrize("ref", ["ca3", "task_1795314333_ca", "task_1795314333_"])
def test_a_too_short_id_says_the_rule(cli, ref) -> None:
    add(cli, "Something")
    result = cli("tasks", "show", ref)
    assert result.code == 1 and result.out == ""
    assert result.err == (f"Error: Task not found: {ref} (an id is the full id, or at least 4 "
                          "leading characters of the hex part after its last '_': ca35, "
                          "task_1795314333_ca35)\n")


def test_a_leading_part_of_the_full_id_with_four_hex_characters_names_it(cli) -> None:
    tid = add(cli, "Something")
    prefix = tid[: tid.rindex("_") + 5]
    result = cli("tasks", "show", prefix, "--json")
    assert result.code == 0, result
    assert json.loads(result.out)["id"] == tid
