"""aidp's own JSON Lines: one task record per line, exactly as stored (and as `tasks
list --format jsonl` prints). Import also reads what a listing prints beside each
record (`list -f jsonl`, `list --json`'s array, `show --json`'s object): each shown key
back into the record of its own it came from, never into the task record
(aidp.interchange.native)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import orjson

from aidp.core.model import Record
from aidp.interchange import BadFile, Incoming, json_lines
from aidp.interchange.native import in_filing_order, settle_shown, shown_item


def dump(tasks: Sequence[Record]) -> bytes:
    return b"".join(orjson.dumps(task) + b"\n" for task in tasks)


def parse(text: str, name: str) -> list[Incoming]:
    items = []
    for number, where, record in _objects(text, name):
        if "type" in record:
            continue  # a typed record (todo list, dependency, …): not a task
        items.append(shown_item(record, where, number))
    settle_shown(items)
    return in_filing_order(items)


def _objects(text: str, name: str) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """(line number, where, object) of each task: one per line, or the elements of one
    JSON array (`list --json`), or one object over several lines (`show --json`)."""
    stripped = text.lstrip()
    if not stripped.startswith(("[", "{")) or _one_per_line(stripped):
        yield from json_lines(text, name, hint=None,
                              not_object="is not a JSON object (one task record per line)")
        return
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        line = text.count("\n", 0, exc.pos) + 1
        raise BadFile(f"{name}: line {line}",
                      f"is not JSON ({exc.args[0].split(':')[0]})") from None
    if not isinstance(value, list):
        first = text.count("\n", 0, len(text) - len(stripped)) + 1
        yield first, f"{name}: line {first}", value
        return
    starts = [n for n, line in enumerate(text.splitlines(), start=1)
              if line.startswith("{") or line[:3] == "  {"]  # list --json: one a line
    where = [f"{name}: line {n}" for n in starts] if len(starts) == len(value) else [
        f"{name}: item {n}" for n in range(1, len(value) + 1)]
    for n, element in enumerate(value):
        if not isinstance(element, dict):
            raise BadFile(where[n], "is not a JSON object (one task per element)")
        yield (starts[n] if len(starts) == len(value) else 0), where[n], element


def _one_per_line(stripped: str) -> bool:
    """Whether the text starts with a whole JSON object on its first line (JSON Lines)."""
    first = stripped.split("\n", 1)[0]
    if not first.startswith("{"):
        return False
    try:
        return isinstance(orjson.loads(first), dict)
    except orjson.JSONDecodeError:
        return False
