"""Priority is shown by shape as well as colour (colour-blind readers, NO_COLOR, pipes),
and by ASCII markers where stdout cannot encode the shapes — never as \\U0001f7e1."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from aidp.views import render

SHAPES = {"high": "▲", "medium": "●", "low": "▼", "urgent": "◇"}
ASCII = {"high": "^", "medium": "-", "low": "v", "urgent": "?"}
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture
def tasks(cli, project: Path) -> dict[str, str]:
    ids = {p: json.loads(cli("tasks", "add", f"A {p} task", "-p", p, "--json").out)["id"]
           for p in ("high", "medium", "low")}
    # Another writer's priority this version does not know.
    tasklist = project / ".aidp" / "tasklist.jsonl"
    record = json.loads(tasklist.read_text().splitlines()[0])
    record.update(id="task_1700000000_0badc0de", priority="urgent", description="A urgent task")
    with tasklist.open("a") as handle:
        handle.write(json.dumps(record) + "\n")
    ids["urgent"] = record["id"]
    return ids


def _marker_of(out: str, description: str) -> str:
    line = next(line for line in out.splitlines() if description in line)
    return re.sub(r"^\s*(\d+\.\s)?", "", ANSI.sub("", line)).split(" ", 1)[0]


def test_every_priority_has_its_own_shape(cli, tasks) -> None:
    assert len(set(SHAPES.values())) == len(SHAPES)
    listed = cli("tasks", "list")
    ready = cli("tasks", "ready")
    for priority, shape in SHAPES.items():
        assert _marker_of(listed.out, f"A {priority} task") == shape, listed.out
        assert _marker_of(ready.out, f"A {priority} task") == shape, ready.out
    added = cli("tasks", "add", "Another", "-p", "low")
    assert added.out.startswith("✓ Added ▼ [")


def test_blocked_and_tree_views_show_the_shape(cli, tasks) -> None:
    cli("tasks", "add", "Waits", "-p", "high", "--blocked-by", tasks["low"])
    assert _marker_of(cli("tasks", "blocked").out, "Waits") == "▲"
    assert _marker_of(cli("tasks", "list", "--tree").out, "A low task") == "▼"


def test_the_shape_survives_colour(tasks) -> None:
    line = render.task_line({"id": tasks["high"], "priority": "high", "description": "x",
                             "status": "pending", "created_at": "2026-11-23T00:00:00Z"},
                            0, render.Painter(True))
    assert "\x1b[31m▲\x1b[0m" in line  # red, and still a triangle without the colour


def test_the_run_summary_shows_the_shape(cli, tasks, project) -> None:
    from aidp.agent.pending import pending_summary
    from aidp.tasklist.log import TaskLog

    lines = pending_summary(TaskLog(project).read())
    assert any(line.startswith("  ▲ A high task") for line in lines), lines
    assert any(line.startswith("  ▼ A low task") for line in lines), lines


NARROW = [("ascii", {"PYTHONIOENCODING": "ascii"}),
          ("ascii", {"LANG": "C", "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}),
          ("latin-1", {"PYTHONIOENCODING": "latin-1"})]


@pytest.mark.parametrize(("encoding", "env"), NARROW, ids=["ascii", "C", "latin-1"])
def test_a_narrow_stdout_gets_ascii_markers_not_escapes(tasks, project, encoding, env) -> None:
    def run(*args: str) -> str:
        proc = subprocess.run([sys.executable, "-m", "aidp", *args], cwd=project,
                              env={**os.environ, **env}, capture_output=True, timeout=120)
        assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc
        text = proc.stdout.decode(encoding)  # nothing the terminal cannot show
        assert "\\U0001f" not in text and "\\u25" not in text and "\\u2713" not in text, text
        return text

    listed, ready = run("tasks", "list"), run("tasks", "ready")
    for priority, marker in ASCII.items():
        assert _marker_of(listed, f"A {priority} task") == marker, listed
        assert _marker_of(ready, f"A {priority} task") == marker, ready
    assert run("tasks", "add", "Filed here", "-p", "high").startswith("+ Added ^ [")
    assert "Done:" in run("tasks", "done", tasks["low"])
    run("todo", "add", "A step")
    assert "TODO list" in run("todo", "show")
    assert "#" in run("tasks", "stats")  # the bars, in ASCII
    run("prime")
    run("tasks", "show", tasks["high"])
