"""Every test runs in its own temporary project and home: nothing touches the real
repository's .aidp/ or the user's home directory."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from aidp.tasklist.log import TaskLog

# The suite as a person runs it, however it was started: a shell's background job (`make
# test &`, nohup, a non-interactive CI script) starts with SIGINT ignored, and every
# process the tests start would inherit that, so the Ctrl-C tests' `aidp run` would never
# hear their SIGINT. Python's own handler is put back; the processes started get the default.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# The real-agent suite (tests/agents/) drives the installed agent CLIs and takes
# minutes: it runs with `make test-agents` (which sets AIDP_REAL_AGENTS=1), not in the
# unit tests.
collect_ignore = [] if os.environ.get("AIDP_REAL_AGENTS") == "1" else ["agents"]

ENV_VARS = ("AIDP_DIR", "AIDP_SESSION", "AIDP_AGENT", "AIDP_ACTOR", "AIDP_AGENT_PROCESS", "AIDP_LOCK_TIMEOUT",
            "AIDP_FSYNC", "AIDP_SLOW", "NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE", "CLICOLOR",
            "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLORTERM", "GIT_DIR", "GIT_WORK_TREE",
            "GIT_INDEX_FILE", "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
            "GIT_CONFIG_COUNT", "GIT_CONFIG_PARAMETERS", "EMAIL", "XDG_CONFIG_HOME",
            "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "PYTHONIOENCODING",
            "PYTHONUTF8", "LANGUAGE", "BROWSER", "PAGER", "LESS", "DISPLAY", "WAYLAND_DISPLAY", "_AIDP_COMPLETE",
            "COMP_WORDS", "COMP_CWORD", "_TYPER_COMPLETE_ARGS", "_TYPER_COMPLETE_FISH_ACTION",
            "_TYPER_COMPLETE_WORD_TO_COMPLETE", "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION")

# The environment every test sees, whatever the machine's: a fixed terminal size, one
# UTF-8 locale, UTC, no pager (a test on a pseudo-terminal names its own), and no agent
# CLI on PATH (a real `codex` or `claude` installed on the machine must never change
# what a test finds). tests/test_hermetic.py proves it.
FIXED_ENV = {"COLUMNS": "80", "LINES": "24", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
             "TZ": "UTC", "TERM": "xterm-256color", "AIDP_PAGER": ""}

# Every program name an agent preset or the inventory may look up on PATH, and aidp
# itself (`setup` warns when it is not on PATH; an installed copy must not change that).
AGENT_PROGRAMS = frozenset({"aidp",
    "claude", "codex", "gemini", "opencode", "copilot", "aider", "cursor-agent", "cursor",
    "amp", "goose", "qwen", "crush", "droid", "kiro", "auggie",
})


def _agent_free_path(path: str, shadow_root: Path) -> str:
    """PATH with every agent program hidden: a folder holding one is replaced by a
    folder of links to its other programs (git, sh, … stay reachable)."""
    parts: list[str] = []
    for n, folder in enumerate(p for p in path.split(os.pathsep) if p):
        try:
            names = set(os.listdir(folder))
        except OSError:
            continue
        if not names & AGENT_PROGRAMS:
            parts.append(folder)
            continue
        shadow = shadow_root / str(n)
        shadow.mkdir(parents=True, exist_ok=True)
        for name in names - AGENT_PROGRAMS:
            try:
                (shadow / name).symlink_to(Path(folder) / name)
            except OSError:
                pass
        parts.append(str(shadow))
    return os.pathsep.join(parts)


@pytest.fixture(scope="session")
def hermetic_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    return _agent_free_path(os.environ.get("PATH", ""), tmp_path_factory.mktemp("path"))


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, hermetic_path: str) -> Iterator[Path]:
    """A fresh project folder as the working directory, with AIDP_DIR pointing at it.

    It uses a MonkeyPatch of its own, so a test calling `monkeypatch.undo()` on the
    `monkeypatch` fixture cannot undo the isolation and write to the real repository.
    """
    project = tmp_path / "project"
    home = tmp_path / "home"
    project.mkdir()
    home.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        for name in ENV_VARS:
            patch.delenv(name, raising=False)
        for name in list(os.environ):
            if name.startswith(("LC_", "GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_")):
                patch.delenv(name, raising=False)
        for name, value in FIXED_ENV.items():
            patch.setenv(name, value)
        patch.setenv("PATH", hermetic_path)
        patch.setenv("HOME", str(home))
        patch.setenv("AIDP_DIR", str(project))
        patch.setenv("GIT_CONFIG_NOSYSTEM", "1")
        patch.setenv("GIT_AUTHOR_NAME", "aidp tests")
        patch.setenv("GIT_AUTHOR_EMAIL", "tests@example.invalid")
        patch.setenv("GIT_COMMITTER_NAME", "aidp tests")
        patch.setenv("GIT_COMMITTER_EMAIL", "tests@example.invalid")
        patch.chdir(project)
        time.tzset()
        try:
            yield project
        finally:
            patch.undo()
            time.tzset()


REPO_DATA = Path(__file__).resolve().parents[1] / ".aidp"


def _snapshot(folder: Path) -> dict[str, bytes]:
    if not folder.is_dir():
        return {}
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and p.suffix != ".lock"}


@pytest.fixture(autouse=True, scope="session")
def repository_data_untouched() -> Iterator[None]:
    """Fail the run if any test wrote to this repository's own .aidp/."""
    before = _snapshot(REPO_DATA)
    yield
    after = _snapshot(REPO_DATA)
    assert after == before, "a test changed the repository's own .aidp/ (isolation leak)"


@pytest.fixture
def project(isolated: Path) -> Path:
    return isolated


@pytest.fixture
def log(project: Path) -> TaskLog:
    """The project's tasklist, read through the store as a command reads it (a missing
    store built by the read itself: no builder process left behind by a test)."""
    from aidp.app.project import StoreReader

    return TaskLog(project, reader=StoreReader(background=False))


@dataclass
class Result:
    code: int
    out: str
    err: str

    def __repr__(self) -> str:  # shown by pytest when an assert fails
        return f"Result(code={self.code}, out={self.out!r}, err={self.err!r})"


class _Capture(io.TextIOWrapper):
    def __init__(self) -> None:
        super().__init__(io.BytesIO(), encoding="utf-8", write_through=True)

    def isatty(self) -> bool:
        return False

    def text(self) -> str:
        self.flush()
        return self.buffer.getvalue().decode("utf-8")


def run_in_process(*args: str, stdin: str | io.TextIOBase = "") -> Result:
    """Run `aidp ARGS` in this process, as the console script would (stdin: its text, or
    a stream such as a terminal's: tests/terminal.py)."""
    from aidp.cli import run

    out, err = _Capture(), _Capture()
    saved = sys.stdout, sys.stderr, sys.stdin
    sys.stdout, sys.stderr = out, err
    sys.stdin = io.StringIO(stdin) if isinstance(stdin, str) else stdin
    try:
        code = run(list(args))
    finally:
        sys.stdout, sys.stderr, sys.stdin = saved
        _end_of_command()
    return Result(int(code), out.text(), err.text())


_COMMANDS_RUN = [0]


def _end_of_command() -> None:
    """What the end of a real `aidp` process does for free: whatever a command left in
    reference cycles is collected now and then (one full collection every 25
    commands), so this long-lived process does not pile up open descriptors."""
    import gc

    gc.unfreeze()
    _COMMANDS_RUN[0] += 1
    if _COMMANDS_RUN[0] % 25 == 0:
        gc.collect()


@pytest.fixture
def cli():
    """cli("tasks", "add", "x") -> Result(code, out, err), in process."""
    return run_in_process


def run_as_person(*args: str, answer: str = "y") -> Result:
    """`aidp ARGS` in process, with a person typing `answer` on a real terminal (stdin
    a pseudo-terminal): what `aidp trust` needs to record anything."""
    from tests.terminal import terminal_stdin

    with terminal_stdin(answer) as stdin:
        return run_in_process(*args, stdin=stdin)


@pytest.fixture
def person():
    """person("trust") -> Result: as `cli`, typed by a person on a terminal (answer "y";
    person("trust", answer="n"))."""
    return run_as_person


def run_subprocess(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
                   stdin: str | None = None, timeout: float = 60) -> Result:
    """Run `python -m aidp ARGS` as a separate process (for locking, signals, start-up)."""
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.run(
        [sys.executable, "-m", "aidp", *args],
        cwd=cwd,
        env=full_env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def aidp_proc():
    return run_subprocess
