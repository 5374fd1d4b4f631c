"""NUL bytes: damage that costs what finding it costs (issue 35, item 18). A crash can
leave a tasklist with a zero-filled tail, and `truncate -s +1G` a sparse one: no JSON
text holds a NUL, so such a line is one damaged line however long, read no further
than it takes to see a NUL, and a hole is never read at all (docs/file-format.md,
"Damage"). CSV import refuses a NUL as it refuses the other control characters.

Memory is measured as the peak RSS of the one `aidp` process, with a generous bound:
before, a gigabyte's tail took 2.1 GB. No timing is asserted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

GIB = 1 << 30
# Far above what aidp needs (about 30 MB here), far below a gigabyte held whole.
PEAK_MB = 200

MEASURE = """\
import json, resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
print(json.dumps([done.returncode, done.stdout, done.stderr,
                  resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024]))
"""


def measured(project: Path, *args: str) -> tuple[int, str, str, int]:
    """(exit code, stdout, stderr, peak RSS in MB) of `aidp ARGS` run in the project."""
    env = {**os.environ, "AIDP_DIR": str(project)}
    wrapper = subprocess.run([sys.executable, "-c", MEASURE, sys.executable, "-m", "aidp",
                              *args], capture_output=True, text=True, env=env, timeout=600)
    assert wrapper.returncode == 0, wrapper.stderr
    code, out, err, peak = json.loads(wrapper.stdout)
    return code, out, err, peak


def add(project: Path, text: str) -> None:
    done = subprocess.run([sys.executable, "-m", "aidp", "tasks", "add", text, "-q"],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "AIDP_DIR": str(project)})
    assert done.returncode == 0, done.stderr


def grow_sparse(path: Path, by: int) -> None:
    """`truncate -s +BY`: a hole at the end (skip where the file system has none)."""
    os.truncate(path, path.stat().st_size + by)
    if path.stat().st_blocks * 512 > 16 << 20:
        pytest.skip("this file system keeps no sparse files: the test would write GBs")


@pytest.fixture
def tasklist(project: Path) -> Path:
    for n in range(3):
        add(project, f"Task {n}")
    return project / ".aidp" / "tasklist.jsonl"


def test_a_sparse_gigabyte_tail_is_one_damaged_line_read_cheaply(project: Path,
                                                                  tasklist: Path) -> None:
    grow_sparse(tasklist, GIB)
    for args in (["tasks", "list"], ["tasks", "list"], ["tasks", "list", "--json"],
                 ["tasks", "stats", "--json"], ["tasks", "ready"]):
        code, _out, err, peak = measured(project, *args)
        assert code == 0, (args, err)
        assert err == (f"Warning: skipped 1 damaged line in {tasklist}; run 'aidp tasks "
                       "repair' to remove them\n"), args
        assert peak < PEAK_MB, (args, peak)
    assert "Task 0" in measured(project, "tasks", "list")[1]
    assert json.loads(measured(project, "tasks", "stats", "--json")[1])["total"] == 3


def test_readers_of_the_lines_pay_no_more(project: Path, tasklist: Path) -> None:
    # history and `todo list --all` read the lines themselves (before: 3.1 GB, 2.1 GB)
    tid = json.loads(measured(project, "tasks", "list", "--json")[1])[0]["id"]
    assert measured(project, "todo", "add", "A step")[0] == 0
    grow_sparse(tasklist, GIB)
    for args, shows in ((["tasks", "history", tid], "created: Task 2"),
                        (["todo", "list", "--all"], "1 item: 1 pending"),
                        (["tasks", "show", tid], "Task 2")):
        code, out, err, peak = measured(project, *args)
        assert code == 0 and shows in out, (args, out, err)
        assert peak < PEAK_MB, (args, peak)


def test_nul_runs_inside_the_file_and_at_its_end_and_their_repair(project: Path,
                                                                  tasklist: Path) -> None:
    # A crash's zeros, then a task appended after them (on a line of its own), then
    # zeros again: two damaged lines, every task still read.
    grow_sparse(tasklist, GIB)
    add(project, "After the zeros")
    grow_sparse(tasklist, GIB)
    code, out, err, peak = measured(project, "tasks", "list")
    assert code == 0 and peak < PEAK_MB, (err, peak)
    assert out.count("] Task ") == 3 and "After the zeros" in out
    assert "skipped 2 damaged lines" in err
    code, out, err, peak = measured(project, "tasks", "repair", "--dry-run")
    assert code == 0 and peak < PEAK_MB, (err, peak)
    assert out.startswith("Would remove 2 damaged line(s) (line 4, 6); 4 lines would stay")
    damaged_size = tasklist.stat().st_size
    code, out, err, peak = measured(project, "tasks", "repair")
    assert code == 0 and peak < PEAK_MB, (err, peak)
    assert tasklist.stat().st_size < 4096
    backup = next((project / ".aidp" / "backups").iterdir())
    # the backup keeps the file as it was, holes and all (not 2 GB of zeros on disk)
    assert backup.stat().st_size == damaged_size
    assert backup.stat().st_blocks * 512 < 16 << 20
    code, out, err, _peak = measured(project, "tasks", "list")
    assert (code, err) == (0, "") and out.count("] Task ") == 3


def test_a_long_line_with_a_nul_among_real_bytes_is_damage(project: Path,
                                                           tasklist: Path) -> None:
    # Not a hole: 3 MB of text with one NUL in the middle, then a newline: one damaged
    # line (longer than a chunk), and the tasks after it still read.
    with open(tasklist, "ab") as out:
        out.write(b"x" * (3 << 20) + b"\0" + b"y" * (3 << 20) + b"\n")
    add(project, "After the long line")
    code, out, err, _peak = measured(project, "tasks", "list")
    assert code == 0 and "After the long line" in out and out.count("] Task ") == 3
    assert "skipped 1 damaged line" in err
    # and a store built from it answers alike, from the second read on
    assert measured(project, "tasks", "list")[1] == out


@pytest.mark.parametrize(("cells", "says"), [
    (b"title,tags\nab\0cd,x\n",
     "line 2: column 'title' holds a NUL byte (\\x00: is the file UTF-16? save it as UTF-8)"),
    (b"title,tags\nfine,x\nalso fine,y\0\n",
     "line 3: column 'tags' holds a NUL byte"),
    (b"title,notes\nab,\"two\nlines\"\nc\x1bd,x\n",
     "line 4: column 'title' holds a control character ('\\x1b')"),
    (b"ti\0tle\nx\n", "line 1: column 1 holds a NUL byte"),
])
def test_csv_import_refuses_a_nul_as_any_control_character(cli, project: Path, cells: bytes,
                                                          says: str) -> None:
    # Before: the NUL was dropped without a word ("abcd" filed).
    assert cli("tasks", "add", "Already here").code == 0
    before = (project / ".aidp" / "tasklist.jsonl").read_bytes()
    (project / "in.csv").write_bytes(cells)
    result = cli("tasks", "import", "in.csv", "--from", "csv")
    assert (result.code, result.out) == (2, "")
    assert result.err.startswith(f"Error: in.csv: {says}"), result.err
    assert result.err.endswith("; only tab and line breaks are taken; nothing was imported\n")
    assert result.err.count("\n") == 1
    assert (project / ".aidp" / "tasklist.jsonl").read_bytes() == before


def test_csv_import_takes_tabs_and_line_breaks(cli, project: Path) -> None:
    (project / "in.csv").write_bytes(b"title,notes\r\n\"Two\r\nlines\",\"a\ttab\"\r\n")
    result = cli("tasks", "import", "in.csv", "--from", "csv")
    assert result.code == 0, result
    assert json.loads(cli("tasks", "list", "--json").out)[0]["description"] == "Two lines"
