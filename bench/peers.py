#!/usr/bin/env python3
"""aidp beside its peers: the same backlog in aidp, Taskwarrior and Backlog.md, the
same everyday commands, timed as people and scripts run them.

    .venv/bin/python bench/peers.py                          # 1k, 10k and 100k tasks
    .venv/bin/python bench/peers.py --sizes 10000 --rounds 5 --peers taskwarrior
    .venv/bin/python bench/peers.py --install-backlog        # Backlog.md into bench/out/npm

One generated backlog per size (seeded: titles, priorities, tags; 60% done, 5%
started, the rest pending), written as a Taskwarrior export and brought into each
tool by its own import path: `aidp tasks import FILE --from taskwarrior` in a fresh
`git init` + `aidp init`, committed and then `git clone`d (the commands run inside
the clone, the root found by aidp: no AIDP_DIR); `task import FILE` with its own
TASKRC and TASKDATA; Backlog.md's task files written directly (its CLI creates one
task per process and reads every task each time: ~4 s a task at 10k), committed.
Every tool runs with HOME, the XDG folders and git's config inside the scratch
folder, COLUMNS fixed and stdout not a terminal, as a script runs them.

Commands (the argv of each tool is printed with the results): add one task; list
the open tasks (human); list them as JSON; show one task by the id people type;
mark one done; what to do next. Rounds run back to back, no sleeps: in each round
every tool runs its commands in that order (a write, then reads at once, …), the
order of the tools rotating round by round; each aidp command is paired with a run
of the floor (bench/floor.py, the bare Typer app in the same virtualenv), which
goes first every other round. Reported: median and minimum wall time over the
rounds, the ratio aidp/peer taken per round and its median, CPU time (user + system
of the child and what it waited for, from wait4) and peak memory (/usr/bin/time
-f %M, one more run of each). A peer that is not installed is skipped, saying so.
The markdown table goes to stdout, everything measured to bench/out/peers.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import userland  # noqa: E402 - bench/userland.py: aidp as its users run it

OUT = HERE / "out"
NPM = OUT / "npm"  # --install-backlog puts Backlog.md here (git-ignored)
BACKLOG_VERSION = "1.52.0"
# Outside any git repository (a checkout of aidp has worktrees, whose tasklists a read
# inside it would fold too); one folder per checkout, so two checkouts' runs at once
# never share one.
CHECKOUT = zlib.crc32(str(HERE).encode()) & 0xFFFF
WORK = Path(tempfile.gettempdir()) / f"aidp-bench-peers-{CHECKOUT}"
COLUMNS = 120
COMMANDS = ("add", "list", "json", "show", "done", "next")
LABELS = {"add": "add one task", "list": "list open tasks (human)",
          "json": "list open tasks (JSON)", "show": "show one task",
          "done": "mark one done", "next": "what next"}
TAGS = ("bug", "parser", "cli", "docs", "perf", "tests", "ci", "refactor", "api", "ux")
TIME = shutil.which("time", path="/usr/bin:/bin")
Result = dict[str, Any]  # one size's measurements, as peers.json holds them
BACKLOG_MAX = 10_000  # above it Backlog.md is skipped unless --backlog-max says otherwise


# --- the backlog ----------------------------------------------------------------------


def generate(size: int) -> list[dict[str, object]]:
    """`size` tasks as `task export` writes them, seeded by the size: 60% completed,
    5% started, the rest pending; priorities H/M/L 2:5:3; 0–2 tags; filed over the two
    years before 2026-11-01, one after another."""
    rng = random.Random(size)
    stamp = 1_730_419_200 - 2 * 365 * 86_400  # 2022-11-02, so the last is ~2026-11-01
    step = 2 * 365 * 86_400 // size
    tasks: list[dict[str, object]] = []
    for n in range(size):
        stamp += rng.randint(step // 2, step * 3 // 2)
        modified = stamp + rng.randint(60, 30 * 86_400)
        roll = rng.random()
        status = "completed" if roll < 0.60 else "pending"
        task: dict[str, object] = {
            "uuid": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
            "description": f"{rng.choice(VERBS)} {rng.choice(WHAT)} in "
                           f"{rng.choice(WHERE)} (#{n + 1})",
            "status": status,
            "entry": tw_stamp(stamp),
            "modified": tw_stamp(modified),
            "priority": rng.choices("HML", (2, 5, 3))[0],
        }
        tags = rng.sample(TAGS, rng.choice((0, 0, 1, 1, 2)))
        if tags:
            task["tags"] = tags
        if status == "completed":
            task["end"] = tw_stamp(modified)
        elif roll >= 0.95:
            task["start"] = tw_stamp(modified)
        tasks.append(task)
    return tasks


VERBS = ("Fix", "Speed up", "Document", "Test", "Refactor", "Add", "Remove", "Check")
WHAT = ("the flaky lock", "slow output", "the wrong fold", "the missing index",
        "the prompt", "the help text", "a race", "the retry", "error messages")
WHERE = ("list", "stats", "show", "run", "todo", "repair", "the parser", "the CLI",
         "the store", "the hook")


def tw_stamp(seconds: int) -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(seconds))


def write_export(tasks: list[dict[str, object]], path: Path) -> None:
    """One task per line inside a JSON array, as `task export` writes it."""
    path.write_text("[\n" + ",\n".join(json.dumps(t) for t in tasks) + "\n]\n")


# --- timing ---------------------------------------------------------------------------


def run_once(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall time and CPU time (user + system of the child and of what it waited for),
    in seconds, of one whole process, stdout and stderr discarded."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        check = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
        raise SystemExit(f"failed ({code}) in {cwd}: {' '.join(argv)}\n{check.stderr[-2000:]}")
    return elapsed, usage.ru_utime + usage.ru_stime


def peak(argv: list[str], env: dict[str, str], cwd: Path, scratch: Path) -> tuple[int, bytes]:
    """Peak resident memory (KB) of one run, by /usr/bin/time (a small C program does
    the forking: a child forked by this Python would report this process's size), and
    what the run printed."""
    out, report = scratch / "stdout.txt", scratch / "peak.txt"
    if TIME is None:
        raise SystemExit("/usr/bin/time is missing: apt-get install -y time")
    with open(out, "wb") as sink:
        code = subprocess.run([TIME, "-f", "%M", "-o", str(report), *argv], env=env,
                              cwd=cwd, stdin=subprocess.DEVNULL, stdout=sink,
                              stderr=subprocess.DEVNULL).returncode
    if code != 0:
        raise SystemExit(f"failed ({code}) in {cwd}: {' '.join(argv)}")
    return int(report.read_text().split()[-1]), out.read_bytes()


# --- the tools ------------------------------------------------------------------------


@dataclass
class Tool:
    """One tool set up at one size: how to run each command in round `r`, where."""

    name: str
    version: str
    cwd: Path
    env: dict[str, str]
    argv: dict[str, Callable[[int], list[str]]]
    before_round: Callable[[int], None] = lambda r: None
    setup: dict[str, object] = field(default_factory=dict)
    open_tasks: int = 0


@dataclass
class Plan:
    """What every tool does at one size: the task each round marks done and the task
    shown, as indices into the generated backlog (the same tasks in every tool)."""

    size: int
    tasks: list[dict[str, object]]
    shown: int
    done: list[int]  # one per round, warm-up and memory runs included


def make_plan(size: int, tasks: list[dict[str, object]], turns: int) -> Plan:
    rng = random.Random(size + 40)
    plain = [n for n, t in enumerate(tasks) if t["status"] == "pending" and "start" not in t]
    picked = rng.sample(plain, turns + 1)
    return Plan(size, tasks, picked[0], picked[1:])


def aidp_tool(plan: Plan, scratch: Path, export: Path) -> Tool:
    aidp = userland.console_script()
    env = userland.hermetic_env(scratch)
    origin, project = scratch / "aidp-origin", scratch / "aidp"
    took: dict[str, float] = {}

    def imported(repo: Path) -> None:
        started = time.perf_counter()
        userland.run([*aidp, "tasks", "import", str(export), "--from", "taskwarrior"], env, repo)
        took["import_s"] = time.perf_counter() - started

    userland.repository(origin, aidp, env, fill=imported)
    userland.clone(origin, project, env)
    # The first read in a fresh clone builds the store: not what the rounds time.
    userland.run([*aidp, "tasks", "list", "--json"], env, project)
    userland.wait_for_builder(project)
    rows = [json.loads(line) for line in userland.run(
        [*aidp, "tasks", "list", "--all", "--format", "jsonl"], env, project).splitlines()]
    number = re.compile(r"\(#(\d+)\)$")
    by_index = {int(m.group(1)) - 1: r["id"] for r in rows
                if (m := number.search(r["description"]))}
    short = userland.short_ids(r["id"] for r in rows)
    opened = len(json.loads(userland.run([*aidp, "tasks", "list", "--json"], env, project)))

    def typed(n: int) -> str:
        return short[by_index[n]]

    argv: dict[str, Callable[[int], list[str]]] = {
        "add": lambda r: [*aidp, "tasks", "add", f"Benchmark task {r}"],
        "list": lambda r: [*aidp, "tasks", "list"],
        "json": lambda r: [*aidp, "tasks", "list", "--json"],
        "show": lambda r: [*aidp, "tasks", "show", typed(plan.shown)],
        "done": lambda r: [*aidp, "tasks", "done", typed(plan.done[r])],
        "next": lambda r: [*aidp, "tasks", "ready"],
    }
    version = userland.run([*aidp, "--version"], env, project).split()[-1]
    return Tool("aidp", version, project, env, argv,
                setup={"import": f"aidp tasks import FILE --from taskwarrior, then git commit "
                                 f"and git clone; {took['import_s']:.2f} s",
                       "import_s": round(took["import_s"], 2)},
                open_tasks=opened)


def taskwarrior_tool(plan: Plan, scratch: Path, export: Path) -> Tool | str:
    task = shutil.which("task")
    if task is None:
        return "not installed (Debian: apt-get install -y taskwarrior)"
    env = userland.hermetic_env(scratch)
    home = scratch / "taskwarrior"
    if home.exists():
        shutil.rmtree(home)
    (home / "data").mkdir(parents=True)
    rc = home / "taskrc"
    # A user's defaults, less the questions (confirmation), the news nag and the
    # "TASKRC override" notice that only the environment variables bring.
    rc.write_text(f"data.location={home / 'data'}\nconfirmation=off\nnews.version=2.6.0\n"
                  f"defaultwidth={COLUMNS}\nhooks=off\n"
                  "verbose=affected,blank,context,edit,header,footnote,label,new-id,"
                  "project,special,sync,recur\n")
    env.update({"TASKRC": str(rc), "TASKDATA": str(home / "data")})
    started = time.perf_counter()
    userland.run([task, "import", str(export)], env, home)
    import_s = time.perf_counter() - started
    ids: dict[int, str] = {}

    def resolve(r: int) -> None:
        """The working-set numbers people type change as tasks close (gc renumbers
        them at the next report, `list` or `next`): a report, then the numbers, before
        each round, untimed."""
        userland.run([task, "rc.verbose=nothing", "list", "limit:1"], env, home)
        for n in (plan.shown, plan.done[r]):
            ids[n] = userland.run([task, "_get", f"{plan.tasks[n]['uuid']}.id"], env,
                                  home).strip()

    argv: dict[str, Callable[[int], list[str]]] = {
        "add": lambda r: [task, "add", f"Benchmark task {r}"],
        "list": lambda r: [task, "list"],
        "json": lambda r: [task, "status:pending", "export"],
        "show": lambda r: [task, ids[plan.shown], "info"],
        "done": lambda r: [task, ids[plan.done[r]], "done"],
        "next": lambda r: [task, "next"],
    }
    version = userland.run([task, "--version"], env, home).strip()
    opened = len(json.loads(userland.run([task, "status:pending", "export"], env, home)))
    return Tool("Taskwarrior", version, home, env, argv, before_round=resolve,
                setup={"import": f"task import FILE; {import_s:.2f} s",
                       "import_s": round(import_s, 2)},
                open_tasks=opened)


def backlog_executable(given: str | None) -> str | None:
    for candidate in (given, shutil.which("backlog"), str(NPM / "node_modules/.bin/backlog")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def backlog_tool(plan: Plan, scratch: Path, exe: str | None, maximum: int) -> Tool | str:
    if exe is None:
        return ("not installed (npm registry package backlog.md: --install-backlog puts it "
                f"in {NPM.relative_to(HERE.parent)})")
    if plan.size > maximum:
        return (f"skipped above {maximum:,} tasks (--backlog-max): every command reads every "
                "task file, ~4 s a command at 10k here, so ~10× that per command and "
                "6 commands a round at this size")
    env = userland.hermetic_env(scratch)
    project = scratch / "backlog"
    if project.exists():
        shutil.rmtree(project)
    project.mkdir(parents=True)
    userland.run(["git", "init", "-q"], env, project)
    userland.run([exe, "init", "bench", "--defaults", "--integration-mode", "none",
                  "--check-branches", "false", "--include-remote", "false",
                  "--auto-open-browser", "false"], env, project)
    config = project / "backlog" / "config.yml"
    settings = config.read_text()
    # Local only: no git fetches of remote branches, no cross-branch checks, no commits.
    for key in ("remote_operations", "check_active_branches", "auto_commit"):
        settings = re.sub(rf"^{key}: .*$", f"{key}: false", settings, flags=re.MULTILINE)
        if not re.search(rf"^{key}: false$", settings, flags=re.MULTILINE):
            settings += f"\n{key}: false"
    config.write_text(settings)
    started = time.perf_counter()
    write_backlog_files(plan.tasks, project / "backlog" / "tasks")
    write_s = time.perf_counter() - started
    userland.commit(project, env, "The backlog")
    argv: dict[str, Callable[[int], list[str]]] = {
        "add": lambda r: [exe, "task", "create", f"Benchmark task {r}"],
        "list": lambda r: [exe, "task", "list", "--exclude-status", "Done", "--plain"],
        "json": lambda r: [exe, "task", "list", "--exclude-status", "Done", "--json"],
        "show": lambda r: [exe, "task", "view", str(plan.shown + 1), "--plain"],
        "done": lambda r: [exe, "task", "edit", str(plan.done[r] + 1), "-s", "Done"],
        "next": lambda r: [exe, "task", "list", "--ready", "--sort", "priority", "--plain"],
    }
    version = userland.run([exe, "--version"], env, project).strip()
    listed = json.loads(userland.run(argv["json"](0), env, project))
    return Tool("Backlog.md", version, project, env, argv,
                setup={"import": f"task files written directly ({write_s:.2f} s), committed; "
                                 "the CLI has no import",
                       "import_s": round(write_s, 2)},
                open_tasks=len(listed["tasks"]))


def write_backlog_files(tasks: list[dict[str, object]], folder: Path) -> None:
    """Each task as `backlog task create` (and `task edit -s Done`) writes it."""
    folder.mkdir(parents=True, exist_ok=True)
    priority = {"H": "high", "M": "medium", "L": "low"}
    for n, task in enumerate(tasks, start=1):
        title = str(task["description"])
        slug = re.sub(r"[^A-Za-z0-9]+", "-", title).strip("-")
        status = ("Done" if task["status"] == "completed"
                  else "In Progress" if "start" in task else "To Do")
        tags = task.get("tags") or []
        labels = "".join(f"\n  - {t}" for t in tags) if isinstance(tags, list) and tags else " []"
        updated = (f"updated_date: '{bl_date(str(task['modified']))}'\n"
                   if status != "To Do" else "")
        quoted = "'" + title.replace("'", "''") + "'"
        (folder / f"task-{n} - {slug}.md").write_text(
            f"---\nid: TASK-{n}\ntitle: {quoted}\nstatus: {status}\nassignee: []\n"
            f"created_date: '{bl_date(str(task['entry']))}'\n{updated}labels:{labels}\n"
            f"dependencies: []\npriority: {priority[str(task['priority'])]}\n"
            f"ordinal: {n * 1000}\n---\n\n")


def bl_date(tw: str) -> str:
    return f"{tw[0:4]}-{tw[4:6]}-{tw[6:8]} {tw[9:11]}:{tw[11:13]}"


def strace(trace: Path) -> list[str]:
    """The prefix that runs a command under strace, logging its sockets to `trace`
    (empty when strace is not installed)."""
    exe = shutil.which("strace")
    return [exe, "-f", "-qq", "-e", "trace=socket,connect", "-o", str(trace)] if exe else []


def internet(traces: list[Path]) -> list[str]:
    """The internet sockets the traced runs opened (any is an error)."""
    found = []
    for trace in traces:
        found += [line for line in trace.read_text().splitlines() if "AF_INET" in line]
        trace.unlink()
    return found


# --- one size -------------------------------------------------------------------------


def bench_size(size: int, args: argparse.Namespace, backlog_exe: str | None) -> Result:
    scratch = WORK / str(size)
    if scratch.exists():
        shutil.rmtree(scratch)
    scratch.mkdir(parents=True)
    tasks = generate(size)
    export = scratch / "export.json"
    write_export(tasks, export)
    turns = args.warmup + args.rounds + 1  # and one for the memory runs
    plan = make_plan(size, tasks, turns)
    counts = {s: sum(1 for t in tasks if t["status"] == s) for s in ("pending", "completed")}
    started = sum(1 for t in tasks if "start" in t)
    print(f"== {size:,} tasks ({counts['completed']:,} done, {started:,} started, "
          f"{counts['pending'] - started:,} pending): setting up …", flush=True)
    tools: list[Tool] = [aidp_tool(plan, scratch, export)]
    skipped: dict[str, str] = {}
    wanted = args.peers.split(",") if args.peers else ["taskwarrior", "backlog"]
    if "taskwarrior" in wanted:
        got = taskwarrior_tool(plan, scratch, export)
        if isinstance(got, Tool):
            tools.append(got)
        else:
            skipped["Taskwarrior"] = got
    if "backlog" in wanted:
        got = backlog_tool(plan, scratch, backlog_exe, args.backlog_max)
        if isinstance(got, Tool):
            tools.append(got)
        else:
            skipped["Backlog.md"] = got
    for name, why in skipped.items():
        print(f"  {name}: {why}", flush=True)
    # Backlog.md must never reach the network: its warm-up round runs under strace.
    watched = ({t.name for t in tools if t.name == "Backlog.md"} if shutil.which("strace")
               else set())
    traces: list[Path] = []
    network = {t.name: ("no internet socket in any command of the warm-up round "
                        "(strace -f -e trace=socket,connect)" if t.name in watched and args.warmup
                        else "not checked (no strace, or no warm-up round)")
               for t in tools if t.name == "Backlog.md"}
    floor = userland.floor_argv()
    floor_env = tools[0].env
    commands = [c for c in COMMANDS if not args.commands or c in args.commands.split(",")]
    for tool in tools:
        print(f"  {tool.name} {tool.version}: {tool.open_tasks:,} open tasks; "
              f"{tool.setup['import']}", flush=True)
    wall: dict[str, dict[str, list[float]]] = {}
    cpu: dict[str, dict[str, list[float]]] = {}
    load_before = os.getloadavg()
    began = time.perf_counter()
    for r in range(args.warmup + args.rounds):
        timed = r >= args.warmup
        shift = r % len(tools)
        for tool in tools[shift:] + tools[:shift]:
            tool.before_round(r)
            for name in commands:
                argv = tool.argv[name](r)
                if not timed and tool.name in watched:
                    traces.append(scratch / f"strace-{r}-{name}.txt")
                    argv = [*strace(traces[-1]), *argv]
                pair = [(tool.name, argv, tool.env, tool.cwd)]
                if tool.name == "aidp":
                    pair.append(("floor", floor, floor_env, tool.cwd))
                    if r % 2:
                        pair.reverse()
                for who, run_argv, env, cwd in pair:
                    seconds, used = run_once(run_argv, env, cwd)
                    if timed:
                        wall.setdefault(who, {}).setdefault(name, []).append(seconds)
                        cpu.setdefault(who, {}).setdefault(name, []).append(used)
        if timed:
            print(f"  round {r - args.warmup + 1}/{args.rounds} "
                  f"({time.perf_counter() - began:.0f} s, load {os.getloadavg()[0]:.2f})",
                  flush=True)
        elif traces and (found := internet(traces)):
            raise SystemExit("Backlog.md opened an internet socket:\n" + "\n".join(found[:5]))
        else:
            traces.clear()
    load_after = os.getloadavg()
    memory: dict[str, dict[str, int]] = {}
    output: dict[str, dict[str, dict[str, int]]] = {}
    last = args.warmup + args.rounds
    for tool in tools:
        tool.before_round(last)
        for name in commands:
            kb, printed = peak(tool.argv[name](last), tool.env, tool.cwd, scratch)
            memory.setdefault(tool.name, {})[name] = kb
            output.setdefault(tool.name, {})[name] = {
                "bytes": len(printed), "lines": printed.count(b"\n")}
    floor_kb, _ = peak(floor, floor_env, tools[0].cwd, scratch)
    memory["floor"] = dict.fromkeys(commands, floor_kb)
    return {
        "size": size, "rounds": args.rounds, "warmup": args.warmup,
        "generated": {"done": counts["completed"], "started": started,
                      "pending": counts["pending"] - started},
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in load_after],
        "seconds": round(time.perf_counter() - began, 1),
        "tools": {t.name: {"version": t.version, "open_tasks": t.open_tasks, **t.setup,
                           "argv": {c: display(t.argv[c](0), t) for c in commands}}
                  for t in tools},
        "floor_argv": " ".join(["python", "bench/floor.py", *floor[2:]]),
        "skipped": skipped, "network": network,
        "wall": wall, "cpu": cpu, "peak_kb": memory, "output": output,
    }


def display(argv: list[str], tool: Tool) -> str:
    """The command as a person types it: the program's name, not its path."""
    head = {"aidp": "aidp", "Taskwarrior": "task", "Backlog.md": "backlog"}[tool.name]
    return " ".join([head, *(f'"{a}"' if " " in a else a for a in argv[1:])])


# --- the report -----------------------------------------------------------------------


def summary(result: Result) -> dict[str, dict[str, dict[str, float]]]:
    """Per tool and command: median and min wall (ms), median CPU (ms), peak (MB); for
    each peer and the floor, the median of aidp's per-round ratio to it (wall, CPU)."""
    wall, cpu = result["wall"], result["cpu"]
    out: dict[str, dict[str, dict[str, float]]] = {}
    for who, by_command in wall.items():
        for name, times in by_command.items():
            row = {"ms": statistics.median(times) * 1000, "min_ms": min(times) * 1000,
                   "cpu_ms": statistics.median(cpu[who][name]) * 1000,
                   "peak_mb": result["peak_kb"][who][name] / 1024}
            if who != "aidp":
                ours, ours_cpu = wall["aidp"][name], cpu["aidp"][name]
                row["ratio"] = statistics.median(a / b for a, b in zip(ours, times, strict=True))
                row["cpu_ratio"] = statistics.median(
                    a / b for a, b in zip(ours_cpu, cpu[who][name], strict=True))
            out.setdefault(who, {})[name] = row
    return out


def table(results: list[Result]) -> str:
    peers = [p for p in ("Taskwarrior", "Backlog.md")
             if any(p in r["wall"] for r in results)]
    lines = ["Wall time: median (minimum) over the rounds, ms; ratios: aidp's time over the "
             "other's, per round, median of those.", ""]
    head = "| tasks | command | aidp | floor | aidp/floor |"
    rule = "|---:|---|---:|---:|---:|"
    for p in peers:
        head += f" {p} | aidp/{'task' if p == 'Taskwarrior' else 'backlog'} |"
        rule += "---:|---:|"
    lines += [head, rule]
    for result in results:
        s = summary(result)
        for name in s["aidp"]:
            a, f = s["aidp"][name], s["floor"][name]
            row = (f"| {result['size']:,} | {LABELS[name]} | {a['ms']:.0f} ({a['min_ms']:.0f}) | "
                   f"{f['ms']:.0f} ({f['min_ms']:.0f}) | {f['ratio']:.2f}× |")
            for p in peers:
                got = s.get(p, {}).get(name)
                row += (f" {got['ms']:.0f} ({got['min_ms']:.0f}) | {got['ratio']:.2f}× |"
                        if got else " – | – |")
            lines.append(row)
    lines += ["", "CPU time (user + system), median ms, with aidp's per-round CPU ratio; peak "
              "memory (MB, /usr/bin/time of one more run):", ""]
    head = "| tasks | command | aidp CPU | floor CPU | ratio |"
    rule = "|---:|---|---:|---:|---:|"
    for p in peers:
        head += f" {p} CPU | ratio |"
        rule += "---:|---:|"
    head += " peak MB: aidp / floor" + "".join(f" / {p}" for p in peers) + " |"
    lines += [head, rule + "---|"]
    for result in results:
        s = summary(result)
        for name in s["aidp"]:
            a, f = s["aidp"][name], s["floor"][name]
            row = (f"| {result['size']:,} | {LABELS[name]} | {a['cpu_ms']:.0f} | "
                   f"{f['cpu_ms']:.0f} | {f['cpu_ratio']:.2f}× |")
            peaks = [f"{a['peak_mb']:.0f}", f"{f['peak_mb']:.0f}"]
            for p in peers:
                got = s.get(p, {}).get(name)
                row += f" {got['cpu_ms']:.0f} | {got['cpu_ratio']:.2f}× |" if got else " – | – |"
                peaks.append(f"{got['peak_mb']:.0f}" if got else "–")
            lines.append(row + " " + " / ".join(peaks) + " |")
    lines += ["", "Per size: the rounds, the load average (1 min) before → after, and what "
              "each tool was given and printed:", ""]
    for result in results:
        lines.append(f"- {result['size']:,} tasks ({result['generated']['done']:,} done, "
                     f"{result['generated']['started']:,} started, "
                     f"{result['generated']['pending']:,} pending): {result['rounds']} rounds "
                     f"after {result['warmup']} warm-up, {result['seconds']:.0f} s, load "
                     f"{result['load_before'][0]:.2f} → {result['load_after'][0]:.2f}")
        for name, tool in result["tools"].items():
            printed = result["output"][name]
            shown = ", ".join(f"{c} {printed[c]['lines']:,} lines" for c in ("list", "next")
                              if c in printed)
            if "json" in printed:
                shown += f", json {printed['json']['bytes'] / 1000:,.0f} kB"
            lines.append(f"  - {name} {tool['version']}: {tool['open_tasks']:,} open; "
                         f"{tool['import']}; printed: {shown}")
        for name, why in result["skipped"].items():
            lines.append(f"  - {name}: {why}")
        for name, what in result["network"].items():
            lines.append(f"  - {name} network: {what}")
    first: dict[str, dict[str, str]] = {}
    for result in results:
        for name, tool in result["tools"].items():
            first.setdefault(name, tool["argv"])
    lines += ["", "The commands (ids vary by round; `show`/`done` take the id people type: "
              "aidp's short hex as `tasks list` shows it, Taskwarrior's working-set number, "
              "Backlog.md's task number):", "",
              "| command | aidp | " + " | ".join(p for p in first if p != "aidp") + " |",
              "|---|---|" + "---|" * (len(first) - 1)]
    for name in COMMANDS:
        if name in first.get("aidp", {}):
            cells = [f"`{first[t][name]}`" for t in first]
            lines.append(f"| {LABELS[name]} | " + " | ".join(cells) + " |")
    lines.append(f"\nThe floor: `{results[0]['floor_argv']}`." if results else "")
    return "\n".join(lines) + "\n"


def machine(backlog_exe: str | None) -> dict[str, str]:
    import importlib.metadata as md

    def sh(*argv: str) -> str:
        try:
            return subprocess.run(argv, capture_output=True, text=True).stdout.strip()
        except OSError:
            return "-"

    cpu = next((line.split(":", 1)[1].strip() for line in sh("lscpu").splitlines()
                if line.startswith("Model name")), platform.processor())
    git_head = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True).stdout.strip()
    return {
        "cpu": cpu, "cores": str(os.cpu_count()), "uname": " ".join(platform.uname()),
        "python": sys.version.split()[0], "typer": md.version("typer"),
        "aidp": f"{md.version('aidp-tasklist')} ({git_head})",
        "taskwarrior": sh("task", "--version") if shutil.which("task") else "-",
        "backlog.md": sh(backlog_exe, "--version") if backlog_exe else "-",
        "node": sh("node", "--version") if shutil.which("node") else "-",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }


def install_backlog(version: str) -> None:
    """`npm install backlog.md` into bench/out/npm: never globally, never into the
    repository; npm's own update check off."""
    NPM.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "npm_config_update_notifier": "false", "npm_config_fund": "false",
           "npm_config_audit": "false"}
    subprocess.run(["npm", "install", "--prefix", str(NPM), "--no-save",
                    f"backlog.md@{version}"], env=env, check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000",
                        help="comma-separated task counts (default 1000,10000,100000)")
    parser.add_argument("--rounds", type=int, default=7, help="timed rounds (default 7)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed rounds first")
    parser.add_argument("--peers", help="taskwarrior,backlog (default both, where installed)")
    parser.add_argument("--commands", help=f"only these, comma-separated ({','.join(COMMANDS)})")
    parser.add_argument("--backlog", help="the backlog executable (default: PATH, then "
                        "bench/out/npm)")
    parser.add_argument("--backlog-max", type=int, default=BACKLOG_MAX,
                        help=f"largest size Backlog.md runs at (default {BACKLOG_MAX:,})")
    parser.add_argument("--install-backlog", action="store_true",
                        help=f"npm install backlog.md@{BACKLOG_VERSION} into bench/out/npm first")
    parser.add_argument("--out", type=Path, default=OUT / "peers.json",
                        help="the JSON results (default bench/out/peers.json)")
    args = parser.parse_args()
    if args.install_backlog:
        install_backlog(BACKLOG_VERSION)
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s]
    backlog_exe = backlog_executable(args.backlog)
    info = machine(backlog_exe)
    print("  " + ", ".join(f"{k} {v}" for k, v in info.items()), flush=True)
    results = [bench_size(size, args, backlog_exe) for size in sizes]
    info["load_end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    command = "python bench/peers.py" + (" " + " ".join(sys.argv[1:]) if sys.argv[1:] else "")
    text = table(results)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"command": command, "machine": info, "results": results},
                                   indent=1))
    print()
    print(f"Command: `{command}`; {info['date']}; load {info['load']} → {info['load_end']}\n")
    print(text)
    print(f"(everything measured: {args.out})")


if __name__ == "__main__":
    main()
