"""`aidp tasks show`: one task with every field, its links, claim and notes (loaded
only for it: aidp.cli.startup)."""

# No `from __future__ import annotations`: Typer reads the commands' annotations at
# every run, and a string annotation costs an eval each (aidp.cli, the same).

import typer

from aidp.app.shown import TaskDetail, show_task
from aidp.cli import output
from aidp.cli.common import JSON_HELP, env, tell_lost
from aidp.core.model import now_micros
from aidp.core.terminal import inert
from aidp.views import render


def show(
    ctx: typer.Context,
    task_id: str = typer.Argument(..., metavar="ID", help="Full id or ≥4 leading hex characters."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Every field of one task, with its type, blockers, epic, children, assignee, notes
    and body (Markdown, rendered on a terminal).

    Examples:
    $ aidp tasks show 3f2a
    $ aidp tasks show 3f2a --json
    """
    detail = show_task(env(ctx).project, task_id)
    tell_lost(detail.lost)
    if as_json:
        output.json_out(detail.shown)
        return
    paint, now = output.painter(), now_micros()
    text = render.task_detail({**detail.task, **detail.fields}, now, paint=paint,
                              ids=detail.short_ids)
    text += _queue_detail(detail, now, paint)
    if detail.body is not None:
        import shutil

        color = render.color_enabled()
        text += "\n" + paint("Body", "bold") + "\n" + render.body_text(
            detail.body, color=color, width=shutil.get_terminal_size().columns)
    env(ctx).write(text)


def _queue_detail(detail: TaskDetail, now: int, paint: render.Painter) -> str:
    from aidp.core.model import ts_of
    from aidp.core.when import age

    short = detail.short_ids

    def ref(other: str) -> str:
        found = detail.related.get(other)
        if found is None:
            return f"[{inert(other)}] (unknown task)"
        return (f"{render.task_label(found, short)} "
                + paint(f"({inert(found.get('status', '?'))})", "dim"))

    sections = [("Blocked by", detail.blocked_by), ("Blocks", detail.blocks),
                ("Parent", [detail.parent] if detail.parent else []),
                ("Children", detail.children)]
    lines = []
    for title, ids in sections:
        if ids:
            lines.append(paint(title, "bold"))
            lines.extend(f"  {ref(other)}" for other in ids)
    holder = detail.holder
    if holder is not None:
        since = age(ts_of(holder, "claimed_at"), now)
        lines.append(f"{paint('Assignee', 'bold')} {inert(holder['assignee'])} "
                     + paint(f"(claimed {since})", "dim"))
        if detail.task.get("status") == "in_progress":
            from aidp.backlog.queue import judge

            lease = judge(holder, now)
            said = f"{'stale: ' if lease.stale else ''}{lease.said()}"
            lines.append(f"{paint('Lease', 'bold')} "
                         + paint(said, "yellow" if lease.stale else "dim")
                         + ("" if not lease.stale else paint(
                             " ('aidp tasks claim' takes it over)", "dim")))
        if isinstance(holder.get("took_over_from"), str):
            lines.append(paint(f"  took it over from {inert(holder['took_over_from'])}, "
                               "whose lease had run out", "dim"))
        for other in detail.later_claims:
            lines.append(paint(f"  also claimed later by {inert(other['assignee'])} "
                               "(on another clone); the first claim holds it", "dim"))
    if detail.notes:
        lines.append(paint(f"Notes ({len(detail.notes)})", "bold"))
        for item in detail.notes:
            who = f" {inert(item['author'])}" if isinstance(item.get("author"), str) else ""
            when = inert(item.get("created_at", "?"))
            lines.append(f"  {paint(when, 'dim')}{who}: {inert(item['text'])}")
    return "\n" + "\n".join(lines) if lines else ""
