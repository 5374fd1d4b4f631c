"""What the commands print, in one place: colour, JSON, and task lists in every --format.

Every command group prints through these; `error` is the line the one error boundary
(aidp.cli.run) writes. Lists of tasks go out through `print_list`; json, jsonl and ids through
`write_batches` alone, whether the tasks come as one list or a batch at a time from the
store (`tasks list --all`), so the two can never print different bytes.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, cast

from aidp.core.errors import InvalidInput
from aidp.core.model import Record, json_elements
from aidp.core.terminal import inert
from aidp.views import render

if TYPE_CHECKING:
    from aidp import todos

# The formats `write_batches` writes (a batch at a time); the rest need the whole list.
STREAMED_FORMATS = ("json", "jsonl", "ids")


def error(message: str, *, hint: str | None = None) -> None:
    """The one error line, `Error: …` on stderr (aidp.cli.run, the error boundary)."""
    # One line, whatever the message held, and inert: it may quote user input such as
    # an unknown id, which must never put an escape sequence on the terminal.
    line = inert(" ".join(message.split()))
    sys.stderr.write(f"Error: {line}" + (f" ({hint})" if hint else "") + "\n")


def painter() -> render.Painter:
    """Colour for stdout: on a terminal, unless NO_COLOR (render.color_enabled)."""
    return render.Painter(render.color_enabled())


def json_out(value: Any) -> None:
    """`--json`: the value as indented JSON, one document on stdout."""
    render.write_bytes(render.json_bytes(value))


def todo_out(todo: todos.TodoList, message: str, *, as_json: bool, pager: bool) -> None:
    """A TODO command's answer: the list as JSON (todos.show_json), or the message
    (`pager`: render.write_text's)."""
    if as_json:
        from aidp import todos as core

        json_out(core.show_json(todo))
    else:
        render.write_text(message, pager=pager)


# A page of a list that is not printed to a terminal (a script, an agent's shell tool).
PAGE_ROWS = 20


def page_rows() -> int:
    """How many tasks a page shows (`tasks ready`): what fits the terminal beside a
    header and a footer, at least 10; PAGE_ROWS when stdout is not a terminal."""
    try:
        at_terminal = sys.stdout.isatty()
    except (AttributeError, ValueError):
        at_terminal = False
    if not at_terminal:
        return PAGE_ROWS
    import shutil

    return max(10, shutil.get_terminal_size().lines - 6)


def list_format(fmt: str | None, as_json: bool) -> str:
    """The --format a listing asked for (`--json` is `--format json`), checked."""
    if as_json and fmt is not None and fmt.lower() != "json":
        raise InvalidInput(f"Conflicting --json and --format {fmt!r}: give one of them")
    chosen = "json" if as_json else (fmt or "table").lower()
    if chosen not in render.FORMATS:
        raise InvalidInput(f"Invalid --format {fmt!r}: use one of {', '.join(render.FORMATS)}")
    return chosen


def print_list(found: list[Record], fmt: str, *, now: int, empty: str,
               notes: dict[str, str] | None = None, ids: dict[str, str] | None = None,
               matched: dict[str, int] | None = None, raw: bool = False,
               pager: bool) -> None:
    """Tasks in one of render.FORMATS: `empty` is the table's line when there are none;
    `notes`, `ids` (full id → short id), `matched` are the table's; `raw` csv's;
    `pager`: render.write_text's."""
    if fmt in STREAMED_FORMATS:
        write_batches([found], fmt)
    elif fmt == "markdown":
        render.write_text(render.task_markdown(found), pager=pager)
    elif fmt == "csv":
        from aidp.interchange import csv_format  # the one CSV writer (export's)

        render.write_bytes(csv_format.dump(found, raw=raw))
    else:
        render.write_text(render.task_table(found, now, paint=painter(), empty=empty,
                                            notes=notes, ids=ids, matched=matched),
                          pager=pager)


def write_batches(batches: Iterable[Sequence[Record] | Sequence[bytes]], fmt: str, *,
                  limit: int | None = None) -> int:
    """Tasks as json (one indented array), jsonl or ids, written a batch at a time (in
    bounded memory when the batches come from the store); at most `limit`. A batch is
    records, or (json) the tasks as they print, ready elements of the array
    (model.json_elements: an open task's body in the store), written as they are: either
    way the same bytes. Returns how many were written."""
    out = sys.stdout.buffer
    sys.stdout.flush()
    written = 0
    for found in batches:
        batch = found if limit is None else found[:limit - written]
        if not batch:
            if limit is not None and written >= limit:
                break
            continue
        if type(batch[0]) is not dict:  # ready elements
            out.write(b",\n" if written else b"[\n")
            out.write(b",\n".join(cast("Sequence[bytes]", batch)))
        elif fmt == "ids":
            out.write("".join(t["id"] + "\n" for t in cast("Sequence[Record]", batch)).encode())
        elif fmt == "jsonl":
            out.write(render.jsonl_bytes(cast("Sequence[Record]", batch)))
        else:  # the records as the array's elements, without its brackets
            out.write(b",\n" if written else b"[\n")
            out.write(json_elements(list(cast("Sequence[Record]", batch))))
        written += len(batch)
    if fmt == "json":
        out.write(b"\n]\n" if written else b"[]\n")
    out.flush()
    return written
