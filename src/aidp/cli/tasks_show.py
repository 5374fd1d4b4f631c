"""`aidp tasks show`: one task with every field, its links, claim and notes (loaded
only for it: aidp.cli.startup)."""

# No `from __future__ import annotations`: Typer reads the commands' annotations at
# every run, and a string annotation costs an eval each (aidp.cli, the same).

from typing import TYPE_CHECKING

import typer

from aidp.backlog import tasks as core
from aidp.cli import output
from aidp.cli.common import JSON_HELP, env, tell_lost
from aidp.core.model import Record, now_micros
from aidp.core.terminal import inert
from aidp.tasklist.log import Fold
from aidp.views import render

if TYPE_CHECKING:
    from aidp.backlog.queue import QueueState


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
    from aidp.backlog import queue

    e = env(ctx)
    fold = e.read()
    tasks = fold.tasks
    task = tasks[core.resolve_id(fold, task_id)]
    qs = queue.state(fold, about=task["id"], bodies=True)
    tell_lost(e, fold, [task["id"]])
    if as_json:
        shown = dict(queue.with_extras(qs, task))  # never the fold's own (memoised) record
        body = shown.pop("body", None)  # (last, after the links)
        for key, found in (("blocks", qs.dependents), ("children", qs.children)):
            if found.get(task["id"]):
                shown[key] = list(found[task["id"]])
        if body is not None:
            shown["body"] = body
        output.json_out(shown)
    else:
        paint, now = output.painter(), now_micros()
        tid = task["id"]
        parent = qs.parent.get(tid)
        sections = [("Blocked by", qs.blockers.get(tid, [])),
                    ("Blocks", qs.dependents.get(tid, [])),
                    ("Parent", [parent] if parent else []),
                    ("Children", qs.children.get(tid, []))]
        ids = core.short_ids(fold, [tid, *(other for _, found in sections for other in found)])
        held = {k: v for k, v in queue.extras(qs, task).items()
                if k in ("task_type", "close_reason", "body")}
        body = held.pop("body", None)
        text = render.task_detail({**task, **held}, now, paint=paint, ids=ids)
        text += _queue_detail(fold, qs, task, now, paint, sections, ids)
        if body is not None:
            import shutil

            color = render.color_enabled()
            text += "\n" + paint("Body", "bold") + "\n" + render.body_text(
                body, color=color, width=shutil.get_terminal_size().columns)
        render.write_text(text)


def _queue_detail(fold: Fold, qs: "QueueState", task: Record, now: int, paint: render.Painter,
                  sections: list[tuple[str, list[str]]], short: dict[str, str]) -> str:
    from aidp.core.model import ts_of
    from aidp.core.when import age

    tid = task["id"]

    def ref(other: str) -> str:
        found = fold.tasks.get(other)
        if found is None:
            return f"[{inert(other)}] (unknown task)"
        return (f"{render.task_label(found, short)} "
                + paint(f"({inert(found.get('status', '?'))})", "dim"))

    lines = []
    for title, ids in sections:
        if ids:
            lines.append(paint(title, "bold"))
            lines.extend(f"  {ref(other)}" for other in ids)
    holder = qs.holder(task)
    if holder is not None:
        since = age(ts_of(holder, "claimed_at"), now)
        lines.append(f"{paint('Assignee', 'bold')} {inert(holder['assignee'])} "
                     + paint(f"(claimed {since})", "dim"))
        if task.get("status") == "in_progress":
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
        for other in qs.claims.get(tid, [])[1:]:
            lines.append(paint(f"  also claimed later by {inert(other['assignee'])} "
                               "(on another clone); the first claim holds it", "dim"))
    notes = qs.notes.get(tid, [])
    if notes:
        lines.append(paint(f"Notes ({len(notes)})", "bold"))
        for item in notes:
            who = f" {inert(item['author'])}" if isinstance(item.get("author"), str) else ""
            when = inert(item.get("created_at", "?"))
            lines.append(f"  {paint(when, 'dim')}{who}: {inert(item['text'])}")
    return "\n" + "\n".join(lines) if lines else ""
