"""`tasks export` keeps the work queue where the format can carry it (Beads
dependencies, parent, assignee and comments; Taskwarrior `depends`, annotations and
UDAs; Markdown), and the importers read it back: into the same backlog a re-import
files nothing and writes nothing, into a fresh one the links come back."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from aidp.interchange.taskwarrior import NAMESPACE


def ok(cli, *args: str) -> str:
    result = cli(*args)
    assert result.code == 0, result
    return result.out


@pytest.fixture
def world(cli, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """An epic with a child that waits on a blocker alice holds; a note on the child."""
    monkeypatch.setenv("AIDP_ACTOR", "alice")
    ids = {"epic": ok(cli, "tasks", "add", "Epic", "-q").strip(),
           "blocker": ok(cli, "tasks", "add", "Blocker", "-p", "high", "-q").strip()}
    ids["child"] = ok(cli, "tasks", "add", "Child", "--parent", ids["epic"], "--blocked-by",
                      ids["blocker"], "-q").strip()
    ok(cli, "tasks", "claim", ids["blocker"])
    ok(cli, "tasks", "note", ids["child"], "Read docs/x.md first")
    return ids


def tasklist(project: Path) -> bytes:
    return (project / ".aidp" / "tasklist.jsonl").read_bytes()


def export(cli, project: Path, fmt: str) -> Path:
    path = project.parent / f"export.{fmt}"
    result = cli("tasks", "export", "-f", fmt, "-o", str(path))
    assert result.code == 0, result
    return path


def reimport_is_a_no_op(cli, project: Path, path: Path, fmt: str) -> None:
    before = tasklist(project)
    result = cli("tasks", "import", str(path), "--from", fmt)
    assert result.code == 0, result
    assert result.out == f"Imported 0 tasks from {fmt} (3 already imported)\n"
    assert tasklist(project) == before


def fresh_links(cli, project: Path, path: Path, fmt: str) -> dict[str, dict]:
    """Import `path` into a new project: its tasks by description, with queue keys."""
    other = project.parent / f"fresh-{fmt}"
    other.mkdir()
    assert cli("--dir", str(other), "tasks", "import", str(path), "--from", fmt).code == 0
    listed = json.loads(ok(cli, "--dir", str(other), "tasks", "list", "--all", "--json"))
    return {t["description"]: t for t in listed}


def test_beads_export_carries_the_queue(cli, project, world) -> None:
    path = export(cli, project, "beads")
    issues = {i["title"]: i for i in map(json.loads, path.read_text().splitlines())}
    bid = {name: "aidp-" + tid.rpartition("_")[2] for name, tid in world.items()}
    assert issues["Epic"]["issue_type"] == "epic" and issues["Child"]["issue_type"] == "task"
    assert issues["Child"]["dependencies"] == [
        {"issue_id": bid["child"], "depends_on_id": bid["blocker"], "type": "blocks"},
        {"issue_id": bid["child"], "depends_on_id": bid["epic"], "type": "parent-child"}]
    assert issues["Blocker"]["assignee"] == "alice"
    assert issues["Blocker"]["status"] == "in_progress"
    [comment] = issues["Child"]["comments"]
    assert (comment["issue_id"], comment["author"], comment["text"]) == (
        bid["child"], "alice", "Read docs/x.md first")
    assert "dependencies" not in issues["Epic"] and "assignee" not in issues["Epic"]
    reimport_is_a_no_op(cli, project, path, "beads")
    fresh = fresh_links(cli, project, path, "beads")
    assert fresh["Child"]["blocked_by"] == [fresh["Blocker"]["id"]]
    assert fresh["Child"]["parent"] == fresh["Epic"]["id"]


def test_taskwarrior_export_carries_the_queue(cli, project, world) -> None:
    path = export(cli, project, "taskwarrior")
    tasks = {t["description"]: t for t in json.loads(path.read_text())}
    tw = {name: str(uuid.uuid5(NAMESPACE, tid)) for name, tid in world.items()}
    child = tasks["Child"]
    assert child["depends"] == [tw["blocker"]]
    assert child["aidp_parent"] == tw["epic"]
    assert [a["description"] for a in child["annotations"]] == ["alice: Read docs/x.md first"]
    assert tasks["Blocker"]["aidp_assignee"] == "alice"
    assert "depends" not in tasks["Epic"] and "annotations" not in tasks["Epic"]
    reimport_is_a_no_op(cli, project, path, "taskwarrior")
    fresh = fresh_links(cli, project, path, "taskwarrior")
    assert fresh["Child"]["blocked_by"] == [fresh["Blocker"]["id"]]


def test_markdown_export_shows_the_queue(cli, project, world) -> None:
    text = export(cli, project, "markdown").read_text()
    lines = text.splitlines()
    child = next(line for line in lines if line.startswith("- [ ] Child"))
    assert child == (f"- [ ] Child (medium) `{world['child']}` (waits on `{world['blocker']}`) "
                     f"(epic `{world['epic']}`)")
    assert lines[lines.index(child) + 1] == "  - alice: Read docs/x.md first"
    assert f"`{world['blocker']}` @alice" in text


def test_jsonl_and_csv_exports_stay_task_records(cli, project, world) -> None:
    """The formats without a place for the queue write task records only: aidp's
    own jsonl is the records exactly as stored (docs/file-format.md, "Task records")."""
    records = [json.loads(line) for line in export(cli, project, "jsonl").read_text()
               .splitlines()]
    assert all(not {"blocked_by", "parent", "assignee", "notes"} & set(r) for r in records)
    header = export(cli, project, "csv").read_text().splitlines()[0]
    assert "blocked_by" not in header and "assignee" not in header
