"""`aidp tasks …`: the persistent backlog — the group's own commands (add, the status
changes, stats, repair, compact); the others live in modules of their own
(aidp.cli.startup.COMMANDS says where)."""

# No `from __future__ import annotations`: Typer reads the commands' annotations at
# every run, and a string annotation costs an eval each (aidp.cli, the same).

from typing import TYPE_CHECKING

import typer

from aidp.cli import output
from aidp.cli.common import (
    BODY_FILE_HELP,
    BODY_HELP,
    IDS_HELP,
    JSON_HELP,
    TYPE_HELP,
    env,
    read_body,
    split_ids,
    tell_lost,
)
from aidp.core.model import now_micros
from aidp.core.terminal import inert
from aidp.views import render

if TYPE_CHECKING:
    from aidp.backlog.queue import Change


def _emit_tasks(changes: list["Change"], *, verb: str, ids: dict[str, str] | None = None,
                pager: bool) -> None:
    """`ids`: full id → the short id to show (tasks.short_ids); `pager`: as
    render.write_text's."""
    paint = output.painter()
    lines = []
    for change in changes:
        task = change.task
        label = render.task_label(task, ids)
        if change.changed:
            lines.append(f"{paint('✓', 'green')} {verb}: {label}")
        else:
            lines.append(f"Already {inert(task.get('status'))}, nothing changed: {label}")
    render.write_text("\n".join(lines), pager=pager)


def add(
    ctx: typer.Context,
    description: list[str] = typer.Argument(..., help="What needs doing (1–200 characters)."),
    priority: str = typer.Option("medium", "--priority", "-p", help="high, medium or low."),
    tag: list[str] = typer.Option([], "--tag", "-t", help="A tag; repeat for several."),
    discovered_during: str | None = typer.Option(
        None, "--discovered-during", help="What you were doing when you found it."
    ),
    blocked_by: list[str] = typer.Option(
        [], "--blocked-by", metavar="ID",
        help="A task it waits on; repeat or separate with commas.",
    ),
    parent: str | None = typer.Option(None, "--parent", metavar="ID",
                                      help="The epic it belongs to."),
    body: str | None = typer.Option(None, "--body", metavar="TEXT", help=BODY_HELP),
    body_file: str | None = typer.Option(None, "--body-file", metavar="F",
                                         help=BODY_FILE_HELP),
    task_type: str | None = typer.Option(None, "--type", metavar="TYPE", help=TYPE_HELP),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print only the new id."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """File a task in the backlog (session = the current session).

    Examples:
    $ aidp tasks add "Crash on an empty config" --type bug -p high --body "Run it with HOME=''"
    $ aidp tasks add "Write the migration" --blocked-by 3f2a -q
    """
    from aidp.app.filing import file_task, filed_shown

    e = env(ctx)
    text = read_body(body, body_file, e.root)
    linked = bool(blocked_by) or parent is not None
    filed = file_task(e.project, " ".join(description), priority=priority, tags=tag,
                      discovered_during=discovered_during, blocked_by=split_ids(blocked_by),
                      parent=parent, body=text, task_type=task_type)
    task = filed.task
    if as_json:
        output.json_out(filed_shown(e.project, filed, linked=linked, body=text,
                                    task_type=task_type))
    elif quiet:
        e.write(task["id"])
    else:
        paint = output.painter()
        marker = render.priority_marker(task["priority"], paint)
        # The hex part, not the shortest prefix: that needs the whole history read,
        # which `add` never does (it only appends; see bench/RESULTS.md).
        e.write(
            f"{paint('✓', 'green')} Added {marker} [{render.hex_part(task['id'])}] "
            f"{inert(task['description'])}"
        )


def _transition(ctx: typer.Context, ids: list[str], status: str, verb: str, *, as_json: bool,
                reason: str | None = None) -> None:
    from aidp.app.changing import transition

    e = env(ctx)
    done = transition(e.project, ids, status, reason=reason)
    tell_lost(done.lost)
    if as_json:
        from aidp.app.shown import shown_now

        shown = shown_now(e.project, done.tasks())
        output.json_out(shown[0] if len(shown) == 1 else shown)
        return
    _emit_tasks(done.changes, verb=verb, ids=done.short_ids, pager=e.pager)


def start(
    ctx: typer.Context,
    ids: list[str] = typer.Argument(..., metavar="ID...", help=IDS_HELP),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Mark tasks in_progress.

    Examples:
    $ aidp tasks start 3f2a
    """
    _transition(ctx, ids, "in_progress", "Started", as_json=as_json)


def done(
    ctx: typer.Context,
    ids: list[str] = typer.Argument(..., metavar="ID...", help=IDS_HELP),
    reason: str | None = typer.Option(None, "--reason", "-r",
                                      help="How it was done (shown like an abandon reason)."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Mark tasks done, optionally with the close reason.

    Examples:
    $ aidp tasks done 3f2a 9c41 --json
    $ aidp tasks done 3f2a --reason "Fixed by raising the limit"
    """
    _transition(ctx, ids, "done", "Done", as_json=as_json, reason=reason)


def abandon(
    ctx: typer.Context,
    words: list[str] = typer.Argument(..., metavar="ID [REASON...] | ID... --reason R",
                                      help="Without --reason: the task's id, then the "
                                      "reason (words after the id are never read as ids). "
                                      "With --reason: every argument is an id. " + IDS_HELP),
    reason: str | None = typer.Option(None, "--reason", "-r",
                                      help="Why they are dropped; every argument is an id."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Mark a task abandoned with the reason, or several with --reason.

    Without --reason: the id, then the reason (never read as ids).

    Examples:
    $ aidp tasks abandon 3f2a Duplicate of 9c41
    $ aidp tasks abandon 3f2a 9c41 --reason "Duplicates of 77e0"
    """
    ids = words
    if reason is None:
        from aidp.backlog.ids import ids_then_reason

        ids, reason = ids_then_reason(words)
    _transition(ctx, ids, "abandoned", "Abandoned", as_json=as_json, reason=reason)
    if len(words) > 1 and ids != words:
        _hint_several(ctx, words[1:])


def _hint_several(ctx: typer.Context, rest: list[str]) -> None:
    """After `abandon ID WORD…` whose words all name tasks: they were the reason, as
    the rule says; tell the user how to abandon them too (nothing else is done)."""
    import sys

    from aidp.backlog.ids import resolve_id
    from aidp.core.errors import AidpError

    fold = env(ctx).read()
    try:
        for word in rest:
            resolve_id(fold, word)
    except AidpError:
        return  # a word that names no task: an ordinary reason
    shown = inert(" ".join(rest))
    sys.stderr.write(f"Note: '{shown}' was taken as the reason; to abandon several tasks, "
                     "give the reason with --reason (every argument is then an id)\n")


def reopen(
    ctx: typer.Context,
    ids: list[str] = typer.Argument(..., metavar="ID...", help=IDS_HELP),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Move tasks back to pending.

    Examples:
    $ aidp tasks reopen 3f2a
    """
    _transition(ctx, ids, "pending", "Reopened", as_json=as_json)


def stats(
    ctx: typer.Context,
    since: str | None = typer.Option(
        None, "--since", metavar="WHEN",
        help="Only tasks created at or after WHEN (7d, 2026-11-01).",
    ),
    session: str | None = typer.Option(None, "--session", help="Only tasks filed in this session."),
    tag: list[str] = typer.Option(
        [], "--tag", "-t", help="Only tasks with this tag; repeat for any of several."
    ),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Counts and charts: by status and priority, filed vs finished per week, age, tags.

    Examples:
    $ aidp tasks stats --since 30d
    $ aidp tasks stats -t config --json
    """
    from aidp.app.report import stats
    from aidp.backlog import insights

    now = now_micros()
    filters = insights.Filters(since=_since(since, now), session=session,
                               tags=[t.strip() for t in tag])
    found = stats(env(ctx).project, now=now, filters=filters)
    if as_json:
        output.json_out(found)
        return
    from aidp.views import charts

    color = render.color_enabled()
    env(ctx).write(charts.draw(found, color=color, width=_terminal_width()))


def _since(text: str | None, now: int) -> int | None:
    if text is None:
        return None
    from aidp.core.when import parse_when

    return parse_when(text, now)


def _terminal_width() -> int:
    """The terminal's width when stdout is one; else the charts' own 80 columns."""
    import os
    import sys

    try:
        if sys.stdout.isatty():
            return os.get_terminal_size(sys.stdout.fileno()).columns or 80
    except (AttributeError, OSError, ValueError):
        pass
    return 80


def repair(
    ctx: typer.Context,
    dry_run: bool = typer.Option(False, "--dry-run", help="Report what would go; change nothing."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Rewrite the tasklist without damaged lines, keeping a backup.

    Examples:
    $ aidp tasks repair --dry-run
    $ aidp tasks repair
    """
    e = env(ctx)
    from aidp.tasklist import maintenance

    report = maintenance.repair(e.log, dry_run=dry_run)
    if as_json:
        output.json_out({
            "dry_run": dry_run,
            "lines": report.lines_before,
            "kept": report.lines_after,
            "damaged": len(report.damaged_lines),
            "damaged_lines": report.damaged_lines,
            "reasons": [{"line": n, "why": why} for n, why in report.reasons.items()],
            "blank": report.blank,
            "rewritten": report.rewritten,
            "backup": str(report.backup) if report.backup else None,
        })
        return
    damaged = len(report.damaged_lines)
    if not damaged and not report.blank:
        e.write(f"Nothing to repair: {render.counted(report.lines_before, 'line')}, "
                "all valid")
        return
    where = ", ".join(map(str, report.damaged_lines[:20]))
    if damaged > 20:
        where += ", …"
    found = f"{damaged} damaged line(s)" + (f" (line {where})" if damaged else "")
    found += f" and {report.blank} blank line(s)" if report.blank else ""
    why = "".join(f"\n  line {n}: {inert(text)}" for n, text in report.reasons.items())
    if dry_run:
        e.write(f"Would remove {found}; {render.counted(report.lines_after, 'line')} "
                f"would stay{why}")
    else:
        backup = inert(str(report.backup))
        e.write(f"Removed {found}; {render.counted(report.lines_after, 'line')} kept. "
                f"Backup: {backup}{why}")


def compact(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Drop the records no fold needs any more (history stays in git and a backup).

    Examples:
    $ aidp tasks compact
    """
    e = env(ctx)
    from aidp.tasklist import maintenance

    report = maintenance.compact(e.log)
    if as_json:
        output.json_out({
            "lines": report.lines_before,
            "kept": report.lines_after,
            "damaged": report.damaged,
            "unknown": report.unknown,
            "rewritten": report.rewritten,
            "backup": str(report.backup) if report.backup else None,
        })
        return
    unknown = (f" ({report.unknown} of kinds this version does not know, kept as they are)"
               if report.unknown else "")
    if not report.rewritten:
        e.write(f"Already compact: {report.lines_after} records{unknown}")
        return
    dropped = f", {report.damaged} damaged dropped" if report.damaged else ""
    e.write(
        f"Compacted {report.lines_before} lines to {report.lines_after}{unknown}{dropped}. "
        f"Backup: {inert(str(report.backup))}"
    )
