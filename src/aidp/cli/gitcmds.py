"""`aidp sync`, `aidp tasks changes` and `aidp tasks textconv`: the tasklist in git.

Thin: the work is in aidp.git, imported when a command runs (so help, which loads
every command, pays only for the definitions).
"""

from __future__ import annotations

import typer

from aidp.cli.common import JSON_HELP, env
from aidp.cli.output import json_out, painter
from aidp.core.errors import StorageError
from aidp.core.terminal import inert


def sync(
    ctx: typer.Context,
    message: str | None = typer.Option(
        None, "--message", "-m", metavar="M",
        help="The commit message (default: a summary such as 'aidp: 2 filed, 1 done').",
    ),
    no_push: bool = typer.Option(False, "--no-push", help="Commit and pull, but do not push."),
) -> None:
    """Commit the tasklist alone, pull (the union merge joins the tasklists), push.

    Examples:
    $ aidp sync
    $ aidp sync -m "aidp: triage" --no-push
    """
    from aidp import git

    e = env(ctx)
    e.read()  # the damage warning, once
    report = git.sync(e.log, message=message, push=not no_push)
    tick = painter()("✓", "green")
    lines = []
    if report.committed is not None:
        lines.append(f"{tick} Committed the tasklist: {inert(report.committed)}")
    else:
        lines.append("Nothing to commit: the tasklist is as HEAD has it")
    if report.upstream is None:
        lines.append(f"Branch {inert(report.branch)} has no upstream: nothing pulled or "
                     "pushed (set one with 'git push -u REMOTE BRANCH')")
    else:
        lines.append(f"{tick} Pulled {inert(report.upstream)}")
        if report.overwritten or report.claims or report.replaced:
            from aidp.backlog import tasks

            fold = e.log.read()
            ids = [entry["id"] for entry in (*report.overwritten, *report.claims,
                                             *report.replaced)]
            names = tasks.short_ids(fold, [i for i in ids if i in fold.tasks])
            lines += git.overwritten_lines(report.overwritten,
                                           lambda tid: names.get(tid, tid), yours=True)
            lines += git.told_lines(report.claims, report.replaced,
                                    lambda tid: names.get(tid, tid))
        if report.pushed:
            lines.append(f"{tick} Pushed to {inert(report.upstream)}")
        else:
            lines.append("Not pushed (--no-push)")
    e.write("\n".join(lines))


def changes(
    ctx: typer.Context,
    revisions: str | None = typer.Argument(
        None, metavar="[REV[..REV]]",
        help="REV: from REV to the work tree; A..B: from A to B (an empty side is HEAD). "
        "Default: HEAD, i.e. what is not committed yet.",
    ),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """What happened to tasks between two revisions: filed, statuses, edits, notes, links.

    Examples:
    $ aidp tasks changes
    $ aidp tasks changes main..HEAD --json
    """
    from aidp import git

    e = env(ctx)
    result = git.changes_between(e.log, revisions)
    if as_json:
        json_out(result)
    else:  # named by their short ids in the file as it is now, like every other view
        from aidp.backlog import tasks

        ids = [t["id"] for key in ("filed", "status", "edited", "removed", "notes", "links",
                                   "claims") for t in result[key] if isinstance(t["id"], str)]
        ids += [link["other"] for link in result["links"] if link["other"]]
        e.write(git.render_changes(result, tasks.short_ids(e.read(), ids)))


def textconv(
    file: str = typer.Argument(
        ..., metavar="FILE", help="A version of the tasklist (git passes it)."
    ),
) -> None:
    """git's diff driver: print the tasklist FILE as one readable line per record.

    Examples:
    $ aidp tasks textconv .aidp/tasklist.jsonl
    """
    import sys

    from aidp import git

    try:
        with open(file, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise StorageError(f"Cannot read {file}: {exc.strerror or exc}") from exc
    sys.stdout.write(git.textconv(data))
