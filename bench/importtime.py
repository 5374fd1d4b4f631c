#!/usr/bin/env python3
"""Where a command's start-up goes: `python -X importtime` of aidp's everyday
commands in a real git clone, the self times summed by top-level package.

    .venv/bin/python bench/importtime.py                 # 1,000 tasks, 7 runs each
    .venv/bin/python bench/importtime.py --tasks 10000 --runs 9

The backlog is bench/peers.py's (a Taskwarrior export brought in by `aidp tasks
import`), committed in a fresh repository and `git clone`d; the commands run in the
clone as a user runs them (the console script, no AIDP_DIR): `tasks add`, `tasks
show ID`, `tasks done ID` (a fresh task each run), `tasks ready`, `hook claude
SessionStart` (a small event on stdin), and the floor (bench/floor.py). Each run
under `-X importtime` alternates with a plain run of the same command, which gives
the wall time. Printed per command, in ms (medians over the runs):

- interpreter start: the wall time of `python -c pass` (same interpreter, same
  environment: the site and .pth imports included); the modules that start-up
  imports are not counted again below;
- typer/click (typer, click, shellingham), rich (rich, markdown_it, mdurl,
  pygments: ~0 for these commands), aidp (aidp's own modules), everything else
  (the standard library, orjson, sqlite3, …): the summed self times;
- the rest: wall − all of the above, i.e. the command's own work and the exit.

The import self times are taken with the profiler on, which costs a little per
import; the wall time is not.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import peers  # noqa: E402 - bench/peers.py: the generated backlog
import userland  # noqa: E402 - bench/userland.py: aidp as its users run it

CHECKOUT = zlib.crc32(str(HERE).encode()) & 0xFFFF
WORK = Path(tempfile.gettempdir()) / f"aidp-bench-importtime-{CHECKOUT}"
BUCKETS = {"typer": "typer/click", "click": "typer/click", "shellingham": "typer/click",
           "rich": "rich", "markdown_it": "rich", "mdurl": "rich", "pygments": "rich",
           "aidp": "aidp"}
COLUMNS = ("typer/click", "rich", "aidp", "everything else")


@dataclass
class Breakdown:
    """One command's medians, ms: its wall time, and the self times by bucket; the
    largest of aidp's modules and of everything else (means per run)."""

    wall_ms: float
    parts: dict[str, float]
    aidp_modules: dict[str, float]
    others: dict[str, float]
    stdlib_ms: float  # of everything else: the standard library's modules


def parse(stderr: str) -> list[tuple[str, float]]:
    """(module, self ms) for every line `-X importtime` wrote."""
    found = []
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, _total, name = line[len("import time:"):].split("|", 2)
        found.append((name.strip(), int(own) / 1000))
    return found


def timed(argv: list[str], env: dict[str, str], cwd: Path, stdin: bytes | None
          ) -> tuple[float, str]:
    started = time.perf_counter()
    proc = subprocess.run(argv, env=env, cwd=cwd, input=stdin, capture_output=True)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(argv)}\n"
                         f"{proc.stderr.decode(errors='replace')[-2000:]}")
    return elapsed, proc.stderr.decode(errors="replace")


def measure(argv: list[str], env: dict[str, str], cwd: Path, runs: int,
            startup: set[str], stdin: bytes | None = None,
            vary: list[list[str]] | None = None) -> Breakdown:
    """Medians over `runs` of the wall time (plain runs) and of the summed self times
    per bucket (importtime runs), alternating; `vary` gives each run its own argv
    (two per run: plain, then profiled)."""
    walls: list[float] = []
    buckets: dict[str, list[float]] = {c: [] for c in COLUMNS}
    modules: defaultdict[str, float] = defaultdict(float)
    others: defaultdict[str, float] = defaultdict(float)
    stdlib: list[float] = []
    for n in range(runs):
        plain = vary[2 * n] if vary else argv
        profiled = vary[2 * n + 1] if vary else argv
        order = [("plain", plain), ("profiled", profiled)]
        for kind, args in (order if n % 2 else order[::-1]):
            if kind == "plain":
                walls.append(timed([sys.executable, *args], env, cwd, stdin)[0])
                continue
            _, stderr = timed([sys.executable, "-X", "importtime", *args], env, cwd, stdin)
            sums = dict.fromkeys(COLUMNS, 0.0)
            standard = 0.0
            for name, ms in parse(stderr):
                if name in startup:
                    continue
                top = name.split(".")[0]
                bucket = BUCKETS.get(top, "everything else")
                sums[bucket] += ms
                if bucket == "aidp":
                    modules[".".join(name.split(".")[:2])] += ms / runs
                elif bucket == "everything else":
                    others[top] += ms / runs
                    if top in sys.stdlib_module_names:
                        standard += ms
            stdlib.append(standard)
            for c in COLUMNS:
                buckets[c].append(sums[c])
    return Breakdown(statistics.median(walls) * 1000,
                     {c: statistics.median(buckets[c]) for c in COLUMNS},
                     largest(modules), largest(others), statistics.median(stdlib))


def largest(ms: dict[str, float], n: int = 6) -> dict[str, float]:
    return dict(sorted(ms.items(), key=lambda kv: -kv[1])[:n])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=1000, help="backlog size (default 1000)")
    parser.add_argument("--runs", type=int, default=7, help="runs of each (default 7)")
    parser.add_argument("--json", type=Path, default=peers.OUT / "importtime.json",
                        help="where the figures go (default bench/out/importtime.json)")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    env = userland.hermetic_env(WORK)
    aidp = userland.console_script()
    tasks = peers.generate(args.tasks)
    export = WORK / "export.json"
    peers.write_export(tasks, export)
    origin, project = WORK / "origin", WORK / "clone"

    def imported(repo: Path) -> None:
        userland.run([*aidp, "tasks", "import", str(export), "--from", "taskwarrior"], env, repo)

    userland.repository(origin, aidp, env, fill=imported)
    userland.clone(origin, project, env)
    userland.run([*aidp, "tasks", "list", "--json"], env, project)  # builds the store
    userland.wait_for_builder(project)
    ids = userland.all_ids(aidp, env, project)
    short = userland.short_ids(ids)
    pending = userland.pending_ids(aidp, env, project)
    fresh = iter(short[t] for t in pending[1:])
    script = aidp[0]
    # Bytecode for every module these commands import, before any timed run.
    for argv in ([script, "tasks", "ready"], [script, "tasks", "show", short[pending[0]]],
                 [str(userland.FLOOR), "cmd3", "--json"]):
        timed([sys.executable, *argv], env, project, None)

    _, stderr = timed([sys.executable, "-X", "importtime", "-c", "pass"], env, project, None)
    startup = {name for name, _ms in parse(stderr)}
    start_walls = [timed([sys.executable, "-c", "pass"], env, project, None)[0]
                   for _ in range(args.runs)]
    start_ms = statistics.median(start_walls) * 1000
    event = json.dumps({"session_id": "bench-importtime", "transcript_path":
                        str(WORK / "transcript.jsonl"), "cwd": str(project),
                        "hook_event_name": "SessionStart", "source": "startup"}).encode()
    load = os.getloadavg()
    rows = {
        "tasks add": measure([], env, project, args.runs, startup, vary=[
            [script, "tasks", "add", f"Importtime task {n}"] for n in range(2 * args.runs)]),
        "tasks show ID": measure([script, "tasks", "show", short[pending[0]]], env, project,
                                 args.runs, startup),
        "tasks done ID": measure([], env, project, args.runs, startup, vary=[
            [script, "tasks", "done", next(fresh)] for _ in range(2 * args.runs)]),
        "tasks ready": measure([script, "tasks", "ready"], env, project, args.runs, startup),
        "hook claude SessionStart": measure([script, "hook", "claude", "SessionStart"], env,
                                            project, args.runs, startup, stdin=event),
        "floor (bench/floor.py)": measure([str(userland.FLOOR), "cmd3", "--json"], env,
                                          project, args.runs, startup),
    }
    load_after = os.getloadavg()
    print(f"`python bench/importtime.py {' '.join(sys.argv[1:])}`".replace(" `", "`"), end=" ")
    print(f"({args.tasks:,} tasks, {args.runs} runs each; load {load[0]:.2f} → "
          f"{load_after[0]:.2f}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})\n")
    print("| command (ms, medians) | wall | interpreter start | typer/click | rich | aidp | "
          "everything else | the rest (work, exit) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, row in rows.items():
        parts = [row.parts[c] for c in COLUMNS]
        rest = row.wall_ms - start_ms - sum(parts)
        print(f"| {name} | {row.wall_ms:.0f} | {start_ms:.0f} | "
              + " | ".join(f"{p:.1f}" for p in parts) + f" | {rest:.0f} |")
    print("\nWithin aidp and everything else, the largest self times (mean ms per run; "
          "aidp's by subpackage, everything else by top-level package):\n")
    for name, row in rows.items():
        mods = ", ".join(f"{m} {ms:.1f}" for m, ms in row.aidp_modules.items())
        others = ", ".join(f"{m} {ms:.1f}" for m, ms in row.others.items())
        print(f"- {name}: {mods or '-'}; everything else: the standard library "
              f"{row.stdlib_ms:.1f}, the rest {row.parts['everything else'] - row.stdlib_ms:.1f}"
              f"; largest {others}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"tasks": args.tasks, "runs": args.runs,
                                     "interpreter_start_ms": start_ms, "load": [load, load_after],
                                     "rows": {k: asdict(v) for k, v in rows.items()}},
                                    indent=1))


if __name__ == "__main__":
    main()
