#!/usr/bin/env python3
"""aidp's own part above the floor, counted in instructions: steady on a shared machine.

    .venv/bin/python bench/instructions.py                        # this checkout, 100 and 1k tasks
    .venv/bin/python bench/instructions.py --tree OLD/src --tree NEW/src --sizes 1000
    .venv/bin/python bench/instructions.py --cpu 15               # and CPU/wall, 15 runs

Every command runs as users run it (bench/userland.py): the console script in a `git
clone` of a repository holding bench/peers.py's generated backlog, no AIDP_DIR; back to
back in this order, a write then reads: `tasks add`, `tasks show ID`, `tasks done ID` (a
task reopened just before, untimed), `tasks ready`, `hook claude SessionStart` and `Stop`, and the
floor (bench/floor.py, the bare Typer app). Each is run once under valgrind's
cachegrind (`--cache-sim=no`): the instructions the process executed (its own, not
those of a child it starts: aidp starts none for these). The count moves by well under
1% between runs whatever the load, where wall and CPU times on 2 shared cores move by
10-30%. A `--tree` (a checkout's `src`) goes first on PYTHONPATH, so two trees run the
same commands side by side. `--cpu N` also times N runs of each, alternated with the
floor (medians of wall and of CPU, user + system).

Printed per size and tree: the instructions of each command, the floor's, and the
difference; and `python -c pass` (the interpreter's start) for scale.
"""

from __future__ import annotations

import argparse
import json
import os
import re
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

import peers  # noqa: E402 - bench/peers.py: the generated backlog
import userland  # noqa: E402 - bench/userland.py: aidp as its users run it

CHECKOUT = zlib.crc32(str(HERE).encode()) & 0xFFFF
WORK = Path(tempfile.gettempdir()) / f"aidp-bench-instructions-{CHECKOUT}"
REFS = re.compile(rb"I\s+refs:\s+([\d,]+)")


def instructions(argv: list[str], env: dict[str, str], cwd: Path,
                 stdin: bytes | None = None) -> int:
    proc = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no",
                           "--cachegrind-out-file=/dev/null", *argv], env=env, cwd=cwd,
                          input=stdin, capture_output=True)
    found = REFS.search(proc.stderr)
    if proc.returncode != 0 or found is None:
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(argv)}\n"
                         f"{proc.stderr.decode(errors='replace')[-2000:]}")
    return int(found.group(1).replace(b",", b""))


def run_timed(argv: list[str], env: dict[str, str], cwd: Path, stdin: bytes | None
              ) -> tuple[float, float]:
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, input=stdin, capture_output=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def project(size: int) -> tuple[Path, dict[str, str]]:
    """A clone of a repository holding `size` generated tasks (made once per size)."""
    work = WORK / str(size)
    env = userland.hermetic_env(work)
    aidp = userland.console_script()
    origin, clone = work / "origin", work / "clone"
    if not (origin / ".aidp" / "tasklist.jsonl").exists():
        export = work / "export.json"
        peers.write_export(peers.generate(size), export)
        userland.repository(origin, aidp, env, fill=lambda repo: userland.run(
            [*aidp, "tasks", "import", str(export), "--from", "taskwarrior"], env, repo))
    userland.clone(origin, clone, env)
    userland.run([*aidp, "tasks", "list", "--json"], env, clone)  # builds the store
    userland.wait_for_builder(clone)
    return clone, env


def commands(script: str, short: str, event: bytes, stop: bytes
             ) -> list[tuple[str, list[str], bytes | None]]:
    return [("tasks add", [script, "tasks", "add", "Benchmark task"], None),
            ("tasks show ID", [script, "tasks", "show", short], None),
            ("tasks done ID", [script, "tasks", "done", short], None),
            ("tasks ready", [script, "tasks", "ready"], None),
            ("hook claude SessionStart", [script, "hook", "claude", "SessionStart"], event),
            ("hook claude Stop", [script, "hook", "claude", "Stop"], stop),
            ("floor", [str(userland.FLOOR), "cmd3", "--json"], None)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,1000", help="task counts (default 100,1000)")
    parser.add_argument("--tree", action="append", default=[],
                        help="a checkout's src, first on PYTHONPATH (repeat; default: the "
                        "installed aidp)")
    parser.add_argument("--cpu", type=int, default=0, help="also time N runs of each")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt-get install -y valgrind)")
    trees = args.tree or [""]
    python = sys.executable
    script = userland.console_script()[0]
    load = os.getloadavg()
    print(f"`python bench/instructions.py {' '.join(sys.argv[1:])}`".replace(" `", "`"),
          f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {load[0]:.2f})\n")
    print("| tasks | tree | command | instructions | floor | aidp − floor | "
          "CPU − floor (ms) | wall − floor (ms) |")
    print("|---:|---|---|---:|---:|---:|---:|---:|")
    results = []
    for size in (int(s) for s in args.sizes.split(",")):
        clone, base_env = project(size)
        pending = userland.pending_ids([script], base_env, clone)
        short = userland.short_ids(userland.all_ids([script], base_env, clone))[pending[0]]
        event = json.dumps({"session_id": "bench-instructions", "transcript_path":
                            str(clone.parent / "transcript.jsonl"), "cwd": str(clone),
                            "hook_event_name": "SessionStart", "source": "startup"}).encode()
        stop = json.dumps({"session_id": "bench-instructions", "hook_event_name": "Stop",
                           "stop_hook_active": False,
                           "last_assistant_message": "Done."}).encode()
        for tree in trees:
            env = dict(base_env, **({"PYTHONPATH": str(Path(tree).resolve())} if tree else {}))
            counted: dict[str, int] = {}
            times: dict[str, list[tuple[float, float]]] = {}
            for name, argv, stdin in commands(script, short, event, stop):
                if name == "tasks done ID":  # the same work each time: reopen it first
                    userland.run([script, "tasks", "reopen", short], env, clone)
                userland.run([python, *argv], env, clone, stdin=stdin)  # bytecode, caches
                if name == "tasks done ID":
                    userland.run([script, "tasks", "reopen", short], env, clone)
                counted[name] = instructions([python, *argv], env, clone, stdin)
            floor_argv = [python, str(userland.FLOOR), "cmd3", "--json"]
            for name, argv, stdin in commands(script, short, event, stop)[:-1]:
                pairs = []
                for n in range(args.cpu):
                    if name == "tasks done ID":
                        userland.run([script, "tasks", "reopen", short], env, clone)
                    order = [("aidp", [python, *argv]), ("floor", floor_argv)]
                    got = {who: run_timed(a, env, clone, stdin if who == "aidp" else None)
                           for who, a in (order if n % 2 else order[::-1])}
                    pairs.append((got["aidp"][0] - got["floor"][0],
                                  got["aidp"][1] - got["floor"][1]))
                times[name] = pairs
            for name, count in counted.items():
                if name == "floor":
                    continue
                pairs = times.get(name) or []
                cpu = f"{statistics.median(p[1] for p in pairs) * 1000:.1f}" if pairs else "–"
                wall = f"{statistics.median(p[0] for p in pairs) * 1000:.1f}" if pairs else "–"
                print(f"| {size:,} | {tree or 'installed'} | {name} | {count / 1e6:.1f} M | "
                      f"{counted['floor'] / 1e6:.1f} M | "
                      f"{(count - counted['floor']) / 1e6:+.1f} M | {cpu} | {wall} |",
                      flush=True)
                results.append({"size": size, "tree": tree, "command": name, "count": count,
                                "floor": counted["floor"], "times": pairs})
    start_env = userland.hermetic_env(WORK / "start")
    userland.run([python, "-c", "pass"], start_env, WORK)  # its bytecode cache first
    start = instructions([python, "-c", "pass"], start_env, WORK)
    print(f"\n`python -c pass`: {start / 1e6:.1f} M instructions; load after "
          f"{os.getloadavg()[0]:.2f}")
    out = peers.OUT / "instructions.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"argv": sys.argv[1:], "python_start": start,
                               "results": results}, indent=1))


if __name__ == "__main__":
    main()
