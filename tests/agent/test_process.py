"""The agent process runner: live lines, stdin, exit codes, deadline and process group."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from aidp.agent import process


def script(tmp_path: Path, body: str, name: str = "agent.py") -> list[str]:
    path = tmp_path / name
    path.write_text("import os, subprocess, sys, time\n" + body, encoding="utf-8")
    return [sys.executable, str(path)]


def collect(argv: list[str], cwd: Path, *, stdin_text: str | None = None,
            deadline: float | None = None) -> tuple[process.Finished, list[tuple[str, str]]]:
    lines: list[tuple[str, str]] = []
    finished = process.run(argv, cwd=cwd, env=dict(os.environ), stdin_text=stdin_text,
                           on_line=lambda stream, line: lines.append((stream, line)),
                           deadline=deadline)
    return finished, lines


def gone(pid: int) -> bool:
    """The process no longer runs (a zombie waiting for its reaper counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def wait_until_gone(pid: int, limit: float = 20.0) -> bool:
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if gone(pid):
            return True
        time.sleep(0.02)
    return gone(pid)


def test_lines_arrive_per_stream_with_a_last_partial_line(tmp_path: Path) -> None:
    argv = script(tmp_path, (
        "print('one', flush=True)\n"
        "print('err', file=sys.stderr, flush=True)\n"
        "sys.stdout.write('two\\r\\nthree')\n"
    ))
    finished, lines = collect(argv, tmp_path)
    assert finished == process.Finished(exit_code=0)
    assert [line for stream, line in lines if stream == "stdout"] == ["one", "two", "three"]
    assert ("stderr", "err") in lines


def test_invalid_utf8_is_replaced_not_fatal(tmp_path: Path) -> None:
    argv = script(tmp_path, "sys.stdout.buffer.write(b'ok \\xff\\xfe end\\n')\n")
    _finished, lines = collect(argv, tmp_path)
    assert lines == [("stdout", "ok \ufffd\ufffd end")]


def test_a_large_prompt_is_written_while_output_is_read(tmp_path: Path) -> None:
    # The agent talks before it reads: neither side may block on a full pipe.
    argv = script(tmp_path, (
        "for i in range(2000): print('x' * 100)\n"
        "data = sys.stdin.read()\n"
        "print('got', len(data))\n"
    ))
    prompt = "p" * 3_000_000
    finished, lines = collect(argv, tmp_path, stdin_text=prompt)
    assert finished.exit_code == 0
    assert lines[-1] == ("stdout", f"got {len(prompt)}")
    assert len(lines) == 2001


def test_an_agent_that_ignores_its_stdin(tmp_path: Path) -> None:
    argv = script(tmp_path, "print('bye')\nsys.exit(7)\n")
    finished, lines = collect(argv, tmp_path, stdin_text="p" * 1_000_000)
    assert finished == process.Finished(exit_code=7)
    assert lines == [("stdout", "bye")]


def test_without_stdin_text_stdin_is_empty(tmp_path: Path) -> None:
    argv = script(tmp_path, "print(repr(sys.stdin.read()))\n")
    _finished, lines = collect(argv, tmp_path, stdin_text=None)
    assert lines == [("stdout", "''")]


def test_killed_by_a_signal_reports_128_plus_n(tmp_path: Path) -> None:
    argv = script(tmp_path, "os.kill(os.getpid(), 15)\ntime.sleep(5)\n")
    finished, _lines = collect(argv, tmp_path)
    assert finished.exit_code == 128 + signal.SIGTERM


def test_the_deadline_stops_the_whole_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    argv = script(tmp_path, (
        f"child = subprocess.Popen(['sleep', '300'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "print('started', flush=True)\n"
        "time.sleep(300)\n"
    ))
    finished, lines = collect(argv, tmp_path, deadline=time.monotonic() + 2.0)
    assert finished == process.Finished(exit_code=None, timed_out=True)
    assert ("stdout", "started") in lines
    assert wait_until_gone(int(pid_file.read_text()))


def test_a_child_holding_the_pipes_does_not_hold_the_run(tmp_path: Path) -> None:
    pid_file = tmp_path / "daemon.pid"
    argv = script(tmp_path, (
        "child = subprocess.Popen(['sleep', '300'])\n"  # inherits stdout and stderr
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "print('done', flush=True)\n"
    ))
    try:
        finished, lines = collect(argv, tmp_path, deadline=time.monotonic() + 60)
        assert finished == process.Finished(exit_code=0)
        assert lines == [("stdout", "done")]
    finally:
        os.kill(int(pid_file.read_text()), signal.SIGKILL)


def test_a_program_that_cannot_start(tmp_path: Path) -> None:
    with pytest.raises(process.StartError):
        collect([str(tmp_path / "missing-agent")], tmp_path)


def test_an_exception_in_the_line_handler_stops_the_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "agent.pid"
    argv = script(tmp_path, (
        f"open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
        "print('boom', flush=True)\n"
        "time.sleep(300)\n"
    ))

    def explode(stream: str, line: str) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        process.run(argv, cwd=tmp_path, env=dict(os.environ), stdin_text=None, on_line=explode)
    assert wait_until_gone(int(pid_file.read_text()))
