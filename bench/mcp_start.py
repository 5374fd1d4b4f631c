"""`aidp mcp` start: time from spawning the server to its initialize answer, and to the
answer of a first todo_write, over stdio as an agent speaks to it (plain JSON-RPC lines).

    .venv/bin/python bench/mcp_start.py [-n 15] [SRC ...]

Each SRC is a checkout's `src` folder, put first on PYTHONPATH (default: this
checkout's); several are run interleaved, so a busy machine weighs on each alike. Wall
time and the server process's CPU time (user + system) are given as medians.
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

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "bench", "version": "1"}}}
FIRST_CALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
    "name": "todo_write", "arguments": {"items": [{"content": "a", "status": "pending"}]}}}


def line(message: dict[str, object]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def one(src: str, project: Path) -> tuple[float, float, float]:
    env = dict(os.environ, AIDP_SESSION="bench", PYTHONPATH=src)
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
    proc.stdin.write(line(FIRST_CALL))
    proc.stdin.flush()
    answer = json.loads(proc.stdout.readline())
    assert answer["id"] == 2 and answer["result"]["isError"] is False, answer
    called = perf_counter() - start
    proc.stdin.close()
    proc.wait()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return initialized, called, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=15, help="runs of each (default 15)")
    parser.add_argument("src", nargs="*", default=[str(Path(__file__).parents[1] / "src")])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="aidp-mcp-start-") as folder:
        project = Path(folder)
        (project / ".aidp").mkdir()
        (project / ".aidp" / "tasklist.jsonl").touch()
        runs: dict[str, list[tuple[float, float, float]]] = {src: [] for src in args.src}
        for _ in range(args.n):
            for src in args.src:
                runs[src].append(one(src, project))
    print(f"n={args.n} each, interleaved")
    for src, taken in runs.items():
        init, call, cpu = (statistics.median(t[k] for t in taken) * 1000 for k in range(3))
        fastest = min(t[0] for t in taken) * 1000
        print(f"{src}: initialize answered {init:.0f} ms (fastest {fastest:.0f}), "
              f"first todo_write {call:.0f} ms, server CPU {cpu:.0f} ms")


if __name__ == "__main__":
    main()
