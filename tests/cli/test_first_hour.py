"""What trips a new user in the first hour: text that looks like an option, typos of
command names."""

from __future__ import annotations

import json

import pytest


def test_todo_add_takes_text_that_looks_like_an_option_after_double_dash(cli) -> None:
    assert cli("todo", "add", "--", "-x").out == "✓ Added 1: -x\n"
    assert cli("todo", "add", "1", "--", "--not an option").code == 0
    shown = json.loads(cli("todo", "show", "--json").out)
    assert [item["content"] for item in shown["items"]] == ["--not an option", "-x"]
    # Without `--` a mistyped option is still an error, and nothing is added.
    typo = cli("todo", "add", "-z", "text")
    assert typo.code == 2 and "No such option: -z" in typo.err
    assert len(json.loads(cli("todo", "show", "--json").out)["items"]) == 2


def test_tasks_add_takes_text_that_looks_like_an_option_after_double_dash(cli) -> None:
    added = cli("tasks", "add", "--", "-y")
    assert added.code == 0, added
    assert [t["description"] for t in json.loads(cli("tasks", "list", "--json").out)] == ["-y"]


@pytest.mark.parametrize(("args", "meant"), [
    (["tasks", "complete", "abcd"], "done"),
    (["tasks", "finish", "abcd"], "done"),
    (["tasks", "rm", "abcd"], "abandon"),
    (["todo", "complete", "1"], "tick"),
    (["todo", "rm", "1"], "delete"),
])
def test_a_word_people_reach_for_suggests_the_real_command(cli, args, meant) -> None:
    result = cli(*args)
    assert result.code == 2
    assert result.err.startswith(f"Error: No such command '{args[1]}'. Did you mean '{meant}'?")
    assert result.err.count("\n") == 1


def test_no_suggestion_names_a_command_that_does_not_exist(cli) -> None:
    result = cli("complete")  # the top level has no `done`: no made-up suggestion
    assert result.code == 2 and "Did you mean" not in result.err
