"""Docs that cannot drift: every command has help text and a section in docs/."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from aidp.cli import startup

DOCS = Path(__file__).resolve().parents[1] / "docs"


def leaf_commands() -> list[tuple[str, object]]:
    root = startup.command()  # every group, as `aidp --help` sees them
    found = []

    def walk(command, path: str) -> None:
        subcommands = getattr(command, "commands", None)
        if subcommands:
            for name, sub in subcommands.items():
                walk(sub, f"{path} {name}")
        else:
            found.append((path, command))

    walk(root, "aidp")
    return found


def test_every_group_is_listed() -> None:
    paths = {path.split()[1] for path, _ in leaf_commands()}
    assert paths == {"tasks", "todo", "init", "sync", "run", "trust", "prime", "setup", "hook",
                     "report", "agents", "mcp", "board"}


def test_every_command_has_help_text() -> None:
    missing = [path for path, command in leaf_commands() if not (command.help or "").strip()]
    assert missing == []


def test_every_command_has_a_docs_heading() -> None:
    headings = "\n".join(
        line for doc in DOCS.glob("*.md") for line in doc.read_text().splitlines()
        if line.startswith("#")
    )
    missing = [
        path for path, _ in leaf_commands()
        if not re.search(re.escape(f"`{path}") + r"[ `]", headings)
    ]
    assert missing == []


def test_every_option_of_tasks_list_is_documented() -> None:
    guide = (DOCS / "guide.md").read_text()
    command = dict(leaf_commands())["aidp tasks list"]
    for param in command.params:
        for opt in getattr(param, "opts", []):
            if opt.startswith("--") and opt != "--help":
                assert f"`{opt}" in guide or f"{opt}/" in guide or f"/{opt}" in guide, opt


def reference_sections(text: str) -> dict[str, str]:
    """docs/reference.md: each command its heading names (`### `aidp tasks start ID…`,
    `aidp tasks done ID…``) → the text that documents it: its section, after the text
    its group's heading holds before the first command (what every command of the
    group takes)."""
    found: dict[str, str] = {}
    for group in re.split(r"\n(?=## )", text):
        intro, *sections = re.split(r"\n(?=### )", group)
        for section in sections:
            heading = section.split("\n", 1)[0]
            for path in re.findall(r"`(aidp(?: [a-z][a-z-]*)+)", heading):
                found[path] = intro + "\n" + section
    return found


def test_the_reference_documents_every_command_and_option() -> None:
    """docs/reference.md has a section for every command that names each of its
    options (long form) and says what its --json prints."""
    sections = reference_sections((DOCS / "reference.md").read_text(encoding="utf-8"))
    missing = []
    for path, command in leaf_commands():
        section = sections.get(path)
        if section is None:
            missing.append(path)
            continue
        for param in command.params:
            for opt in getattr(param, "opts", []):
                if opt.startswith("--") and opt != "--help" and f"`{opt}" not in section \
                        and f"/{opt}" not in section:
                    missing.append(f"{path} {opt}")
    assert missing == []


def test_the_reference_sections_are_found() -> None:
    page = ("# R\n\n## Group\n\nEvery command takes `--session NAME`.\n\n"
            "### `aidp todo pause REASON…`, `aidp todo resume`\n\n- `--json`: the list.\n"
            "\n## Other\n\n### `aidp sync`\n\n- `-m/--message M`\n")
    found = reference_sections(page)
    assert sorted(found) == ["aidp sync", "aidp todo pause", "aidp todo resume"]
    assert "--session" in found["aidp todo resume"] and "--session" not in found["aidp sync"]


# --- examples in --help ---------------------------------------------------------------
# Every command's help ends with one or two "$ aidp …" lines under "Examples:". They are
# static text (no start-up cost) and must stay real: each one parses against the command
# it documents, and each one that needs no agent, git remote or input file is run in a
# fresh project (with the placeholder ids below standing for real tasks there).

PLACEHOLDER_IDS = ("3f2a", "9c41", "7e07")
# Examples not run here, and why (they are still parsed).
NOT_RUN = {
    "aidp run": "starts an agent CLI",
    "aidp sync": "pushes to a git remote",
    "aidp hook": "reads an agent's event from stdin",
    "aidp mcp": "serves an agent on stdin until it closes (tests/test_mcp.py runs it)",
    "aidp board": "serves until Ctrl-C (tests/test_board.py runs it)",
    "aidp tasks changes": "needs a git history",
    "aidp tasks import": "needs another tool's export file",
}
# Examples that succeed with another exit code than 0, and why.
EXIT_CODES = {"aidp setup codex --check": 1,  # nothing set up yet: --check says so
              # the examples' tasks were just filed: nothing to undo yet
              "aidp tasks undo 3f2a": 1, "aidp tasks undo 3f2a --json": 1}


def examples(command) -> list[str]:
    import inspect

    text = inspect.cleandoc(command.help or "")
    _, found, rest = text.partition("\n\nExamples:\n")
    return [line[2:] for line in rest.splitlines() if line.startswith("$ ")] if found else []


def test_every_command_has_one_or_two_examples() -> None:
    counts = {path: len(examples(command)) for path, command in leaf_commands()}
    assert {path: n for path, n in counts.items() if not 1 <= n <= 2} == {}


def _words(example: str) -> list[str]:
    import shlex

    words = shlex.split(example)
    for at, word in enumerate(words):
        if word in ("<", ">", "|"):  # the shell's part
            return words[:at]
    return words


def _resolve(example: str) -> str:
    """Parse an example as the shell would hand it to aidp; the command path it names.
    Any usage error (an unknown option, a missing argument) raises."""
    words = _words(example)
    assert words[0] == "aidp", example
    root = startup.command()
    ctx = root.make_context("aidp", words[1:])
    command, path = root, ["aidp"]
    while getattr(command, "commands", None):
        name, command, rest = command.resolve_command(ctx, [*ctx._protected_args, *ctx.args])
        path.append(name)
        ctx = command.make_context(name, rest, parent=ctx)
    return " ".join(path)


def _all_examples() -> list[tuple[str, str]]:
    return [(path, example) for path, command in leaf_commands() for example in examples(command)]


def groups() -> list[tuple[str, object]]:
    """`aidp` and every group under it (`aidp tasks`, `aidp todo`, …)."""
    found = []

    def walk(command, path: str) -> None:
        if getattr(command, "commands", None):
            found.append((path, command))
            for name, sub in command.commands.items():
                walk(sub, f"{path} {name}")

    walk(startup.command(), "aidp")
    return found


def _group_examples() -> list[tuple[str, str]]:
    return [(path, example) for path, group in groups() for example in examples(group)]


def test_every_group_has_one_or_two_examples() -> None:
    counts = {path: len(examples(group)) for path, group in groups()}
    assert len(counts) >= 3 and {p: n for p, n in counts.items() if not 1 <= n <= 2} == {}


@pytest.mark.parametrize(("path", "example"), _group_examples())
def test_a_group_example_names_one_of_its_commands(path: str, example: str) -> None:
    assert _resolve(example).startswith(f"{path} ")


@pytest.mark.parametrize(("path", "example"), _all_examples())
def test_each_example_parses_as_the_command_it_documents(path: str, example: str) -> None:
    assert _resolve(example) == path


@pytest.mark.parametrize(
    ("path", "example"), [(p, e) for p, e in _all_examples() + _group_examples()
                          if p not in NOT_RUN and "--open" not in e])
def test_each_example_runs(path: str, example: str, cli, project) -> None:
    real = [cli("tasks", "add", f"Task {n}", "-q").out.strip() for n in range(3)]
    cli("todo", "add", "First step")
    cli("todo", "add", "1.last", "A check of the first step")
    cli("todo", "add", "Second step")
    cli("--session", "main@alice@example.com", "todo", "add", "Saved plan")
    (project.parent / "service").mkdir()
    words = [real[PLACEHOLDER_IDS.index(w)] if w in PLACEHOLDER_IDS else w
             for w in _words(example)]
    result = cli(*words[1:])
    assert result.code == EXIT_CODES.get(example, 0), (example, result)
    assert "Traceback" not in result.err


def test_the_damage_section_names_every_typed_task_key() -> None:
    """docs/file-format.md "Damage" lists the keys line.well_typed_task checks: a task
    whose text key holds something else than a string or null is skipped as damage."""
    from aidp.tasklist.line import _TEXT_KEYS

    text = (DOCS / "file-format.md").read_text(encoding="utf-8")
    damage = text.split("## Damage", 1)[1].split("\n## ", 1)[0]
    flat = " ".join(damage.split())
    assert [key for key in _TEXT_KEYS if f"`{key}`" not in flat] == []
    assert "`tags`" in flat and "`id`" in flat and "tasks repair" in flat
