"""`aidp report --html FILE [--open]`: what is written, and the errors around it.
(The page in a real browser: tests/browser/test_report_browser.py.)"""

from __future__ import annotations

import json
import os
import re
import stat
import sys

from aidp.app.project import Project
from aidp.app.report import report_data
from aidp.core.model import new_task, now_micros
from aidp.tasklist.log import TaskLog
from aidp.views import page


def test_writes_one_self_contained_page(cli, project) -> None:
    a = cli("tasks", "add", "First", "-t", "x", "-q").out.strip()
    b = cli("tasks", "add", "Second", "-q").out.strip()
    cli("tasks", "block", b, "--on", a)
    cli("todo", "add", "Plan the work")
    result = cli("report", "--html", "report.html")
    assert result.code == 0 and result.out == ""
    assert result.err == "Wrote report.html: 2 tasks, 1 TODO list\n"
    html = (project / "report.html").read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)  # nothing fetched
    assert html.count("<svg class=\"chart\"") == 6
    assert "First" in html and "Plan the work" in html
    def embedded(name: str):
        found = re.search(rf'<script type="application/json" id="{name}">(.*?)</script>', html,
                          re.DOTALL)
        return json.loads(found.group(1))

    tasks = embedded("task-data")
    assert sorted(t["description"] for t in tasks) == ["First", "Second"]
    assert tasks == list(TaskLog(project).full_fold().tasks.values())  # as stored
    assert embedded("queue-data") == {b: {"blocked_by": [a]}}
    assert not list(project.glob(".report.html.*.tmp"))


def test_markup_in_tasks_cannot_leave_its_place(project) -> None:
    evil = "</script><script>alert(1)</script><b>&"
    TaskLog(project).append([new_task(evil, tags=["<i>"])])
    data = report_data(Project(project), now=now_micros())
    html = page.build(data)
    assert html.count("<script") == 3  # two data blocks and the page's own script
    assert "\\u003c/script\\u003e" in html and "&lt;b&gt;&amp;" in html


def test_report_data_has_the_queue_and_every_todo_list(cli, project) -> None:
    a = cli("tasks", "add", "Base", "-p", "high", "-q").out.strip()
    b = cli("tasks", "add", "On top", "-q").out.strip()
    cli("tasks", "block", b, "--on", a)
    cli("--session", "one", "todo", "add", "Step")
    cli("--session", "two", "todo", "add", "Other step")
    cli("--session", "two", "todo", "clear")
    data = report_data(Project(project), now=now_micros(),
                                current_session="one")
    assert data["queue"] == {"ready": [a], "blocked": [{"id": b, "waiting_on": [a]}]}
    assert data["extras"][b] == {"blocked_by": [a]}
    assert [(t["session"], t["current"], t["active"]) for t in data["todos"]] == [
        ("one", True, True), ("two", False, False)]
    assert data["todos"][1]["items"][0]["content"] == "Other step"  # what it held
    assert len(data["burndown"]) == 84 and data["burndown"][-1]["open"] == 2


def test_report_data_joins_each_task_as_every_surface_shows_it(cli, project) -> None:
    """The keys a task shows beside its record (queue.shown) reach the page's data: a
    closed bug's type and close reason too, not only the queue's links and claims."""
    bug = cli("tasks", "add", "A bug", "--type", "bug", "-q").out.strip()
    cli("tasks", "done", bug, "--reason", "fixed in the parser")
    cli("tasks", "note", bug, "Seen on Tuesday")
    data = report_data(Project(project), now=now_micros())
    (full,) = [t["id"] for t in data["tasks"]]
    shown = json.loads(cli("tasks", "show", bug, "--json").out)
    assert data["extras"][full] == {"task_type": "bug", "close_reason": "fixed in the parser"}
    assert {k: v for k, v in shown.items() if k in data["extras"][full]} == \
        data["extras"][full]
    assert "notes" in shown  # the page shows no notes: left out of its data


def test_html_is_required_and_must_name_a_file(cli, project) -> None:
    missing = cli("report")
    assert missing.code == 2 and "Missing option '--html'" in missing.err
    (project / "folder").mkdir()
    folder = cli("report", "--html", "folder")
    assert folder.code == 2
    assert folder.err == "Error: Invalid --html 'folder': it is a folder; name a file to write\n"
    (project / "locked").mkdir()
    (project / "locked").chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        if os.geteuid() != 0:  # root writes anyway
            denied = cli("report", "--html", "locked/r.html")
            assert denied.code == 1 and denied.err.startswith("Error: Cannot write locked/r.html")
    finally:
        (project / "locked").chmod(stat.S_IRWXU)


def test_open_hands_the_file_url_to_the_browser(aidp_proc, project, tmp_path) -> None:
    opened = tmp_path / "opened.txt"
    fake = tmp_path / "fake-browser"
    fake.write_text(f"#!{sys.executable}\nimport sys\nopen({str(opened)!r}, 'w')"
                    ".write(sys.argv[1])\n")
    fake.chmod(0o755)
    result = aidp_proc("report", "--html", "r.html", "--open", cwd=project,
                       env={"BROWSER": str(fake), "AIDP_DIR": str(project)})
    assert result.code == 0, result
    assert opened.read_text() == (project / "r.html").resolve().as_uri()


def test_report_is_listed_in_help(cli) -> None:
    listed = cli("--help").out
    assert re.search(r"│ report +One self-contained HTML page", listed), listed


def test_a_task_without_priority_is_medium_on_the_page_too(project) -> None:
    """model.priority_key: a missing or null priority is medium in every view."""
    task = new_task("No priority stored")
    TaskLog(project).append([{**task, "priority": None}])
    html = page.build(report_data(Project(project), now=now_micros()))
    assert '<span class="pri pri-medium">medium</span> No priority stored' in html
    assert "p: t.priority == null ? 'medium'" in html  # the table's rows read it alike
