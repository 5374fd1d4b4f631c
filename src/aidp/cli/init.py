"""`aidp init`: set a project up for aidp and for git (the work: aidp.project)."""

from __future__ import annotations

import typer

from aidp import project
from aidp.cli.common import env, info, wrote
from aidp.render import inert


def init(ctx: typer.Context) -> None:
    """Create .aidp/, the tasklist, .aidp/.gitignore, the union-merge and diff rules in
    .gitattributes and this clone's diff driver; on a set-up clone, add what is missing.

    Examples:
    $ aidp init
    $ aidp --dir ../service init
    """
    e = env(ctx)
    done = project.init(e.log, e.root)
    wrote()  # the project is set up now, whatever of it was there before
    where = f" (through the link {inert(str(done.link))})" if done.link else ""
    typer.echo(f"Initialised {inert(str(done.path))}{where}")
    setup = project.setup_git(e.log, e.root)
    if setup.diff_driver_set:
        info("Set this clone's git diff driver for the tasklist (git config diff.aidp.textconv): "
             "git diff and git log -p show task lines")
    if setup.tasklist_ignored:
        info(
            "Warning: .aidp/tasklist.jsonl is ignored by git; it is meant to be committed. "
            "Remove the rule that ignores it (see 'git check-ignore -v .aidp/tasklist.jsonl')."
        )
