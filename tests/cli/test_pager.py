"""The pager: the decision (made-up terminal sizes, never the real terminal's), and
`aidp` on a pseudo-terminal of a fixed size with a stand-in pager that records what it
is given; through a pipe, with --no-pager, or for JSON, never."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from aidp.views import pager

LONG = "\n".join(f"line {n}" for n in range(30)) + "\n"


@pytest.mark.parametrize(("text", "tty", "rows", "env", "disabled", "expected"), [
    (LONG, True, 24, {}, False, ["less"]),
    (LONG, True, 40, {}, False, None),  # fits the screen
    ("a\n" * 23, True, 24, {}, False, None),  # one row left for the prompt
    ("a\n" * 24, True, 24, {}, False, ["less"]),
    (LONG, False, 24, {}, False, None),  # a pipe or a file
    (LONG, True, 24, {}, True, None),  # --no-pager
    (LONG, True, 0, {}, False, None),  # no size known
    (LONG, True, 24, {"PAGER": "most -s"}, False, ["most", "-s"]),
    (LONG, True, 24, {"PAGER": "most", "AIDP_PAGER": "less -S"}, False, ["less", "-S"]),
    (LONG, True, 24, {"PAGER": "most", "AIDP_PAGER": ""}, False, None),
    (LONG, True, 24, {"PAGER": "cat"}, False, None),
    (LONG, True, 24, {"PAGER": "less 'unbalanced"}, False, None),
])
def test_the_decision(text, tty, rows, env, disabled, expected) -> None:
    assert pager.command(text, tty=tty, columns=80, rows=rows, env=env,
                         disabled=disabled) == expected


def test_long_lines_count_as_the_rows_they_wrap_to_and_colours_as_nothing() -> None:
    wide = ("x" * 200 + "\n") * 10  # 3 rows each at 80 columns
    assert pager.screen_lines(wide, 80) == 30
    assert pager.command(wide, tty=True, columns=80, rows=24, env={}) == ["less"]
    assert pager.command(wide, tty=True, columns=250, rows=24, env={}) is None
    painted = "\x1b[1;32m" + "y" * 80 + "\x1b[0m\n"
    assert pager.screen_lines(painted, 80) == 1


# --- on a pseudo-terminal ------------------------------------------------------------


def on_a_terminal(project: Path, *args: str, pager_out: Path | None = None,
                  rows: int = 24) -> str:
    """Run `aidp ARGS` with stdout on a pty of `rows` x 80 (LINES/COLUMNS say so too);
    what reached the terminal."""
    import fcntl
    import pty
    import struct
    import termios

    env = {**os.environ, "LINES": str(rows), "COLUMNS": "80", "NO_COLOR": "1"}
    if pager_out is not None:
        script = project.parent / "fake_pager.py"
        script.write_text("import sys\nopen(sys.argv[1], 'wb').write(sys.stdin.buffer.read())\n")
        env["AIDP_PAGER"] = (f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} "
                             f"{shlex.quote(str(pager_out))}")
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, 80, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "aidp", *args], stdin=subprocess.DEVNULL,
                            stdout=slave, stderr=subprocess.PIPE, env=env, cwd=project)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    return seen.decode().replace("\r\n", "\n")


@pytest.fixture
def forty(cli) -> None:
    for n in range(40):
        assert cli("tasks", "add", f"Task number {n}", "-q").code == 0


@pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal is POSIX")
def test_a_long_list_on_a_terminal_goes_through_the_pager(project, forty) -> None:
    out = project.parent / "paged.txt"
    shown = on_a_terminal(project, "tasks", "list", pager_out=out)
    assert shown == ""  # everything went to the pager
    paged = out.read_text()
    assert paged.splitlines()[0] == "PENDING (40)"
    assert all(f"Task number {n} " in paged for n in range(40))
    assert "more (--limit N" not in paged  # the pager shows it all, no screenful cut


@pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal is POSIX")
def test_no_pager_short_output_and_json_print_straight(project, forty) -> None:
    out = project.parent / "paged.txt"
    shown = on_a_terminal(project, "--no-pager", "tasks", "list", pager_out=out)
    assert shown.startswith("PENDING (18 of 40)") and "… and 22 more" in shown
    shown = on_a_terminal(project, "tasks", "list", "-n", "3", pager_out=out)
    assert shown.startswith("PENDING (3 of 40)")
    shown = on_a_terminal(project, "tasks", "list", "--json", pager_out=out)
    assert shown.count('"id"') == 40
    assert not out.exists()


def test_through_a_pipe_never(project, forty, aidp_proc) -> None:
    out = project.parent / "paged.txt"
    script = project.parent / "fake_pager.py"
    script.write_text("import sys\nopen(sys.argv[1], 'wb').write(sys.stdin.buffer.read())\n")
    result = aidp_proc("tasks", "list", cwd=project, env={
        "AIDP_PAGER": f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {out}"})
    assert result.code == 0 and result.out.count("Task number") == 40
    assert not out.exists()
