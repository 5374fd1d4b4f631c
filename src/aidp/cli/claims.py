"""`aidp tasks claim|release`: taking a task for a lease and putting it back. Loaded
only when the command line may name one of them (aidp.cli.startup); the use cases are
aidp.app.claiming's, the rules aidp.backlog.queue.claims'."""

# No `from __future__ import annotations`: Typer reads the commands' annotations at
# every run, and a string annotation costs an eval each (aidp.cli, the same).

import typer

from aidp.app import claiming
from aidp.cli import output
from aidp.cli.common import IDS_HELP, JSON_HELP, Env, env, tell_lost
from aidp.core.errors import InvalidInput
from aidp.core.model import Record, now_micros
from aidp.core.terminal import inert
from aidp.views import render


def _label(task: Record, ids: dict[str, str] | None = None) -> str:
    return render.task_label(task, ids)


def actor(e: Env, given: str | None) -> str:
    return claiming.actor(e.project, given)


def claim(
    ctx: typer.Context,
    task_id: str | None = typer.Argument(
        None, metavar="[ID]", help="The task to claim; default: the first ready task."),
    name: str | None = typer.Option(
        None, "--as", metavar="NAME",
        help="Who claims it. Default: AIDP_ACTOR, else git user.email, else the login name."),
    lease: str | None = typer.Option(
        None, "--lease", metavar="DURATION",
        help="How long the claim holds unless renewed (90s, 20m, 2h). Default: lease in "
        ".aidp/config.toml, else 30m. Claiming your own task again renews it."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Atomically take a task: in_progress, with you as its assignee, for a lease.

    A task whose holder's lease ran out (stale) is taken over; a live one is refused.

    Examples:
    $ aidp tasks claim
    $ aidp tasks claim 3f2a --as ci-bot --lease 2h
    """
    import os

    result = claiming.claim_task(env(ctx).project, task_id, actor=name, lease=lease,
                                 session=os.environ.get("AIDP_SESSION") or None,
                                 on_lost=tell_lost)
    who = result.claim["assignee"]
    if as_json:
        output.json_out(result.shown)
        return
    label = _label(result.task, result.short_ids)
    tick = output.painter()("✓", "green")
    said = result.lease.said()
    if result.took_over is not None:
        env(ctx).write(f"{tick} Took over: {label} (as {inert(who)}, {said}) from "
                       f"{inert(result.took_over.assignee)}, whose "
                       f"{result.took_over.said()}")
    elif result.renewed:
        env(ctx).write(f"{tick} Renewed your claim: {label} ({said})")
    elif result.changed:
        env(ctx).write(f"{tick} Claimed: {label} (as {inert(who)}, {said})")
    else:
        env(ctx).write(f"Already claimed by you, nothing changed: {label} ({said}; "
                       "renewed once half of it has run)")


def release(
    ctx: typer.Context,
    ids: list[str] = typer.Argument(None, metavar="[ID...]", help=IDS_HELP),
    stale: str | None = typer.Option(
        None, "--stale", metavar="AGE",
        help="Also every task in progress claimed longer ago than AGE (30m, 12h, 7d)."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Put claimed tasks back: pending, no assignee.

    Examples:
    $ aidp tasks release 3f2a
    $ aidp tasks release --stale 2h
    """
    e = env(ctx)
    if not ids and stale is None:
        raise InvalidInput("Missing ID: give the tasks to release, or --stale AGE for every "
                           "claim older than AGE")
    cutoff = None
    if stale is not None:
        from aidp.core.when import parse_age

        cutoff = now_micros() - parse_age(stale, what="--stale")
    done = claiming.release_tasks(e.project, ids or [], claimed_before=cutoff)
    changes = done.changes
    tell_lost(done.lost)
    if as_json:
        records = [c.task for c in changes]
        many = len(records) != 1 or stale is not None  # --stale: always an array
        output.json_out(records if many else records[0])
        return
    if not changes:
        e.write(f"No claim older than {inert(stale)}, nothing changed")
        return
    paint = output.painter()
    short = done.short_ids
    e.write("\n".join(
        f"{paint('✓', 'green')} Released: {_label(c.task, short)}" if c.changed
        else f"Not claimed, nothing changed: {_label(c.task, short)}"
        for c in changes
    ))
