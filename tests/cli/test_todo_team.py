"""The TODO list's first-week papercuts, through the command line (exit code and output
together): unquoted `todo add` words, `todo resume`, every earlier list reachable from
`todo list --all` and `todo load`, and `run --backlog` in sessions of its own."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest


def ok(cli, *args: str) -> str:
    result = cli(*args)
    assert result.code == 0, result
    return result.out


def items(cli, *args: str) -> list[str]:
    shown = json.loads(ok(cli, *args, "todo", "show", "--json"))
    return [i["content"] for i in shown["items"]]


def tasklist(project: Path) -> bytes:
    return (project / ".aidp" / "tasklist.jsonl").read_bytes()


# --- todo add WORDS… -----------------------------------------------------------------


def test_add_takes_unquoted_words(cli) -> None:
    assert ok(cli, "todo", "add", "Write", "tests") == "✓ Added 1: Write tests\n"
    assert ok(cli, "todo", "add", "1", "Read", "the", "spec") == "✓ Added 1: Read the spec\n"
    assert ok(cli, "todo", "add", "1.last", "Skim", "it") == "✓ Added 1.1: Skim it\n"
    assert ok(cli, "todo", "add", "abc", "text") == "✓ Added 3: abc text\n"
    assert ok(cli, "todo", "add", "LAST", "call") == "✓ Added 4: LAST call\n"
    assert ok(cli, "todo", "add", "2") == "✓ Added 5: 2\n"  # one word is the text
    assert items(cli) == ["Read the spec", "Write tests", "abc text", "LAST call", "2"]


@pytest.mark.parametrize("word", ["0", "-1", "1.2.3", "1.", ".1", "+1", "last.1", "9"])
def test_a_first_word_shaped_like_a_position_is_one(cli, project, word) -> None:
    ok(cli, "todo", "add", "First")
    before = tasklist(project)
    result = cli("todo", "add", word, "More", "words")
    assert result.code == 2 and result.out == ""
    assert result.err.startswith(f"Error: Invalid position {word!r}: ")
    assert len(result.err.splitlines()) == 1
    assert tasklist(project) == before


# --- todo resume ---------------------------------------------------------------------


def test_resume_lifts_a_pause(cli, project) -> None:
    ok(cli, "todo", "add", "Ship")
    ok(cli, "todo", "pause", "Waiting", "for", "the", "key")
    assert json.loads(ok(cli, "todo", "show", "--json"))["paused"] is True
    assert ok(cli, "todo", "resume") == "▶ Resumed (the pause was: Waiting for the key)\n"
    shown = json.loads(ok(cli, "todo", "show", "--json"))
    assert shown["paused"] is False and shown["active"] is True
    before = tasklist(project)
    assert ok(cli, "todo", "resume") == "Not paused; nothing changed\n"
    assert tasklist(project) == before
    assert json.loads(ok(cli, "todo", "resume", "--json"))["paused"] is False


def test_clear_takes_the_pause_with_the_list(cli) -> None:
    ok(cli, "todo", "add", "Ship")
    ok(cli, "todo", "pause", "blocked")
    ok(cli, "todo", "clear")
    shown = json.loads(ok(cli, "todo", "show", "--json"))
    assert shown == {"session": "default", "active": False, "paused": False, "items": []}
    ok(cli, "todo", "add", "Next")
    assert json.loads(ok(cli, "todo", "show", "--json"))["paused"] is False


# --- every list reachable ------------------------------------------------------------


@pytest.fixture
def replaced(cli) -> None:
    """The issue's steps: a list of three, cleared, then two loads over it."""
    for text in ("One", "Two", "Three"):
        ok(cli, "todo", "add", text)
    ok(cli, "todo", "clear")
    ok(cli, "--session", "other", "todo", "add", "Other plan")
    ok(cli, "todo", "load", "other")
    ok(cli, "--session", "third", "todo", "add", "Third plan")
    ok(cli, "todo", "load", "--replace", "third")


def test_a_cleared_and_replaced_list_stays_reachable(cli, replaced) -> None:
    plain = json.loads(ok(cli, "todo", "list", "--json"))
    assert [s["session"] for s in plain] == ["default", "third", "other"]
    assert all("list" not in s for s in plain)
    everything = json.loads(ok(cli, "todo", "list", "--all", "--json"))
    assert everything[:3] == plain
    earlier = everything[3:]
    assert [(s["session"], s["first"], s["items"]) for s in earlier] == [
        ("default", "Other plan", 1), ("default", "One", 3)]
    assert all(s["active"] is False and len(s["list"]) == 12 for s in earlier)
    human = ok(cli, "todo", "list", "--all")
    assert f"5. default — earlier list {earlier[1]['list']}, updated just now" in human
    # By its number in `todo list --all`, and by its id.
    result = cli("todo", "load", "--replace", "5")
    assert result.code == 0, result
    assert result.out == (f"✓ Loaded 3 items from earlier list {earlier[1]['list']} of "
                          "session default\n")
    assert items(cli) == ["One", "Two", "Three"]
    result = cli("todo", "load", "--replace", earlier[0]["list"])
    assert result.code == 0, result
    assert items(cli) == ["Other plan"]


def test_load_out_of_range_names_the_all_listing(cli, project, replaced) -> None:
    before = tasklist(project)
    result = cli("todo", "load", "9")
    assert (result.code, result.out) == (2, "")
    assert result.err == ("Error: Invalid list number 9: 'aidp todo list --all' shows 5; use a "
                          "number from 1 to 5 or a session name\n")
    result = cli("todo", "load", "0123456789ab")
    assert (result.code, result.err) == (
        1, "Error: No saved TODO list for session '0123456789ab'; see 'aidp todo list'\n")
    assert tasklist(project) == before


# --- run --backlog -------------------------------------------------------------------


def test_run_backlog_works_in_sessions_of_its_own(cli, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("AIDP_ACTOR", "runner")
    ok(cli, "todo", "add", "My own step")
    ok(cli, "todo", "add", "My second step")
    tid = ok(cli, "tasks", "add", "Backlog work", "-q").strip()
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import os, subprocess, sys\n"
        "sys.stdin.read()\n"
        "def aidp(*a):\n"
        "    subprocess.run([sys.executable, '-m', 'aidp', *a], check=True)\n"
        "print('session:', os.environ['AIDP_SESSION'])\n"
        "aidp('todo', 'add', 'Step for the task')\n"
        "aidp('todo', 'tick', '1')\n"
        f"aidp('tasks', 'done', '{tid}')\n", encoding="utf-8")
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(agent))}"
    result = cli("run", "--backlog", "--agent", command, "--json")
    assert result.code == 0, result
    assert json.loads(result.out)["session"] == "default"
    assert f"session: backlog:{tid}" in result.err
    # The person's own list is as it was: active, both items.
    shown = json.loads(ok(cli, "todo", "show", "--json"))
    assert shown["active"] is True
    assert [i["content"] for i in shown["items"]] == ["My own step", "My second step"]
    assert items(cli, "--session", f"backlog:{tid}") == ["Step for the task"]
