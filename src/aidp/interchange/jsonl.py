"""aidp's own JSON Lines: one task record per line, exactly as stored (and as `tasks
list --format jsonl` prints). Lossless both ways: unknown keys and all."""

from __future__ import annotations

from collections.abc import Sequence

import orjson

from aidp.core.model import Record
from aidp.interchange import Incoming, json_lines
from aidp.interchange.native import check_native


def dump(tasks: Sequence[Record]) -> bytes:
    return b"".join(orjson.dumps(task) + b"\n" for task in tasks)


def parse(text: str, name: str) -> list[Incoming]:
    items = []
    for number, where, record in json_lines(
            text, name, hint=None, not_object="is not a JSON object (one task record per line)"):
        if "type" in record:
            continue  # a typed record (todo list, dependency, …): not a task
        items.append(Incoming(record.get("id", ""), check_native(record, where),
                              native=True, line=number))
    return items
