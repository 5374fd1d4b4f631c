"""`aidp tasks ready|blocked|block|unblock|edit|note`: the work queue (claim and
release: aidp.cli.claims).

Loaded only when the command line may name one of them (aidp.cli.startup); the core
is aidp.backlog.queue.
"""

# No `from __future__ import annotations`: Typer reads the commands' annotations at
# every run, and a string annotation costs an eval each (aidp.cli, the same).

import typer

from aidp.backlog import queue as core
from aidp.backlog.tasks import short_ids
from aidp.cli import claims, output
from aidp.cli.common import (
    BODY_FILE_HELP,
    BODY_HELP,
    ID_HELP,
    JSON_HELP,
    TYPE_HELP,
    Env,
    env,
    read_body,
    split_ids,
    tell_lost,
)
from aidp.core.errors import InvalidInput
from aidp.core.model import Record, now_micros, priority_key, ts_of, validate_priority
from aidp.core.terminal import inert
from aidp.core.when import age
from aidp.tasklist.log import Fold
from aidp.views import render


def _label(task: Record, ids: dict[str, str] | None = None) -> str:
    return render.task_label(task, ids)


def _line(task: Record, now: int, paint: render.Painter, ids: dict[str, str], *,
          status: bool = False) -> str:
    marker = render.priority_marker(task.get("priority"), paint)
    full = task.get("id", "?")
    tid = paint(f"[{inert(ids.get(full, full) if isinstance(full, str) else full)}]",
                "dim")
    text = f"{marker} {tid} {inert(task.get('description', ''))}"
    text += " " + paint(f"({age(ts_of(task, 'created_at'), now)})", "dim")
    tags = task.get("tags") or []
    if tags:
        text += " " + paint(" ".join(f"#{inert(t)}" for t in tags), "cyan")
    if status:
        text += " " + paint(inert(task.get("status", "?")), "yellow")
    return text


# --- ready and blocked ------------------------------------------------------------------


def _filtered(fold: Fold, entries: list[core.Entry], *, priorities: list[str], tags: list[str],
              session: str | None, limit: int | None) -> list[Record]:
    """Decode only what is shown: with no filter that needs the task, just `limit`."""
    wanted = {validate_priority(p) for p in priorities}
    if wanted:
        entries = [e for e in entries if priority_key(e.priority) in wanted]
    if limit is not None and limit < 0:
        raise InvalidInput(f"Invalid --limit {limit}: use a whole number ≥ 0")
    if not tags and session is None:
        return fold.tasks_of([e.id for e in entries[:limit]])
    tag_set = {t.strip() for t in tags}
    found: list[Record] = []
    for at in range(0, len(entries), 200):  # 200 read at a time, up to the limit
        for task in fold.tasks_of([e.id for e in entries[at:at + 200]]):
            if limit is not None and len(found) >= limit:
                return found
            if tag_set and not tag_set.intersection(task.get("tags") or ()):
                continue
            if session is not None and task.get("session") != session:
                continue
            found.append(task)
    return found


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
) -> None:
    """Tasks to work on now: pending, unclaimed, waiting on nothing open; best first.

    Examples:
    $ aidp tasks ready -n 5
    $ aidp tasks ready -p high -f ids
    """
    chosen = output.list_format(fmt, as_json)
    wanted = {validate_priority(p) for p in priority}
    if limit is not None and limit < 0:
        raise InvalidInput(f"Invalid --limit {limit}: use a whole number ≥ 0")
    fold = env(ctx).read()
    # Without a filter that needs the task itself, the query stops at `limit`.
    entries = core.ready(fold, priorities=wanted,
                         limit=limit if not tag and session is None else None)
    found = _filtered(fold, entries, priorities=[], tags=tag, session=session, limit=limit)
    if chosen != "table":
        qs = core.state(fold, about=[t["id"] for t in found], own=True)  # their links
        output.print_list([core.with_extras(qs, t) for t in found], chosen, now=now_micros(),
                    empty="No matching tasks")
        return
    total = core.ready_count(fold)
    if not found:
        render.write_text(f"Nothing ready ({core.why_nothing_ready(fold)})"
                          if not total else "No ready task matches")
        return
    paint, now = output.painter(), now_micros()
    shown = f"{len(found)}" if len(found) == total else f"{len(found)} of {total}"
    lines = [paint(f"READY ({shown})", "bold")]
    ids = short_ids(fold, [t["id"] for t in found])
    taken = [t["id"] for t in found if t.get("status") == "in_progress"]
    stale = _stale_marks(fold, taken, now, paint) if taken else {}
    lines += [f"  {n}. {_line(t, now, paint, ids)}{stale.get(t['id'], '')}"
              for n, t in enumerate(found, start=1)]
    render.write_text("\n".join(lines))


def _stale_marks(fold: Fold, ids: list[str], now: int, paint: render.Painter
                 ) -> dict[str, str]:
    """`ready`'s mark on a stale task: whose lease ran out, and when."""
    qs = core.state(fold, about=ids, own=True)
    marks = {}
    for tid in ids:
        holder = qs.holder(fold.tasks[tid])
        if holder is not None:
            lease = core.judge(holder, now)
            marks[tid] = " " + paint(f"stale: @{inert(holder['assignee'])}, {lease.said()}; "
                                     "a claim takes it over", "yellow")
    return marks


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
    fold = env(ctx).read()
    entries = core.blocked(fold)
    found = _filtered(fold, entries, priorities=priority, tags=tag, session=session,
                      limit=limit)
    waiting = {e.id: e.waiting_on for e in entries}
    # The links of the tasks shown and of those they wait on (which of them are children).
    shown = [tid for t in found for tid in (t["id"], *waiting[t["id"]])]
    qs = core.state(fold, about=shown, own=True)
    if as_json:
        output.json_out([
            {**core.with_extras(qs, t), "waiting_on": waiting[t["id"]]} for t in found
        ])
        return
    if not found:
        render.write_text("Nothing blocked")
        return
    paint, now = output.painter(), now_micros()
    # As ready's READY (2 of 17): of every blocked task, filters aside
    count = f"{len(found)}" if len(found) == len(entries) else f"{len(found)} of {len(entries)}"
    lines = [paint(f"BLOCKED ({count})", "bold")]
    ids = short_ids(fold, shown)
    for task in found:
        lines.append(f"  {_line(task, now, paint, ids, status=task.get('status') != 'pending')}")
        for other in waiting[task["id"]]:
            blocker = fold.tasks.get(other) or {"id": other}
            how = "child" if qs.parent.get(other) == task["id"] else "waits on"
            lines.append(paint(f"      {how}: ", "dim") + _label(blocker, ids)
                         + paint(f" ({inert(blocker.get('status', '?'))})", "dim"))
    render.write_text("\n".join(lines))


# --- dependencies ------------------------------------------------------------------------


def _linked(e: Env, before: Fold, result: core.Linked, *, as_json: bool, verb: str,
            unchanged: str) -> None:
    if as_json:
        fold = e.read()
        task = fold.tasks[result.task["id"]]
        output.json_out(core.with_extras(core.state(fold), task))
        return
    paint = output.painter()
    lines = []
    ids = short_ids(before, [result.task["id"], *result.changed, *result.unchanged])
    if result.changed:
        shown = ", ".join(inert(ids.get(t, t)) for t in result.changed)
        lines.append(f"{paint('✓', 'green')} {verb} {shown}: {_label(result.task, ids)}")
    if result.unchanged:
        shown = ", ".join(inert(ids.get(t, t)) for t in result.unchanged)
        lines.append(f"{unchanged} {shown}, nothing changed: {_label(result.task, ids)}")
    render.write_text("\n".join(lines))


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
    e = env(ctx)
    blockers = _on(on, more)
    before = e.read()
    result = core.block(e.log, task_id, blockers)
    _linked(e, before, result, as_json=as_json, verb="Now waits on",
            unchanged="Already waits on")


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
    e = env(ctx)
    waited = _on(on, more)
    before = e.read()
    result = core.unblock(e.log, task_id, waited)
    _linked(e, before, result, as_json=as_json, verb="No longer waits on",
            unchanged="Did not wait on")


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
    text = read_body(body, body_file)
    if (description is None and priority is None and not add_tag and not remove_tag
            and parent is None and not no_parent and text is None and task_type is None):
        from aidp.cli import editor

        found, said = editor.edit_in_editor(e, task_id)
        if found is None:
            render.write_text(said)
            return
        change = found
        before = e.read()
    else:
        before = e.read()
        change = core.edit(e.log, task_id, description=description, priority=priority,
                           add_tags=add_tag, remove_tags=remove_tag, parent=parent,
                           detach=no_parent, body=text, task_type=task_type)
    tell_lost(e, before, [change.task["id"]])
    if as_json:
        fold = e.read()
        output.json_out(core.with_extras(core.state(fold, about=change.task["id"], bodies=True),
                                         fold.tasks[change.task["id"]]))
    else:
        label = _label(change.task, short_ids(before, [change.task["id"]]))
        render.write_text(f"{output.painter()('✓', 'green')} Edited: {label}" if change.changed
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
    before = e.read()
    record = core.note(e.log, task_id, " ".join(text), author=claims.actor(e, name))
    tell_lost(e, before, [record["task"]])
    if as_json:
        output.json_out({"task": record["task"], **core.note_out(record)})
    else:
        tid = record["task"]
        shown = short_ids(before, [tid]).get(tid, tid)
        render.write_text(f"{output.painter()('✓', 'green')} Noted on [{inert(shown)}]")
