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
    (["tasks", "delete", "abcd"], "abandon"),  # difflib alone says `release`
    (["todo", "done", "1"], "tick"),
])
def test_a_word_people_reach_for_suggests_the_real_command(cli, args, meant) -> None:
    result = cli(*args)
    assert result.code == 2
    assert result.err.startswith(f"Error: No such command '{args[1]}'. Did you mean '{meant}'?")
    assert result.err.count("\n") == 1


def test_no_suggestion_names_a_command_that_does_not_exist(cli) -> None:
    result = cli("complete")  # the top level has no `done`: no made-up suggestion
    assert result.code == 2 and "Did you mean" not in result.err


@pytest.mark.parametrize(("args", "meant"), [
    (["tasks", "complet", "abcd"], "'done'"),  # difflib alone says `compact` (a rewrite)
    (["tasks", "compelte", "abcd"], "'done'"),
    (["tasks", "lsit"], "'list'"),
    (["todo", "compleet", "1"], "'tick'"),
    (["taks", "list"], "'tasks'"),
])
def test_a_typo_suggests_the_command_meant_and_nothing_else(cli, args, meant) -> None:
    result = cli(*args)
    assert result.code == 2
    typed = args[1] if args[0] in ("tasks", "todo") else args[0]
    assert result.err.startswith(f"Error: No such command '{typed}'. Did you mean {meant}? (see")


@pytest.mark.parametrize(("args", "meant"), [
    (["add", "Write docs"], "'tasks add', 'todo add'"),
    (["done", "abcd"], "'tasks done'"),
    (["tick", "1"], "'todo tick'"),
])
def test_a_command_typed_without_its_group_suggests_it_with_the_group(cli, args, meant) -> None:
    result = cli(*args)
    assert result.code == 2 and result.err.count("\n") == 1
    assert result.err.startswith(f"Error: No such command '{args[0]}'. Did you mean {meant}? (see")


@pytest.mark.parametrize(("args", "hint"), [
    (["tasks", "add", "-x"], "(text starting with '-' goes after '--': aidp tasks add -- -x)"),
    (["todo", "add", "-z", "word"], "(text starting with '-' goes after '--': aidp todo add -- -z)"),
    (["tasks", "done", "-x"], "(see 'aidp tasks done --help')"),  # ids, not text
    # (an option near none of add's: `--nope` would be offered `--type`)
    (["tasks", "add", "--xyzzy", "x"], "(see 'aidp tasks add --help')"),
])
def test_an_unknown_option_where_text_goes_says_how_to_pass_it(cli, project, args, hint) -> None:
    assert cli("tasks", "add", "existing").code == 0
    before = (project / ".aidp" / "tasklist.jsonl").read_bytes()
    result = cli(*args)
    assert result.code == 2 and result.err.count("\n") == 1
    assert result.err == f"Error: No such option: {args[2]} {hint}\n"
    assert (project / ".aidp" / "tasklist.jsonl").read_bytes() == before


def _groups():
    from aidp.cli import startup

    root = startup.command()
    return [([], root)] + [([name], group) for name, group in root.commands.items()
                           if getattr(group, "commands", None)]


@pytest.mark.parametrize("word", ["complete", "complet", "finish", "remove", "rm", "ls", "lst",
                                  "claer", "new", "cancel", "undo", "xyzzy", "strat", "ad",
                                  "lis", "dne"])
def test_every_suggestion_names_a_real_command_of_that_group(cli, word) -> None:
    import re

    for path, group in _groups():
        if word in group.commands:  # `tasks undo` is a command of its own
            continue
        result = cli(*path, word, "x")
        assert result.code == 2 and "Traceback" not in result.err, (path, word, result)
        suggested = re.findall(r"'([^']*)'", result.err.split("Did you mean", 1)[-1]
                               .split("(see", 1)[0]) if "Did you mean" in result.err else []
        real = set(group.commands)
        if not path:  # the top level also offers a group's command with its group
            real |= {f"{g} {c}" for g, sub in group.commands.items()
                     for c in getattr(sub, "commands", {})}
        assert set(suggested) <= real, (path, word, result.err)
