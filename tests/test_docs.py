"""Docs that cannot drift: every command has help text and a section in docs/."""

from __future__ import annotations

import re
from pathlib import Path

import typer

from aidp.cli import _register, app

DOCS = Path(__file__).resolve().parents[1] / "docs"


def leaf_commands() -> list[tuple[str, object]]:
    _register()  # every group, as `aidp --help` sees them
    root = typer.main.get_command(app)
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
                     "report", "agents"}


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
