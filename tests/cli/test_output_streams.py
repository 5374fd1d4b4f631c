"""No traceback, ever, for where the output goes: a reader that goes away
(`aidp tasks list | head -1`), a closed stdout (`>&-`), a full disk (`>/dev/full`), an
ASCII-only or C locale. A change that was saved still exits 0. Real processes only:
these are properties of the process's streams."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from aidp.tasklist.log import TaskLog

AIDP = [sys.executable, "-m", "aidp"]


def _run(shell: str, project: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`bash -c SHELL` (pipefail) where "$@" is `python -m aidp`."""
    return subprocess.run(
        ["bash", "-c", "set -o pipefail; " + shell, "bash", *AIDP], cwd=project, env={**os.environ, **env},
        capture_output=True, text=True, timeout=120,
    )


def _descriptions(project: Path) -> list[str]:
    return [t["description"] for t in TaskLog(project).read().tasks.values()]


@pytest.fixture
def backlog(cli, project: Path) -> Path:
    for n in range(250):  # more than a pipe holds (64 KiB) as JSON
        assert cli("tasks", "add", f"Task number {n} café ☕ \u202eevil").code == 0
    return project


def _clean(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stderr and "Exception" not in proc.stderr, proc.stderr


def test_a_reader_that_goes_away_is_not_an_error(backlog: Path) -> None:
    for fmt in ("table", "json", "jsonl", "csv", "markdown"):
        proc = _run('"$@" tasks list -f ' + fmt + " | head -c 20", backlog)
        _clean(proc)
        assert proc.returncode == 0, proc
    proc = _run('"$@" tasks list | head -1', backlog)  # the issue's own example
    _clean(proc)
    assert proc.returncode == 0 and proc.stdout.count("\n") == 1, proc
    # A write whose reader is gone before the report: saved, and exit 0.
    proc = _run('"$@" tasks add "Reported to nobody" | true', backlog)
    _clean(proc)
    assert proc.returncode == 0 and proc.stderr == "", proc
    assert "Reported to nobody" in _descriptions(backlog)
    # SIGPIPE: the reader closes before aidp writes anything at all.
    proc = subprocess.Popen([*AIDP, "tasks", "list", "-f", "jsonl"], cwd=backlog,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0, err
    assert "Traceback" not in err and err == ""


def test_a_closed_stdout_drops_the_report_and_keeps_the_change(backlog: Path) -> None:
    proc = _run('"$@" tasks add "Written with stdout closed" >&-', backlog)
    _clean(proc)
    assert proc.returncode == 0, proc
    assert "Written with stdout closed" in _descriptions(backlog)
    # Nothing else took descriptor 1 (a file opened later would have received the output).
    assert all("Added" not in line for line in (backlog / ".aidp" / "tasklist.jsonl")
               .read_text(encoding="utf-8").splitlines())
    proc = _run('"$@" tasks list >&- 2>&-', backlog)
    assert proc.returncode == 0, proc


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_disk_for_the_output_is_one_error_line(backlog: Path) -> None:
    proc = _run('"$@" tasks list > /dev/full', backlog)
    _clean(proc)
    assert proc.returncode == 1, proc
    assert proc.stderr == "Error: Cannot write the output: No space left on device\n"
    proc = _run('"$@" tasks list --json > /dev/full', backlog)
    assert proc.returncode == 1 and proc.stderr.startswith("Error: Cannot write"), proc
    # The change was saved: success by exit code, and the line says so.
    proc = _run('"$@" tasks add "Saved although the report was lost" > /dev/full', backlog)
    _clean(proc)
    assert proc.returncode == 0, proc
    assert "the change itself was saved" in proc.stderr
    assert "Saved although the report was lost" in _descriptions(backlog)


@pytest.mark.parametrize("env", [
    {"PYTHONIOENCODING": "ascii"},
    {"LANG": "C", "LC_ALL": "C"},
    {"LANG": "C", "LC_ALL": "C", "PYTHONIOENCODING": "latin-1", "PYTHONUTF8": "0"},
    # Python's real C locale: ASCII streams with surrogateescape (no UTF-8 coercion).
    {"LANG": "C", "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"},
], ids=["ascii", "C", "latin-1", "C-uncoerced"])
def test_a_narrow_locale_shows_text_escaped_not_a_traceback(backlog: Path,
                                                           env: dict[str, str]) -> None:
    for args in (["tasks", "list"], ["tasks", "list", "-f", "markdown"],
                 ["tasks", "list", "--json"], ["tasks", "show", "nope-nope"]):
        proc = subprocess.run([*AIDP, *args], cwd=backlog, env={**os.environ, **env},
                              capture_output=True, timeout=120)
        err = proc.stderr.decode("utf-8", "replace")
        assert "Traceback" not in err, err
        assert proc.returncode == (1 if args[1] == "show" else 0), err
        if args[1] == "list":
            assert b"Task number 7" in proc.stdout
    proc = subprocess.run([*AIDP, "tasks", "add", "Added under a narrow locale ☕"], cwd=backlog,
                          env={**os.environ, **env}, capture_output=True, timeout=120)
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc
    assert "Added under a narrow locale ☕" in _descriptions(backlog)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_lost_report_of_a_write_outside_the_tasklist_still_exits_0(project: Path,
                                                                      tmp_path: Path) -> None:
    """init, setup and --install-completion write files, not the tasklist: their work
    is done, so a report lost to a full disk says so and exits 0, as `tasks add` does."""
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    home = Path(os.environ["HOME"])
    for args, cwd, made in ((["init"], fresh, fresh / ".aidp"),
                            (["setup", "claude"], project, project / ".claude" / "settings.json"),
                            (["--install-completion", "bash"], project,
                             home / ".bash_completions" / "aidp.sh")):
        env = {"AIDP_DIR": str(cwd)}
        proc = _run('"$@" ' + " ".join(args) + " > /dev/full", cwd, **env)
        _clean(proc)
        assert proc.returncode == 0, (args, proc)
        assert "the change itself was saved" in proc.stderr, (args, proc)
        assert made.exists(), args
    # Nothing to change: the lost report is the whole result, exit 1.
    proc = _run('"$@" setup claude > /dev/full', project)
    assert proc.returncode == 1 and "the change itself was saved" not in proc.stderr, proc



def test_what_a_command_saved_is_asked_of_its_own_env(project: Path) -> None:
    """aidp.cli.main asks the command's Env whether it saved a change (no process-wide
    counter): a read after a write in the same process saved nothing, and a command run
    from another (`aidp run -i`'s /commands) counts as that one's."""
    import contextlib
    import io

    from aidp.cli import run
    from aidp.cli.common import Env

    def ran(*args: str, inside: Env | None = None) -> Env:
        e = Env(dispatch=run)
        with contextlib.redirect_stdout(io.StringIO()):
            code = run(args, env=e) if inside is None else inside.run_command(args)
        assert code == 0
        return e if inside is None else inside

    assert ran("tasks", "add", "Written", "-q").saved()
    assert not ran("tasks", "list").saved()
    assert not ran("todo", "show").saved()
    assert ran("todo", "add", "A step", inside=Env(dispatch=run)).saved()
    assert not ran("todo", "show", inside=Env(dispatch=run)).saved()
