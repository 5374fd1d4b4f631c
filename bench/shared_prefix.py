#!/usr/bin/env python3
"""`tasks done ID` when many ids share a long prefix: the short id it prints.

    .venv/bin/python bench/shared_prefix.py [--tasks 25000] [--runs 9] [--tree SRC ...]

A tasklist of `--tasks` pending tasks whose ids share their first ten hex characters
(`task_1795000000_abcdef0123` + six more: an import's ids, or a clock's), committed in
a git repository and cloned (bench/userland.py: the console script, no AIDP_DIR). Each
run reopens one task (untimed), then times `tasks done` of it by its short id, and, for
scale, the floor (bench/floor.py); CPU (user + system) and wall medians per `--tree` (a
checkout's `src`, first on PYTHONPATH; default: the installed aidp), alternated run by
run; and the instructions of one `done` under valgrind's cachegrind when installed.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import userland  # noqa: E402 - bench/userland.py: aidp as its users run it

CHECKOUT = zlib.crc32(str(HERE).encode()) & 0xFFFF
WORK = Path(tempfile.gettempdir()) / f"aidp-bench-shared-prefix-{CHECKOUT}"


def tasklist(path: Path, count: int) -> list[str]:
    ids = [f"task_1795000000_abcdef0123{n:06x}" for n in range(count)]
    path.write_text("".join(
        json.dumps({"id": tid, "description": f"Imported task {n}", "status": "pending",
                    "priority": "medium", "created_at": "2026-11-01T00:00:00Z",
                    "updated_at": "2026-11-01T00:00:00Z", "tags": []}) + "\n"
        for n, tid in enumerate(ids)), encoding="utf-8")
    return ids


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, capture_output=True, check=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=25_000)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--tree", action="append", default=[])
    args = parser.parse_args()
    env = userland.hermetic_env(WORK)
    aidp = userland.console_script()
    origin, clone = WORK / "origin", WORK / "clone"
    ids: list[str] = []
    userland.repository(origin, aidp, env, fill=lambda repo: ids.extend(
        tasklist(repo / ".aidp" / "tasklist.jsonl", args.tasks)))
    userland.clone(origin, clone, env)
    userland.run([*aidp, "tasks", "list", "--json"], env, clone)  # builds the store
    userland.wait_for_builder(clone)
    short = ids[args.tasks // 2][len("task_1795000000_"):]  # every character is needed
    python = sys.executable
    trees = args.tree or [""]
    envs = {t: dict(env, **({"PYTHONPATH": str(Path(t).resolve())} if t else {})) for t in trees}
    done = [python, aidp[0], "tasks", "done", short]
    for t in trees:  # bytecode first
        userland.run([python, aidp[0], "tasks", "reopen", short], envs[t], clone)
        userland.run(done, envs[t], clone)
    load = os.getloadavg()[0]
    runs: dict[str, list[tuple[float, float]]] = {t: [] for t in trees}
    floors: list[tuple[float, float]] = []
    for n in range(args.runs):
        for t in (trees if n % 2 else trees[::-1]):
            userland.run([python, aidp[0], "tasks", "reopen", short], envs[t], clone)
            runs[t].append(timed(done, envs[t], clone))
        floors.append(timed(userland.floor_argv(), env, clone))
    print(f"`python bench/shared_prefix.py {' '.join(sys.argv[1:])}`".replace(" `", "`"),
          f"({args.tasks:,} tasks, {args.runs} runs; load {load:.2f} -> "
          f"{os.getloadavg()[0]:.2f}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})")
    floor_cpu = statistics.median(f[1] for f in floors) * 1000
    print(f"the floor: CPU {floor_cpu:.0f} ms, wall "
          f"{statistics.median(f[0] for f in floors) * 1000:.0f} ms")
    for t in trees:
        cpu = statistics.median(r[1] for r in runs[t]) * 1000
        wall = statistics.median(r[0] for r in runs[t]) * 1000
        count = ""
        if shutil.which("valgrind"):
            userland.run([python, aidp[0], "tasks", "reopen", short], envs[t], clone)
            proc = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no",
                                   "--cachegrind-out-file=/dev/null", *done], env=envs[t],
                                  cwd=clone, capture_output=True, text=True)
            found = [line.split()[-1] for line in proc.stderr.splitlines() if "I   refs" in line]
            count = f", {int(found[0].replace(',', '')) / 1e6:.0f} M instructions" if found else ""
        print(f"{t or 'installed'}: `tasks done {short}` CPU {cpu:.0f} ms "
              f"({cpu - floor_cpu:+.0f} over the floor), wall {wall:.0f} ms{count}")


if __name__ == "__main__":
    main()
