"""Whatever a file holds, an import either yields valid tasks or refuses the file with
one BadFile line: never another exception, never a task aidp could not have written."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from aidp import interchange
from aidp.core.model import TASK_ID_RE
from aidp.interchange.native import check_native
from aidp.tasklist.log import Fold

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=False),
                    st.text(max_size=12),
                    st.sampled_from(["pending", "completed", "deleted", "open", "closed",
                                     "OPEN", "CLOSED", "H", "L", "2", "20261123T173125Z",
                                     "2026-01-02T03:04:05Z", "bug", "x" * 250]))
KEYS = st.sampled_from(["uuid", "id", "number", "title", "description", "status", "state",
                        "priority", "entry", "modified", "end", "start", "tags", "labels",
                        "created_at", "updated_at", "closed_at", "createdAt", "depends",
                        "dependencies", "project", "body"])
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=4)), max_leaves=12)
OBJECTS = st.dictionaries(KEYS, VALUES, max_size=8)


def files() -> st.SearchStrategy[tuple[str, bytes]]:
    array = st.lists(OBJECTS, max_size=4).map(lambda xs: json.dumps(xs).encode())
    lines = st.lists(OBJECTS, max_size=4).map(
        lambda xs: "".join(json.dumps(x) + "\n" for x in xs).encode())
    csv_text = st.lists(st.lists(st.text(max_size=8), min_size=1, max_size=4),
                        min_size=1, max_size=4).map(
        lambda rows: "\n".join(",".join(r) for r in rows).encode())
    junk = st.binary(max_size=60)
    return st.one_of(
        st.tuples(st.just("taskwarrior"), st.one_of(array, lines, junk)),
        st.tuples(st.just("github"), st.one_of(array, junk)),
        st.tuples(st.just("beads"), st.one_of(lines, junk)),
        st.tuples(st.just("jsonl"), st.one_of(lines, junk)),
        st.tuples(st.just("csv"), st.one_of(csv_text.map(lambda b: b"title,status,tags\n" + b),
                                            csv_text, junk)),
    )


@settings(max_examples=300, deadline=None)
@given(case=files())
def test_any_file_gives_valid_tasks_or_one_clear_refusal(case: tuple[str, bytes]) -> None:
    fmt, data = case
    try:
        items = interchange.parse(fmt, data, "f")
    except interchange.BadFile as exc:
        message = str(exc)
        assert message.startswith("f") and message.endswith("; nothing was imported")
        assert "\n" not in message
        return
    result = interchange.plan_import(Fold(), items, fmt)
    for task in result.filed:
        assert TASK_ID_RE.fullmatch(task["id"])
        check_native(task, "filed")  # every key as aidp writes it
    for record in result.records:
        if "type" in record:
            assert record["type"] in ("import_source", "note", "dep", "parent")
            json.dumps(record)
