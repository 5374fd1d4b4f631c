#!/usr/bin/env python3
"""Issue 25's reads with several worktrees: one repository, the bench log committed, N
worktrees (8 by default, the main one included), each with a claim of its own; the
reads an agent runs, timed in one worktree side by side with the floor.

    .venv/bin/python bench/worktrees.py                        # 100k events, 8 worktrees
    .venv/bin/python bench/worktrees.py --events 100000 --worktrees 8 --runs 7

Every read folds the tasklists of all the worktrees (docs/guide.md, "Worktrees by
hand"); the targets are the store's (issue 23: 100k reads ≤ 1.5× the floor). The same
rows in a plain checkout of the same log (no worktrees) come first, for comparison. Git
runs with no user or system configuration; the repository lives under
$TMPDIR/aidp-bench-worktrees/.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import run as bench  # noqa: E402 - bench/run.py: the generator and the timing helpers

WORK = Path(tempfile.gettempdir()) / "aidp-bench-worktrees"
GIT_ENV = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"}


def git(env: dict[str, str], cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def setup(events: int, worktrees: int, aidp: list[str], env: dict[str, str]
          ) -> tuple[list[Path], Path, list[str]]:
    """(the worktrees, the main one first, a plain copy of the same log, pending ids)."""
    source, _info = bench.dataset(events)
    base = WORK / str(events)
    shutil.rmtree(base, ignore_errors=True)
    repo, plain = base / "main", base / "plain"
    for folder in (repo, plain):
        (folder / ".aidp").mkdir(parents=True)
        shutil.copyfile(source, folder / ".aidp" / "tasklist.jsonl")
    genv = {**env, **GIT_ENV}
    git(genv, repo, "init", "-q", "-b", "main")
    git(genv, repo, "add", ".aidp/tasklist.jsonl")
    git(genv, repo, "commit", "-q", "-m", "backlog")
    tops = [repo]
    for n in range(1, worktrees):
        git(genv, repo, "worktree", "add", "-q", "-b", f"agent{n}", str(base / f"wt{n}"))
        tops.append(base / f"wt{n}")
    pending = bench.pending_ids(aidp, {**env, "AIDP_DIR": str(plain)}, plain)
    for n, top in enumerate(tops):  # each agent claims a task in its own worktree
        subprocess.run([*aidp, "tasks", "claim", pending[n]],
                       env={**env, "AIDP_DIR": str(top), "AIDP_ACTOR": f"agent{n}"},
                       cwd=top, check=True, stdout=subprocess.DEVNULL)
    return tops, plain, pending[len(tops):]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--worktrees", type=int, default=8)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    aidp = [sys.executable, "-m", "aidp"]
    floor = [sys.executable, str(bench.FLOOR), "cmd3", "--json"]
    env = {k: v for k, v in bench.os.environ.items() if not k.startswith(("AIDP_", "PYTHON"))}
    env.update({"NO_COLOR": "1", "AIDP_SESSION": "bench",
                "PYTHONPYCACHEPREFIX": str(bench.OUT / "pycache-worktrees")})
    tops, plain, pending = setup(args.events, args.worktrees, aidp, env)
    print("| checkout | row | aidp ms | floor ms | ratio | aidp CPU ms | floor CPU ms | "
          "peak MB |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    # Read in the main worktree (its tasklist folded first) and in the last one (the
    # others' lines are folded before its own: the store's rows move down past them).
    for name, folder in (("plain", plain), (f"{args.worktrees} worktrees, main", tops[0]),
                         (f"{args.worktrees} worktrees, {tops[-1].name}", tops[-1])):
        for row in measure(folder, env, aidp, floor, pending, args.runs):
            print("| {name} | {row} | {ms:.0f} | {base:.0f} | {ratio:.2f}× | {cpu:.0f} | "
                  "{base_cpu:.0f} | {peak} |".format(name=name, **row), flush=True)


def measure(folder: Path, env: dict[str, str], aidp: list[str], floor: list[str],
            pending: list[str], runs: int) -> list[dict]:
    env = {**env, "AIDP_DIR": str(folder)}
    for argv in ([*aidp, "tasks", "stats", "--json"], floor):  # bytecode, and the store
        subprocess.run(argv, env=env, cwd=folder, stdout=subprocess.DEVNULL, check=True)
    time.sleep(2.5)  # past the racy window, as any later read would be
    rows = {"list": [*aidp, "tasks", "list", "--status", "pending", "--json"],
            "ready": [*aidp, "tasks", "ready", "--limit", "20", "--json"],
            "stats": [*aidp, "tasks", "stats", "--json"],
            "show": [*aidp, "tasks", "show", pending[0].rpartition("_")[2]]}
    times: dict[str, list[tuple[float, float]]] = {}
    base: dict[str, list[tuple[float, float]]] = {}
    for turn in range(runs):
        x = pending.pop()
        # A write, then reads at once (as an agent does).
        subprocess.run([*aidp, "tasks", "done", x], env=env, cwd=folder, check=True,
                       stdout=subprocess.DEVNULL)
        for name, argv in rows.items():
            pair = [lambda a=argv, n=name: times.setdefault(n, []).append(
                        _timed(a, env, folder)),
                    lambda n=name: base.setdefault(n, []).append(_timed(floor, env, folder))]
            for go in (pair if turn % 2 else pair[::-1]):
                go()
    out = []
    for name, argv in rows.items():
        ms = statistics.median(t for t, _c in times[name]) * 1000
        cpu = statistics.median(c for _t, c in times[name]) * 1000
        base_ms = statistics.median(t for t, _c in base[name]) * 1000
        base_cpu = statistics.median(c for _t, c in base[name]) * 1000
        out.append({"row": f"`{' '.join(argv[3:])}`", "ms": ms, "base": base_ms,
                    "ratio": ms / base_ms, "cpu": cpu, "base_cpu": base_cpu,
                    "peak": round(bench.peak_kb(argv, env, folder) / 1024)})
    return out


def _timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    seconds, _peak, cpu = bench.run_once(argv, env, cwd)
    return seconds, cpu


if __name__ == "__main__":
    main()
