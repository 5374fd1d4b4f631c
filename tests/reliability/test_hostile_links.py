"""A cloned repository plants links, FIFOs and git attributes (issue 27, items 1, 2, 9
and 10): aidp never writes or deletes through a link, never hangs on a FIFO, and still
reads the tasks of a tasklist whose git attributes were overridden.

Every test builds an attacker's repository with real git, clones it, and runs `aidp`
as a subprocess in the clone (the `hostile` fixture, tests/reliability/conftest.py)."""

from __future__ import annotations

import orjson

TASK = {"id": "t-0001", "description": "an honest task", "status": "pending",
        "priority": "medium", "tags": [], "created_at": "2026-01-01T00:00:00.000000Z",
        "updated_at": "2026-01-01T00:00:00.000000Z"}
TASKLIST = orjson.dumps(TASK) + b"\n"


def test_a_clone_lists_the_attackers_tasks(hostile) -> None:
    """The fixture itself: a committed tasklist is read in the clone."""
    hostile.write(".aidp/tasklist.jsonl", TASKLIST)
    hostile.clone()
    result = hostile.aidp("tasks", "list")
    assert result.code == 0 and "an honest task" in result.out, result
