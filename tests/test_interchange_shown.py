"""Re-importing what an aidp listing prints (`tasks list -f jsonl`, `list --json`,
`show --json`): every key shown beside a task's record goes back into the record of its
own it came from, never into the task record — the Ruby original drops a task line with
a key it does not know (docs/file-format.md, "Other records"). Property test: export →
import into a fresh project → every task line has only the Ruby keys, and every task
shows the same as before. And no other import path writes a key of no task record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.test_interchange import RUBY_KEYS
from tests.test_interchange_roundtrip import build, listed, spec

TASKLIST = Path(".aidp") / "tasklist.jsonl"


def lines_of(root: Path) -> list[dict]:
    return [json.loads(line) for line in (root / TASKLIST).read_text().splitlines()]


def task_lines(root: Path) -> list[dict]:
    return [r for r in lines_of(root) if "type" not in r]


def printed(cli, root: Path, shape: str) -> str:
    """The backlog as a listing prints it: `jsonl`, `json` (an array), or `show`: each
    task's `show --json` object (its blocks and children too), one file per task."""
    if shape == "show":
        ids = cli("--dir", str(root), "tasks", "list", "--all", "-f", "ids").out.split()
        return "".join(cli("--dir", str(root), "tasks", "show", tid, "--json").out for tid in ids)
    result = cli("--dir", str(root), "tasks", "list", "--all", "-f", shape, "--with-body")
    assert result.code == 0, result
    return result.out


def reimport(cli, where: Path, shape: str, specs: list[dict]) -> None:
    first, second = where / "first", where / "second"
    first.mkdir()
    second.mkdir()
    build(first, specs)
    before = listed(cli, first)
    if shape == "show":  # several pretty objects: one file each, imported in turn
        objects = [json.dumps(t, indent=2) for t in reversed(before)]  # oldest first
        paths = []
        for n, text in enumerate(objects):
            paths.append(where / f"show{n}.json")
            paths[-1].write_text(text + "\n")
    else:
        paths = [where / f"listed.{shape}"]
        paths[0].write_text(printed(cli, first, shape))
    for path in paths:
        result = cli("--dir", str(second), "tasks", "import", str(path), "--from", "jsonl")
        assert result.code == 0, result
    for record in task_lines(second):
        assert set(record) <= RUBY_KEYS, record
    after = listed(cli, second)
    if shape == "show":  # blocks/children naming a task of another file: in its note
        for task in after:
            task["notes"] = [n for n in task.get("notes", ()) if n.get("author") != "aidp import"]
            if not task["notes"]:
                del task["notes"]
    assert after == before
    data = (second / TASKLIST).read_bytes()
    for path in paths:
        again = cli("--dir", str(second), "tasks", "import", str(path), "--from", "jsonl")
        assert again.code == 0 and "Imported 0 tasks" in again.out, again
    assert (second / TASKLIST).read_bytes() == data  # a no-op


@pytest.mark.parametrize("shape", ["jsonl", "json"])
def test_a_listing_imported_into_a_fresh_project_shows_the_same_and_ruby_reads_it(
        cli, tmp_path_factory, shape: str) -> None:
    @settings(max_examples=20, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(specs=st.lists(spec, min_size=1, max_size=6))
    def check(specs: list[dict]) -> None:
        reimport(cli, tmp_path_factory.mktemp(shape), shape, specs)

    check()


EVERYTHING = [
    {"words": ["epic"], "priority": "high", "tags": ["api"], "status": "pending",
     "assignee": None, "reason": None, "blocker": None, "parent": None, "note": None,
     "body": ["## Goal", "", "- [ ] one"], "type": "feature"},
    {"words": ["child"], "priority": "low", "tags": [], "status": "in_progress",
     "assignee": "ann", "reason": None, "blocker": None, "parent": 0, "note": ["first"],
     "body": None, "type": "bug"},
    {"words": ["closed"], "priority": "medium", "tags": ["x:y"], "status": "done",
     "assignee": "Bob Smith <bob@example.com>", "reason": ["shipped", "it"], "blocker": 1,
     "parent": None, "note": ["why"], "body": ["done", "\tindented"], "type": "chore"},
    {"words": ["waits"], "priority": "medium", "tags": [], "status": "pending",
     "assignee": None, "reason": None, "blocker": 1, "parent": 0, "note": None,
     "body": None, "type": "task"},
]


@pytest.mark.parametrize("shape", ["jsonl", "json", "show"])
def test_every_shown_key_goes_back_into_its_own_record(cli, tmp_path: Path,
                                                       shape: str) -> None:
    """Type, close reason, body, blocked_by, parent, assignee, claimed_at, lease_until,
    notes (and show's blocks and children) each come back as their own record; the
    task records carry the Ruby keys only (before: all of them in the task record, and
    the Ruby original dropped those tasks)."""
    reimport(cli, tmp_path, shape, EVERYTHING)
    second = tmp_path / "second"
    kinds = sorted({r["type"] for r in lines_of(second) if "type" in r})
    assert kinds == ["body", "claim", "close_reason", "dep", "note", "parent", "task_type"]
    claim = next(r for r in lines_of(second) if r.get("type") == "claim"
                 and r["assignee"] == "ann")
    assert claim["lease"] == 1800 and "lease_until" in claim


def test_keys_of_no_record_go_to_the_import_note(cli, project: Path) -> None:
    task = {"id": "task_1795314333_ca351966", "description": "From a newer aidp",
            "status": "pending", "priority": "medium", "created_at": "2026-11-22T02:25:33Z",
            "updated_at": "2026-11-22T02:25:33Z", "tags": [], "future_key": [1, 2],
            "task_type": "saga", "close_reason": "not done", "stale": True,
            "blocked_by": "task_1795314333_ca351966"}
    (project / "t.jsonl").write_text(json.dumps(task) + "\n")
    assert cli("tasks", "import", "t.jsonl", "--from", "jsonl").code == 0
    assert task_lines(project) == [{k: v for k, v in task.items() if k in RUBY_KEYS}]
    note = json.loads(cli("tasks", "show", "ca35", "--json").out)["notes"]
    assert [n["author"] for n in note] == ["aidp import"]
    assert note[0]["text"] == (
        'Imported from jsonl (task_1795314333_ca351966): {"blocked_by":'
        '"task_1795314333_ca351966","close_reason":"not done","future_key":[1,2],'
        '"stale":true,"task_type":"saga"}')


def test_a_csv_rows_extra_keys_never_go_into_the_task_record(cli, project: Path) -> None:
    """aidp's CSV keeps any other key in its `extra` column, and a spreadsheet may add
    columns: a type, a body become their records, anything else the note."""
    header = ("id,description,status,priority,created_at,updated_at,session,"
              "discovered_during,started_at,completed_at,abandoned_at,abandoned_reason,"
              "tags,extra,owner\n")
    extra = json.dumps({"task_type": "bug", "body": "## Steps", "future_key": 7})
    row = ("task_1795314333_ca351966,Crash,pending,high,2026-11-22T02:25:33Z,"
           f"2026-11-22T02:25:33Z,,,,,,,api,\"{extra.replace(chr(34), chr(34) * 2)}\",ann\n")
    (project / "t.csv").write_text(header + row)
    result = cli("tasks", "import", "t.csv", "--from", "csv")
    assert result.code == 0, result
    for record in task_lines(project):
        assert set(record) <= RUBY_KEYS, record
    shown = json.loads(cli("tasks", "show", "ca35", "--json").out)
    assert (shown["task_type"], shown["body"]) == ("bug", "## Steps")
    assert shown["notes"][0]["text"].endswith('{"future_key":7,"owner":"ann"}')


@pytest.mark.parametrize(("content", "message"), [
    ('[\n  {"id": "task_1_0000000a", "description": "x"}\n]\n',
     "bad.json: line 2: field 'status' has an unknown value None; accepted: pending, "
     "in_progress, done, abandoned; nothing was imported"),
    ('[\n  {"id": "task_1_0000000a", "description": "x"\n',
     "bad.json: line 3: is not JSON (unexpected end of data); nothing was imported"),
    ('[\n  3\n]\n', "bad.json: item 1: is not a JSON object (one task per element); "
                      "nothing was imported"),
])
def test_a_bad_listing_is_one_line_and_writes_nothing(cli, project: Path, content: str,
                                                      message: str) -> None:
    cli("tasks", "add", "Already here")
    before = (project / TASKLIST).read_bytes()
    (project / "bad.json").write_text(content)
    result = cli("tasks", "import", "bad.json", "--from", "jsonl")
    assert (result.code, result.out, result.err) == (2, "", f"Error: {message}\n")
    assert (project / TASKLIST).read_bytes() == before


def test_a_link_to_a_task_that_is_nowhere_is_said_in_a_note(cli, project: Path) -> None:
    """A listing of some tasks only: a task it waits on that neither the file nor this
    backlog holds cannot be linked; the note says which (before: dropped unsaid)."""
    here = cli("tasks", "add", "Here already", "-q").out.strip()
    task = {"id": "task_1795314333_ca351966", "description": "Waits", "status": "pending",
            "priority": "medium", "created_at": "2026-11-22T02:25:33Z",
            "updated_at": "2026-11-22T02:25:33Z", "tags": [],
            "blocked_by": [here, "task_1795314000_0000dead"],
            "parent": "task_1795314000_0000beef"}
    (project / "t.jsonl").write_text(json.dumps(task) + "\n")
    assert cli("tasks", "import", "t.jsonl", "--from", "jsonl").code == 0
    shown = json.loads(cli("tasks", "show", "ca35", "--json").out)
    assert shown["blocked_by"] == [here] and "parent" not in shown
    assert [n["text"] for n in shown["notes"]] == [
        "Imported from jsonl (task_1795314333_ca351966): links left out (no such task "
        'here, or on a cycle): {"blocked_by":["task_1795314000_0000dead"],'
        '"parent":"task_1795314000_0000beef"}']
