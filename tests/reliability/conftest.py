"""The reliability suite's opt-in (`slow` tests run only with AIDP_SLOW=1) and the
`hostile` fixture: an attacker's repository cloned by the user (see Hostile)."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

SLOW = os.environ.get("AIDP_SLOW") == "1"

# pytest runs with --import-mode=importlib, which puts no test folder on sys.path; the
# tests here share reliability_support.py, so this folder goes on it.
sys.path.insert(0, str(Path(__file__).parent))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`slow` tests (long crash loops, stress, tmpfs) run only with AIDP_SLOW=1."""
    if SLOW:
        return
    skip = pytest.mark.skip(reason="long-running variant: set AIDP_SLOW=1 to run it")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


# --- a hostile repository: an attacker's commit, cloned by the user ---------------------


@dataclass
class Ran:
    code: int
    out: str
    err: str

    def __repr__(self) -> str:  # shown by pytest when an assert fails
        return f"Ran(code={self.code}, out={self.out!r}, err={self.err!r})"


class Hostile:
    """A repository an attacker wrote, cloned by a user who then runs `aidp` in it.

    Use it through the `hostile` fixture (tests/reliability/test_hostile_*.py):

        def test_x(hostile):
            hostile.write(".aidp/tasklist.jsonl", b'{"id": ...}\\n')   # bytes or str
            hostile.link(".aidp/runs", hostile.outside / "bashrc.d")   # a committed symlink
            clone = hostile.clone()            # commits everything, `git clone`s it
            result = hostile.aidp("tasks", "list")   # a subprocess in the clone
            assert result.code == 0 and "..." in result.out
            assert not (hostile.outside / "bashrc.d" / "x").exists()

    - `attacker`: the attacker's work tree (a real git repository). `write` and `link`
      put files and symbolic links into it; `clone()` commits them (`git add -A -f`) and
      clones the repository into `victim` (one clone per test; calling it again
      commits what changed since and pulls it into the same clone). A test that makes
      its own commits (`hostile.git("commit", …, cwd=hostile.attacker)`) passes
      `clone(commit=False)`.
    - `home`: the user's HOME (XDG config, data, state and cache dirs live under it);
      `outside`: a folder outside the clone for links to point at (it exists, empty).
    - `aidp(*args, cwd=None, stdin=None, env=None)`: `python -m aidp ARGS` run in the
      clone (or `cwd`) with nothing of the machine's: no AIDP_* variables, the user's
      git config empty, HOME and the XDG dirs in the test's tmp_path, a fixed UTF-8
      locale. Returns Ran(code, out, err). `person(*args)`: the same, typed by the user
      on a terminal (`aidp trust` asks there).
    - `git(*args, cwd=None)`: real git (in the clone unless `cwd`), checked; its stdout.
    - `env`: the environment `aidp` runs with (a dict; copy it to change it).
    """

    def __init__(self, tmp_path: Path) -> None:
        import shutil

        from reliability_support import SRC  # the aidp a child process imports

        base = tmp_path / "hostile"
        self.attacker = base / "attacker"
        self.victim = base / "victim"
        self.home = base / "home"
        self.outside = base / "outside"
        for folder in (self.attacker, self.home, self.outside):
            folder.mkdir(parents=True)
        git_program = shutil.which("git")
        assert git_program is not None, "the hostile-repository tests need git"
        env = {name: value for name, value in os.environ.items()
               if not name.startswith(("AIDP_", "GIT_", "XDG_", "LC_"))
               and name not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
        # (Python writes its bytecode next to what it imports, as on a user's machine:
        # a `__pycache__/` in the project is something trust has to live with.)
        env.update({
            "HOME": str(self.home), "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_DATA_HOME": str(self.home / ".local/share"),
            "XDG_STATE_HOME": str(self.home / ".local/state"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": str(self.home / ".gitconfig"),
            "GIT_AUTHOR_NAME": "attacker", "GIT_AUTHOR_EMAIL": "attacker@example.invalid",
            "GIT_COMMITTER_NAME": "attacker", "GIT_COMMITTER_EMAIL": "attacker@example.invalid",
            "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC", "COLUMNS": "80",
            "LINES": "24", "NO_COLOR": "1", "PYTHONPATH": str(SRC),
        })
        self.env = env
        self.git("init", "-q", "-b", "main", cwd=self.attacker)
        self.git("config", "commit.gpgsign", "false", cwd=self.attacker)

    def write(self, relative: str, content: str | bytes) -> Path:
        path = self.attacker / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            content = content.encode("utf-8")
        path.write_bytes(content)
        return path

    def link(self, relative: str, target: str | Path) -> Path:
        """A symbolic link `relative` -> `target` (absolute, relative, or dangling)."""
        path = self.attacker / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(target)
        return path

    def clone(self, *, commit: bool = True) -> Path:
        if commit:  # commit=False: the test made its commits itself (hostile.git)
            self.git("add", "-A", "--force", cwd=self.attacker)  # ignored files too
            if self.git("status", "--porcelain", cwd=self.attacker).strip():
                self.git("commit", "-q", "-m", "attack", cwd=self.attacker)
        if self.victim.exists():
            self.git("pull", "-q", "--no-rebase", "origin", "main")
        else:
            self.git("clone", "-q", str(self.attacker), str(self.victim), cwd=self.attacker)
        return self.victim

    def git(self, *args: str, cwd: Path | None = None) -> str:
        proc = subprocess.run(["git", *args], cwd=cwd or self.victim, env=self.env,
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stdout}{proc.stderr}"
        return proc.stdout

    def aidp(self, *args: str, cwd: Path | None = None, stdin: str | None = None,
             env: dict[str, str] | None = None) -> Ran:
        proc = subprocess.run([sys.executable, "-m", "aidp", *args], cwd=cwd or self.victim,
                              env={**self.env, **(env or {})}, input=stdin,
                              capture_output=True, text=True, timeout=120)
        return Ran(proc.returncode, proc.stdout, proc.stderr)

    def person(self, *args: str, answer: str = "y") -> Ran:
        """`aidp ARGS` in the clone as `aidp` runs it, typed by the user on a terminal
        (stdin a pseudo-terminal, `answer` typed): what `aidp trust` needs."""
        from tests.terminal import run_on_terminal

        typed = run_on_terminal(list(args), cwd=self.victim, env=self.env, answer=answer)
        return Ran(typed.code, typed.out, typed.err)


@pytest.fixture
def hostile(tmp_path: Path) -> Hostile:
    """An attacker's repository and the user's clone of it (see Hostile)."""
    return Hostile(tmp_path)
