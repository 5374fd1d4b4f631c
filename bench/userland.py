"""aidp as its users run it, for the benchmarks: a scratch home, a git repository with
the tasklist committed, a real `git clone` of it, and the short ids aidp shows.

Used by bench/peers.py, bench/importtime.py and bench/sequences.py. It drives aidp
only through its console script, as a subprocess, and imports nothing from aidp:
module paths inside aidp change, the command line does not.

- `hermetic_env(scratch)`: HOME, the XDG folders and git's global config inside
  `scratch` (user.name and user.email set there), git's system config ignored, no
  `AIDP_*`; PATH and the locale kept. Bytecode goes to a private cache that the
  measured processes may write (`PYTHONPYCACHEPREFIX`), compiled once, not per run.
- `repository(origin, log, aidp, env)`: `git init`, `aidp init`, the generated log
  (or an import through `aidp tasks import`) as `.aidp/tasklist.jsonl`, one commit.
- `clone(origin, target, env)`: `git clone`; commands then run inside it with the
  project root found by aidp (no `AIDP_DIR`, no `--dir`).
- `short_ids(aidp, env, cwd)`: every task's id as `tasks list` prints it: the
  shortest leading part of its hex, at least 4 characters, that no other task shares.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable
from itertools import pairwise
from pathlib import Path

HERE = Path(__file__).resolve().parent
FLOOR = HERE / "floor.py"
GIT_USER = ("Bench User", "bench@example.invalid")


def console_script() -> list[str]:
    """This virtualenv's `aidp`, as a user's shell finds it."""
    script = Path(sys.executable).parent / "aidp"
    if not script.exists():
        raise SystemExit(f"no aidp console script beside {sys.executable}: run "
                         "`.venv/bin/pip install -e .` and use .venv/bin/python")
    return [str(script)]


def floor_argv() -> list[str]:
    """The framework floor: a bare Typer app in the same virtualenv (bench/floor.py)."""
    return [sys.executable, str(FLOOR), "cmd3", "--json"]


def hermetic_env(scratch: Path, columns: int = 120) -> dict[str, str]:
    home = scratch / "home"
    for sub in ("", ".config", ".cache", ".local/share", ".local/state"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    gitconfig = home / ".gitconfig"
    env = {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TZ": "UTC",
        "HOME": str(home),
        "USER": "bench",
        "LOGNAME": "bench",
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_STATE_HOME": str(home / ".local/state"),
        "GIT_CONFIG_GLOBAL": str(gitconfig),
        "GIT_CONFIG_NOSYSTEM": "1",
        "COLUMNS": str(columns),
        "LINES": "40",
        "TERM": "dumb",
        "PYTHONPYCACHEPREFIX": str(scratch / "pycache"),
    }
    if not gitconfig.exists():
        gitconfig.write_text(f"[user]\n\tname = {GIT_USER[0]}\n\temail = {GIT_USER[1]}\n"
                             "[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n")
    return env


def run(argv: list[str], env: dict[str, str], cwd: Path, *, stdin: bytes | None = None
        ) -> str:
    """An untimed step; its stdout. A failure stops the benchmark with the command's
    stderr."""
    proc = subprocess.run(argv, env=env, cwd=cwd, input=stdin, capture_output=True)
    if proc.returncode != 0:
        raise SystemExit(f"failed ({proc.returncode}) in {cwd}: {' '.join(argv)}\n"
                         f"{proc.stderr.decode(errors='replace')[-2000:]}")
    return proc.stdout.decode(errors="replace")


def repository(origin: Path, aidp: list[str], env: dict[str, str], *,
               log: Path | None = None,
               fill: Callable[[Path], None] | None = None) -> None:
    """A project as a user makes one: `git init`, `aidp init`, then the tasklist — the
    file `log` copied in (a history grown over time), or whatever `fill(origin)` does
    (an `aidp tasks import`) — and one commit of everything `aidp init` asks to track."""
    if origin.exists():
        shutil.rmtree(origin)
    origin.mkdir(parents=True)
    run(["git", "init", "-q"], env, origin)
    run([*aidp, "init"], env, origin)
    if log is not None:
        shutil.copyfile(log, origin / ".aidp" / "tasklist.jsonl")
    if fill is not None:
        fill(origin)
    shutil.rmtree(origin / ".aidp" / "cache", ignore_errors=True)  # git-ignored anyway
    commit(origin, env, "The backlog")


def commit(repo: Path, env: dict[str, str], message: str) -> None:
    """Everything in `repo`'s work tree that git does not ignore (nothing: no commit)."""
    run(["git", "add", "-A"], env, repo)
    staged = subprocess.run(["git", "diff", "--cached", "--quiet"], env=env, cwd=repo)
    if staged.returncode != 0:
        run(["git", "commit", "-q", "--no-verify", "-m", message], env, repo)


def clone(origin: Path, target: Path, env: dict[str, str]) -> None:
    if target.exists():
        shutil.rmtree(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    run(["git", "clone", "-q", str(origin), str(target)], env, target.parent)


def all_ids(aidp: list[str], env: dict[str, str], cwd: Path) -> list[str]:
    return run([*aidp, "tasks", "list", "--all", "--format", "ids"], env, cwd).split()


def pending_ids(aidp: list[str], env: dict[str, str], cwd: Path) -> list[str]:
    return run([*aidp, "tasks", "list", "--status", "pending", "--format", "ids"],
               env, cwd).split()


def short_ids(ids: Iterable[str]) -> dict[str, str]:
    """id → its hex part's shortest unique leading part (at least 4 characters), as
    `aidp tasks list` shows it in brackets and as people type it."""
    hexes = {tid: tid.rpartition("_")[2] for tid in ids}
    ordered = sorted(hexes.values())
    need: dict[str, int] = {}
    for left, right in pairwise(ordered):
        common = 0
        while common < min(len(left), len(right)) and left[common] == right[common]:
            common += 1
        for h in (left, right):
            need[h] = max(need.get(h, 4), common + 1)
    return {tid: h[:max(need.get(h, 4), 4)] for tid, h in hexes.items()}


def wait_for_builder(project: Path) -> None:
    """Until no background build of the project's store runs (its turn is the lock on
    `.aidp/cache/build.lock`), so it steals no CPU from the next measurement."""
    import fcntl

    lock = project / ".aidp" / "cache" / "build.lock"
    if lock.exists():
        with open(lock, "rb") as held:
            fcntl.flock(held, fcntl.LOCK_EX)
