"""aidp's own JSON Lines: one task record per line, exactly as stored (and as `tasks
list --format jsonl` prints). Lossless both ways: unknown keys and all."""

from __future__ import annotations

from collections.abc import Sequence

import orjson

from aidp.interchange import BadFile, Incoming
from aidp.interchange.native import check_native
from aidp.model import Record


def dump(tasks: Sequence[Record]) -> bytes:
    return b"".join(orjson.dumps(task) + b"\n" for task in tasks)


def parse(text: str, name: str) -> list[Incoming]:
    items = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{name}: line {number}"
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise BadFile(where, f"is not JSON ({exc.args[0].split(':')[0]})") from None
        if not isinstance(record, dict):
            raise BadFile(where, "is not a JSON object (one task record per line)")
        if "type" in record:
            continue  # a typed record (todo list, dependency, …): not a task
        items.append(Incoming(record.get("id", ""), check_native(record, where),
                              native=True, line=number))
    return items
