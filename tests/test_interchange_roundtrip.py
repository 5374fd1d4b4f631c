"""Export, then import into a fresh project: nothing the format carries is lost
(issue 35, item 8). Property tests over random backlogs, one per format, through the
command line: status (abandoned came back done from Beads), abandon reason, priority,
tags, assignee (dropped by every import), blockers and epic; type and close reason
(Beads, Markdown); Markdown (which could not be imported) keeps the ids, notes and
bodies too and exports back byte for byte. Importing a file again is a no-op."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aidp.backlog import queue, tasks
from aidp.core.errors import AidpError
from aidp.tasklist.log import TaskLog
from tests.test_interchange import RUBY_KEYS

WORD = st.text(alphabet="abcxyz()`#*_[]<>|\\—@:~!.-", min_size=1, max_size=6)
NAMES = st.sampled_from(["ann", "Bob Smith <bob@example.com>", "c_d (ops)", "e#f"])
spec = st.fixed_dictionaries({
    "words": st.lists(WORD, min_size=1, max_size=5),
    "priority": st.sampled_from(["high", "medium", "low"]),
    "tags": st.lists(st.sampled_from(["api", "ui", "x:y", "a#b", "p(1)"]), max_size=2,
                     unique=True),
    "status": st.sampled_from(["pending", "in_progress", "done", "abandoned"]),
    "assignee": st.one_of(st.none(), NAMES),
    "reason": st.one_of(st.none(), st.lists(WORD, min_size=1, max_size=4),
                        # what a format may use to mark an abandoned task, as a done task's
                        # close reason (backlog 5361)
                        st.sampled_from([["abandoned"], ["abandoned:", "old", "plan"],
                                         ["done:", "x"], ["done:", "abandoned:", "y"]])),
    "blocker": st.one_of(st.none(), st.integers(0, 6)),
    "parent": st.one_of(st.none(), st.integers(0, 6)),
    "note": st.one_of(st.none(), st.lists(WORD, min_size=1, max_size=4)),
    "body": st.one_of(st.none(), st.lists(st.sampled_from(
        ["## Steps", "- [ ] a list item", "", "  indented code", "text: with (parens)",
         "- [x] done `id`", "\tx"]), min_size=1, max_size=5)),
    "type": st.sampled_from(["task", "bug", "feature", "chore"]),
})


def build(root: Path, specs: list[dict]) -> None:
    """A backlog made with aidp's own writers: task n is described `tN …`."""
    log = TaskLog(root)
    ids: list[str] = []
    for n, item in enumerate(specs):
        earlier = ids[item["parent"] % len(ids)] if ids and item["parent"] is not None else None
        blocker = ids[item["blocker"] % len(ids)] if ids and item["blocker"] is not None else None
        text = f"t{n} " + " ".join(item["words"])
        body = "\n".join(item["body"]) if item["body"] else None
        try:
            task = queue.file(log, text, priority=item["priority"], tags=item["tags"],
                              blocked_by=[blocker] if blocker else [], parent=earlier,
                              body=body, task_type=item["type"]).task
        except AidpError:  # the links would close a cycle: none
            task = queue.file(log, text, priority=item["priority"], tags=item["tags"],
                              body=body, task_type=item["type"]).task
        tid = task["id"]
        ids.append(tid)
        if item["note"]:
            queue.note(log, tid, " ".join(item["note"]), author="ann")
        if item["assignee"] and item["status"] != "pending":
            try:
                queue.claim(log, tid, item["assignee"])
            except AidpError:
                pass  # an epic waiting on its children, a blocked task: no claim
        reason = " ".join(item["reason"]) if item["reason"] else None
        if item["status"] in ("abandoned", "done"):
            tasks.set_status(log, [tid], item["status"], reason=reason)
        elif item["status"] != "in_progress" or not item["assignee"]:
            tasks.set_status(log, [tid], item["status"])


def listed(cli, root: Path) -> list[dict]:
    """Every task as `show --json` gives it (a listing leaves bodies out)."""
    result = cli("--dir", str(root), "tasks", "list", "--all", "--format", "ids")
    assert result.code == 0, result
    found = []
    for tid in result.out.split():
        shown = cli("--dir", str(root), "tasks", "show", tid, "--json")
        assert shown.code == 0, shown
        found.append(json.loads(shown.out))
    return found


# What each format carries beyond status, priority, tags, abandon reason, assignee,
# blockers and epic (Taskwarrior: the body, type and close reason as aidp's UDAs)
CARRIES = {"markdown": ("task_type", "close_reason", "body", "id", "notes"),
           "beads": ("task_type", "close_reason"),
           "taskwarrior": ("task_type", "close_reason", "body")}


def comparable(found: list[dict], fmt: str) -> dict[str, dict]:
    """What the format carries, per task (keyed by its description), with the links
    named by description too (an import of a foreign format files new ids)."""
    name = {t["id"]: t["description"] for t in found}
    out = {}
    for task in found:
        shown = {key: task.get(key) for key in ("status", "priority", "abandoned_reason",
                                                "assignee", "task_type", "close_reason",
                                                "body", "id")
                 if key in CARRIES[fmt] or key in ("status", "priority", "abandoned_reason",
                                                   "assignee")}
        if "task_type" in shown and task.get("children") and not shown["task_type"]:
            shown["task_type"] = "epic"  # what Beads calls a task with children
        shown["tags"] = sorted(task["tags"])
        shown["blocked_by"] = sorted(name[b] for b in task.get("blocked_by", ()))
        shown["parent"] = name.get(task.get("parent", ""))
        if "notes" in CARRIES[fmt]:
            shown["notes"] = [(n.get("author"), n["text"]) for n in task.get("notes", ())]
        out[task["description"]] = shown
    return out


def round_trip(cli, where: Path, fmt: str, specs: list[dict]) -> None:
    first, second = where / "first", where / "second"
    first.mkdir()
    second.mkdir()
    build(first, specs)
    exported = cli("--dir", str(first), "tasks", "export", "-f", fmt)
    assert exported.code == 0, exported
    path = where / f"backlog.{fmt}"
    path.write_text(exported.out)
    imported = cli("--dir", str(second), "tasks", "import", str(path), "--from", fmt)
    assert imported.code == 0, imported
    before, after = listed(cli, first), listed(cli, second)
    assert len(after) == len(before)
    native = fmt == "markdown"
    assert comparable(after, fmt) == comparable(before, fmt)
    tasklist = second / ".aidp" / "tasklist.jsonl"
    data = tasklist.read_bytes()
    for line in data.decode().splitlines():  # the Ruby original reads every task line
        record = json.loads(line)
        assert "type" in record or set(record) <= RUBY_KEYS, record
    again = cli("--dir", str(second), "tasks", "import", str(path), "--from", fmt)
    assert again.code == 0 and f"({len(before)} already imported)" in again.out, again
    assert tasklist.read_bytes() == data  # a no-op
    if native:
        back = cli("--dir", str(second), "tasks", "export", "-f", fmt)
        assert back.out == exported.out


@pytest.mark.parametrize("fmt", ["markdown", "beads", "taskwarrior"])
def test_a_round_trip_loses_nothing_the_format_carries(cli, tmp_path_factory, fmt: str
                                                       ) -> None:
    @settings(max_examples=25, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(specs=st.lists(spec, min_size=1, max_size=6))
    def check(specs: list[dict]) -> None:
        round_trip(cli, tmp_path_factory.mktemp(fmt), fmt, specs)

    check()


ABANDONED = {"words": ["dead", "end"], "priority": "high", "tags": ["api"],
             "status": "abandoned", "assignee": "ann", "reason": ["superseded", "by", "x"],
             "blocker": None, "parent": None, "note": None, "body": None, "type": "task"}


@pytest.mark.parametrize("fmt", ["markdown", "beads", "taskwarrior"])
def test_an_abandoned_task_comes_back_abandoned_with_its_reason_and_assignee(
        cli, tmp_path: Path, fmt: str) -> None:
    round_trip(cli, tmp_path, fmt, [ABANDONED, {**ABANDONED, "words": ["live"],
                                                "status": "in_progress", "reason": None}])
    task = {t["description"]: t for t in listed(cli, tmp_path / "second")}
    assert (task["t0 dead end"]["status"], task["t0 dead end"]["abandoned_reason"]) == (
        "abandoned", "superseded by x")
    assert task["t0 dead end"]["assignee"] == task["t1 live"]["assignee"] == "ann"


@pytest.mark.parametrize("fmt", ["markdown", "beads", "taskwarrior"])
def test_a_done_task_whose_reason_reads_like_an_abandon_stays_done(
        cli, tmp_path: Path, fmt: str) -> None:
    """Beads has no abandoned status: an export closes an abandoned task with the reason
    `abandoned: WHY`; a done task closed with such a reason must not come back abandoned."""
    done = {**ABANDONED, "status": "done", "assignee": None}
    round_trip(cli, tmp_path, fmt, [
        {**done, "words": ["a"], "reason": ["abandoned:", "the", "old", "plan"]},
        {**done, "words": ["b"], "reason": ["abandoned"]},
        {**done, "words": ["c"], "reason": ["done:", "abandoned"]},
        {**ABANDONED, "words": ["d"]}])
    task = {t["description"]: t for t in listed(cli, tmp_path / "second")}
    assert [(task[f"t{n} {w}"]["status"], task[f"t{n} {w}"].get("close_reason"))
            for n, w in enumerate("abc")] == [
        ("done", "abandoned: the old plan"), ("done", "abandoned"),
        ("done", "done: abandoned")]
    assert (task["t3 d"]["status"], task["t3 d"]["abandoned_reason"]) == (
        "abandoned", "superseded by x")


def test_markdown_that_is_not_an_aidp_export_is_refused_whole(cli, tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("# Backlog\n\n## Pending (1)\n\n- [ ] Buy milk\n")
    result = cli("tasks", "import", str(path), "--from", "markdown")
    assert (result.code, result.out) == (2, ""), result
    assert result.err == (f"Error: {path}: line 5: is not a line of aidp's Markdown export "
                          "(`- [ ] TEXT (PRIORITY) #TAG `ID`` under a `## STATUS (N)` "
                          "heading, then its notes and body indented); nothing was "
                          "imported\n")
    assert not (tmp_path / "project" / ".aidp").exists()
