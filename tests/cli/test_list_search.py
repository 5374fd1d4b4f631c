"""`tasks list --grep/--assignee/--mine` and a limited listing's titles, through the
command line (exit code and output together), and the query they run (tasks.find)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aidp.backlog import queue, tasks
from aidp.tasklist.log import TaskLog


def add(cli, *args: str) -> str:
    result = cli("tasks", "add", *args, "-q")
    assert result.code == 0, result
    return result.out.strip()


@pytest.fixture
def team(cli, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Four open tasks: one claimed by alice, one by bob, one with a note."""
    ids = {
        "auth": add(cli, "Rate LIMITING for auth endpoints"),
        "docs": add(cli, "Write the guide"),
        "noted": add(cli, "Tune the cache"),
        "idle": add(cli, "Nothing to see"),
    }
    assert cli("tasks", "claim", ids["auth"], "--as", "alice@example.com").code == 0
    assert cli("tasks", "claim", ids["docs"], "--as", "bob").code == 0
    assert cli("tasks", "note", ids["noted"], "Needs a rate limit", "too").code == 0
    return ids


def listed_ids(cli, *args: str) -> list[str]:
    result = cli("tasks", "list", *args, "--format", "ids")
    assert result.code == 0, result
    return result.out.split()


def test_grep_finds_description_and_notes_case_insensitively(cli, team) -> None:
    assert sorted(listed_ids(cli, "--grep", "rate limit")) == sorted([team["auth"], team["noted"]])
    assert listed_ids(cli, "--grep", "GUIDE") == [team["docs"]]
    result = cli("tasks", "list", "--grep", "rate limit", "--json")
    assert result.code == 0, result
    found = {t["id"]: t for t in json.loads(result.out)}
    assert found[team["noted"]]["notes"][0]["text"] == "Needs a rate limit too"


def test_grep_with_no_match_is_an_empty_list(cli, team) -> None:
    result = cli("tasks", "list", "--grep", "kubernetes")
    assert (result.code, result.out, result.err) == (
        0, "No open tasks match --grep kubernetes (4 open tasks in all)\n", "")
    result = cli("tasks", "list", "--grep", "kubernetes", "--exit-code", "--json")
    assert (result.code, result.out) == (0, "[]\n")
    result = cli("tasks", "list", "--grep", "guide", "--exit-code")
    assert result.code == 1 and "Write the guide" in result.out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--grep", ""], "Invalid --grep '': give the text to look for in descriptions and notes"),
        (["--grep", "  "], "Invalid --grep ''"),
        (["--assignee", ""], "Invalid --assignee '': give the name a task was claimed by"),
        (["--mine", "--assignee", "bob"], "Conflicting --mine and --assignee: give one of them"),
    ],
)
def test_bad_search_options_exit_2_and_change_nothing(cli, team, project: Path, args,
                                                      message) -> None:
    before = (project / ".aidp" / "tasklist.jsonl").read_bytes()
    result = cli("tasks", "list", *args)
    assert result.code == 2, result
    assert result.err.startswith(f"Error: {message}")
    assert len(result.err.splitlines()) == 1 and result.out == ""
    assert (project / ".aidp" / "tasklist.jsonl").read_bytes() == before


def test_assignee_matches_the_holder_case_insensitively(cli, team) -> None:
    assert listed_ids(cli, "--assignee", "ALICE@example.com") == [team["auth"]]
    assert listed_ids(cli, "--assignee", "bob") == [team["docs"]]
    # Released: nobody holds it any more.
    assert cli("tasks", "release", team["docs"]).code == 0
    assert listed_ids(cli, "--assignee", "bob") == []


def test_assignee_nobody_holds_says_who_does(cli, team) -> None:
    result = cli("tasks", "list", "--assignee", "carol")
    assert result.code == 0, result
    assert result.out == ("No open tasks match --assignee carol: nobody named 'carol' holds a task "
                          "(tasks are claimed by alice@example.com, bob)\n")
    assert result.err == ""
    result = cli("tasks", "list", "--assignee", "carol", "--json")
    assert (result.code, result.out) == (0, "[]\n")


def test_mine_is_the_actor_claim_uses(cli, team, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIDP_ACTOR", "bob")
    assert listed_ids(cli, "--mine") == [team["docs"]]
    assert cli("tasks", "claim", team["idle"]).code == 0  # claims as bob too
    assert sorted(listed_ids(cli, "--mine")) == sorted([team["docs"], team["idle"]])
    monkeypatch.setenv("AIDP_ACTOR", "dave")
    result = cli("tasks", "list", "--mine")
    assert result.code == 0
    assert result.out.startswith("No open tasks match --mine: nobody named 'dave' holds a task")


def test_grep_and_assignee_combine_with_other_filters(cli, team) -> None:
    assert listed_ids(cli, "--grep", "rate", "--assignee", "alice@example.com") == [team["auth"]]
    assert listed_ids(cli, "--grep", "rate", "--assignee", "bob") == []
    assert listed_ids(cli, "--grep", "rate", "-s", "pending") == [team["noted"]]


def test_a_limited_listing_says_how_many_matched(cli) -> None:
    for n in range(5):
        add(cli, f"Task {n}")
    result = cli("tasks", "list", "-n", "2")
    assert result.code == 0, result
    assert result.out.splitlines()[0] == "PENDING (2 of 5)"
    assert len(result.out.splitlines()) == 3
    whole = cli("tasks", "list")
    assert whole.out.splitlines()[0] == "PENDING (5)"


def test_find_takes_the_queue_state_for_grep_and_assignee(log: TaskLog) -> None:
    """The query the listing runs (what a store answers as a query of its own)."""
    a = tasks.add(log, "Alpha")
    b = tasks.add(log, "Beta")
    queue.note(log, b["id"], "about alpha", author="x")
    queue.claim(log, a["id"], "Carol")
    fold = log.read()
    qs = queue.state(fold)
    found = tasks.find(fold.tasks.values(), tasks.Query(grep="ALPHA", limit=1), qs)
    assert len(found.tasks) == 1 and found.matched == {"pending": 1, "in_progress": 1}
    held = tasks.find(fold.tasks.values(), tasks.Query(assignee="carol"), qs)
    assert [t["id"] for t in held.tasks] == [a["id"]]
    with pytest.raises(TypeError):
        tasks.find(fold.tasks.values(), tasks.Query(grep="alpha"))
