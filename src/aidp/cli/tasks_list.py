"""`aidp tasks list`: the backlog, filtered, sorted and printed in any --format (loaded
only for it: aidp.cli.startup)."""

# No `from __future__ import annotations` here: Typer reads list_'s annotations at every
# `tasks list`, and string annotations cost an eval each (~0.4 ms for its twenty).

import sys
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

import orjson
import typer

from aidp.backlog import tasks as core
from aidp.backlog.details import validate_type
from aidp.cli import output
from aidp.cli.common import ELSEWHERE, env
from aidp.core.errors import ExitCode, InvalidInput
from aidp.core.model import (
    OPEN_STATUSES,
    STATUSES,
    Record,
    json_elements,
    now_micros,
    validate_priority,
)
from aidp.core.terminal import inert
from aidp.tasklist.fold import Fold, no_gc
from aidp.views import render

if TYPE_CHECKING:
    from aidp.backlog.queue import QueueState

STATUS_WORDS = (*STATUSES, "open", "all")


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
    now = now_micros()
    if since is not None or older_than is not None:
        from aidp.core.when import parse_age, parse_when
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
        types=tuple(dict.fromkeys(validate_type(t) for t in task_type)),
    )
    core.sort_key(query.sort)  # reject a bad --sort before reading anything
    e = env(ctx)
    missing = e.missing() if exit_code else None
    if missing is not None:  # a CI check in the wrong folder must not pass
        raise InvalidInput(f"No tasklist to check: {missing}; --exit-code fails rather "
                           f"than pass in the wrong folder ({ELSEWHERE})")
    if mine:
        from aidp.backlog.queue import default_actor

        query.assignee = default_actor(e.root)
    # The tasks found are held to the end: cyclic collections would walk them again and
    # again (at 1M events, 47k pending tasks: ~40% of the command); reading the store
    # (its modules loaded on the way) and listing make no reference cycles.
    named = _named_filters(query, since=since, older_than=older_than, mine=mine)
    with no_gc():
        fold = e.read()
        _answer(fold, query, fmt, now=now, words=words, include_all=include_all,
                exit_code=exit_code, tree=tree, raw=raw, bodies=with_body, named=named)


def _named_filters(query: core.Query, *, since: str | None, older_than: str | None,
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


def _answer(fold: Fold, query: core.Query, fmt: str, *, now: int, words: list[str],
            include_all: bool, exit_code: bool, tree: bool, raw: bool,
            bodies: bool = False, named: list[str] | None = None) -> None:
    """The listing of `query`'s tasks in `fmt` (list_'s options, checked; `bodies`:
    --with-body; `named`: the filters as given, for an empty listing to name)."""
    limit = query.limit
    if (fmt in output.STREAMED_FORMATS and query.statuses is None and query.sort == "created"
            and query.by_status_only()):
        # Every task (--all), in list's order: the fold's question (the store's query
        # decodes a batch at a time, in bounded memory), written as it comes.
        batches: Iterable[list[Record]] = fold.newest_first()
        if fmt != "ids":
            from aidp.backlog import queue

            batches = _linked(queue.state(fold, bodies=bodies), batches)
        if output.write_batches(batches, fmt, limit=limit) and exit_code:
            raise typer.Exit(ExitCode.FAILURE)
        return
    encoded = fold.find_encoded(query) if fmt == "json" and not bodies else None
    if encoded is not None:  # the store's open tasks, as they print: not decoded
        if output.write_batches([_encoded(fold, encoded)], fmt) and exit_code:
            raise typer.Exit(ExitCode.FAILURE)
        return
    qs = None
    result = core.find_in(fold, query)
    found = result.tasks
    if fmt in ("json", "jsonl", "table") or tree:
        from aidp.backlog import queue

        qs = queue.state(fold, about=[t["id"] for t in found], own=True, bodies=bodies)
    notes = None
    empty = ""
    if not found:
        nobody = None
        if query.assignee is not None:
            from aidp.backlog import queue

            nobody = _nobody_holds(queue.state(fold), query.assignee)
        empty = _nothing_found(fold, query, words=words, named=named or [], nobody=nobody)
    if qs is not None and fmt == "table":  # its type and close reason in the line
        found = next(_linked(qs, [found]))
    if qs is not None and tree:
        short = core.short_ids(fold, [t["id"] for t in found])
        render.write_text(_tree(found, qs, now, empty=empty, ids=short))
        if exit_code and found:
            raise typer.Exit(ExitCode.FAILURE)
        return
    if qs is not None and fmt == "table":
        from aidp.backlog import queue

        notes = queue.list_notes(fold, qs, found)
    elif qs is not None and fmt in ("json", "jsonl"):
        found = next(_linked(qs, [found]))
    more = 0
    if (fmt == "table" and limit is None and not include_all and sys.stdout.isatty()
            and not _pager_on()):
        # A person at a terminal without a pager gets a screenful; scripts, --all and
        # --limit get all (and a pager shows all: aidp.views.pager).
        import shutil

        room = max(10, shutil.get_terminal_size().lines - 6)
        if len(found) > room:
            more = len(found) - room
    shown = found[: len(found) - more]
    ids: dict[str, str] | None = None
    if fmt == "table":  # people read the shortest id prefix that names the task
        ids = core.short_ids(fold, [t["id"] for t in shown])
    output.print_list(shown, fmt, now=now, empty=empty, notes=notes, ids=ids,
                      matched=result.matched, raw=raw)
    if more:
        # --limit shows them all; --all would add the closed ones too
        render.write_text(f"… and {more:,} more (-n {len(found)} shows them all)")
    if exit_code and found:
        raise typer.Exit(ExitCode.FAILURE)


def _linked(qs: "QueueState", batches: Iterable[list[Record]]) -> Iterator[list[Record]]:
    """Each task with its links, as json and jsonl show it (blocked_by, parent, assignee,
    notes: queue.with_extras)."""
    from aidp.backlog import queue

    linked = _with_links(qs)
    for batch in batches:
        if not linked:
            yield batch
        else:
            yield [queue.with_extras(qs, t) if t.get("id") in linked else t for t in batch]


def _encoded(fold: Fold, found: list[tuple[str, bytes]]) -> list[bytes]:
    """The tasks found, (id, element) as the store keeps them, as json prints them: those
    with links (`_linked`) decoded, extended and encoded again, the rest as they are."""
    from aidp.backlog import queue

    qs = queue.state(fold, about=[tid for tid, _element in found], own=True)
    linked = _with_links(qs)
    return [bytes(json_elements([queue.with_extras(qs, orjson.loads(element))]))
            if tid in linked else element for tid, element in found]


def _with_links(qs: "QueueState") -> set[str]:
    """The tasks queue.with_extras may add keys to."""
    return (qs.blockers.keys() | qs.parent.keys() | qs.claims.keys() | qs.notes.keys()
            | qs.details.keys())


def _pager_on() -> bool:
    """Long output on this terminal goes through a pager (aidp.views.pager)."""
    if not render.paging_possible():
        return False
    from aidp.views import pager

    return pager.available()


def _nobody_holds(qs: "QueueState", name: str) -> str | None:
    """Why --assignee/--mine found nothing when nobody of that name holds a task: who
    does (None: that person holds tasks, just none of those asked for)."""
    holders = sorted({c["assignee"] for claims in qs.claims.values() for c in claims[:1]})
    if any(h.casefold() == name.casefold() for h in holders):
        return None
    known = f"tasks are claimed by {', '.join(map(inert, holders[:5]))}" + (
        ", …" if len(holders) > 5 else "") if holders else "no task is claimed"
    return f"nobody named {inert(name)!r} holds a task ({known})"


def _nothing_found(fold: Fold, query: core.Query, *, words: list[str], named: list[str],
                   nobody: str | None) -> str:
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
    if nobody is not None:
        return f"{head}: {nobody}"
    counts = fold.status_counts()
    total = sum(counts.values()) if query.statuses is None else sum(
        counts.get(s, 0) for s in query.statuses)
    return f"{head} ({render.counted(total, label + 'task')} in all)" if total else head


def _tree(found: list[Record], qs: "QueueState", now: int, *, empty: str,
          ids: dict[str, str] | None = None) -> str:
    """Each task under its epic when the epic is listed too; the rest at the top."""
    if not found:
        return empty
    paint = output.painter()
    listed = {t["id"] for t in found}
    children: dict[str, list[Record]] = {}
    roots = []
    for task in found:
        parent = qs.parent.get(task["id"])
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

