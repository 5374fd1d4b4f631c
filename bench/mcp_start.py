"""`aidp mcp` start: time from spawning the server to its initialize answer, to its
tools/list answer, and to the answer of a first todo_write, over stdio as an agent
speaks to it (plain JSON-RPC lines); beside the floor, the bare Typer app
(bench/floor.py) run to its end.

    .venv/bin/python bench/mcp_start.py [-n 15] [SRC ...]

Each SRC is a checkout's `src` folder, put first on PYTHONPATH (default: this
checkout's); several are run interleaved with the floor, so a busy machine weighs on
each alike. Bytecode goes to a private cache compiled before the timed runs (this
environment may set PYTHONDONTWRITEBYTECODE). Wall time and the server process's CPU
time (user + system) are given as medians, and the ratio to the floor's wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from time import perf_counter

FLOOR = Path(__file__).resolve().parent / "floor.py"

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "bench", "version": "1"}}}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}
FIRST_CALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
    "name": "todo_write", "arguments": {"items": [{"content": "a", "status": "pending"}]}}}


def line(message: dict[str, object]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def environment(src: str, cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return dict(env, AIDP_SESSION="bench", PYTHONPATH=src, PYTHONPYCACHEPREFIX=str(cache))


def one(src: str, project: Path, cache: Path) -> tuple[float, float, float, float]:
    env = environment(src, cache)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "aidp", "mcp"], cwd=project, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(line(INITIALIZE))
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1
    initialized = perf_counter() - start
    proc.stdin.write(line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    proc.stdin.write(line(TOOLS_LIST))
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 3
    listed = perf_counter() - start
    proc.stdin.write(line(FIRST_CALL))
    proc.stdin.flush()
    answer = json.loads(proc.stdout.readline())
    assert answer["id"] == 2 and answer["result"]["isError"] is False, answer
    called = perf_counter() - start
    proc.stdin.close()
    proc.wait()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return initialized, listed, called, cpu


def floor(project: Path, cache: Path) -> float:
    """The bare Typer app (bench/floor.py), started and run to its end: wall seconds."""
    env = environment("", cache)
    start = perf_counter()
    subprocess.run([sys.executable, str(FLOOR), "cmd3", "--json"], cwd=project, env=env,
                   stdout=subprocess.DEVNULL, check=True)
    return perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=15, help="runs of each (default 15)")
    parser.add_argument("src", nargs="*", default=[str(Path(__file__).parents[1] / "src")])
    args = parser.parse_args()
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="aidp-mcp-start-") as folder:
        project = Path(folder) / "project"
        (project / ".aidp").mkdir(parents=True)
        (project / ".aidp" / "tasklist.jsonl").touch()
        cache = Path(folder) / "pycache"
        for src in args.src:  # bytecode for every module, before any timed run
            one(src, project, cache)
        floor(project, cache)
        runs: dict[str, list[tuple[float, float, float, float]]] = {src: [] for src in args.src}
        floors: list[float] = []
        for n in range(args.n):
            order = [*args.src, None] if n % 2 else [None, *args.src]
            for src in order:
                if src is None:
                    floors.append(floor(project, cache))
                else:
                    runs[src].append(one(src, project, cache))
    base = statistics.median(floors) * 1000
    print(f"n={args.n} each, interleaved with the floor; load {load:.2f} -> "
          f"{os.getloadavg()[0]:.2f}; the floor (bench/floor.py) {base:.0f} ms")
    for src, taken in runs.items():
        init, listed, call, cpu = (statistics.median(t[k] for t in taken) * 1000
                                   for k in range(4))
        fastest = min(t[0] for t in taken) * 1000
        print(f"{src}: initialize answered {init:.0f} ms ({init / base:.2f}x the floor; "
              f"fastest {fastest:.0f}), tools/list {listed:.0f} ms ({listed / base:.2f}x), "
              f"first todo_write {call:.0f} ms, server CPU {cpu:.0f} ms")


if __name__ == "__main__":
    main()
