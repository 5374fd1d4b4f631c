"""`aidp tasks list`: the backlog, filtered, sorted and printed in any --format (loaded
only for it: aidp.cli.startup). What is read, and how, is the use case's
(aidp.app.listing); this module parses the options and prints what it found."""

# No `from __future__ import annotations` here: Typer reads list_'s annotations at every
# `tasks list`, and string annotations cost an eval each (~0.4 ms for its twenty).

import sys

import typer

from aidp.app.listing import Listing, answer, statuses_of
from aidp.backlog.details import validate_type
from aidp.backlog.tasks import Query, sort_key
from aidp.cli import output
from aidp.cli.common import ELSEWHERE, env
from aidp.core.errors import ExitCode, InvalidInput
from aidp.core.model import Record, now_micros, validate_priority
from aidp.core.terminal import inert
from aidp.tasklist.fold import no_gc
from aidp.views import render


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
    task_type: list[str] = typer.Option(
        [], "--type", metavar="TYPE", help="task, bug, feature, chore or epic; repeatable."
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
        False, "--exit-code",
        help="Exit 1 when any task matches, 2 when there is no tasklist (for CI checks).",
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
    with_body: bool = typer.Option(
        False, "--with-body", help="json, jsonl: each task with its body (left out by default)."
    ),
) -> None:
    """List tasks: open ones (pending, in_progress) unless told otherwise.

    Examples:
    $ aidp tasks list -s done --since 7d
    $ aidp tasks list --all --sort priority -n 20
    """
    fmt = output.list_format(fmt, as_json)
    _check(fmt, tree=tree, raw=raw, with_body=with_body, limit=limit, grep=grep,
           assignee=assignee, mine=mine)
    now = now_micros()
    words = ([status_arg] if status_arg else []) + status
    query = _query(words, include_all=include_all, priority=priority, tag=tag, session=session,
                   since=since, older_than=older_than, sort=sort, limit=limit, grep=grep,
                   assignee=assignee, task_type=task_type, now=now)
    e = env(ctx)
    missing = e.missing() if exit_code else None
    if missing is not None:  # a CI check in the wrong folder must not pass
        raise InvalidInput(f"No tasklist to check: {missing}; --exit-code fails rather "
                           f"than pass in the wrong folder ({ELSEWHERE})")
    if mine:
        from aidp.app.claiming import actor

        query.assignee = actor(e.project, None)
    named = _named_filters(query, since=since, older_than=older_than, mine=mine)
    shape = "tree" if tree else fmt
    # The tasks found are held to the end: cyclic collections would walk them again and
    # again (at 1M events, 47k pending tasks: ~40% of the command); reading the store
    # (its modules loaded on the way) and listing make no reference cycles.
    with no_gc(freeze=e.log.freeze):
        found = answer(e.read(), query, shape=shape,
                       rows=_rows(fmt, query, include_all, pager=e.pager),
                       bodies=with_body)
        empty = _nothing_found(found, query, words=words, named=named) if not found.tasks \
            else ""
        if _show(found, shape, now=now, empty=empty, raw=raw, pager=e.pager) and exit_code:
            raise typer.Exit(ExitCode.FAILURE)


def _named_filters(query: Query, *, since: str | None, older_than: str | None,
                   mine: bool) -> list[str]:
    """The filters other than the statuses, as options the way they were given, for
    an empty listing to name (`--priority high --tag ci`)."""
    named = [*(f"--priority {p}" for p in query.priorities),
             *(f"--tag {inert(t)}" for t in query.tags),
             *(f"--type {inert(t)}" for t in query.types)]
    for option, value in (("--session", query.session), ("--since", since),
                          ("--older-than", older_than), ("--grep", query.grep)):
        if value is not None:
            named.append(f"{option} {inert(value)!r}" if " " in value or not value
                         else f"{option} {inert(value)}")
    if mine:
        named.append("--mine")
    elif query.assignee is not None:
        named.append(f"--assignee {inert(query.assignee)}")
    return named


def _check(fmt: str, *, tree: bool, raw: bool, with_body: bool, limit: int | None,
           grep: str | None, assignee: str | None, mine: bool) -> None:
    """Options that cannot go together, or a value no listing takes: refused before
    anything is read."""
    if tree and fmt != "table":
        raise InvalidInput(f"Conflicting --tree and --format {fmt}: --tree is a table view")
    if raw and fmt != "csv":
        raise InvalidInput(f"Invalid --raw with --format {fmt}: it applies to csv only")
    if with_body and fmt not in ("json", "jsonl"):
        raise InvalidInput(f"Invalid --with-body with --format {fmt}: it applies to json "
                           "and jsonl only (tasks show prints one task's body)")
    if limit is not None and limit < 0:
        raise InvalidInput(f"Invalid --limit {limit}: use a whole number ≥ 0")
    if grep is not None and not grep.strip():
        raise InvalidInput("Invalid --grep '': give the text to look for in descriptions "
                           "and notes")
    if assignee is not None and not assignee.strip():
        raise InvalidInput("Invalid --assignee '': give the name a task was claimed by")
    if mine and assignee is not None:
        raise InvalidInput("Conflicting --mine and --assignee: give one of them")


def _query(words: list[str], *, include_all: bool, priority: list[str], tag: list[str],
           session: str | None, since: str | None, older_than: str | None, sort: str,
           limit: int | None, grep: str | None, assignee: str | None, task_type: list[str],
           now: int) -> Query:
    """The query the options describe (a bad --sort refused before anything is read)."""
    if since is not None or older_than is not None:
        from aidp.core.when import parse_age, parse_when
    query = Query(
        statuses=statuses_of(words, include_all=include_all),
        priorities=tuple(validate_priority(p) for p in priority),
        tags=tuple(t.strip() for t in tag),
        session=session,
        created_from=parse_when(since, now) if since is not None else None,
        created_before=now - parse_age(older_than) if older_than is not None else None,
        sort=sort.strip().lower(),
        limit=limit,
        grep=grep.strip() if grep is not None else None,
        assignee=assignee.strip() if assignee is not None else None,
        types=tuple(dict.fromkeys(validate_type(t) for t in task_type)),
    )
    sort_key(query.sort)
    return query


def _rows(fmt: str, query: Query, include_all: bool, *, pager: bool) -> int | None:
    """How many rows the table shows: a person at a terminal without a pager gets a
    screenful; scripts, --all and --limit get all (and a pager shows all:
    aidp.views.pager; `pager`: not --no-pager)."""
    if (fmt != "table" or query.limit is not None or include_all or not sys.stdout.isatty()
            or _pager_on(pager=pager)):
        return None
    import shutil

    return max(10, shutil.get_terminal_size().lines - 6)


def _show(found: Listing, shape: str, *, now: int, empty: str, raw: bool,
          pager: bool) -> bool:
    """Print the listing in its shape (`empty`: the line when nothing matched; `pager`:
    render.write_text's); whether any task matched."""
    if found.batches is not None:
        return output.write_batches(found.batches, shape) > 0
    if shape == "tree":
        render.write_text(_tree(found.tasks, found.parents or {}, now, empty=empty,
                                ids=found.short_ids), pager=pager)
        return bool(found.tasks)
    rows = found.rows
    output.print_list(found.tasks[:rows], shape, now=now, empty=empty, notes=found.notes,
                      ids=found.short_ids, matched=found.matched, raw=raw, pager=pager)
    if rows < len(found.tasks):
        # --limit shows them all; --all would add the closed ones too
        render.write_text(f"… and {len(found.tasks) - rows:,} more (-n {len(found.tasks)} "
                          "shows them all)", pager=pager)
    return bool(found.tasks)


def _pager_on(*, pager: bool) -> bool:
    """Long output on this terminal goes through a pager (aidp.views.pager)."""
    if not render.paging_possible(pager=pager):
        return False
    from aidp.views import pager as paging

    return paging.available()


def _nobody_holds(holders: list[str], name: str) -> str | None:
    """Why --assignee/--mine found nothing when nobody of that name holds a task: who
    does (None: that person holds tasks, just none of those asked for)."""
    if any(h.casefold() == name.casefold() for h in holders):
        return None
    known = f"tasks are claimed by {', '.join(map(inert, holders[:5]))}" + (
        ", …" if len(holders) > 5 else "") if holders else "no task is claimed"
    return f"nobody named {inert(name)!r} holds a task ({known})"


def _nothing_found(found: Listing, query: Query, *, words: list[str], named: list[str]
                   ) -> str:
    """An empty listing: which tasks were asked for (`No open tasks`, `No done tasks`)
    and, when a filter left none of them, the filter and how many there are without
    it: `No open tasks match --priority high (142 open tasks in all)`."""
    if query.statuses is None:
        label = ""
    elif words:
        label = " or ".join(dict.fromkeys(w.strip().lower() for w in words)) + " "
    else:
        label = "open "
    if not named:
        return f"No {label}tasks"
    head = f"No {label}tasks match {' '.join(named)}"
    nobody = None
    if found.holders is not None and query.assignee is not None:
        nobody = _nobody_holds(found.holders, query.assignee)
    if nobody is not None:
        return f"{head}: {nobody}"
    total = found.in_all
    return f"{head} ({render.counted(total, label + 'task')} in all)" if total else head


def _tree(found: list[Record], parents: dict[str, str], now: int, *, empty: str,
          ids: dict[str, str] | None = None) -> str:
    """Each task under its epic when the epic is listed too; the rest at the top."""
    if not found:
        return empty
    paint = output.painter()
    listed = {t["id"] for t in found}
    children: dict[str, list[Record]] = {}
    roots = []
    for task in found:
        parent = parents.get(task["id"])
        if parent is not None and parent in listed and parent != task["id"]:
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
            line += " " + paint(inert(status), "yellow")
        lines.append("  " + "   " * depth + ("└─ " if depth else "") + line)
        for child in children.get(task["id"], ()):
            walk(child, depth + 1)

    for task in roots:
        walk(task, 0)
    for task in found:  # only tasks caught in a parent cycle are left
        walk(task, 0)
    return "\n".join(lines)

