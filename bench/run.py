#!/usr/bin/env python3
"""aidp's benchmarks: whole-process runs, side by side with the framework floor.

    make bench                          # logs of 1k, 10k and 100k events
    make bench BENCH_ARGS="--million"   # and 1,000,000 events, for scaling (slow)
    .venv/bin/python bench/run.py --help

For every log size it times `aidp tasks list --status pending --json`, `tasks stats
--json`, `tasks stats` (the charts), `tasks show ID`, `tasks add`, `tasks done ID` (a
fresh pending id each run) and `todo show`, each alternated run by run with a bare
Typer app with ten subcommands (bench/floor.py) in the same virtualenv, and reports
medians, the ratio to the floor measured in the same loop, and peak memory (ru_maxrss
of each child); then `aidp report --html` on its own (median of 5).
Taskwarrior, when installed, gets the same tasks at 100k events and the operations
it has. Generated logs go to bench/data/, working copies and reports to bench/out/
(both git-ignored); bench/RESULTS.md holds a recorded run.

It needs nothing but the virtualenv; hyperfine, when present, is used for an
optional cross-check (--hyperfine).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "data"
OUT = HERE / "out"
# Working copies live outside any git repository: inside one with several worktrees
# (a checkout of aidp itself), reads fold every worktree's tasklist (issue 25).
WORK = Path(tempfile.gettempdir()) / "aidp-bench"
FLOOR = HERE / "floor.py"
GENERATOR = 2  # bump when the generated logs change shape
SESSIONS = ("main", "feature-login", "fix-parser", "docs", "bench")
TAGS = ("bug", "parser", "cli", "docs", "perf", "tests", "ci", "refactor")

# Targets from issue 5: ratio to the floor (median, whole process) per size.
TARGETS = {
    1_000: {"list": 1.2, "stats": 1.2, "show": 1.2, "add": 1.2, "done": 1.2, "todo": 1.2},
    100_000: {"list": 1.5, "stats": 1.5, "charts": 1.5, "show": 1.5, "add": 1.3,
              "done": 1.3, "ready": 1.5, "claim": 1.5},
    # Issue 16's steady state at 1M events (and ≤ 150 MB for every command).
    1_000_000: {"list": 2.5, "stats": 1.5, "show": 1.5, "done": 1.5, "add": 1.3},
}
# Issue 17: `aidp report --html` at 100k events, whole process, median of a few runs.
REPORT_TARGET_MS = {100_000: 3000}
MEMORY_TARGET_MB = 100
MEMORY_TARGETS_MB = {100_000: MEMORY_TARGET_MB, 1_000_000: 150, 5_000_000: 1024}


# --- generating logs ------------------------------------------------------------------


def generate(events: int, path: Path) -> dict[str, int]:
    """A realistic backlog's history: tasks are filed, started, finished or dropped, a
    few reopened, and the session TODO lists are rewritten now and then. Seeded, so
    every run of a size gets the same log."""
    import orjson

    from aidp.core.model import format_ts, new_task, transition

    rng = random.Random(events)
    now = 1_735_689_600_000_000  # 2025-01-01T00:00:00Z, in µs
    open_ids: list[str] = []
    where: dict[str, int] = {}
    closed: list[str] = []
    current: dict[str, dict] = {}
    seen: set[str] = set()
    out = bytearray()
    todo_every = 97

    def remember_open(tid: str) -> None:
        where[tid] = len(open_ids)
        open_ids.append(tid)

    def forget_open(tid: str) -> None:
        i = where.pop(tid)
        last = open_ids.pop()
        if last != tid:
            open_ids[i] = last
            where[last] = i

    for n in range(events):
        now += rng.randint(5, 90) * 1_000_000 + rng.randint(0, 999_999)
        if n % todo_every == todo_every - 1:
            session = rng.choice(SESSIONS)
            items = [
                {
                    "id": f"{rng.getrandbits(32):08x}",
                    "content": f"Step {k + 1} of the {session} work",
                    "status": rng.choice(("pending", "in_progress", "completed")),
                    "priority": rng.choice(("high", "medium", "low")),
                    "subtasks": [],
                }
                for k in range(rng.randint(1, 6))
            ]
            record = {"type": "todo_list", "id": f"todo_list:{session}", "session": session,
                      "items": items, "active": True, "paused": False,
                      "updated_at": format_ts(now)}
        elif not open_ids or rng.random() < 0.42:
            while True:
                tid = f"task_{now // 1_000_000}_{rng.getrandbits(32):08x}"
                if tid not in seen:
                    break
            seen.add(tid)
            record = new_task(
                f"Fix {rng.choice(TAGS)} issue #{n}: "
                f"{rng.choice(('flaky', 'slow', 'wrong', 'missing'))} "
                f"{rng.choice(('output', 'lock', 'fold', 'index', 'prompt', 'help text'))} in "
                f"{rng.choice(('list', 'stats', 'show', 'run', 'todo', 'repair'))}",
                priority=rng.choices(("high", "medium", "low"), (2, 5, 3))[0],
                tags=rng.sample(TAGS, rng.choice((0, 0, 1, 1, 2))),
                session=rng.choice(SESSIONS),
                discovered_during=f"{rng.choice(SESSIONS)} iteration {rng.randint(1, 9)}"
                if rng.random() < 0.3 else None,
                now=now,
            )
            record["id"] = tid
            remember_open(tid)
        elif closed and rng.random() < 0.02:
            tid = closed.pop(rng.randrange(len(closed)))
            record = transition(current[tid], "pending", now=now)
            remember_open(tid)
        else:
            tid = open_ids[rng.randrange(len(open_ids))]
            status = current[tid]["status"]
            roll = rng.random()
            if status == "pending":
                target = "in_progress" if roll < 0.5 else "done" if roll < 0.9 else "abandoned"
            else:
                target = "done" if roll < 0.85 else "pending" if roll < 0.9 else "abandoned"
            record = transition(current[tid], target, now=now,
                                reason="Superseded" if target == "abandoned" else None)
            if target in ("done", "abandoned"):
                forget_open(tid)
                closed.append(tid)
        if "type" not in record:
            current[record["id"]] = record
        out += orjson.dumps(record) + b"\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_suffix(".tmp")
    temp.write_bytes(bytes(out))
    temp.replace(path)
    counts: dict[str, int] = {}
    for record in current.values():
        counts[record["status"]] = counts.get(record["status"], 0) + 1
    return {"events": events, "bytes": len(out), "tasks": len(current), **counts}


def dataset(events: int) -> tuple[Path, dict[str, int]]:
    folder = DATA / f"{events}"
    log = folder / "tasklist.jsonl"
    meta = folder / "meta.json"
    if meta.exists() and log.exists():
        info = json.loads(meta.read_text())
        if info.get("generator") == GENERATOR:
            return log, info
    print(f"  generating {events:,} events …", flush=True)
    # In a child process: this one forks every measured run and must stay small.
    subprocess.run([sys.executable, __file__, "--generate", str(events)], check=True)
    return log, json.loads(meta.read_text())


def generate_dataset(events: int) -> None:
    folder = DATA / f"{events}"
    started = time.perf_counter()
    info = {"generator": GENERATOR, **generate(events, folder / "tasklist.jsonl")}
    info["seconds"] = round(time.perf_counter() - started, 1)
    (folder / "meta.json").write_text(json.dumps(info, indent=2))


# --- timing ---------------------------------------------------------------------------


TIME = shutil.which("time", path="/usr/bin:/bin")


def peak_kb(argv: list[str], env: dict[str, str], cwd: Path) -> int:
    """Peak resident memory of one run. A child's ru_maxrss also counts the memory of
    the process that forked it (Linux records the parent's high-water mark at exec),
    so /usr/bin/time, a small C program, does the forking when it is there; else this
    process does, and it stays small (data is generated in a subprocess) but the
    figure is an upper bound."""
    if TIME is None:
        return run_once(argv, env, cwd)[1]
    out = OUT / "peak.txt"
    subprocess.run([TIME, "-f", "%M", "-o", str(out), *argv], env=env, cwd=cwd,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return int(out.read_text().split()[-1])


def run_once(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, int, float]:
    """Wall time (s), ru_maxrss (KB, see peak_kb) and CPU time (user + system, s) of one
    whole process. CPU time is the steadier figure on a busy machine."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        check = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(argv)}\n{check.stderr[-2000:]}")
    return elapsed, usage.ru_maxrss, usage.ru_utime + usage.ru_stime


def side_by_side(name: str, make_argv, floor_argv: list[str], env: dict[str, str],
                 cwd: Path, runs: int, warmup: int) -> dict:
    """Alternate aidp and the floor run by run (swapping which goes first), so drift in
    the machine's speed hits both alike; medians of each."""
    for i in range(warmup):
        run_once(make_argv(-1 - i), env, cwd)
        run_once(floor_argv, env, cwd)
    ours, floor, ours_cpu, floor_cpu = [], [], [], []
    for i in range(runs):
        pair = [("aidp", make_argv(i)), ("floor", floor_argv)]
        if i % 2:
            pair.reverse()
        for who, argv in pair:
            seconds, _peak, cpu = run_once(argv, env, cwd)
            (ours if who == "aidp" else floor).append(seconds)
            (ours_cpu if who == "aidp" else floor_cpu).append(cpu)
    cpu_ms, floor_cpu_ms = statistics.median(ours_cpu) * 1000, statistics.median(floor_cpu) * 1000
    memory = [peak_kb(make_argv(runs + i), env, cwd) for i in range(3)]
    floor_memory = peak_kb(floor_argv, env, cwd)
    aidp_ms, floor_ms = statistics.median(ours) * 1000, statistics.median(floor) * 1000
    return {
        "command": name,
        "argv": " ".join(make_argv(0)),
        "aidp_ms": round(aidp_ms, 1),
        "floor_ms": round(floor_ms, 1),
        "ratio": round(aidp_ms / floor_ms, 3),
        "aidp_cpu_ms": round(cpu_ms, 1),
        "floor_cpu_ms": round(floor_cpu_ms, 1),
        "cpu_ratio": round(cpu_ms / floor_cpu_ms, 3),
        "aidp_min_ms": round(min(ours) * 1000, 1),
        "floor_min_ms": round(min(floor) * 1000, 1),
        "peak_mb": round(max(memory) / 1024, 1),
        "floor_peak_mb": round(floor_memory / 1024, 1),
        "runs": runs,
    }


def bench_size(events: int, args: argparse.Namespace, aidp: list[str], floor: list[str],
               env: dict[str, str]) -> dict:
    source, info = dataset(events)
    work = WORK / "work" / f"{events}"
    if work.exists():
        shutil.rmtree(work)
    (work / ".aidp").mkdir(parents=True)
    shutil.copyfile(source, work / ".aidp" / "tasklist.jsonl")
    env = {**env, "AIDP_DIR": str(work)}
    runs = args.runs if events < 1_000_000 else max(5, args.runs // 3)
    print(f"== {events:,} events: {info['bytes'] / 1e6:.1f} MB, {info['tasks']:,} tasks, "
          f"{info.get('pending', 0):,} pending — {runs} alternating runs per command", flush=True)

    # Compile into the private bytecode cache first, so no timed run pays for it.
    (OUT / "empty").mkdir(exist_ok=True)
    for argv in ([*aidp, "tasks", "stats", "--json"], [*aidp, "todo", "show"], floor):
        subprocess.run(argv, env={**env, "AIDP_DIR": str(OUT / "empty")}, cwd=OUT / "empty",
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # The first read after the log was written by someone else builds the snapshot.
    cold_s, _, _ = run_once([*aidp, "tasks", "stats", "--json"], env, work)
    shutil.rmtree(work / ".aidp" / "cache", ignore_errors=True)
    cold_kb = peak_kb([*aidp, "tasks", "stats", "--json"], env, work)
    pending = pending_ids(aidp, env, work)
    queue_records(work / ".aidp" / "tasklist.jsonl", pending)
    # The steady state: the first read after that foreign append merges it into the
    # snapshot; a file changed less than 2 s ago is checked in full on every read (a
    # same-size rewrite could hide behind equal stat data), so wait that out and let
    # one more read vouch for it, as any read a little later would.
    run_once([*aidp, "tasks", "stats", "--json"], env, work)
    time.sleep(2.5)
    run_once([*aidp, "tasks", "stats", "--json"], env, work)
    rng = random.Random(7)
    some = rng.choice(pending)
    fresh = iter(rng.sample(pending, len(pending)))
    done_ids: dict[int, str] = {}

    def done_argv(i: int) -> list[str]:
        if i not in done_ids:
            done_ids[i] = next(fresh)
        return [*aidp, "tasks", "done", done_ids[i].rpartition("_")[2]]

    commands = [
        ("list", lambda i: [*aidp, "tasks", "list", "--status", "pending", "--json"]),
        ("list-all", lambda i: [*aidp, "tasks", "list", "--all", "--json"]),
        ("stats", lambda i: [*aidp, "tasks", "stats", "--json"]),
        ("charts", lambda i: [*aidp, "tasks", "stats"]),  # the drawing, piped: no colour
        ("show", lambda i: [*aidp, "tasks", "show", some.rpartition("_")[2]]),
        ("add", lambda i: [*aidp, "tasks", "add", "Benchmark task", "-q"]),
        ("done", done_argv),
    ]
    # Without AIDP_SESSION: the session a person gets by default.
    person = {k: v for k, v in env.items() if k != "AIDP_SESSION"}
    wanted_todo = not args.commands or {"todo", "tick"} & set(args.commands.split(","))
    if wanted_todo and has_todo(aidp, env, work):
        commands.append(("todo", lambda i: [*aidp, "todo", "show"]))
        # Issue 13: a tick on a 50-item list of the default session (the branch and the
        # git identity, resolved as a person's plain `aidp todo tick` would).
        subprocess.run([sys.executable, __file__, "--setup-todo", str(work)], env=person,
                       cwd=work, check=True)
        commands.append(("tick", lambda i: [*aidp, "todo", "tick", str(i % 50 + 1)]))
    # What every agent session start runs through its hook (issue 11).
    commands.append(("prime", lambda i: [*aidp, "--session", "main", "prime"]))
    commands += [
        ("ready", lambda i: [*aidp, "tasks", "ready", "--limit", "20", "--json"]),
        # Each run claims the next ready task (a locked write, like done) as the default
        # actor: AIDP_ACTOR unset, so git's user.email is asked for, as on a dev machine.
        ("claim", lambda i: [*aidp, "tasks", "claim", "--json"]),
    ]
    if args.commands:
        wanted = set(args.commands.split(","))
        commands = [c for c in commands if c[0] in wanted]
    rows = []
    for name, make in commands:
        row = side_by_side(name, make, floor, person if name == "tick" else env, work,
                           runs if name != "list-all" else min(runs, 5), args.warmup)
        rows.append(row)
        print(f"  {name:<6} aidp {row['aidp_ms']:7.1f} ms  floor {row['floor_ms']:6.1f} ms  "
              f"×{row['ratio']:.2f}  (CPU ×{row['cpu_ratio']:.2f})  peak {row['peak_mb']:.0f} MB",
              flush=True)
    appended = after_appends(aidp, env, work, args)
    page = work / "report.html"
    if args.commands and "report" not in args.commands.split(","):
        return {"events": events, "data": info, "cold_build_ms": round(cold_s * 1000, 1),
                "cold_build_peak_mb": round(cold_kb / 1024, 1), "rows": rows,
                "after_appends": appended}
    report_s = [run_once([*aidp, "report", "--html", str(page)], env, work) for _ in range(5)]
    report_ms = statistics.median(s for s, _peak, _cpu in report_s) * 1000
    report_cpu_ms = statistics.median(cpu for _s, _peak, cpu in report_s) * 1000
    report_mb = peak_kb([*aidp, "report", "--html", str(page)], env, work) / 1024
    print(f"  report --html: {report_ms:.0f} ms (CPU {report_cpu_ms:.0f} ms; "
          f"{page.stat().st_size / 1e6:.1f} MB page), peak {report_mb:.0f} MB", flush=True)
    return {"events": events, "data": info, "cold_build_ms": round(cold_s * 1000, 1),
            "cold_build_peak_mb": round(cold_kb / 1024, 1), "rows": rows,
            "report_ms": round(report_ms, 1), "report_cpu_ms": round(report_cpu_ms, 1),
            "report_peak_mb": round(report_mb, 1),
            "report_bytes": page.stat().st_size, "after_appends": appended}


APPENDS = 1000  # tasks added by aidp's writer before each "read after appends" run


def after_appends(aidp: list[str], env: dict[str, str], work: Path,
                  args: argparse.Namespace) -> dict | None:
    """Issue 16's "no read over 1 s right after appends": each run adds APPENDS tasks
    with aidp's own writer (untimed, in a child process: ~300 KB, more than the
    snapshot lets pile up before it writes the next one), then times the first `tasks
    stats --json` after them, which writes the next snapshot. Max and median of a few."""
    if args.commands and "appends" not in args.commands.split(","):
        return None
    times, cpus, peaks = [], [], []
    for n in range(5):
        subprocess.run([sys.executable, __file__, "--append", str(work), str(APPENDS)],
                       env=env, check=True)
        if n % 2:
            peaks.append(peak_kb([*aidp, "tasks", "stats", "--json"], env, work))
            continue
        seconds, _peak, cpu = run_once([*aidp, "tasks", "stats", "--json"], env, work)
        times.append(seconds)
        cpus.append(cpu)
    result = {"appends": APPENDS, "max_ms": round(max(times) * 1000, 1),
              "median_ms": round(statistics.median(times) * 1000, 1),
              "median_cpu_ms": round(statistics.median(cpus) * 1000, 1),
              "peak_mb": round(max(peaks) / 1024, 1)}
    print(f"  read after {APPENDS} appends: max {result['max_ms']:.0f} ms, median "
          f"{result['median_ms']:.0f} ms (CPU {result['median_cpu_ms']:.0f} ms), "
          f"peak {result['peak_mb']:.0f} MB", flush=True)
    return result


def append_tasks(work: Path, count: int) -> None:
    from aidp.core.model import new_task
    from aidp.tasklist.log import TaskLog

    TaskLog(work).append([new_task(f"Appended task {n} for the after-appends read",
                                   tags=["bench"]) for n in range(count)])


def queue_records(log: Path, pending: list[str]) -> None:
    """Work-queue records on top of the generated history (seeded): a fifth of the
    pending tasks wait on an older pending task, a few hundred epics hold 5% of them
    as children, 2% carry a note. Appended to the working copy only, so the generated
    logs (and every other row) stay as they were."""
    import orjson

    rng = random.Random(len(pending))
    stamp = "2026-01-01T00:00:00.000000Z"
    out = []
    order = {tid: n for n, tid in enumerate(pending)}
    epics = pending[:200]
    for tid in pending[200:]:
        roll = rng.random()
        if roll < 0.05:
            out.append({"type": "parent", "id": f"parent:{tid}", "task": tid,
                        "parent": rng.choice(epics), "updated_at": stamp})
        elif roll < 0.25:
            blocker = pending[rng.randrange(200, order[tid])] if order[tid] > 200 else epics[0]
            out.append({"type": "dep", "id": f"dep:{tid}:{blocker}", "task": tid,
                        "blocked_by": blocker, "updated_at": stamp})
        if rng.random() < 0.02:
            out.append({"type": "note", "id": f"note:{tid}:{rng.getrandbits(32):08x}",
                        "task": tid, "text": "Seen again on CI", "author": "bench",
                        "created_at": stamp, "updated_at": stamp})
    with open(log, "ab") as handle:
        handle.write(b"".join(orjson.dumps(r) + b"\n" for r in out))


def setup_todo(work: Path) -> None:
    """A 50-item list in the default session of `work`, written item by item."""
    # aidp.store.overlay: reads through the store, as the CLI does (else each of
    # the 50 writes folds the whole log: minutes at 1M events).
    import aidp.store.overlay  # noqa: F401
    from aidp import todos
    from aidp.tasklist.log import TaskLog

    log = TaskLog(work)
    session = todos.resolve_session(None, work, log.read)
    for n in range(50):
        todos.change(log, session,
                     lambda t, n=n: todos.add(t, "last", f"Step {n + 1} of the plan")[0])
    print(f"  50-item TODO list in session {session}", flush=True)


def pending_ids(aidp: list[str], env: dict[str, str], cwd: Path) -> list[str]:
    out = subprocess.run([*aidp, "tasks", "list", "--status", "pending", "--format", "ids"],
                         env=env, cwd=cwd, capture_output=True, text=True, check=True).stdout
    return out.split()


def has_todo(aidp: list[str], env: dict[str, str], cwd: Path) -> bool:
    proc = subprocess.run([*aidp, "todo", "show"], env=env, cwd=cwd, capture_output=True)
    return proc.returncode == 0


# --- Taskwarrior ----------------------------------------------------------------------


def taskwarrior(events: int, runs: int) -> dict | None:
    task = shutil.which("task")
    if task is None:
        print("  (taskwarrior not installed: apt-get install -y taskwarrior)")
        return None
    dataset(events)
    home = OUT / "taskwarrior" / f"{events}"
    if home.exists():
        shutil.rmtree(home)
    (home / "data").mkdir(parents=True)
    rc = home / "taskrc"
    rc.write_text(f"data.location={home / 'data'}\nconfirmation=off\nverbose=nothing\n"
                  "json.array=on\nhooks=off\nrecurrence=off\nnews.version=2.6.2\n")
    env = {**os.environ, "TASKRC": str(rc), "TASKDATA": str(home / "data")}
    dump = home / "import.json"
    subprocess.run([sys.executable, __file__, "--tw-export", str(events), str(dump)], check=True)
    exported = json.loads(dump.read_text())
    pending = [t["uuid"] for t in exported if t["status"] == "pending" and "start" not in t]
    version = subprocess.run([task, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"== Taskwarrior {version}"
          f" at {events:,} events: importing {len(exported):,} tasks …", flush=True)
    started = time.perf_counter()
    subprocess.run([task, "import", str(dump)], env=env, check=True, capture_output=True)
    imported_s = time.perf_counter() - started
    rng = random.Random(7)
    some = rng.choice(pending)
    fresh = iter(rng.sample(pending, len(pending)))
    done_ids: dict[int, str] = {}

    def done_argv(i: int) -> list[str]:
        if i not in done_ids:
            done_ids[i] = next(fresh)
        return [task, done_ids[i], "done"]

    commands = [
        # Started tasks are in_progress for aidp: not in `list --status pending`.
        ("list", lambda i: [task, "status:pending", "-ACTIVE", "export"]),
        ("stats", lambda i: [task, "stats"]),
        ("show", lambda i: [task, some, "info"]),
        ("add", lambda i: [task, "add", "Benchmark task"]),
        ("done", done_argv),
    ]
    rows = []
    for name, make in commands:
        times = []
        run_once(make(-1), env, home)
        for i in range(runs):
            times.append(run_once(make(i), env, home)[0])
        memory = [peak_kb(make(runs), env, home)]
        row = {"command": name, "argv": " ".join(make(0)).replace(task, "task"),
               "ms": round(statistics.median(times) * 1000, 1),
               "peak_mb": round(max(memory) / 1024, 1), "runs": runs}
        rows.append(row)
        print(f"  {name:<6} task {row['ms']:8.1f} ms  peak {row['peak_mb']:.0f} MB", flush=True)
    return {"events": events, "tasks": len(exported), "import_s": round(imported_s, 1),
            "rows": rows}


def tw_export(events: int, target: Path) -> None:
    """The folded tasks of a generated log, in Taskwarrior's import format."""
    from aidp.tasklist.log import fold_bytes

    fold = fold_bytes((DATA / f"{events}" / "tasklist.jsonl").read_bytes())
    exported = []
    for tid, t in fold.tasks.items():
        status = {"done": "completed", "abandoned": "deleted"}.get(t["status"], "pending")
        item = {"uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, tid)),
                "description": t["description"], "status": status,
                "entry": tw_time(t["created_at"]), "modified": tw_time(t["updated_at"]),
                "priority": {"high": "H", "medium": "M", "low": "L"}[t["priority"]]}
        if t.get("tags"):
            item["tags"] = t["tags"]
        if t["status"] == "in_progress":
            item["start"] = tw_time(t.get("started_at") or t["updated_at"])
        if status != "pending":
            item["end"] = tw_time(t["updated_at"])
        exported.append(item)
    target.write_text(json.dumps(exported))


def tw_time(stamp: str) -> str:
    from aidp.core.model import parse_ts

    micros = parse_ts(stamp) or 0
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(micros // 1_000_000))


# --- hyperfine cross-check ------------------------------------------------------------


def hyperfine(results: list[dict], aidp: list[str], floor: list[str], env: dict[str, str],
              runs: int) -> None:
    exe = shutil.which("hyperfine")
    if exe is None:
        print("  (hyperfine not installed: apt-get install -y hyperfine)")
        return
    for result in results:
        work = WORK / "work" / f"{result['events']}"
        cmds = [" ".join(floor)] + [
            " ".join(row["argv"].split()) for row in result["rows"]
            if row["command"] in ("list", "stats", "show", "todo")
        ]
        target = OUT / f"hyperfine-{result['events']}.json"
        subprocess.run([exe, "-N", "--warmup", "3", "--runs", str(runs), "--export-json",
                        str(target), *cmds], env={**env, "AIDP_DIR": str(work)}, cwd=work,
                       check=True)


# --- the report -----------------------------------------------------------------------


def machine() -> dict[str, str]:
    import importlib.metadata as md

    def sh(*argv: str) -> str:
        try:
            return subprocess.run(argv, capture_output=True, text=True).stdout.strip()
        except OSError:
            return "?"

    cpu = next((line.split(":", 1)[1].strip() for line in sh("lscpu").splitlines()
                if line.startswith("Model name")), platform.processor())
    return {
        "cpu": cpu,
        "cores": str(os.cpu_count()),
        "uname": " ".join(platform.uname()),
        "python": sys.version.split()[0],
        "typer": md.version("typer"),
        "orjson": md.version("orjson"),
        "aidp": md.version("aidp-tasklist"),
        "taskwarrior": sh("task", "--version") if shutil.which("task") else "-",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }


def report(results: list[dict], tw: dict | None, info: dict[str, str], command: str) -> str:
    lines = ["# Benchmark run", "", f"Command: `{command}`", ""]
    lines += [f"- {k}: {v}" for k, v in info.items()]
    lines += ["", "Wall-clock medians of whole-process runs, alternated with the floor; CPU = "
              "user + system time of the same runs (steadier when the machine is shared).", "",
              "| events | command | aidp median | floor median | ratio | target | CPU ratio "
              "| peak MB |", "|---:|---|---:|---:|---:|---:|---:|---:|"]
    for result in results:
        targets = TARGETS.get(result["events"], {})
        for row in result["rows"]:
            target = targets.get(row["command"])
            verdict = "" if target is None else (" ✓" if row["ratio"] <= target else " ✗")
            memory = ""
            limit = MEMORY_TARGETS_MB.get(result["events"])
            if limit is not None:
                memory = " ✓" if row["peak_mb"] <= limit else " ✗"
            lines.append(
                f"| {result['events']:,} | {row['command']} | {row['aidp_ms']:.1f} ms | "
                f"{row['floor_ms']:.1f} ms | {row['ratio']:.2f}{verdict} | "
                f"{f'≤ {target:.1f}' if target else '-'} | {row['cpu_ratio']:.2f} | "
                f"{row['peak_mb']:.0f}{memory} |")
    lines += ["", "First read after the log was replaced (full snapshot rebuild):", ""]
    for result in results:
        lines.append(f"- {result['events']:,} events ({result['data']['bytes'] / 1e6:.1f} MB): "
                     f"{result['cold_build_ms']:.0f} ms, "
                     f"peak {result['cold_build_peak_mb']:.0f} MB")
    lines += ["", f"First read after {APPENDS:,} tasks were added by aidp (writes the next "
              "snapshot; issue 16: no read over 1 s):", ""]
    for result in results:
        got = result.get("after_appends")
        if got:
            lines.append(f"- {result['events']:,} events: max {got['max_ms']:.0f} ms, median "
                         f"{got['median_ms']:.0f} ms (CPU {got['median_cpu_ms']:.0f} ms), "
                         f"peak {got['peak_mb']:.0f} MB")
    lines += ["", "`aidp report --html` (whole process, median of 5):", ""]
    for result in results:
        if "report_ms" not in result:
            continue  # --commands without report
        target = REPORT_TARGET_MS.get(result["events"])
        verdict = "" if target is None else (
            f" ({'✓' if result['report_ms'] <= target else '✗'} target ≤ {target / 1000:.0f} s)")
        lines.append(f"- {result['events']:,} events: {result['report_ms']:.0f} ms{verdict} "
                     f"(CPU {result['report_cpu_ms']:.0f} ms), "
                     f"page {result['report_bytes'] / 1e6:.1f} MB, "
                     f"peak {result['report_peak_mb']:.0f} MB")
    if tw:
        ours = next((r for r in results if r["events"] == tw["events"]), None)
        lines += ["", f"Taskwarrior at {tw['events']:,} events ({tw['tasks']:,} tasks imported "
                  f"in {tw['import_s']} s):", "",
                  "| command | task | aidp | task / aidp |", "|---|---:|---:|---:|"]
        for row in tw["rows"]:
            mine = next((r for r in (ours or {}).get("rows", [])
                         if r["command"] == row["command"]), None)
            if mine:
                lines.append(f"| {row['command']} (`{row['argv']}`) | {row['ms']:.0f} ms | "
                             f"{mine['aidp_ms']:.0f} ms | {row['ms'] / mine['aidp_ms']:.1f}× |")
    by_size = {r["events"]: r for r in results}
    if 100_000 in by_size and 1_000_000 in by_size:
        lines += ["", "Scaling, 100k → 1M events (cost above the floor; linear would be 10×):",
                  ""]
        for small, big in zip(by_size[100_000]["rows"], by_size[1_000_000]["rows"], strict=True):
            extra_small = max(small["aidp_ms"] - small["floor_ms"], 0.1)
            extra_big = big["aidp_ms"] - big["floor_ms"]
            lines.append(f"- {small['command']}: {extra_small:.1f} ms → {extra_big:.1f} ms "
                         f"({extra_big / extra_small:.1f}×)")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000",
                        help="comma-separated event counts (default: 1000,10000,100000)")
    parser.add_argument("--million", action="store_true", help="also 1,000,000 events")
    parser.add_argument("--runs", type=int, default=21, help="alternating runs per command")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--no-taskwarrior", action="store_true")
    parser.add_argument("--taskwarrior-runs", type=int, default=5)
    parser.add_argument("--hyperfine", action="store_true", help="cross-check with hyperfine")
    parser.add_argument("--commands", help="only these commands, comma-separated "
                        "(list,list-all,stats,charts,show,add,done,todo,tick,prime,ready,"
                        "claim,appends,report)")
    parser.add_argument("--generate", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--tw-export", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--setup-todo", help=argparse.SUPPRESS)
    parser.add_argument("--append", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--five-million", action="store_true",
                        help="also 5,000,000 events (generating it takes minutes and GBs)")
    args = parser.parse_args()
    if args.generate:
        return generate_dataset(args.generate)
    if args.tw_export:
        return tw_export(int(args.tw_export[0]), Path(args.tw_export[1]))
    if args.setup_todo:
        return setup_todo(Path(args.setup_todo))
    if args.append:
        return append_tasks(Path(args.append[0]), int(args.append[1]))
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s]
    if args.million and 1_000_000 not in sizes:
        sizes.append(1_000_000)
    if args.five_million and 5_000_000 not in sizes:
        sizes.append(5_000_000)

    bindir = Path(sys.executable).parent
    aidp = [str(bindir / "aidp")] if (bindir / "aidp").exists() else [sys.executable, "-m", "aidp"]
    floor = [sys.executable, str(FLOOR), "cmd3", "--json"]
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("AIDP_", "TASK")) and k != "PYTHONDONTWRITEBYTECODE"}
    # A private bytecode cache that the measured processes may write: a source file
    # edited during a run is compiled once, not on every run.
    env.update({"NO_COLOR": "1", "AIDP_SESSION": "bench",
                "PYTHONPYCACHEPREFIX": str(OUT / "pycache")})
    OUT.mkdir(parents=True, exist_ok=True)

    info = machine()
    print("  " + ", ".join(f"{k} {v}" for k, v in info.items()), flush=True)
    results = [bench_size(events, args, aidp, floor, env) for events in sizes]
    tw = None
    if not args.no_taskwarrior:
        tw_size = 100_000 if 100_000 in sizes else max(sizes)
        tw = taskwarrior(tw_size, args.taskwarrior_runs)
    if args.hyperfine:
        hyperfine(results, aidp, floor, env, args.runs)
    command = "make bench" + (f' BENCH_ARGS="{" ".join(sys.argv[1:])}"' if sys.argv[1:] else "")
    text = report(results, tw, info, command)
    (OUT / "results.json").write_text(json.dumps(
        {"machine": info, "results": results, "taskwarrior": tw}, indent=2))
    (OUT / "report.md").write_text(text)
    print()
    print(text)
    print(f"(written to {OUT / 'report.md'} and {OUT / 'results.json'})")


if __name__ == "__main__":
    main()
