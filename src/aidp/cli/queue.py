"""`aidp tasks ready|blocked|block|unblock|edit|note`: the work queue (claim and
release: aidp.cli.claims).

Loaded only when the command line may name one of them (aidp.cli.startup); the use
cases are aidp.app's (queue_view, changing), the rules aidp.backlog.queue's.
"""

# No `from __future__ import annotations`: Typer reads the commands' annotations at
# every run, and a string annotation costs an eval each (aidp.cli, the same).

from typing import TYPE_CHECKING

import typer

from aidp.app import changing, queue_view
from aidp.cli import claims, output
from aidp.cli.common import (
    BODY_FILE_HELP,
    BODY_HELP,
    ID_HELP,
    JSON_HELP,
    TYPE_HELP,
    env,
    read_body,
    split_ids,
    tell_lost,
)
from aidp.core.errors import InvalidInput
from aidp.core.model import Record, now_micros, ts_of
from aidp.core.terminal import inert
from aidp.core.when import age
from aidp.views import render

if TYPE_CHECKING:
    from aidp.app.project import Project


def _label(task: Record, ids: dict[str, str] | None = None) -> str:
    return render.task_label(task, ids)


def _line(task: Record, now: int, paint: render.Painter, ids: dict[str, str], *,
          status: bool = False) -> str:
    marker = render.priority_marker(task.get("priority"), paint)
    full = task.get("id", "?")
    tid = paint(f"[{inert(ids.get(full, full) if isinstance(full, str) else full)}]",
                "dim")
    text = f"{marker} {tid} {inert(task.get('description', ''))}"
    if task.get("task_type"):  # as list shows it (only when not `task`: details.shown)
        kind = paint(f"{inert(task['task_type'])}:", "cyan")
        text = f"{marker} {tid} {kind} {inert(task.get('description', ''))}"
    text += " " + paint(f"({age(ts_of(task, 'created_at'), now)})", "dim")
    tags = task.get("tags") or []
    if tags:
        text += " " + paint(" ".join(f"#{inert(t)}" for t in tags), "cyan")
    if status:
        text += " " + paint(inert(task.get("status", "?")), "yellow")
    return text


# --- ready and blocked ------------------------------------------------------------------


PRIORITY_OPTION = typer.Option([], "--priority", "-p", help="high, medium or low; repeatable.")
TAG_OPTION = typer.Option([], "--tag", "-t", help="Has this tag; repeat for any of several.")
SESSION_OPTION = typer.Option(None, "--session", help="Filed in this session.")
LIMIT_OPTION = typer.Option(None, "--limit", "-n", help="At most N tasks.")
FORMAT_OPTION = typer.Option(None, "--format", "-f",
                             help="table, json, jsonl, ids, markdown or csv.")


def ready(
    ctx: typer.Context,
    priority: list[str] = PRIORITY_OPTION,
    tag: list[str] = TAG_OPTION,
    session: str | None = SESSION_OPTION,
    limit: int | None = LIMIT_OPTION,
    fmt: str | None = FORMAT_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Same as --format json."),
    every: bool = typer.Option(False, "--all", "-a",
                               help="Every ready task (the table shows a page)."),
) -> None:
    """Tasks to work on now: pending, unclaimed, waiting on nothing open; best first.

    The table shows a page (what fits the terminal; 20 when not at one) and says how
    many more; --json and the other formats give every ready task unless --limit.

    Examples:
    $ aidp tasks ready -n 5
    $ aidp tasks ready -p high -f ids
    """
    chosen = output.list_format(fmt, as_json)
    table = chosen == "table"
    if every and limit is not None:
        raise InvalidInput("Conflicting --all and --limit: give one of them")
    page = output.page_rows() if table and limit is None and not every else None
    # One more than the page: whether there are more to say so.
    found = queue_view.ready_tasks(env(ctx).project, priorities=priority, tags=tag,
                                   session=session, limit=limit if page is None else page + 1,
                                   summary=table)
    if found.shown is not None:
        output.print_list(found.shown, chosen, now=now_micros(), empty="No matching tasks",
                          pager=env(ctx).pager)
        return
    if not found.tasks:
        env(ctx).write(f"Nothing ready ({found.why_none})" if found.why_none is not None
                       else "No ready task matches")
        return
    paint, now, total = output.painter(), now_micros(), found.total
    shown = found.tasks if page is None else found.tasks[:page]
    count = f"{len(shown)}" if len(shown) == total else f"{len(shown)} of {total}"
    lines = [paint(f"READY ({count})", "bold")]
    ids = found.short_ids or {}
    lines += [f"  {n}. {_line(t, now, paint, ids)}"
              f"{_stale_mark(found.stale.get(t['id']), now, paint)}"
              for n, t in enumerate(shown, start=1)]
    if len(shown) < len(found.tasks):
        lines.append(paint(f"({len(shown)} of {total} ready; --limit N or --all)", "dim"))
    env(ctx).write("\n".join(lines))


def _stale_mark(holder: Record | None, now: int, paint: render.Painter) -> str:
    """`ready`'s mark on a stale task (its holder's claim): whose lease ran out, when."""
    if holder is None:
        return ""
    from aidp.backlog.queue import judge

    lease = judge(holder, now)
    return " " + paint(f"stale: @{inert(holder['assignee'])}, {lease.said()}; "
                       "a claim takes it over", "yellow")


def blocked(
    ctx: typer.Context,
    priority: list[str] = PRIORITY_OPTION,
    tag: list[str] = TAG_OPTION,
    session: str | None = SESSION_OPTION,
    limit: int | None = LIMIT_OPTION,
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Open tasks waiting on an open task, with what they wait on.

    Examples:
    $ aidp tasks blocked
    $ aidp tasks blocked -t config --json
    """
    found = queue_view.blocked_tasks(env(ctx).project, priorities=priority, tags=tag,
                                     session=session, limit=limit, summary=not as_json)
    if as_json:
        output.json_out(found.shown)
        return
    if not found.tasks:
        env(ctx).write("Nothing blocked")
        return
    paint, now = output.painter(), now_micros()
    # As ready's READY (2 of 17): of every blocked task, filters aside
    count = f"{len(found.tasks)}" if len(found.tasks) == found.total else \
        f"{len(found.tasks)} of {found.total}"
    lines = [paint(f"BLOCKED ({count})", "bold")]
    ids = found.short_ids or {}
    for task in found.shown:  # with what it shows beside its record: its type
        lines.append(f"  {_line(task, now, paint, ids, status=task.get('status') != 'pending')}")
        for other in found.waiting_on[task["id"]]:
            blocker = found.related.get(other) or {"id": other}
            how = "child" if found.links.parent.get(other) == task["id"] else "waits on"
            lines.append(paint(f"      {how}: ", "dim") + _label(blocker, ids)
                         + paint(f" ({inert(blocker.get('status', '?'))})", "dim"))
    env(ctx).write("\n".join(lines))


# --- dependencies ------------------------------------------------------------------------


def _linked(project: "Project", result: changing.Linked, *, as_json: bool, verb: str,
            unchanged: str, pager: bool) -> None:
    if as_json:
        from aidp.app.shown import shown_by_id

        output.json_out(shown_by_id(project, [result.task["id"]])[0])
        return
    paint = output.painter()
    lines = []
    ids = result.short_ids
    if result.changed:
        shown = ", ".join(inert(ids.get(t, t)) for t in result.changed)
        lines.append(f"{paint('✓', 'green')} {verb} {shown}: {_label(result.task, ids)}")
    if result.unchanged:
        shown = ", ".join(inert(ids.get(t, t)) for t in result.unchanged)
        lines.append(f"{unchanged} {shown}, nothing changed: {_label(result.task, ids)}")
    render.write_text("\n".join(lines), pager=pager)


ON_HELP = "A task it waits on; repeat, separate with commas, or list more ids after it."


def block(
    ctx: typer.Context,
    task_id: str = typer.Argument(..., metavar="ID", help=ID_HELP),
    more: list[str] = typer.Argument(None, metavar="[ON_ID...]", hidden=True),
    on: list[str] = typer.Option([], "--on", metavar="ID", help=ON_HELP),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Make a task wait on others (refused when it would close a cycle).

    Examples:
    $ aidp tasks block 3f2a --on 9c41
    $ aidp tasks block 3f2a --on 9c41 7e07
    """
    project = env(ctx).project
    blockers = _on(on, more)
    result = changing.block(project, task_id, blockers)
    _linked(project, result, as_json=as_json, verb="Now waits on", unchanged="Already waits on",
            pager=env(ctx).pager)


def unblock(
    ctx: typer.Context,
    task_id: str = typer.Argument(..., metavar="ID", help=ID_HELP),
    more: list[str] = typer.Argument(None, metavar="[ON_ID...]", hidden=True),
    on: list[str] = typer.Option([], "--on", metavar="ID", help=ON_HELP),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Remove dependencies: the task no longer waits on these.

    Examples:
    $ aidp tasks unblock 3f2a --on 9c41
    """
    project = env(ctx).project
    waited = _on(on, more)
    result = changing.unblock(project, task_id, waited)
    _linked(project, result, as_json=as_json, verb="No longer waits on",
            unchanged="Did not wait on", pager=env(ctx).pager)


def _on(on: list[str], more: list[str] | None) -> list[str]:
    if not on:
        raise InvalidInput("Missing --on ID: give the id of a task it waits on "
                           "(aidp tasks block ID --on OTHER_ID…)")
    return split_ids([*on, *(more or [])])


# --- edit and note -------------------------------------------------------------------------


def edit(
    ctx: typer.Context,
    task_id: str = typer.Argument(..., metavar="ID", help=ID_HELP),
    description: str | None = typer.Option(None, "--description", "-d",
                                           help="The new description (1–200 characters)."),
    priority: str | None = typer.Option(None, "--priority", "-p", help="high, medium or low."),
    add_tag: list[str] = typer.Option([], "--add-tag", help="Add a tag; repeatable."),
    remove_tag: list[str] = typer.Option([], "--remove-tag", help="Remove a tag; repeatable."),
    parent: str | None = typer.Option(None, "--parent", metavar="ID",
                                      help="Put it under this epic."),
    no_parent: bool = typer.Option(False, "--no-parent", help="Take it out of its epic."),
    body: str | None = typer.Option(None, "--body", metavar="TEXT",
                                    help=BODY_HELP + " '' removes it."),
    body_file: str | None = typer.Option(None, "--body-file", metavar="F",
                                         help=BODY_FILE_HELP),
    task_type: str | None = typer.Option(None, "--type", metavar="TYPE", help=TYPE_HELP),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Change a task's description, priority, tags, epic, type or body (history keeps the
    old values). With no option, opens $VISUAL or $EDITOR on the title, fields and body.

    Examples:
    $ aidp tasks edit 3f2a -p high --add-tag urgent --parent 9c41
    $ aidp tasks edit 3f2a --type bug --body "Repro: run it with an empty HOME"
    """
    e = env(ctx)
    project = e.project
    text = read_body(body, body_file, e.root)
    if (description is None and priority is None and not add_tag and not remove_tag
            and parent is None and not no_parent and text is None and task_type is None):
        from aidp.cli import editor

        found, said = editor.edit_in_editor(e, task_id)
        if found is None:
            e.write(said)
            return
        done = found
    else:
        done = changing.edit_task(project, task_id, description=description,
                                  priority=priority, add_tags=add_tag, remove_tags=remove_tag,
                                  parent=parent, detach=no_parent, body=text,
                                  task_type=task_type)
    change = done.changes[0]
    tell_lost(done.lost)
    if as_json:
        from aidp.app.shown import shown_by_id

        output.json_out(shown_by_id(project, [change.task["id"]], bodies=True)[0])
    else:
        label = _label(change.task, done.short_ids)
        e.write(f"{output.painter()('✓', 'green')} Edited: {label}" if change.changed
                else f"Nothing changed: {label}")


def note(
    ctx: typer.Context,
    task_id: str = typer.Argument(..., metavar="ID", help=ID_HELP),
    text: list[str] = typer.Argument(..., metavar="TEXT", help="The note (one line)."),
    name: str | None = typer.Option(
        None, "--as", metavar="NAME",
        help="Who writes it. Default: AIDP_ACTOR, else git user.email, else the login name."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Append a note to a task (shown by 'tasks show', in order).

    Examples:
    $ aidp tasks note 3f2a "Repro: run it with an empty HOME"
    """
    e = env(ctx)
    noted = changing.note_task(e.project, task_id, " ".join(text), author=claims.actor(e, name))
    tell_lost(noted.lost)
    if as_json:
        output.json_out(noted.shown())
    else:
        e.write(f"{output.painter()('✓', 'green')} Noted on [{inert(noted.short_id)}]")
