"""Files written by the original Ruby implementation load unchanged, and ours load in it."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest

SAMPLE = Path(__file__).resolve().parents[2] / "shared" / "samples" / "ruby-original-tasklist.jsonl"
if not SAMPLE.exists():  # a checkout without shared/ beside it: use the copy in tests/data
    SAMPLE = Path(__file__).resolve().parent / "data" / "ruby-original-tasklist.jsonl"

RUBY_KEYS = {
    "id", "description", "status", "priority", "created_at", "updated_at", "session",
    "discovered_during", "started_at", "completed_at", "abandoned_at", "abandoned_reason", "tags",
}


@pytest.fixture
def ruby_project(project: Path) -> Path:
    (project / ".aidp").mkdir()
    shutil.copy(SAMPLE, project / ".aidp" / "tasklist.jsonl")
    return project


def last_line_per_id() -> dict[str, dict]:
    """How the Ruby original reads its own file: the later line for an id wins (its
    timestamps have one-second precision, so updates of one task tie)."""
    state: dict[str, dict] = {}
    for line in SAMPLE.read_text().splitlines():
        record = json.loads(line)
        state[record["id"]] = record
    return state


def test_sample_folds_to_the_documented_state(cli, ruby_project: Path) -> None:
    result = cli("tasks", "stats", "--json")
    assert result.code == 0 and result.err == ""
    counts = json.loads(result.out)
    assert (counts["total"], counts["pending"], counts["in_progress"], counts["done"],
            counts["abandoned"]) == (24, 13, 4, 4, 3)


def test_every_task_agrees_with_the_ruby_reading(cli, ruby_project: Path) -> None:
    ours = {t["id"]: t for t in json.loads(cli("tasks", "list", "--all", "--json").out)}
    assert ours == last_line_per_id()


def test_file_is_not_rewritten_by_reads(cli, ruby_project: Path) -> None:
    before = (ruby_project / ".aidp" / "tasklist.jsonl").read_bytes()
    for args in (["tasks", "list"], ["tasks", "stats"], ["tasks", "show", "953b"],
                 ["tasks", "history", "da60"]):
        assert cli(*args).code == 0
    assert (ruby_project / ".aidp" / "tasklist.jsonl").read_bytes() == before


def test_updating_a_ruby_task_wins_and_keeps_its_fields(cli, ruby_project: Path) -> None:
    updated = json.loads(cli("tasks", "done", "62b11439", "--json").out)
    original = last_line_per_id()["task_1795318034_62b11439"]
    assert updated["status"] == "done"
    for key in ("id", "description", "priority", "created_at", "session", "discovered_during",
                "started_at", "tags"):
        assert updated[key] == original[key]
    assert json.loads(cli("tasks", "show", "62b11439", "--json").out)["status"] == "done"


ID_RE = re.compile(r"task_\d+_[0-9a-f]{8}")
TS_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")


def test_what_we_write_has_the_ruby_shape(cli, project: Path) -> None:
    tid = cli("tasks", "add", "Ours", "-p", "low", "-t", "x", "-q").out.strip()
    cli("tasks", "start", tid)
    cli("tasks", "abandon", tid, "no longer needed")
    every = (project / ".aidp" / "tasklist.jsonl").read_text().splitlines()
    # which fields a change set goes in a typed record of its own (the Ruby reader skips
    # those): each change is such a record, then the task line
    lines = [line for line in every if "type" not in json.loads(line)]
    assert [json.loads(line)["type"] for line in every if line not in lines] == [
        "task_fields", "task_fields"]
    for line in lines:
        record = json.loads(line)
        assert set(record) <= RUBY_KEYS
        assert list(record)[:6] == ["id", "description", "status", "priority", "created_at", "updated_at"]
        assert list(record)[-1] == "tags" and isinstance(record["tags"], list)
        assert ID_RE.fullmatch(record["id"])
        for key in ("created_at", "updated_at", "started_at", "abandoned_at"):
            if key in record:
                assert TS_RE.fullmatch(record[key]), record[key]
                datetime.fromisoformat(record[key])
        assert None not in record.values()
    assert Counter(json.loads(line)["status"] for line in lines) == Counter(
        {"pending": 1, "in_progress": 1, "abandoned": 1}
    )


def test_equal_timestamps_list_newest_written_first(cli, ruby_project: Path) -> None:
    """All 24 sample tasks were created in one second: file order decides, newest first."""
    listed = json.loads(cli("tasks", "list", "--all", "--json").out)
    numbers = [int(t["description"].rsplit("(", 1)[1].rstrip(")")) for t in listed]
    assert numbers == sorted(numbers, reverse=True)


def ruby_reading(path: Path) -> dict[str, dict]:
    """The Ruby original's reading of any file: it builds a task from every key of a
    line and drops a line with a key it does not know (typed records included); the
    later line for an id wins."""
    state: dict[str, dict] = {}
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if set(record) <= RUBY_KEYS:
            state[record["id"]] = record
    return state


QUEUE_KEYS = {"blocked_by", "parent", "assignee", "claimed_at", "lease_until", "stale", "notes"}


def test_work_queue_on_a_ruby_file_stays_readable_by_ruby(cli, ruby_project: Path,
                                                          monkeypatch) -> None:
    """Both ways: the queue works on the Ruby sample's tasks, and the Ruby original
    still reads every task of the result, agreeing with us on each one."""
    monkeypatch.setenv("AIDP_ACTOR", "alice")
    pending = [t["id"] for t in json.loads(cli("tasks", "list", "pending", "--json").out)]
    first, second, third = pending[:3]
    assert cli("tasks", "block", second, "--on", first).code == 0
    assert cli("tasks", "edit", third, "--parent", first, "-d", "Edited by aidp").code == 0
    assert cli("tasks", "note", first, "a note").code == 0
    claimed = json.loads(cli("tasks", "claim", "--json").out)
    assert claimed["assignee"] == "alice"
    epic = cli("tasks", "claim", first, "--as", "bob")  # it waits on its child, `third`
    assert epic.code == 1 and "waits on open task(s)" in epic.err
    ready = json.loads(cli("tasks", "ready", "--json").out)
    assert second not in [t["id"] for t in ready]

    ours = {t["id"]: t for t in json.loads(cli("tasks", "list", "--all", "--json").out)}
    ruby = ruby_reading(ruby_project / ".aidp" / "tasklist.jsonl")
    assert set(ruby) == set(ours)  # no task line was made unreadable for Ruby
    for tid, task in ours.items():
        assert {k: v for k, v in task.items() if k not in QUEUE_KEYS} == ruby[tid]
    assert ruby[third]["description"] == "Edited by aidp"
    assert ruby[claimed["id"]]["status"] == "in_progress"
