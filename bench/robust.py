#!/usr/bin/env python3
"""Issue 16's measurements: cold reads, maintenance, a read-only checkout, AIDP_FSYNC.

    .venv/bin/python bench/robust.py                     # 100k events
    .venv/bin/python bench/robust.py --sizes 100000,1000000 --runs 3

Everything is measured side by side with its yardstick in one loop (alternating, which
one goes first swapping each run), because the machine is shared and its speed drifts:
- cold read: `tasks stats --json` right after the cache was deleted (a fresh clone, a
  checkout), against bench/naive.py, a fifteen-line orjson fold of the same file;
- `tasks repair --dry-run` and `tasks compact` (on a fresh copy each run) against the
  same naive fold;
- a read-only checkout: `.aidp/cache` is a file, so no snapshot can be written;
- `tasks add` with and without AIDP_FSYNC=1, against the bare Typer floor.
Peak memory is /usr/bin/time's maximum resident set of separate runs. Logs come from
bench/run.py's generator (bench/data/), working copies go to bench/out/robust/.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import run as bench  # noqa: E402 - bench/run.py: the generator and the timing helpers

OUT = bench.OUT / "robust"


def fresh_copy(source: Path, name: str) -> Path:
    work = OUT / name
    if work.exists():
        shutil.rmtree(work)
    (work / ".aidp").mkdir(parents=True)
    shutil.copyfile(source, work / ".aidp" / "tasklist.jsonl")
    return work


def pair(name: str, ours, theirs, runs: int) -> dict:
    """Alternate two callables returning seconds; medians and the ratio of medians."""
    a, b = [], []
    for i in range(runs):
        order = [(a, ours), (b, theirs)]
        if i % 2:
            order.reverse()
        for bucket, call in order:
            bucket.append(call())
    row = {"what": name, "ours_s": statistics.median(a), "yardstick_s": statistics.median(b)}
    row["ratio"] = row["ours_s"] / row["yardstick_s"]
    print(f"  {name:<32} {row['ours_s']:7.3f} s  vs {row['yardstick_s']:7.3f} s  "
          f"×{row['ratio']:.2f}", flush=True)
    return row


def size(events: int, runs: int, aidp: list[str], env: dict[str, str]) -> list[dict]:
    source, info = bench.dataset(events)
    print(f"== {events:,} events, {info['bytes'] / 1e6:.0f} MB", flush=True)
    naive = [sys.executable, str(HERE / "naive.py"), str(source)]
    work = fresh_copy(source, f"{events}")
    env = {**env, "AIDP_DIR": str(work)}

    def timed(argv: list[str], cwd: Path = work, extra: dict | None = None) -> float:
        return bench.run_once(argv, {**env, **(extra or {})}, cwd)[0]

    def cold() -> float:
        shutil.rmtree(work / ".aidp" / "cache", ignore_errors=True)
        return timed([*aidp, "tasks", "stats", "--json"])

    rows = [pair("cold read (stats)", cold, lambda: timed(naive), runs)]
    shutil.rmtree(work / ".aidp" / "cache", ignore_errors=True)
    rows[-1]["peak_mb"] = bench.peak_kb([*aidp, "tasks", "stats", "--json"], env, work) / 1024
    rows[-1]["yardstick_peak_mb"] = bench.peak_kb(naive, env, work) / 1024

    rows.append(pair("repair --dry-run", lambda: timed([*aidp, "tasks", "repair", "--dry-run"]),
                     lambda: timed(naive), runs))
    rows[-1]["peak_mb"] = bench.peak_kb([*aidp, "tasks", "repair", "--dry-run"], env,
                                        work) / 1024

    def compact() -> float:
        copy = fresh_copy(source, f"{events}-compact")
        return timed([*aidp, "tasks", "compact"], copy, {"AIDP_DIR": str(copy)})

    rows.append(pair("compact", compact, lambda: timed(naive), runs))
    copy = fresh_copy(source, f"{events}-compact")
    rows[-1]["peak_mb"] = bench.peak_kb([*aidp, "tasks", "compact"],
                                        {**env, "AIDP_DIR": str(copy)}, copy) / 1024

    readonly = fresh_copy(source, f"{events}-readonly")
    (readonly / ".aidp" / "cache").write_text("a file where the cache folder would be\n")
    ro_env = {**env, "AIDP_DIR": str(readonly)}
    rows.append(pair("read-only checkout (stats)",
                     lambda: bench.run_once([*aidp, "tasks", "stats", "--json"], ro_env,
                                            readonly)[0],
                     lambda: timed(naive), runs))
    rows[-1]["peak_mb"] = bench.peak_kb([*aidp, "tasks", "stats", "--json"], ro_env,
                                        readonly) / 1024

    floor = [sys.executable, str(bench.FLOOR), "cmd3", "--json"]
    add = [*aidp, "tasks", "add", "Benchmark task", "-q"]
    rows.append(pair("add, AIDP_FSYNC=1 (vs floor)",
                     lambda: timed(add, extra={"AIDP_FSYNC": "1"}), lambda: timed(floor),
                     max(runs, 5)))
    rows.append(pair("add (vs floor)", lambda: timed(add), lambda: timed(floor), max(runs, 5)))
    for row in rows:
        row["events"] = events
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100000")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    bindir = Path(sys.executable).parent
    aidp = [str(bindir / "aidp")]
    env = {k: v for k, v in bench.os.environ.items() if not k.startswith(("AIDP_", "TASK"))
           and k != "PYTHONDONTWRITEBYTECODE"}
    env.update({"NO_COLOR": "1", "AIDP_SESSION": "bench",
                "PYTHONPYCACHEPREFIX": str(bench.OUT / "pycache")})
    OUT.mkdir(parents=True, exist_ok=True)
    rows = [row for events in args.sizes.split(",")
            for row in size(int(events), args.runs, aidp, env)]
    lines = ["| events | what | aidp | yardstick | ratio | peak MB |",
             "|---:|---|---:|---:|---:|---:|"]
    for row in rows:
        peak = f"{row['peak_mb']:.0f}" if "peak_mb" in row else "-"
        if "yardstick_peak_mb" in row:
            peak += f" (naive {row['yardstick_peak_mb']:.0f})"
        lines.append(f"| {row['events']:,} | {row['what']} | {row['ours_s']:.3f} s | "
                     f"{row['yardstick_s']:.3f} s | {row['ratio']:.2f} | {peak} |")
    text = "\n".join(lines) + "\n"
    (OUT / "report.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
