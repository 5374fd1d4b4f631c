"""What a newcomer's first week tripped over (issue 35, item 17), each as they met it:
an empty listing that names no filter, an empty group, counts that disagree, a hint
toward the wrong option, a cut totals line, no hint for `edit -t`, help broken
mid-sentence, a lock notice for a wait nobody notices, "1 times"."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest


def add(cli, text: str, *args: str) -> str:
    result = cli("tasks", "add", text, "-q", *args)
    assert result.code == 0, result
    return result.out.strip()


def on_a_terminal(project: Path, *args: str, columns: int = 80, lines: int = 24) -> str:
    """`aidp ARGS` with stdout on a pseudo-terminal of that size, no pager, no colour."""
    env = {**os.environ, "AIDP_DIR": str(project), "COLUMNS": str(columns),
           "LINES": str(lines), "NO_COLOR": "1", "AIDP_PAGER": ""}
    main, secondary = pty.openpty()
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
    try:
        proc = subprocess.run([sys.executable, "-m", "aidp", *args], env=env,
                              stdout=secondary, stderr=subprocess.PIPE, timeout=120)
        os.close(secondary)
        out = b""
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
    finally:
        os.close(main)
    assert proc.returncode == 0, proc.stderr
    return out.decode().replace("\r\n", "\n")


def test_a_filter_that_matches_nothing_names_it(cli) -> None:
    for n in range(3):
        add(cli, f"Open {n}")
    done = add(cli, "Finished")
    assert cli("tasks", "done", done).code == 0
    cases = {
        ("-p", "high"): "No open tasks match --priority high (3 open tasks in all)\n",
        ("-t", "ci", "--since", "7d"):
            "No open tasks match --tag ci --since 7d (3 open tasks in all)\n",
        ("--grep", "rate limit"): "No open tasks match --grep 'rate limit' (3 open tasks in all)\n",
        ("done", "-p", "low"): "No done tasks match --priority low (1 done task in all)\n",
        ("--all", "--session", "elsewhere"):
            "No tasks match --session elsewhere (4 tasks in all)\n",
        ("abandoned",): "No abandoned tasks\n",
    }
    for args, says in cases.items():
        result = cli("tasks", "list", *args)
        assert (result.code, result.out, result.err) == (0, says, ""), args
    # machine formats keep their contract
    assert cli("tasks", "list", "-p", "high", "--json").out == "[]\n"


def test_a_limit_never_prints_an_empty_group(cli) -> None:
    for n in range(3):
        assert cli("tasks", "start", add(cli, f"Started {n}")).code == 0
    add(cli, "Newest, pending")
    result = cli("tasks", "list", "-n", "1")
    assert result.code == 0
    assert "(0 of" not in result.out and "IN PROGRESS" not in result.out
    assert result.out == ("PENDING (1)\n"
                          f"  ● [{result.out.split('[')[1].split(']')[0]}] Newest, pending "
                          "(today)\n\nNot shown: 3 in progress (-n 4 shows them all)\n")


def test_blocked_says_of_how_many_as_ready_does(cli) -> None:
    blocker = add(cli, "Blocker")
    add(cli, "Also ready")
    for n in range(3):
        add(cli, f"Waiting {n}", "--blocked-by", blocker)
    blocked = cli("tasks", "blocked", "-n", "2").out.splitlines()[0]
    ready = cli("tasks", "ready", "-n", "1").out.splitlines()[0]
    assert (blocked, ready) == ("BLOCKED (2 of 3)", "READY (1 of 2)")
    assert cli("tasks", "blocked").out.splitlines()[0] == "BLOCKED (3)"


def test_the_cut_off_hint_offers_the_limit_that_shows_them_all(cli, project: Path) -> None:
    for n in range(30):
        add(cli, f"Open task {n}")
    closed = add(cli, "Closed task")
    assert cli("tasks", "done", closed).code == 0
    shown = on_a_terminal(project, "tasks", "list", lines=24)  # room for 18
    assert shown.count("] Open task ") == 18
    assert shown.rstrip().endswith("… and 12 more (-n 30 shows them all)")
    everything = on_a_terminal(project, "tasks", "list", "-n", "30", lines=24)
    assert everything.count("] Open task ") == 30 and "Closed task" not in everything
    assert "more" not in everything


def test_stats_at_40_columns_cuts_no_line(project: Path) -> None:
    # 1,500 tasks filed in the last weeks, 150 of them done: a totals line of 44
    # characters, which used to end `(last 12 weeks: 1,500 filed, 150 finish…`.
    from aidp.core.model import format_ts, now_micros

    now = now_micros()
    (project / ".aidp").mkdir()
    with open(project / ".aidp" / "tasklist.jsonl", "w") as out:
        for n in range(1500):
            stamp = format_ts(now - n * 60_000_000)
            record = {"id": f"task_1700000000_{n:08x}", "description": f"Task {n}",
                      "status": "done" if n < 150 else "pending", "priority": "medium",
                      "created_at": stamp, "updated_at": stamp, "tags": ["area"]}
            if n < 150:
                record["completed_at"] = stamp
            out.write(json.dumps(record) + "\n")
    shown = on_a_terminal(project, "tasks", "stats", columns=40)
    lines = shown.splitlines()
    assert all(len(line) <= 40 for line in lines), [x for x in lines if len(x) > 40]
    assert "…" not in shown
    # the weeks' totals, broken between words instead of cut
    at = next(n for n, line in enumerate(lines) if line == "Filed vs finished per week")
    assert lines[at + 1:at + 3] == ["(last 12 weeks: 1,500 filed, 150", " finished)"]
    one = on_a_terminal(project, "tasks", "stats", "--tag", "nothing-has-this", columns=40)
    assert one.startswith("0 tasks:")


def test_edit_dash_t_points_at_add_tag(cli, project: Path) -> None:
    tid = add(cli, "Untagged")
    before = (project / ".aidp" / "tasklist.jsonl").read_bytes()
    result = cli("tasks", "edit", tid, "-t", "backend")
    assert (result.code, result.out) == (2, "")
    assert result.err == ("Error: No such option: -t (-t is --tag elsewhere; here: "
                          "--add-tag T or --remove-tag T)\n")
    assert (project / ".aidp" / "tasklist.jsonl").read_bytes() == before
    # an option the command has nothing like keeps the usual pointer to its help
    assert cli("tasks", "blocked", "-s", "x").err == (
        "Error: No such option: -s (see 'aidp tasks blocked --help')\n")


@pytest.mark.parametrize("group", [[], ["tasks"], ["todo"]])
def test_help_lists_each_command_on_one_line_when_there_is_room(
        cli, monkeypatch: pytest.MonkeyPatch, group: list[str]) -> None:
    # A docstring's own line breaks used to show: `init  Create … diff rules in` and
    # then `.gitattributes …` on the next line, with most of the width unused.
    monkeypatch.setenv("COLUMNS", "400")
    out = cli(*group, "--help").out
    panel = out[out.index("─ Commands "):]
    rows = [line.strip("│ ").rstrip() for line in panel.splitlines()[1:]
            if line.startswith("│")]
    assert rows and all(re.match(r"\w[\w-]* {2,}\S", row) for row in rows), rows


def test_a_wait_nobody_notices_is_not_announced(project: Path) -> None:
    # Waits under a second say nothing: here a holder that never lets go and a writer
    # that gives up after 0.5 s says only why it gave up.
    (project / ".aidp").mkdir()
    lock = project / ".aidp" / "tasklist.jsonl.lock"
    with open(lock, "w") as holder:
        fcntl.flock(holder, fcntl.LOCK_EX)
        writer = subprocess.run([sys.executable, "-m", "aidp", "--lock-timeout", "0.5",
                                 "tasks", "add", "patient"], capture_output=True, text=True,
                                timeout=120, env={**os.environ, "AIDP_DIR": str(project)})
    assert writer.returncode == 1
    assert "Waiting for" not in writer.stderr
    assert writer.stderr.startswith("Error: Timed out after 0.5s waiting for the lock")


def test_one_follow_up_is_one_time(cli, tmp_path: Path) -> None:
    tid = add(cli, "Never closed")
    agent = tmp_path / "lazy.sh"
    agent.write_text("cat > /dev/null\necho 'Looked at it.'\n")
    result = cli("run", "--backlog", "--max-continuations", "0", "--agent",
                 f"/bin/sh {agent}")
    assert result.code == 0, result
    assert "(the agent stopped 1 time without closing it)" in result.out
    assert "1 times" not in result.out + result.err
    assert json.loads(cli("tasks", "show", tid, "--json").out)["status"] == "pending"


def test_ready_shows_a_page_and_says_how_many_more(cli) -> None:
    # Not at a terminal (a script, an agent's shell tool): 20, then how many in all and
    # how to see more; --all, --limit and the machine formats give what they ask for.
    for n in range(25):
        add(cli, f"Ready task {n}")
    page = cli("tasks", "ready").out.splitlines()
    assert page[0] == "READY (20 of 25)"
    assert sum("] Ready task " in line for line in page) == 20
    assert page[-1] == "(20 of 25 ready; --limit N or --all)"
    every = cli("tasks", "ready", "--all").out.splitlines()
    assert every[0] == "READY (25)" and len(every) == 26
    limited = cli("tasks", "ready", "-n", "22").out.splitlines()
    assert limited[0] == "READY (22 of 25)" and len(limited) == 23
    assert len(json.loads(cli("tasks", "ready", "--json").out)) == 25
    assert len(cli("tasks", "ready", "-f", "ids").out.split()) == 25
    both = cli("tasks", "ready", "--all", "-n", "3")
    assert (both.code, both.out) == (2, "")
    assert both.err == "Error: Conflicting --all and --limit: give one of them\n"


def test_ready_at_a_terminal_shows_what_fits(cli, project: Path) -> None:
    for n in range(30):
        add(cli, f"Ready task {n}")
    shown = on_a_terminal(project, "tasks", "ready", lines=24)  # room for 18
    assert shown.count("] Ready task ") == 18
    assert shown.startswith("READY (18 of 30)")
    assert shown.rstrip().endswith("(18 of 30 ready; --limit N or --all)")
    assert on_a_terminal(project, "tasks", "ready", "--all", lines=24).count("] Ready") == 30
