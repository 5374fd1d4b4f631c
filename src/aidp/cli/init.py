"""`aidp init`: set a project up for aidp and for git (the work: aidp.app.init)."""

from __future__ import annotations

from typing import Any

import typer

from aidp.app import init as init_project
from aidp.cli.common import JSON_HELP, env, info
from aidp.cli.output import json_out
from aidp.core.terminal import inert


def init(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Create .aidp/, the tasklist, .aidp/.gitignore, the union-merge and diff rules in
    .gitattributes and this clone's diff driver; on a set-up clone, add what is missing.

    Examples:
    $ aidp init
    $ aidp --dir ../service init
    """
    e = env(ctx)
    done = init_project.init(e.log, e.root)
    e.wrote()  # the project is set up now, whatever of it was there before
    setup = init_project.setup_git(e.log, e.root)
    if as_json:  # the object alone on stdout; the notes below go to stderr as ever
        json_out(_as_json(done, setup, e.root))
    else:
        where = f" (through the link {inert(str(done.link))})" if done.link else ""
        typer.echo(f"Initialised {inert(str(done.path))}{where}")
    if done.attributes_note:
        info(inert(done.attributes_note))
    if setup.diff_driver_set:
        info("Set this clone's git diff driver for the tasklist (git config diff.aidp.textconv): "
             "git diff and git log -p show task lines")
    if setup.tasklist_ignored:
        info(
            "Warning: .aidp/tasklist.jsonl is ignored by git; it is meant to be committed. "
            "Remove the rule that ignores it (see 'git check-ignore -v .aidp/tasklist.jsonl')."
        )


def _as_json(done: init_project.Initialised, setup: init_project.GitSetup,
             root: object) -> dict[str, Any]:
    """`init --json` (docs/reference.md, "JSON output"): what init found and did."""
    return {
        "root": str(root),
        "tasklist": str(done.path),
        "created": done.created,
        "link": str(done.link) if done.link else None,
        "gitattributes": {"path": str(done.attributes), "added": list(done.attributes_added),
                          "override": done.attributes_note},
        "git": {"repository": setup.repository, "diff_driver_set": setup.diff_driver_set,
                "tasklist_ignored": setup.tasklist_ignored},
    }
