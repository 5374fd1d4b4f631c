"""`aidp tasks history` and `aidp tasks undo`: a task's recorded states, and going
back to the one before the current.

Thin: the use cases are aidp.app.timeline.task_history and aidp.app.changing.undo_task
(imported when a command runs)."""

from __future__ import annotations

from pathlib import Path

import typer

from aidp.cli.common import JSON_HELP, env
from aidp.cli.output import json_out, painter
from aidp.core.terminal import inert
from aidp.views import render

ID_HELP = "Full id or ≥4 leading hex characters."


def history(
    ctx: typer.Context,
    task_id: str = typer.Argument(..., metavar="ID", help=ID_HELP),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Every recorded state of a task, oldest first, with what changed.

    Examples:
    $ aidp tasks history 3f2a
    """
    from aidp.app.timeline import task_history

    e = env(ctx)
    recorded = task_history(e.project, task_id, events=not as_json)
    entries = recorded.entries
    if as_json:
        json_out([entry.record for entry in entries])
        return
    paint = painter()
    blocks = []
    # The queue's records about the task (waits, epic, claims, notes), between the states.
    events = recorded.events
    def queue_events_until(key: tuple[int, int] | None) -> None:
        while events and (key is None or events[0][0] < key):
            _key, what, (source, line) = events.pop(0)
            blocks.append(paint(f"  {inert(what)}", "cyan")
                          + paint(f"  ({_place(source, line)})", "dim"))
    for number, entry in enumerate(entries, start=1):
        queue_events_until(entry.key)
        stamp = inert(entry.record.get("updated_at", "?"))
        head = (paint(f"#{number} {stamp}", "bold")
                + paint(f"  ({_place(entry.source, entry.line)})", "dim"))
        if number == 1:
            body = [f"  created: {inert(entry.record.get('description', ''))}",
                    f"  status: {inert(entry.record.get('status'))}, "
                    f"priority: {inert(entry.record.get('priority'))}"]
        else:
            body = [
                f"  {inert(key)}: {_shown(before)} → {_shown(after)}"
                for key, (before, after) in entry.changes.items()
            ] or ["  (no change but the time)"]
        blocks.append("\n".join([head, *body]))
    queue_events_until(None)
    e.write("\n".join(blocks))


def _place(source: Path | None, line: int) -> str:
    """Where a record is: a line of this worktree's tasklist, or of another worktree's."""
    return f"line {line}" if source is None else f"line {line} of {inert(str(source))}"


def _shown(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, list):
        return "[" + ", ".join(inert(v) for v in value) + "]"
    return inert(value)


def undo(
    ctx: typer.Context,
    task_id: str = typer.Argument(..., metavar="ID", help=ID_HELP),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Go back to the task's previous state: appended again, so history shows both.

    Examples:
    $ aidp tasks undo 3f2a
    $ aidp tasks undo 3f2a --json
    """
    from aidp.app.changing import undo_task

    e = env(ctx)
    done = undo_task(e.project, task_id)
    if as_json:
        from aidp.app.shown import shown_now

        json_out(shown_now(e.project, [done.task], bodies=True)[0])
        return
    from aidp.backlog.details import preview

    paint = painter()
    label = render.task_label(done.task, done.short_ids)
    lines = [f"{paint('✓', 'green')} Undone: {label}"]
    lines += [f"  {inert(key)}: {inert(preview(now))} → {inert(preview(then))}" if key == "body"
              else f"  {inert(key)}: {_shown(now)} → {_shown(then)}"
              for key, (now, then) in done.changes.items()]
    e.write("\n".join(lines))
