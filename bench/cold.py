#!/usr/bin/env python3
"""The first read after a real `git clone`, source trees side by side with the naive fold.

    .venv/bin/python bench/cold.py --events 1000000 --runs 3
    .venv/bin/python bench/cold.py --tree OLD/src --tree src --events 100000 --runs 5
    .venv/bin/python bench/cold.py --copy --events 100000     # a copy of the file too

Each turn makes a fresh `git clone` of a repository holding the generated log (bench/
data, committed by `git init` + `aidp init`, as bench/sequences.py does) for every tree,
and times `tasks list --status pending --json` in it (no AIDP_DIR: the root found by
aidp) against bench/naive.py on the same file; the order of the runs rotates turn by
turn. A tree (`--tree`, a checkout's `src`) runs as `python -m aidp` with it first on
PYTHONPATH; without one, this virtualenv's console script. `--copy` adds the same read
of a plain copy of the file outside any repository (AIDP_DIR), as the benchmarks did
before they cloned. Nothing else runs while a detached builder builds (100k: the store
is built in the background): each next run waits for it. Wall and CPU time (user +
system, from wait4) per run, medians per row, their ratios to naive's; the load before
and after.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import shutil
import statistics
import sys
import time
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import run as bench  # noqa: E402 - bench/run.py: the generator and the timing helpers
import userland  # noqa: E402 - bench/userland.py: aidp as its users run it

CHECKOUT = zlib.crc32(str(HERE).encode()) & 0xFFFF
WORK = Path(os.environ.get("TMPDIR", "/tmp")) / f"aidp-bench-cold-{CHECKOUT}"
LIST = ["tasks", "list", "--status", "pending", "--json"]


def wait_for_builder(project: Path) -> None:
    lock = project / ".aidp" / "cache" / "build.lock"
    if lock.exists():
        with open(lock, "rb") as held:
            fcntl.flock(held, fcntl.LOCK_EX)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tree", action="append", default=[])
    parser.add_argument("--copy", action="store_true")
    args = parser.parse_args()
    env = userland.hermetic_env(WORK)
    env.update({"NO_COLOR": "1", "AIDP_SESSION": "bench"})
    script = userland.console_script()
    origin = WORK / str(args.events) / "origin"
    userland.repository(origin, script, env, log=bench.dataset(args.events)[0])
    runners: dict[str, tuple[list[str], dict[str, str]]] = {}
    for tree in args.tree:
        path = Path(tree).resolve()
        runners[str(tree)] = ([sys.executable, "-m", "aidp"],
                              {**env, "PYTHONPATH": str(path),
                               "PYTHONPYCACHEPREFIX": str(WORK / "pycache" / str(zlib.crc32(
                                   str(path).encode())))})
    if not runners:
        runners["this checkout"] = (script, env)
    rows = [*(f"clone: {name}" for name in runners),
            *(f"copy: {name}" for name in runners if args.copy), "naive"]
    times: dict[str, list[tuple[float, float]]] = {row: [] for row in rows}
    loads = [os.getloadavg()[0]]
    for turn in range(args.runs):
        order = rows[turn % len(rows):] + rows[:turn % len(rows)]
        for row in order:
            kind, _, name = row.partition(": ")
            folder = WORK / f"run-{rows.index(row)}"
            if kind == "clone":
                userland.clone(origin, folder, env)
            elif kind == "copy":
                shutil.rmtree(folder, ignore_errors=True)
                (folder / ".aidp").mkdir(parents=True)
                shutil.copyfile(origin / ".aidp" / "tasklist.jsonl",
                                folder / ".aidp" / "tasklist.jsonl")
            if kind == "naive":
                log = WORK / f"run-{rows.index(f'clone: {next(iter(runners))}')}"
                seconds, _peak, cpu = bench.run_once(
                    [sys.executable, str(HERE / "naive.py"),
                     str(log / ".aidp" / "tasklist.jsonl")], env, WORK)
            else:
                argv, its_env = runners[name]
                if kind == "copy":
                    its_env = {**its_env, "AIDP_DIR": str(folder)}
                seconds, _peak, cpu = bench.run_once([*argv, *LIST], its_env, folder)
                wait_for_builder(folder)
            times[row].append((seconds, cpu))
            print(f"turn {turn}: {row}: {seconds * 1000:,.0f} ms wall, {cpu * 1000:,.0f} ms "
                  f"CPU (load {os.getloadavg()[0]:.1f})", flush=True)
        loads.append(os.getloadavg()[0])
    naive_wall = statistics.median(t[0] for t in times["naive"])
    naive_cpu = statistics.median(t[1] for t in times["naive"])
    print(f"\n{args.events:,} events, {args.runs} turns, "
          f"{time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, load average "
          f"{' → '.join(f'{x:.1f}' for x in loads)}")
    print("| first `tasks list --status pending --json` | wall | CPU | wall / naive | "
          "CPU / naive |\n|---|---:|---:|---:|---:|")
    for row in rows:
        wall = statistics.median(t[0] for t in times[row])
        cpu = statistics.median(t[1] for t in times[row])
        print(f"| {row} | {wall * 1000:,.0f} ms | {cpu * 1000:,.0f} ms | "
              f"{wall / naive_wall:.2f}× | {cpu / naive_cpu:.2f}× |")


if __name__ == "__main__":
    main()
