"""Output: human text for terminals and pipes, and json/jsonl/ids/markdown/csv.

Everything shown comes from data that anyone (or any agent) may have written, so text
is always made inert first: control characters are shown escaped, never sent to the
terminal, and nothing here interprets markup.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TextIO

import orjson

from aidp.core.model import OTHER_PRIORITY, STATUSES, Record, ts_of

# What may reach a terminal is decided in aidp.core.terminal; the views take both from here.
from aidp.core.terminal import inert

if TYPE_CHECKING:
    from aidp.todos import Summary, TodoList

FORMATS = ("table", "json", "jsonl", "ids", "markdown", "csv")
STATUS_TITLES = {
    "pending": "PENDING",
    "in_progress": "IN PROGRESS",
    "done": "DONE",
    "abandoned": "ABANDONED",
}
# Priority markers differ in shape, not only in colour (colour-blind readers, NO_COLOR,
# a pipe): up for high, level for medium, down for low. Where stdout cannot encode them
# (PYTHONIOENCODING=ascii, LANG=C without UTF-8) the ASCII ones, same idea.
PRIORITY_MARKERS = {"high": "▲", "medium": "●", "low": "▼"}
OTHER_MARKER = "◇"  # a priority this version does not know (another writer's)
ASCII_PRIORITY_MARKERS = {"high": "^", "medium": "-", "low": "v"}
ASCII_OTHER_MARKER = "?"
PRIORITY_COLORS = {"high": "red", "medium": "yellow", "low": "green"}

_ANSI = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "cyan": "36"}


# Human output shows at most this much of one text field: a foreign tool may have
# written a description of megabytes (ours are at most 200 characters); --json and the
# other formats always carry the whole value.
LIST_TEXT_LIMIT = 200
DETAIL_TEXT_LIMIT = 2000


def clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters; --json shows all)"


def color_enabled(stream: TextIO | None = None) -> bool:
    stream = stream or sys.stdout
    if "NO_COLOR" in os.environ:
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Painter:
    """ANSI styling that does nothing unless colour is on."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, *styles: str) -> str:
        if not self.enabled or not styles:
            return text
        codes = ";".join(_ANSI[s] for s in styles)
        return f"\x1b[{codes}m{text}\x1b[0m"


def ascii_only(stream: TextIO | None = None) -> bool:
    """Whether `stream` (stdout) cannot encode the markers: an ASCII or Latin-1 locale."""
    encoding = getattr(stream or sys.stdout, "encoding", None) or "utf-8"
    return _cannot_encode_markers(encoding)


@lru_cache(maxsize=8)
def _cannot_encode_markers(encoding: str) -> bool:
    try:
        "".join([*PRIORITY_MARKERS.values(), OTHER_MARKER]).encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return True
    return False


def priority_marker(priority: object, paint: Painter | None = None) -> str:
    """The marker for a priority (an unknown one gets its own), in its colour when
    `paint` paints."""
    plain = ascii_only()
    markers = ASCII_PRIORITY_MARKERS if plain else PRIORITY_MARKERS
    other = ASCII_OTHER_MARKER if plain else OTHER_MARKER
    from aidp.core.model import priority_key

    key = priority_key(priority)  # missing or null: medium; not one of the three: other
    marker = markers.get(key, other)
    if paint is None or key not in PRIORITY_COLORS:
        return marker
    return paint(marker, PRIORITY_COLORS[key])


# --- writing ------------------------------------------------------------------------


def write_text(text: str, *, pager: bool) -> None:
    """Human output. On a terminal, text longer than the screen goes through the pager
    (aidp.views.pager) when `pager` (the CLI's: not with `--no-pager`); a pipe, a file
    and JSON never do."""
    text = text if text.endswith("\n") or not text else text + "\n"
    if text.count("\n") > 8 and paging_possible(pager=pager):
        from aidp.views import pager as paging

        if paging.page(text):
            return
    sys.stdout.write(text)


def paging_possible(*, pager: bool) -> bool:
    """Whether long human output may go through a pager: `pager` (not `--no-pager`) and
    stdout is a terminal (the pager itself may still be none: aidp.views.pager)."""
    if not pager:
        return False
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def write_bytes(data: bytes) -> None:
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def write_pieces(pieces: Sequence[bytes | memoryview], batch: int = 512) -> None:
    """Write many pieces (big output made of slices): joined a batch at a time, so
    neither a write per piece nor one copy of the whole."""
    sys.stdout.flush()
    out = sys.stdout.buffer
    for at in range(0, len(pieces), batch):
        out.write(b"".join(pieces[at:at + batch]))
    out.flush()


def json_bytes(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2) + b"\n"


def jsonl_bytes(records: Iterable[Record]) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in records)


# --- tasks --------------------------------------------------------------------------


def hex_part(tid: object) -> str:
    """An id as people type it without reading the history: its hex part (a foreign
    id, whole), made inert."""
    text = str(tid)
    part = text.rpartition("_")[2]
    return inert(part if text.startswith("task_") and part else text)


def task_label(task: Record, ids: Mapping[str, str] | None = None) -> str:
    """`[id] description` for messages; `ids` (full → short, tasks.short_ids)."""
    full = task.get("id", "?")
    shown = ids.get(full, full) if ids and isinstance(full, str) else full
    return f"[{inert(shown)}] {inert(clip(str(task.get('description', '')), LIST_TEXT_LIMIT))}"


def task_line(task: Record, now: int, paint: Painter,
              ids: Mapping[str, str] | None = None) -> str:
    """`ids` (full id → what to show, e.g. tasks.short_ids) shortens the id shown."""
    return _line_maker(now, paint, ids)(task)


def _line_maker(now: int, paint: Painter, ids: Mapping[str, str] | None
                ) -> Callable[[Record], str]:
    """task_line for many tasks: what every line shares worked out once (a table of
    40k tasks at 100k spent a third of its time on it)."""
    from aidp.core.model import priority_key
    from aidp.core.when import age  # tables only: json and the rest never show an age

    markers = {key: priority_marker(key, paint) for key in (*PRIORITY_COLORS, OTHER_PRIORITY)}

    def line_of(task: Record) -> str:
        marker = markers[priority_key(task.get("priority"))]
        full = task.get("id", "?")
        shown_id = ids.get(full, full) if ids and isinstance(full, str) else full
        tid = paint(f"[{inert(shown_id)}]", "dim")
        description = inert(clip(str(task.get("description", "")), LIST_TEXT_LIMIT))
        if task.get("status") == "done":
            description = paint(description, "dim")
        if task.get("task_type"):  # (only when not the default, `task`: details.shown)
            description = paint(f"{inert(task['task_type'])}:", "cyan") + " " + description
        when = paint(f"({age(ts_of(task, 'created_at'), now)})", "dim")
        line = f"  {marker} {tid} {description} {when}"
        tags = task.get("tags") or []
        if tags:
            line += " " + paint(" ".join(f"#{inert(t)}" for t in tags), "cyan")
        reason = _REASONS.get(str(task.get("status")))
        if reason is not None and task.get(reason):
            line += paint(f" — {inert(clip(str(task[reason]), LIST_TEXT_LIMIT))}", "dim")
        return line

    return line_of


_REASONS = {"abandoned": "abandoned_reason", "done": "close_reason"}  # shown after a line


def task_table(tasks: Sequence[Record], now: int, *, paint: Painter, empty: str,
               notes: Mapping[str, str] | None = None,
               ids: Mapping[str, str] | None = None,
               matched: Mapping[str, int] | None = None) -> str:
    """Grouped by status like the original `/tasks list`; `notes` (id → text) adds a
    dim note after a task (the work queue's: who holds it, what it waits on); `matched`
    (status → how many matched) titles a group cut short `PENDING (2 of 313)`."""
    if not tasks:
        return empty
    groups: dict[str, list[Record]] = {s: [] for s in STATUSES}
    other: list[Record] = []
    for task in tasks:
        groups.get(str(task.get("status")), other).append(task)
    blocks = []
    line_of = _line_maker(now, paint, ids)
    counts = matched or {}
    hidden = []  # groups `-n` cut away whole: named in one line, never `(0 of 142)`
    for status, members in [*groups.items(), ("other", other)]:
        total = counts.get(status, 0) if status != "other" else sum(
            n for s, n in counts.items() if s not in groups)
        if not members:
            if total:
                hidden.append(f"{total:,} {STATUS_TITLES.get(status, 'OTHER').lower()}")
            continue
        title = STATUS_TITLES.get(status, "OTHER")
        count = f"{len(members)} of {total}" if total > len(members) else str(len(members))
        lines = [paint(f"{title} ({count})", "bold")]
        for task in members:
            line = line_of(task)
            note = notes.get(task.get("id", "")) if notes else None
            lines.append(line + " " + paint(inert(note), "dim") if note else line)
        blocks.append("\n".join(lines))
    if hidden:
        blocks.append(paint(f"Not shown: {', '.join(hidden)} (-n {sum(counts.values())} "
                            "shows them all)", "dim"))
    return "\n\n".join(blocks)


def task_detail(task: Record, now: int, *, paint: Painter,
                ids: Mapping[str, str] | None = None) -> str:
    """Every field; the id also in its short form when `ids` has it."""
    lines = [paint(inert(clip(str(task.get("description", "")), DETAIL_TEXT_LIMIT)), "bold")]
    width = max(len(inert(k)) for k in task)
    for key, value in task.items():
        if key == "description":
            continue
        if isinstance(value, list):
            shown = ", ".join(inert(v) for v in value) or "-"
        elif isinstance(value, (dict, bool, int, float)) or value is None:
            shown = inert(orjson.dumps(value).decode())
        else:
            shown = inert(value)
        shown = clip(shown, DETAIL_TEXT_LIMIT)
        if key == "created_at":
            from aidp.core.when import age

            shown += f" ({age(ts_of(task, 'created_at'), now)})"
        elif key == "id" and ids and isinstance(value, str) and ids.get(value, value) != value:
            shown += paint(f" (short: {inert(ids[value])})", "dim")
        lines.append(f"  {paint(inert(key).ljust(width), 'dim')}  {shown}")
    return "\n".join(lines)


def body_text(body: str, *, color: bool, width: int = 80) -> str:
    """A task's body as `show` prints it: on a colour terminal, its Markdown rendered by
    rich (headings, lists, code; links as text and address, never a terminal
    hyperlink); else the text as written. Inert either way: each line's control and
    invisible characters are escaped (tabs kept) before rich reads it."""
    text = "\n".join("\t".join(inert(part) for part in line.split("\t"))
                     for line in body.split("\n"))
    if not color:
        return text
    import io

    from rich.console import Console
    from rich.markdown import Markdown

    out = io.StringIO()
    console = Console(file=out, width=max(40, width), force_terminal=True, highlight=False,
                      emoji=False, markup=False, legacy_windows=False)
    console.print(Markdown(text, hyperlinks=False))
    return out.getvalue().rstrip("\n")


_LINE_BREAKS = re.compile(r"\r\n|\r|\n")


def _md_cell(value: object) -> str:
    """One table cell: a line break is `<br>` (a table row is one line), other control
    characters are shown inert, and backslashes and pipes are escaped so the cell can
    neither end early nor swallow the next separator."""
    text = inert(_LINE_BREAKS.sub("<br>", value if isinstance(value, str) else str(value)))
    return text.replace("\\", "\\\\").replace("|", "\\|")


def task_markdown(tasks: Sequence[Record]) -> str:
    rows = [
        "| id | status | priority | description | tags | created_at |",
        "|---|---|---|---|---|---|",
    ]
    for t in tasks:
        rows.append(
            "| "
            + " | ".join(
                _md_cell(x)
                for x in (
                    t.get("id", ""),
                    t.get("status", ""),
                    t.get("priority", ""),
                    t.get("description", ""),
                    ", ".join(t.get("tags") or []),
                    t.get("created_at", ""),
                )
            )
            + " |"
        )
    return "\n".join(rows)


# --- TODO lists ---------------------------------------------------------------------


def todo_text(todo: TodoList) -> str:
    """Exactly what `aidp todo show` prints and the agent sees in `run`."""
    from aidp.todos import DEFAULT_PRIORITY, NO_ACTIVE, derived_status, progress

    items = todo.visible
    if not items:
        return NO_ACTIVE
    done = sum(1 for i in items if derived_status(i) == "completed")
    lines = [f"TODO list (session: {inert(todo.session)}) — {done}/{len(items)} completed"]
    for n, item in enumerate(items, start=1):
        status = derived_status(item).upper()
        priority = str(item.get("priority", DEFAULT_PRIORITY)).upper()
        line = f"{n}. [{status}] ({inert(priority)}) {inert(item['content'])}"
        finished, total = progress(item)
        if total:
            line += f" ({finished}/{total})"
        lines.append(line)
        for m, sub in enumerate(item.get("subtasks") or [], start=1):
            lines.append(f"   {n}.{m} [{sub['status'].upper()}] {inert(sub['content'])}")
    if todo.paused:
        reason = f": {inert(todo.pause_reason)}" if todo.pause_reason else ""
        lines.append(f"Paused{reason}")
    return "\n".join(lines)


def relative_age(stamp: str | None, now: int) -> str:
    if not stamp:
        return "never"
    seconds = max(0, now - ts_of({"updated_at": stamp})) // 1_000_000
    if seconds < 60:
        return "just now"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return "just now"  # pragma: no cover - the loop always returns


def todo_lists(found: Sequence[Summary], now: int, *, current_session: str) -> str:
    """What `aidp todo list` prints."""
    from aidp.todos import ITEM_STATUSES

    if not found:
        return f"No TODO lists yet (current session: {inert(current_session)})"
    blocks = []
    for number, s in enumerate(found, start=1):
        mark = " [CURRENT SESSION]" if s.current and s.list is None else ""
        state = "active" if s.active else ("cleared" if s.items else "empty")
        if s.list is not None:  # `todo list --all`: a list its session no longer shows
            state = f"earlier list {inert(s.list)}"
        if s.paused:
            state += ", paused"
        when = relative_age(s.updated_at, now)
        head = f"{number}. {inert(s.session)}{mark} — {state}, updated {when}"
        by_status = ", ".join(f"{s.counts[k]} {k}" for k in ITEM_STATUSES)
        lines = [head, f"   {counted(s.items, 'item')}: {by_status}"]
        if s.first is not None:
            lines.append(f"   First: {inert(s.first)}")
        if s.owner is not None and not s.session.endswith(f"@{s.owner}"):
            lines.append(f"   Owner: {inert(s.owner)}")
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


def counted(n: int, word: str) -> str:
    """`1 task`, `2 tasks`, `1,500 tasks`: a count with its noun, singular for one."""
    return f"{n:,} {word}" + ("" if n == 1 else "s")
