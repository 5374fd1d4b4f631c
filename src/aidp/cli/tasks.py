"""`aidp tasks …`: the persistent backlog."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import typer

from aidp import render
from aidp import tasks as core
from aidp.cli.common import JSON_HELP, env
from aidp.errors import ExitCode, InvalidInput
from aidp.model import OPEN_STATUSES, STATUSES, Record, now_micros, validate_priority

if TYPE_CHECKING:
    from aidp.queue import Change

app = typer.Typer(
    help="The persistent backlog: tasks filed by people or agents.\n\n"
    "Examples:\n$ aidp tasks list\n$ aidp tasks done 3f2a",
    no_args_is_help=True,
)

STATUS_WORDS = (*STATUSES, "open", "all")


def _paint() -> render.Painter:
    return render.Painter(render.color_enabled())


def _emit_tasks(changes: list[Change], *, as_json: bool, verb: str,
                ids: dict[str, str] | None = None) -> None:
    """`ids`: full id → the short id to show (tasks.short_ids)."""
    if as_json:
        records = [c.task for c in changes]
        render.write_bytes(render.json_bytes(records[0] if len(records) == 1 else records))
        return
    paint = _paint()
    lines = []
    for change in changes:
        task = change.task
        label = render.task_label(task, ids)
        if change.changed:
            lines.append(f"{paint('✓', 'green')} {verb}: {label}")
        else:
            lines.append(f"Already {render.inert(task.get('status'))}, nothing changed: {label}")
    render.write_text("\n".join(lines))


@app.command()
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
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print only the new id."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """File a task in the backlog (session = the current session).

    Examples:
    $ aidp tasks add "Handle an empty config file" -p high -t config
    $ aidp tasks add "Write the migration" --blocked-by 3f2a -q
    """
    e = env(ctx)
    links = {}
    if blocked_by or parent is not None:
        from aidp import queue
        from aidp.cli.queue import split_ids

        waits = split_ids(blocked_by)
        task = queue.add(e.log, " ".join(description), priority=priority, tags=tag,
                         session=e.session_name(), discovered_during=discovered_during,
                         blocked_by=waits, parent=parent)
        links = queue.extras(queue.state(e.read()), task)
    else:
        task = core.add(
            e.log,
            " ".join(description),
            priority=priority,
            tags=tag,
            session=e.session_name(),
            discovered_during=discovered_during,
        )
    if as_json:
        render.write_bytes(render.json_bytes({**task, **links}))
    elif quiet:
        render.write_text(task["id"])
    else:
        paint = _paint()
        marker = render.priority_marker(task["priority"], paint)
        # The hex part, not the shortest prefix: that needs the whole history read,
        # which `add` never does (it only appends; see bench/RESULTS.md).
        render.write_text(
            f"{paint('✓', 'green')} Added {marker} [{render.hex_part(task['id'])}] "
            f"{render.inert(task['description'])}"
        )


def _statuses(words: list[str], *, include_all: bool) -> tuple[str, ...] | None:
    """The statuses asked for; None for all of them, a newer version's included."""
    if include_all:
        return None
    chosen: list[str] = []
    for word in words:
        normal = word.strip().lower().replace("-", "_")
        if normal == "all":
            return None
        if normal == "open":
            chosen.extend(OPEN_STATUSES)
        elif normal in STATUSES:
            chosen.append(normal)
        else:
            raise InvalidInput(f"Invalid status {word!r}: use one of {', '.join(STATUS_WORDS)}")
    return tuple(dict.fromkeys(chosen)) or OPEN_STATUSES


@app.command("list")
def list_(
    ctx: typer.Context,
    status_arg: str | None = typer.Argument(
        None, metavar="[STATUS]", help="pending, in_progress, done, abandoned, open or all."
    ),
    status: list[str] = typer.Option([], "--status", "-s", help="A status; repeat for several."),
    include_all: bool = typer.Option(False, "--all", "-a", help="Every status."),
    priority: list[str] = typer.Option(
        [], "--priority", "-p", help="high, medium or low; repeatable."
    ),
    tag: list[str] = typer.Option(
        [], "--tag", "-t", help="Has this tag; repeat for any of several."
    ),
    session: str | None = typer.Option(None, "--session", help="Filed in this session."),
    since: str | None = typer.Option(
        None, "--since", metavar="WHEN", help="Created at or after WHEN (2026-11-01, 7d, today)."
    ),
    older_than: str | None = typer.Option(
        None, "--older-than", metavar="AGE", help="Created before now − AGE (30m, 12h, 7d, 2w)."
    ),
    grep: str | None = typer.Option(
        None, "--grep", metavar="TEXT",
        help="TEXT in the description or a note (case-insensitive).",
    ),
    assignee: str | None = typer.Option(
        None, "--assignee", metavar="NAME", help="Claimed by NAME (case-insensitive)."
    ),
    mine: bool = typer.Option(
        False, "--mine", help="Claimed by you: the name `tasks claim` uses (AIDP_ACTOR, "
        "else git user.email, else the login name).",
    ),
    limit: int | None = typer.Option(None, "--limit", "-n", help="At most N tasks."),
    sort: str = typer.Option(
        "created", "--sort", help="created (newest first), updated or priority."
    ),
    exit_code: bool = typer.Option(
        False, "--exit-code", help="Exit 1 when any task matches (for CI checks)."
    ),
    fmt: str | None = typer.Option(
        None, "--format", "-f", help="table, json, jsonl, ids, markdown or csv."
    ),
    as_json: bool = typer.Option(False, "--json", help="Same as --format json."),
    tree: bool = typer.Option(False, "--tree", help="Show epics with their children below."),
    raw: bool = typer.Option(
        False, "--raw", help="csv: write cells exactly as stored; by default a cell a "
        "spreadsheet would run as a formula (=, +, -, @) starts with '.",
    ),
) -> None:
    """List tasks: open ones (pending, in_progress) unless told otherwise.

    Examples:
    $ aidp tasks list -s done --since 7d
    $ aidp tasks list --all --sort priority -n 20
    """
    from aidp.when import parse_age, parse_when

    if as_json and fmt is not None and fmt.lower() != "json":
        raise InvalidInput(f"Conflicting --json and --format {fmt!r}: give one of them")
    fmt = "json" if as_json else (fmt or "table").lower()
    if fmt not in render.FORMATS:
        raise InvalidInput(f"Invalid --format {fmt!r}: use one of {', '.join(render.FORMATS)}")
    if tree and fmt != "table":
        raise InvalidInput(f"Conflicting --tree and --format {fmt}: --tree is a table view")
    if raw and fmt != "csv":
        raise InvalidInput(f"Invalid --raw with --format {fmt}: it applies to csv only")
    if limit is not None and limit < 0:
        raise InvalidInput(f"Invalid --limit {limit}: use a whole number ≥ 0")
    if grep is not None and not grep.strip():
        raise InvalidInput("Invalid --grep '': give the text to look for in descriptions "
                           "and notes")
    if assignee is not None and not assignee.strip():
        raise InvalidInput("Invalid --assignee '': give the name a task was claimed by")
    if mine and assignee is not None:
        raise InvalidInput("Conflicting --mine and --assignee: give one of them")
    now = now_micros()
    words = ([status_arg] if status_arg else []) + status
    query = core.Query(
        statuses=_statuses(words, include_all=include_all),
        priorities=tuple(validate_priority(p) for p in priority),
        tags=tuple(t.strip() for t in tag),
        session=session,
        created_from=parse_when(since, now) if since is not None else None,
        created_before=now - parse_age(older_than) if older_than is not None else None,
        sort=sort.strip().lower(),
        limit=limit,
        grep=grep.strip() if grep is not None else None,
        assignee=assignee.strip() if assignee is not None else None,
    )
    core.sort_key(query.sort)  # reject a bad --sort before reading anything
    e = env(ctx)
    if mine:
        from aidp.queue import default_actor

        query.assignee = default_actor(e.root)
    fold = e.read()
    if (fmt in ("json", "jsonl", "ids") and query.statuses is None and query.sort == "created"
            and query.by_status_only() and hasattr(fold.tasks, "newest_first")):
        # Every task (--all): written a batch at a time, in bounded memory.
        if _stream_all(fold, fmt, limit) and exit_code:
            raise typer.Exit(ExitCode.FAILURE)
        return
    qs = None
    if query.grep is not None or query.assignee is not None or fmt in ("json", "jsonl",
                                                                         "table") or tree:
        from aidp import queue

        qs = queue.state(fold)
    result = core.find_in(fold, query, qs)
    found = result.tasks
    notes = None
    plain = not words and not include_all and query.grep is None and query.assignee is None
    empty = "No open tasks" if plain else "No matching tasks"
    if not found and query.assignee is not None and qs is not None:
        empty = _nobody_holds(qs, query.assignee, empty)
    if qs is not None and (fmt in ("json", "jsonl", "table") or tree):
        from aidp import queue

        if fmt == "table" and not tree:
            notes = queue.list_notes(fold, qs, found)
        if tree:
            ids = core.short_ids(fold, [t["id"] for t in found])
            render.write_text(_tree(found, qs, now, empty=empty, ids=ids))
            if exit_code and found:
                raise typer.Exit(ExitCode.FAILURE)
            return
        if fmt != "table":
            linked = qs.blockers.keys() | qs.parent.keys() | qs.claims.keys() | qs.notes.keys()
            found = [queue.with_extras(qs, t) if t["id"] in linked else t for t in found]
    more = 0
    if (fmt == "table" and limit is None and not include_all and sys.stdout.isatty()
            and not _pager_on()):
        # A person at a terminal without a pager gets a screenful; scripts, --all and
        # --limit get all (and a pager shows all: aidp.pager).
        import shutil

        room = max(10, shutil.get_terminal_size().lines - 6)
        if len(found) > room:
            more = len(found) - room
    shown = found[: len(found) - more]
    ids = None
    if fmt == "table":  # people read the shortest id prefix that names the task
        ids = core.short_ids(fold, [t["id"] for t in shown])
    _print_list(shown, fmt, now=now, empty=empty, notes=notes, ids=ids,
                matched=result.matched, raw=raw)
    if more:
        render.write_text(f"… and {more} more (--limit N or --all to see them)")
    if exit_code and found:
        raise typer.Exit(ExitCode.FAILURE)


def _pager_on() -> bool:
    """Long output on this terminal goes through a pager (aidp.pager)."""
    if not render.paging_possible():
        return False
    from aidp import pager

    return pager.available()


def _stream_all(fold: Any, fmt: str, limit: int | None) -> int:
    """`list --all` as json, jsonl or ids from a snapshot's fold, a batch of tasks at a
    time (store StoreTasks.newest_first): the same bytes as _print_list; how many."""
    import orjson

    from aidp import queue

    qs = queue.state(fold)
    linked = qs.blockers.keys() | qs.parent.keys() | qs.claims.keys() | qs.notes.keys()
    out = sys.stdout.buffer
    sys.stdout.flush()
    written = 0
    for found in fold.tasks.newest_first():
        batch = found if limit is None else found[:limit - written]
        if not batch:
            break
        if fmt == "ids":
            out.write("".join(t["id"] + "\n" for t in batch).encode())
        else:
            shown = [queue.with_extras(qs, t) if t.get("id") in linked else t for t in batch]
            if fmt == "jsonl":
                out.write(render.jsonl_bytes(shown))
            else:  # the batch as an indented array, without its brackets: its elements
                items = orjson.dumps(shown, option=orjson.OPT_INDENT_2)[2:-2]
                out.write((b",\n" if written else b"[\n") + items)
        written += len(batch)
    if fmt == "json":
        out.write(b"\n]\n" if written else b"[]\n")
    out.flush()
    return written


def _nobody_holds(qs: Any, name: str, empty: str) -> str:
    """The empty listing's line when --assignee/--mine found nothing: who does hold tasks."""
    holders = sorted({c["assignee"] for claims in qs.claims.values() for c in claims[:1]})
    if any(h.casefold() == name.casefold() for h in holders):
        return empty
    known = f"tasks are claimed by {', '.join(map(render.inert, holders[:5]))}" + (
        ", …" if len(holders) > 5 else "") if holders else "no task is claimed"
    return f"{empty}: nobody named {render.inert(name)!r} holds a task ({known})"


def _print_list(found: list[Record], fmt: str, *, now: int, empty: str,
                notes: dict[str, str] | None = None, ids: dict[str, str] | None = None,
                matched: dict[str, int] | None = None,
                raw: bool = False) -> None:
    if fmt == "json":
        render.write_bytes(render.json_bytes(found))
    elif fmt == "jsonl":
        render.write_bytes(render.jsonl_bytes(found))
    elif fmt == "ids":
        render.write_bytes("".join(t["id"] + "\n" for t in found).encode())
    elif fmt == "markdown":
        render.write_text(render.task_markdown(found))
    elif fmt == "csv":
        from aidp.interchange import csv_format  # the one CSV writer (export's)

        render.write_bytes(csv_format.dump(found, raw=raw))
    else:
        render.write_text(render.task_table(found, now, paint=_paint(), empty=empty,
                                            notes=notes, ids=ids, matched=matched))


def _tree(found: list[Record], qs, now: int, *, empty: str,
          ids: dict[str, str] | None = None) -> str:
    """Each task under its epic when the epic is listed too; the rest at the top."""
    if not found:
        return empty
    paint = _paint()
    listed = {t["id"] for t in found}
    children: dict[str, list[Record]] = {}
    roots = []
    for task in found:
        parent = qs.parent.get(task["id"])
        if parent in listed and parent != task["id"]:
            children.setdefault(parent, []).append(task)
        else:
            roots.append(task)
    lines: list[str] = []
    shown: set[str] = set()

    def walk(task: Record, depth: int) -> None:
        if task["id"] in shown:  # a parent cycle merged in from two clones
            return
        shown.add(task["id"])
        line = render.task_line(task, now, paint, ids).lstrip()
        status = task.get("status")
        if status != "pending":
            line += " " + paint(render.inert(status), "yellow")
        lines.append("  " + "   " * depth + ("└─ " if depth else "") + line)
        for child in children.get(task["id"], ()):
            walk(child, depth + 1)

    for task in roots:
        walk(task, 0)
    for task in found:  # only tasks caught in a parent cycle are left
        walk(task, 0)
    return "\n".join(lines)


@app.command()
def show(
    ctx: typer.Context,
    task_id: str = typer.Argument(..., metavar="ID", help="Full id or ≥4 leading hex characters."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Every field of one task, with its blockers, epic, children, assignee and notes.

    Examples:
    $ aidp tasks show 3f2a
    $ aidp tasks show 3f2a --json
    """
    from aidp import queue

    fold = env(ctx).read()
    tasks = fold.tasks
    task = tasks[core.resolve_id(fold, task_id)]
    qs = queue.state(fold, about=task["id"])
    if as_json:
        shown = dict(queue.with_extras(qs, task))  # never the fold's own (memoised) record
        for key, found in (("blocks", qs.dependents), ("children", qs.children)):
            if found.get(task["id"]):
                shown[key] = list(found[task["id"]])
        render.write_bytes(render.json_bytes(shown))
    else:
        paint, now = _paint(), now_micros()
        tid = task["id"]
        parent = qs.parent.get(tid)
        sections = [("Blocked by", qs.blockers.get(tid, [])),
                    ("Blocks", qs.dependents.get(tid, [])),
                    ("Parent", [parent] if parent else []),
                    ("Children", qs.children.get(tid, []))]
        ids = core.short_ids(fold, [tid, *(other for _, found in sections for other in found)])
        text = render.task_detail(task, now, paint=paint, ids=ids)
        render.write_text(text + _queue_detail(fold, qs, task, now, paint, sections, ids))


def _queue_detail(fold, qs, task: Record, now: int, paint: render.Painter,
                  sections: list[tuple[str, list[str]]], short: dict[str, str]) -> str:
    from aidp.when import age

    tid = task["id"]

    def ref(other: str) -> str:
        found = fold.tasks.get(other)
        if found is None:
            return f"[{render.inert(other)}] (unknown task)"
        return (f"{render.task_label(found, short)} "
                + paint(f"({render.inert(found.get('status', '?'))})", "dim"))

    lines = []
    for title, ids in sections:
        if ids:
            lines.append(paint(title, "bold"))
            lines.extend(f"  {ref(other)}" for other in ids)
    holder = qs.holder(task)
    if holder is not None:
        since = age(queue_ts(holder), now)
        lines.append(f"{paint('Assignee', 'bold')} {render.inert(holder['assignee'])} "
                     + paint(f"(claimed {since})", "dim"))
        for other in qs.claims.get(tid, [])[1:]:
            lines.append(paint(f"  also claimed later by {render.inert(other['assignee'])} "
                               "(on another clone); the first claim holds it", "dim"))
    notes = qs.notes.get(tid, [])
    if notes:
        lines.append(paint(f"Notes ({len(notes)})", "bold"))
        for item in notes:
            who = f" {render.inert(item['author'])}" if isinstance(item.get("author"), str) else ""
            when = render.inert(item.get("created_at", "?"))
            lines.append(f"  {paint(when, 'dim')}{who}: {render.inert(item['text'])}")
    return "\n" + "\n".join(lines) if lines else ""


def queue_ts(record: Record) -> int:
    from aidp.model import ts_of

    return ts_of(record, "claimed_at")


def _transition(ctx: typer.Context, ids: list[str], status: str, verb: str, *, as_json: bool,
                reason: str | None = None) -> None:
    e = env(ctx)
    # Read first: the change below reuses this fold (the file is unchanged until it
    # writes), and the ids it names are in it, for their short forms.
    before = e.read()
    changes = core.set_status(e.log, ids, status, reason=reason)
    if as_json:
        from aidp import queue

        qs = queue.state(e.read())
        changes = [queue.Change(queue.with_extras(qs, c.task), c.changed) for c in changes]
        _emit_tasks(changes, as_json=True, verb=verb)
        return
    short = core.short_ids(before, [c.task["id"] for c in changes])
    _emit_tasks(changes, as_json=False, verb=verb, ids=short)


IDS_HELP = "Task ids: full, or ≥4 leading hex characters."


@app.command()
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


@app.command()
def done(
    ctx: typer.Context,
    ids: list[str] = typer.Argument(..., metavar="ID...", help=IDS_HELP),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Mark tasks done.

    Examples:
    $ aidp tasks done 3f2a
    $ aidp tasks done 3f2a 9c41 --json
    """
    _transition(ctx, ids, "done", "Done", as_json=as_json)


@app.command()
def abandon(
    ctx: typer.Context,
    words: list[str] = typer.Argument(..., metavar="ID... [REASON]", help=IDS_HELP + " "
                                      "Without --reason, the words after the ids are the "
                                      "reason."),
    reason: str | None = typer.Option(None, "--reason", "-r", help="Why they are dropped."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Mark tasks abandoned, with the reason.

    Examples:
    $ aidp tasks abandon 3f2a 9c41 --reason "Duplicates of 77e0"
    $ aidp tasks abandon 3f2a "Duplicate of 9c41"
    """
    ids = words
    if reason is None:  # `abandon ID REASON…`: the reason starts at the first non-id
        ids, reason = core.ids_then_reason(env(ctx).read(), words)
    _transition(ctx, ids, "abandoned", "Abandoned", as_json=as_json, reason=reason)


@app.command()
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


@app.command()
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
    from aidp import insights

    now = now_micros()
    filters = insights.Filters(since=_since(since, now), session=session,
                               tags=[t.strip() for t in tag])
    found = insights.from_fold(env(ctx).read(), now=now, filters=filters)
    if as_json:
        render.write_bytes(render.json_bytes(found))
        return
    from aidp import charts

    color = render.color_enabled()
    render.write_text(charts.draw(found, color=color, width=_terminal_width()))


def _since(text: str | None, now: int) -> int | None:
    if text is None:
        return None
    from aidp.when import parse_when

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


@app.command()
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
    report = e.log.repair(dry_run=dry_run)
    if as_json:
        render.write_bytes(render.json_bytes({
            "dry_run": dry_run,
            "lines": report.lines_before,
            "kept": report.lines_after,
            "damaged": len(report.damaged_lines),
            "damaged_lines": report.damaged_lines,
            "reasons": [{"line": n, "why": why} for n, why in report.reasons.items()],
            "blank": report.blank,
            "rewritten": report.rewritten,
            "backup": str(report.backup) if report.backup else None,
        }))
        return
    damaged = len(report.damaged_lines)
    if not damaged and not report.blank:
        render.write_text(f"Nothing to repair: {report.lines_before} lines, all valid")
        return
    where = ", ".join(map(str, report.damaged_lines[:20]))
    if damaged > 20:
        where += ", …"
    found = f"{damaged} damaged line(s)" + (f" (line {where})" if damaged else "")
    found += f" and {report.blank} blank line(s)" if report.blank else ""
    why = "".join(f"\n  line {n}: {render.inert(text)}" for n, text in report.reasons.items())
    if dry_run:
        render.write_text(f"Would remove {found}; {report.lines_after} lines would stay{why}")
    else:
        backup = render.inert(str(report.backup))
        render.write_text(f"Removed {found}; {report.lines_after} lines kept. "
                          f"Backup: {backup}{why}")


@app.command()
def compact(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Keep only the current record of each task (history stays in git and a backup).

    Examples:
    $ aidp tasks compact
    """
    e = env(ctx)
    report = e.log.compact()
    if as_json:
        render.write_bytes(render.json_bytes({
            "lines": report.lines_before,
            "kept": report.lines_after,
            "damaged": report.damaged,
            "unknown": report.unknown,
            "rewritten": report.rewritten,
            "backup": str(report.backup) if report.backup else None,
        }))
        return
    unknown = (f" ({report.unknown} of kinds this version does not know, kept as they are)"
               if report.unknown else "")
    if not report.rewritten:
        render.write_text(f"Already compact: {report.lines_after} records{unknown}")
        return
    dropped = f", {report.damaged} damaged dropped" if report.damaged else ""
    render.write_text(
        f"Compacted {report.lines_before} lines to {report.lines_after}{unknown}{dropped}. "
        f"Backup: {render.inert(str(report.backup))}"
    )


def with_queue_commands(name: str | None) -> None:
    """The work queue's commands (ready, claim, block, …) live in cli/queue.py and
    register themselves on this app when it is imported: import it unless the command
    line names one of this module's own commands, so `tasks list` or `tasks done` never
    loads the queue's CLI (start-up is the product; tests/test_startup.py)."""
    own = {command.name or typer.main.get_command_name(command.callback.__name__)
           for command in app.registered_commands if command.callback is not None}
    if name is None or name not in own:
        from aidp.cli import queue  # noqa: F401


def _register_git_commands() -> None:
    from aidp.cli import (
        exchange,  # `tasks export`, `tasks import`
        gitcmds,  # `tasks changes`, `tasks textconv` (teams)
        history,  # `tasks history`, `tasks undo`
    )

    gitcmds.register(app)
    history.register(app)
    exchange.register(app)


_register_git_commands()
