"""`aidp tasks export` and `aidp tasks import`: foreign formats mapped both ways,
idempotent imports, bad files refused whole, and aidp's own formats lossless."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aidp.core.model import format_ts
from aidp.tasklist.log import TaskLog

DATA = Path(__file__).resolve().parents[1] / "data"
TASKLIST = Path(".aidp") / "tasklist.jsonl"


def tasks_of(cli) -> dict[str, dict]:
    result = cli("tasks", "list", "--all", "--json")
    assert result.code == 0, result
    return {t["description"]: t for t in json.loads(result.out)}


def typed(project: Path, kind: str) -> list[dict]:
    lines = (project / TASKLIST).read_text().splitlines()
    return [r for r in map(json.loads, lines) if r.get("type") == kind]


# --- Taskwarrior --------------------------------------------------------------------


def test_taskwarrior_export_is_mapped_and_a_second_import_files_nothing(cli, project) -> None:
    sample = str(DATA / "taskwarrior-export.json")  # written by Taskwarrior 2.6.2
    first = cli("tasks", "import", sample, "--from", "taskwarrior")
    assert first.code == 0 and first.err == ""
    assert first.out.startswith("Imported 6 tasks from taskwarrior\n")
    found = tasks_of(cli)
    assert {d: (t["status"], t["priority"]) for d, t in found.items()} == {
        "Fix the parser": ("in_progress", "high"),  # pending + start
        "Write docs": ("pending", "low"),
        "Gone": ("pending", "medium"),
        "Later": ("pending", "medium"),  # waiting until 2030
        "Done thing": ("done", "medium"),
        "Old thing": ("abandoned", "medium"),  # deleted
    }
    assert found["Fix the parser"]["tags"] == ["bug"]
    assert found["Fix the parser"]["created_at"] == "2026-11-23T17:31:25.000000Z"
    assert found["Done thing"]["completed_at"] == "2026-11-23T17:31:27.000000Z"
    assert found["Old thing"]["abandoned_reason"] == "Deleted in Taskwarrior"
    notes = {n["task"]: n["text"] for n in typed(project, "note")}
    note = notes[found["Fix the parser"]["id"]]
    assert note.startswith("Imported from taskwarrior (12cfd3af-f8a3-4eee-ba0d-29a2dd643c98): ")
    assert '"project":"home"' in note and "first note" in note
    assert '"depends":["12cfd3af' in notes[found["Write docs"]["id"]]
    sources = typed(project, "import_source")
    assert len(sources) == 6 and all(s["source"] == "taskwarrior" for s in sources)
    # a Taskwarrior user's own annotations stay in the note, never a body; no UDA of
    # aidp's: no type, no close reason either
    assert typed(project, "body") == typed(project, "task_type") == []
    assert typed(project, "close_reason") == []
    before = (project / TASKLIST).read_bytes()
    again = cli("tasks", "import", sample, "--from", "taskwarrior")
    assert again.code == 0
    assert again.out == "Imported 0 tasks from taskwarrior (6 already imported)\n"
    assert (project / TASKLIST).read_bytes() == before


def test_task_records_keep_only_the_original_keys(cli, project) -> None:
    from tests.test_interchange import RUBY_KEYS  # the Ruby reader's keys

    assert cli("tasks", "import", str(DATA / "taskwarrior-export.json"), "--from",
               "taskwarrior").code == 0
    for line in (project / TASKLIST).read_text().splitlines():
        record = json.loads(line)
        if "type" not in record:
            assert set(record) <= RUBY_KEYS


def test_our_taskwarrior_export_imported_back_here_files_nothing(cli, project) -> None:
    tid = cli("tasks", "add", "Ship it", "-p", "high", "-t", "release", "-q").out.strip()
    cli("tasks", "start", tid)
    exported = cli("tasks", "export", "--format", "taskwarrior")
    assert exported.code == 0
    items = json.loads(exported.out)
    assert items[0]["description"] == "Ship it" and items[0]["priority"] == "H"
    assert items[0]["status"] == "pending" and "start" in items[0]
    assert items[0]["aidp_id"] == tid
    (project / "tw.json").write_text(exported.out)
    result = cli("tasks", "import", "tw.json", "--from", "taskwarrior")
    assert result.out == "Imported 0 tasks from taskwarrior (1 already imported)\n"


def test_taskwarrior_carries_the_body_type_and_close_reason_as_udas(cli, project) -> None:
    """aidp_body, aidp_type, aidp_close_reason: written by the export, read back by the
    import (before: a Taskwarrior round trip lost all three); a value aidp cannot keep
    (a type it has no word for, a close reason of a task not done) stays in the note,
    and the annotations stay notes."""
    tid = cli("tasks", "add", "Crash", "--type", "bug", "--body", "## Steps\n1.\tgo",
              "-q").out.strip()
    cli("tasks", "note", tid, "seen twice")
    assert cli("tasks", "done", tid, "--reason", "Fixed in 2.1").code == 0
    (item,) = json.loads(cli("tasks", "export", "-f", "taskwarrior").out)
    assert (item["aidp_body"], item["aidp_type"], item["aidp_close_reason"]) == (
        "## Steps\n1.\tgo", "bug", "Fixed in 2.1")
    odd = {**item, "uuid": "0c9b5d7e-0000-4000-8000-000000000001", "aidp_id": "task_1_00000000",
           "status": "pending", "aidp_type": "saga", "description": "Odd one"}
    del odd["end"]
    fresh = project / "fresh"
    fresh.mkdir()
    (fresh / "tw.json").write_text(json.dumps([item, odd]))
    result = cli("--dir", str(fresh), "tasks", "import", str(fresh / "tw.json"), "--from",
                 "taskwarrior")
    assert result.code == 0, result
    found = {t["description"]: t for t in json.loads(
        cli("--dir", str(fresh), "tasks", "list", "--all", "--json", "--with-body").out)}
    crash = found["Crash"]
    assert (crash["task_type"], crash["close_reason"], crash["body"]) == (
        "bug", "Fixed in 2.1", "## Steps\n1.\tgo")
    assert "seen twice" in crash["notes"][0]["text"]  # the annotation: in the note
    assert "aidp_body" not in crash["notes"][0]["text"]
    other = found["Odd one"]
    assert "task_type" not in other and "close_reason" not in other
    assert other["body"] == "## Steps\n1.\tgo"
    assert '"aidp_close_reason":"Fixed in 2.1"' in other["notes"][0]["text"]
    assert '"aidp_type":"saga"' in other["notes"][0]["text"]


@pytest.mark.skipif(shutil.which("task") is None,
                    reason="Taskwarrior is not installed (apt-get install taskwarrior)")
def test_real_taskwarrior_takes_our_export_and_gives_it_back(cli, project, tmp_path) -> None:
    a = cli("tasks", "add", "Alpha", "-p", "high", "-t", "x", "--type", "feature", "--body",
            "## Why\n- \"quoted\" \\ and\ttab", "-q").out.strip()
    b = cli("tasks", "add", "Beta", "-q").out.strip()
    cli("tasks", "add", "Gamma", "-p", "low")
    cli("tasks", "done", a, "--reason", "Shipped")
    cli("tasks", "abandon", b, "Not needed")
    (project / "out.json").write_bytes(
        cli("tasks", "export", "-f", "taskwarrior").out.encode())
    data = tmp_path / "twdata"
    data.mkdir()
    (data / "rc").write_text("confirmation=off\nverbose=nothing\n")
    env = {**os.environ, "TASKDATA": str(data), "TASKRC": str(data / "rc")}
    subprocess.run(["task", "import", str(project / "out.json")], env=env, check=True,
                   capture_output=True, timeout=60)
    back = subprocess.run(["task", "export"], env=env, check=True, capture_output=True,
                          text=True, timeout=60).stdout
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / "back.json").write_text(back)
    result = cli("--dir", str(fresh), "tasks", "import", str(fresh / "back.json"), "--from",
                 "taskwarrior", "--json")
    assert result.code == 0, result
    filed = {t["description"]: t for t in json.loads(result.out)["filed"]}
    assert {d: (t["status"], t["priority"], t["tags"]) for d, t in filed.items()} == {
        "Alpha": ("done", "high", ["x"]), "Beta": ("abandoned", "medium", []),
        "Gamma": ("pending", "low", []),
    }
    alpha = json.loads(cli("--dir", str(fresh), "tasks", "show", filed["Alpha"]["id"],
                           "--json").out)  # Taskwarrior kept aidp's UDAs
    assert (alpha["task_type"], alpha["close_reason"], alpha["body"]) == (
        "feature", "Shipped", '## Why\n- "quoted" \\ and\ttab')


# --- Beads and GitHub ---------------------------------------------------------------


BEADS = "\n".join(json.dumps(r) for r in [
    {"id": "bd-a1b2", "title": "Set up database", "description": "Use Postgres", "status": "open",
     "priority": 1, "issue_type": "task", "labels": ["backend", "setup"],
     "created_at": "2026-02-06T10:00:00Z", "updated_at": "2026-02-06T10:30:00Z",
     "dependencies": [{"issue_id": "bd-a1b2", "depends_on_id": "bd-c3d4", "type": "blocks"}]},
    {"id": "bd-c3d4", "title": "Pick a host", "status": "closed", "priority": 3,
     "issue_type": "chore", "created_at": "2026-02-01T09:00:00Z",
     "updated_at": "2026-02-03T09:00:00Z", "closed_at": "2026-02-02T09:00:00Z",
     "close_reason": "done"},
    {"id": "bd-e5f6", "title": "Try sharding", "status": "in_progress", "priority": 2,
     "created_at": "2026-02-04T09:00:00+01:00", "updated_at": "2026-02-04T10:00:00+01:00"},
    {"id": "bd-g7h8", "title": "Wait for legal", "status": "blocked", "priority": 0,
     "created_at": "2026-02-05T09:00:00Z", "updated_at": "2026-02-05T09:00:00Z"},
]) + "\n"


def test_beads_issues_are_mapped(cli, project) -> None:
    (project / "issues.jsonl").write_text(BEADS)
    result = cli("tasks", "import", "issues.jsonl", "--from", "beads")
    assert result.code == 0 and result.out.startswith("Imported 4 tasks from beads\n")
    found = tasks_of(cli)
    assert {d: (t["status"], t["priority"]) for d, t in found.items()} == {
        "Set up database": ("pending", "high"), "Pick a host": ("done", "low"),
        "Try sharding": ("in_progress", "medium"), "Wait for legal": ("pending", "high"),
    }
    assert found["Set up database"]["tags"] == ["backend", "setup"]
    assert found["Pick a host"]["completed_at"] == "2026-02-02T09:00:00.000000Z"
    assert found["Try sharding"]["created_at"] == "2026-02-04T08:00:00.000000Z"
    notes = {n["task"]: n["text"] for n in typed(project, "note")}
    # the description is the body, the type and close reason are the task's own
    shown = {d: json.loads(cli("tasks", "show", t["id"], "--json").out)
             for d, t in found.items()}
    assert shown["Set up database"]["body"] == "Use Postgres"
    assert "task_type" not in shown["Set up database"]  # task: the default
    assert (shown["Pick a host"]["task_type"], shown["Pick a host"]["close_reason"]) == (
        "chore", "done")
    note = notes[found["Set up database"]["id"]]  # what has no place in a task (a link)
    assert "Use Postgres" not in note and "issue_type" not in note
    assert '"status":"blocked"' in notes[found["Wait for legal"]["id"]]
    before = (project / TASKLIST).read_bytes()
    again = cli("tasks", "import", "issues.jsonl", "--from", "beads")
    assert again.out == "Imported 0 tasks from beads (4 already imported)\n"
    assert (project / TASKLIST).read_bytes() == before


def test_beads_export_reads_back_in_a_fresh_project(cli, project, tmp_path) -> None:
    tid = cli("tasks", "add", "Port the CLI", "-p", "low", "-t", "cli", "-q").out.strip()
    cli("tasks", "abandon", tid, "Out of scope")
    out = cli("tasks", "export", "--format", "beads").out
    issue = json.loads(out.splitlines()[0])
    assert (issue["title"], issue["status"], issue["priority"], issue["labels"],
            issue["external_ref"]) == ("Port the CLI", "closed", 3, ["cli"], tid)
    assert issue["close_reason"] == "abandoned: Out of scope"
    bug = cli("tasks", "add", "Crash", "--type", "bug", "--body", "## Steps\n1. run", "-q"
              ).out.strip()
    cli("tasks", "done", bug, "--reason", "Fixed in 2.1")
    out = cli("tasks", "export", "--format", "beads").out
    (exported,) = [json.loads(line) for line in out.splitlines()
                   if json.loads(line)["external_ref"] == bug]
    assert (exported["description"], exported["issue_type"], exported["close_reason"]) == (
        "## Steps\n1. run", "bug", "Fixed in 2.1")
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / "b.jsonl").write_text(out)
    result = cli("--dir", str(fresh), "tasks", "import", str(fresh / "b.jsonl"), "--from",
                 "beads", "--json")
    task, crash = json.loads(result.out)["filed"]
    assert (task["description"], task["priority"], task["tags"]) == ("Port the CLI", "low", ["cli"])
    # closed, with the close_reason an aidp export writes: abandoned again (issue 35)
    assert (task["status"], task["abandoned_reason"]) == ("abandoned", "Out of scope")
    back = json.loads(cli("--dir", str(fresh), "tasks", "show", crash["id"], "--json").out)
    assert (back["body"], back["task_type"], back["close_reason"]) == (
        "## Steps\n1. run", "bug", "Fixed in 2.1")


GITHUB = json.dumps([
    {"number": 12, "title": "Crash on empty config", "state": "OPEN",
     "labels": [{"id": "LA_1", "name": "bug", "description": "", "color": "d73a4a"},
                {"id": "LA_2", "name": "priority: high", "description": "", "color": "000"}],
     "body": "Steps:\n1. run it\n2. boom", "createdAt": "2026-10-01T12:00:00Z"},
    {"number": 7, "title": "Add dark mode", "state": "CLOSED",
     "labels": [{"name": "good first issue"}], "body": "", "createdAt": "2026-09-01T12:00:00Z"},
], indent=2)


def test_github_issue_list_is_mapped(cli, project) -> None:
    (project / "issues.json").write_text(GITHUB)
    result = cli("tasks", "import", "issues.json", "--from", "github")
    assert result.code == 0 and result.out.startswith("Imported 2 tasks from github\n")
    found = tasks_of(cli)
    crash, dark = found["Crash on empty config"], found["Add dark mode"]
    assert (crash["status"], crash["priority"], crash["tags"]) == (
        "pending", "high", ["bug", "priority:high"])
    assert (dark["status"], dark["priority"], dark["tags"]) == ("done", "medium", ["good-first-issue"])
    assert dark["completed_at"] == "2026-09-01T12:00:00.000000Z"  # no closedAt in the list
    notes = {n["task"]: n["text"] for n in typed(project, "note")}
    assert notes[crash["id"]].startswith("Imported from github (#12): ")
    assert "Steps" not in notes[crash["id"]]  # the body is the task's own
    assert json.loads(cli("tasks", "show", crash["id"], "--json").out)["body"] == (
        "Steps:\n1. run it\n2. boom")
    assert "body" not in json.loads(cli("tasks", "show", dark["id"], "--json").out)
    assert '"labels":["good first issue"]' in notes[dark["id"]]
    before = (project / TASKLIST).read_bytes()
    assert cli("tasks", "import", "issues.json", "--from", "github").out.startswith(
        "Imported 0 tasks from github (2 already imported)")
    assert (project / TASKLIST).read_bytes() == before


def test_a_body_aidp_cannot_keep_stays_in_the_note(cli, project) -> None:
    issues = [{"number": 1, "title": "Escapes", "state": "OPEN", "body": "a\x1b[31mb",
               "createdAt": "2026-10-01T12:00:00Z"},
              {"number": 2, "title": "Huge", "state": "OPEN", "body": "x" * 70_000,
               "createdAt": "2026-10-01T12:00:00Z"}]
    (project / "issues.json").write_text(json.dumps(issues))
    assert cli("tasks", "import", "issues.json", "--from", "github").code == 0
    found = tasks_of(cli)
    assert typed(project, "body") == []
    sources = {r["task"]: r["fields"] for r in typed(project, "import_source")}
    assert sources[found["Escapes"]["id"]]["body"] == "a\x1b[31mb"
    assert len(sources[found["Huge"]["id"]]["body"]) == 70_000
    beads = json.dumps({"id": "bd-1", "title": "Story", "issue_type": "story",
                        "description": "kept"})
    (project / "b.jsonl").write_text(beads + "\n")
    assert cli("tasks", "import", "b.jsonl", "--from", "beads").code == 0
    story = json.loads(cli("tasks", "show", tasks_of(cli)["Story"]["id"], "--json").out)
    assert story["body"] == "kept" and "task_type" not in story
    assert '"issue_type":"story"' in story["notes"][0]["text"]


def test_taskwarrior_annotations_stay_notes(cli, project) -> None:
    item = {"uuid": "a1b2c3d4-0000-4000-8000-000000000001", "description": "Annotated",
            "status": "pending", "entry": "20261123T173125Z",
            "annotations": [{"entry": "20261123T180000Z", "description": "first thought"}]}
    (project / "tw.json").write_text(json.dumps([item]))
    assert cli("tasks", "import", "tw.json", "--from", "taskwarrior").code == 0
    shown = json.loads(cli("tasks", "show", tasks_of(cli)["Annotated"]["id"], "--json").out)
    assert "body" not in shown
    assert "first thought" in shown["notes"][0]["text"]


def test_import_from_stdin_and_dry_run(cli, project) -> None:
    result = cli("tasks", "import", "-", "--from", "github", "--dry-run", stdin=GITHUB)
    assert result.code == 0 and result.out.startswith("Would import 2 tasks from github\n")
    assert not (project / TASKLIST).exists()
    result = cli("tasks", "import", "-", "--from", "github", "--json", stdin=GITHUB)
    body = json.loads(result.out)
    assert body["source"] == "github" and len(body["filed"]) == 2 and body["skipped"] == 0


# --- CSV ----------------------------------------------------------------------------


def test_a_spreadsheet_csv_is_mapped_with_its_other_columns_kept(cli, project) -> None:
    (project / "sheet.csv").write_text(
        "Title,Status,Priority,Labels,Owner,created_at\n"
        "Order chairs,To Do,High,\"office, urgent\",Kim,2026-10-01\n"
        "\"Book room, big\",done,low,,Lee,\n"
        "Order chairs,todo,,,,2026-10-01\n",
        encoding="utf-8",
    )
    result = cli("tasks", "import", "sheet.csv", "--from", "csv")
    assert result.code == 0 and result.out.startswith("Imported 3 tasks from csv\n"), result
    rows = json.loads(cli("tasks", "list", "--all", "--json").out)
    chairs = [t for t in rows if t["description"] == "Order chairs"]
    assert len(chairs) == 2  # the same row twice is two tasks
    first = next(t for t in chairs if t["priority"] == "high")
    assert first["tags"] == ["office", "urgent"] and first["status"] == "pending"
    assert first["created_at"] == "2026-10-01T00:00:00.000000Z"
    notes = {n["task"]: n["text"] for n in typed(project, "note")}
    assert '"owner":"Kim"' in notes[first["id"]]
    assert cli("tasks", "import", "sheet.csv", "--from", "csv").out.startswith(
        "Imported 0 tasks from csv (3 already imported)")


# --- bad files ----------------------------------------------------------------------


@pytest.mark.parametrize(("fmt", "content", "message"), [
    ("taskwarrior", '[\n{"uuid":"a","description":"x","status":"pending"},\n'
                    '{"uuid":"b","description":"y","status":"sleeping"}\n]',
     "bad.txt: line 3: field 'status' has an unknown value 'sleeping'; accepted: "
     "completed, deleted, pending, recurring, waiting; nothing was imported"),
    ("taskwarrior", '[\n{"uuid":"a","description":"x","priority":"Z"}\n]',
     "bad.txt: line 2: field 'priority' has an unknown value 'Z'; accepted: h, l, m, or "
     "none; nothing was imported"),
    ("taskwarrior", '[{"uuid":"a", "description": }]',
     "bad.txt: line 1: is not valid JSON (a Taskwarrior export is a JSON array); "
     "nothing was imported"),
    ("taskwarrior", '[\n{"uuid":"a","description":"x","entry":"yesterday"}\n]',
     "bad.txt: line 2: field 'entry' is not an ISO-8601 timestamp: 'yesterday'; nothing was "
     "imported"),
    ("beads", '{"id":"bd-1","title":"ok"}\n{"id":"bd-2","title":"x","priority":9}\n',
     "bad.txt: line 2: field 'priority' has an unknown value '9'; accepted: 0, 1, 2, 3, 4; "
     "nothing was imported"),
    ("beads", '{"id":"bd-1","title":"ok"}\n\n{"id":"bd-2","title":""}\n',
     "bad.txt: line 3: field 'title' is empty; a task needs a title; nothing was imported"),
    ("beads", '{"id":"bd-1","title":"ok"}\nnot json\n',
     "bad.txt: line 2: is not JSON (Beads' issues.jsonl has one issue per line); nothing was "
     "imported"),
    ("github", '[{"title":"no number","state":"OPEN"}]',
     "bad.txt: issue 1: field 'number' is missing; list issues with --json number,title,"
     "state,labels,body,createdAt; nothing was imported"),
    ("github", '{"number": 1}', "bad.txt: is not a JSON array of issues"),
    ("csv", "title,status\nok,open\nbad,sleeping\n",
     "bad.txt: line 3: field 'status' has an unknown value 'sleeping'; accepted:"),
    ("csv", "owner,when\n", "bad.txt: line 1: no title column"),
    ("csv", 'title,created_at\n"multi\nline",2026-13-45\n',
     "bad.txt: line 2: field 'created_at' is not an ISO-8601 timestamp: '2026-13-45'"),
    ("jsonl", '{"id":"task_1_0000000a","description":"x","status":"pending","created_at":'
              '"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z"}\n{"id":"nope"}\n',
     "bad.txt: line 2: field 'id' is not a task id (task_<seconds>_<8 hex>): 'nope'"),
])
def test_a_bad_file_is_one_clear_line_and_writes_nothing(cli, project, fmt, content,
                                                          message) -> None:
    cli("tasks", "add", "Already here")
    before = (project / TASKLIST).read_bytes()
    (project / "bad.txt").write_text(content)
    result = cli("tasks", "import", "bad.txt", "--from", fmt)
    assert result.code == 2, result
    assert result.out == ""
    assert result.err.startswith("Error: " + message), result.err
    assert result.err.count("\n") == 1
    assert (project / TASKLIST).read_bytes() == before


def test_unusable_arguments_are_refused(cli, project) -> None:
    bad_from = cli("tasks", "import", "x.json", "--from", "jira")
    assert bad_from.code == 2
    assert bad_from.err == ("Error: Invalid --from 'jira': use one of csv, jsonl, markdown, "
                            "taskwarrior, beads, github\n")
    missing = cli("tasks", "import", "nowhere.json", "--from", "github")
    assert missing.code == 2
    assert missing.err == "Error: Cannot read nowhere.json: No such file or directory\n"
    bad_format = cli("tasks", "export", "--format", "xml")
    assert bad_format.code == 2 and "use one of markdown, csv, jsonl, taskwarrior, beads" in \
        bad_format.err
    (project / "latin1.csv").write_bytes(b"title\ncaf\xe9\n")
    latin = cli("tasks", "import", "latin1.csv", "--from", "csv")
    assert latin.code == 2 and latin.err.startswith(
        "Error: latin1.csv: line 2: is not valid UTF-8 text")


# --- exports and round trips --------------------------------------------------------


def test_markdown_export_is_a_checklist(cli) -> None:
    tid = cli("tasks", "add", "Fix *this* | that", "-t", "bug", "-q").out.strip()
    done = cli("tasks", "add", "Finished", "--type", "feature", "--body",
               "## Why\n\nBecause\n- a *list*", "-q").out.strip()
    cli("tasks", "done", done, "--reason", "Shipped in 2.1")
    out = cli("tasks", "export", "--format", "markdown").out
    assert out.startswith("# Backlog\n\n## Pending (1)\n\n")
    assert f"- [ ] Fix \\*this\\* \\| that (medium) #bug `{tid}`" in out
    assert (f"## Done (1)\n\n- [x] Finished (medium, feature) `{done}` — Shipped in 2.1\n"
            "\n  ## Why\n\n  Because\n  - a *list*\n") in out


def test_export_to_a_file(cli, project) -> None:
    cli("tasks", "add", "One")
    result = cli("tasks", "export", "-f", "csv", "-o", "backlog.csv")
    assert result.code == 0 and result.out == ""
    assert result.err == "Exported 1 task to backlog.csv (csv)\n"
    rows = list(csv.DictReader(io.StringIO((project / "backlog.csv").read_text())))
    assert rows[0]["description"] == "One" and rows[0]["tags"] == ""


TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=30).filter(
    lambda s: s.strip() == s)
STAMP = st.integers(1_600_000_000_000_000, 1_900_000_000_000_000).map(format_ts)


@st.composite
def stored_tasks(draw: st.DrawFn) -> list[dict]:
    out = []
    for n in range(draw(st.integers(1, 6))):
        status = draw(st.sampled_from(["pending", "in_progress", "done", "abandoned"]))
        created = draw(STAMP)
        task = {"id": f"task_{1_700_000_000 + n}_{draw(st.integers(0, 2**32 - 1)):08x}",
                "description": draw(TEXT), "status": status,
                "priority": draw(st.sampled_from(["high", "medium", "low"])),
                "created_at": created, "updated_at": max(created, draw(STAMP)),
                "tags": draw(st.lists(st.sampled_from(["a", "b,c", "ü", " x"]), max_size=3,
                                      unique=True))}
        for key in ("session", "discovered_during"):
            if draw(st.booleans()):
                task[key] = draw(TEXT)
        if status == "done":
            task["completed_at"] = task["updated_at"]
        if status == "abandoned":
            task["abandoned_at"] = task["updated_at"]
            if draw(st.booleans()):
                task["abandoned_reason"] = draw(TEXT)
        if draw(st.booleans()):
            task["future_key"] = draw(st.one_of(TEXT, st.integers(-(2**63), 2**63 - 1), st.lists(st.integers(0, 99))))
        out.append(task)
    return list({t["id"]: t for t in out}.values())


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=stored_tasks(), fmt=st.sampled_from(["csv", "jsonl"]))
def test_own_formats_round_trip_loses_nothing(cli, tmp_path, records, fmt) -> None:
    source, target = tmp_path / f"src-{fmt}", tmp_path / f"dst-{fmt}"
    for folder in (source, target):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
    TaskLog(source).append(records)
    exported = cli("--dir", str(source), "tasks", "export", "--format", fmt, "-o",
                   str(source / "out"))
    assert exported.code == 0, exported
    imported = cli("--dir", str(target), "tasks", "import", str(source / "out"), "--from", fmt)
    assert imported.code == 0, imported
    # Every task as it was, but a key the Ruby original does not know (a newer
    # writer's `future_key`): never in an imported task record (the Ruby reader would
    # drop the task), but in the import's note on the task, whole.
    ruby_keys = {"id", "description", "status", "priority", "created_at", "updated_at",
                 "session", "discovered_during", "started_at", "completed_at",
                 "abandoned_at", "abandoned_reason", "tags"}
    source_tasks = TaskLog(source).full_fold().tasks
    assert TaskLog(target).full_fold().tasks == {
        tid: {k: v for k, v in task.items() if k in ruby_keys}
        for tid, task in source_tasks.items()}
    notes = {r["task"]: r["text"] for r in map(json.loads, (
        target / TASKLIST).read_text().splitlines()) if r.get("type") == "note"}
    assert set(notes) == {tid for tid, t in source_tasks.items() if "future_key" in t}
    for tid, text in notes.items():
        assert text == (f"Imported from {fmt} ({tid}): "
                        + json.dumps({"future_key": source_tasks[tid]["future_key"]},
                                     separators=(",", ":"), ensure_ascii=False))
    again = cli("--dir", str(target), "tasks", "import", str(source / "out"), "--from", fmt)
    assert again.out.startswith(f"Imported 0 tasks from {fmt} ({len(records)} already")


def test_dependencies_become_work_queue_links(cli, project) -> None:
    assert cli("tasks", "import", str(DATA / "taskwarrior-export.json"), "--from",
               "taskwarrior").code == 0
    found = tasks_of(cli)
    blocked = json.loads(cli("tasks", "blocked", "--json").out)
    assert [(b["description"], b["blocked_by"]) for b in blocked] == [
        ("Write docs", [found["Fix the parser"]["id"]])]
    ready = [t["description"] for t in json.loads(cli("tasks", "ready", "--json").out)]
    assert "Write docs" not in ready and "Gone" in ready


def test_beads_links_an_epic_and_leaves_out_every_link_of_a_cycle(cli, project) -> None:
    issues = [
        {"id": "bd-1", "title": "Epic", "status": "open", "priority": 2},
        {"id": "bd-2", "title": "Child", "status": "open", "priority": 2,
         "dependencies": [{"issue_id": "bd-2", "depends_on_id": "bd-1", "type": "parent-child"}]},
        {"id": "bd-3", "title": "Chicken", "status": "open",
         "dependencies": [{"issue_id": "bd-3", "depends_on_id": "bd-4", "type": "blocks"}]},
        {"id": "bd-4", "title": "Egg", "status": "open",
         "dependencies": [{"issue_id": "bd-4", "depends_on_id": "bd-3", "type": "blocks"},
                          {"issue_id": "bd-4", "depends_on_id": "bd-404", "type": "blocks"}]},
    ]
    (project / "i.jsonl").write_text("".join(json.dumps(i) + "\n" for i in issues))
    assert cli("tasks", "import", "i.jsonl", "--from", "beads").code == 0
    found = tasks_of(cli)
    child = json.loads(cli("tasks", "show", found["Child"]["id"], "--json").out)
    assert child["parent"] == found["Epic"]["id"]
    # Both links of the cycle are left out (which one to keep would depend on the
    # order of the file): no dep record, and both stay in the notes.
    assert typed(project, "dep") == []
    notes = {n["task"]: n["text"] for n in typed(project, "note")}
    assert '"depends_on_id":"bd-3"' in notes[found["Egg"]["id"]]
    assert '"depends_on_id":"bd-4"' in notes[found["Chicken"]["id"]]
