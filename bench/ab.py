#!/usr/bin/env python3
"""Before/after: the same commands on two source trees, alternated run by run.

    .venv/bin/python bench/ab.py OLD_SRC NEW_SRC [--events 100000] [--runs 11]

Each tree gets its own working copy of the same generated log (bench/data/); every
command runs `runs` times per tree, alternating which tree goes first, and the
medians of wall-clock and CPU time (user + system) are compared. On a shared machine
the CPU ratio is the steadier figure. Used for issue 15's "benchmarks stay the same or
get better" (bench/RESULTS.md).
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import run as bench  # noqa: E402 - bench/run.py: the generator and the timing helpers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--only", default="", help="comma-separated commands (default: all)")
    args = parser.parse_args()
    source, _info = bench.dataset(args.events)
    trees = {"old": Path(args.old).resolve(), "new": Path(args.new).resolve()}
    envs, works = {}, {}
    for name, tree in trees.items():
        work = bench.WORK / "ab" / name
        shutil.rmtree(work, ignore_errors=True)
        (work / ".aidp").mkdir(parents=True)
        shutil.copyfile(source, work / ".aidp" / "tasklist.jsonl")
        env = {k: v for k, v in bench.os.environ.items()
               if not k.startswith(("AIDP_", "PYTHON"))}
        env.update({"AIDP_DIR": str(work), "PYTHONPATH": str(tree), "NO_COLOR": "1",
                    "AIDP_SESSION": "bench",
                    "PYTHONPYCACHEPREFIX": str(bench.OUT / "pycache-ab" / name)})
        envs[name], works[name] = env, work
    aidp = [sys.executable, "-m", "aidp"]
    for name in trees:  # build each tree's snapshot and bytecode first
        bench.run_once([*aidp, "tasks", "stats", "--json"], envs[name], works[name])
        for n in range(1, 21):  # a 20-item TODO list for the todo commands
            bench.run_once([*aidp, "todo", "add", f"Step {n} of the plan"], envs[name],
                           works[name])
    pending = subprocess.run([*aidp, "tasks", "list", "--status", "pending", "--format", "ids"],
                             env=envs["new"], cwd=works["new"], capture_output=True,
                             text=True, check=True).stdout.split()
    rng = random.Random(5)
    fresh = iter(rng.sample(pending, len(pending)))
    some = pending[0][-8:]
    commands = {
        "list": lambda: ["tasks", "list", "--status", "pending", "--json"],
        "stats": lambda: ["tasks", "stats", "--json"],
        "filtered": lambda: ["tasks", "list", "--tag", "perf", "--priority", "high", "--sort",
                             "updated", "--json"],
        "open": lambda: ["tasks", "list", "--json"],
        "show": lambda: ["tasks", "show", some],
        "add": lambda: ["tasks", "add", "Benchmark task", "-q"],
        "done": lambda: ["tasks", "done", next(fresh)[-8:]],
        "todo-show": lambda: ["todo", "show"],
        "todo-tick": lambda: ["todo", "tick", "3"],  # toggles: the same work every run
    }
    print(f"| command ({args.events:,} events) | old wall | new wall | new/old | old CPU "
          "| new CPU | new/old CPU |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    chosen = set(args.only.split(",")) if args.only else set(commands)
    for label, make in commands.items():
        if label not in chosen:
            continue
        wall: dict[str, list[float]] = {"old": [], "new": []}
        cpu: dict[str, list[float]] = {"old": [], "new": []}
        for i in range(args.runs):
            argv = make()  # the same arguments for both trees
            order = ["old", "new"] if i % 2 == 0 else ["new", "old"]
            for name in order:
                seconds, _rss, used = bench.run_once([*aidp, *argv], envs[name], works[name])
                wall[name].append(seconds)
                cpu[name].append(used)
        w = {k: statistics.median(v) * 1000 for k, v in wall.items()}
        c = {k: statistics.median(v) * 1000 for k, v in cpu.items()}
        print(f"| {label} | {w['old']:.0f} ms | {w['new']:.0f} ms | {w['new'] / w['old']:.2f} "
              f"| {c['old']:.0f} ms | {c['new']:.0f} ms | {c['new'] / c['old']:.2f} |",
              flush=True)


if __name__ == "__main__":
    main()
