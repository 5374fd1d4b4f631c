#!/usr/bin/env python3
"""Issue 37: a fleet of agents on one backlog — leases, takeovers and syncs under load.

    .venv/bin/python bench/fleet.py                          # 8, 16 and 32 agents
    .venv/bin/python bench/fleet.py --agents 32 --tasks 160 --lease 6s

N agent processes work one repository's backlog: four worktrees of it (the main one
and three linked) and a second clone that syncs with it through a bare remote (a
syncer runs `aidp sync` in the main worktree and in the clone every 10 seconds).
Each agent loops as a coding agent driving aidp from its shell does, one process per
step: `tasks ready` (the first 24) → `tasks claim ID --lease L` (one of them at
random) → `tasks note` → (a quarter of the agents: `todo_write` through a long-lived
`aidp mcp` server of their own) → `tasks claim ID` again (the holder renews;
refused: it lost the task, and stops) → (every fifth task: a follow-up, filed unless
`list --all --grep` finds it) → `tasks done`.
The clone's agents take the tasks tagged `c2`, the worktrees' those tagged `c1` (two
clones are two queues until they sync). A share of the agents kills itself with
SIGKILL mid-task (after its claim and note) and is replaced by a fresh agent: its
lease must bring the task back. The run ends when every task is done; then each
linked worktree's tasklist is committed on its branch, merged into main, and both
clones sync.

Reported, per N: tasks lost (not done at the end), tasks done twice (by two agents),
claims held at the end (by dead agents, and by anyone), records lost across the syncs
(lines of any tasklist missing from the final main one, and clone and main folding
differently), follow-ups filed other than once; throughput (tasks done per minute);
claim latency p50/p99 (every `tasks claim ID --lease` process, taken or refused); peak
memory of an aidp process (ru_maxrss of each step, read with wait4) and of the MCP
servers. Beside them, in the same run, the floor: the same loop, same agents, same
steps, each step a bare Typer app process (bench/floor.py), tasks handed out by a
counter; its claim latency and throughput are what the targets compare with.

Git runs with no user or system configuration; everything lives in a folder of this
run's own under $TMPDIR (`aidp-bench-fleet-…`, printed). The machine's load (`uptime`)
is printed before and after each fleet.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FLOOR = HERE / "floor.py"
GIT_ENV = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"}
FOLLOW_EVERY = 5  # every fifth task of the backlog gets a follow-up
FOLLOW = "Follow-up of "
SYNC_EVERY = 10.0  # seconds between two syncs of each clone while the fleet works

# --- one agent ---------------------------------------------------------------------------


class Mcp:
    """A long-lived `aidp mcp` server, spoken to as an agent does (JSON-RPC lines)."""

    def __init__(self, aidp: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen([*aidp, "mcp"], env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "fleet", "version": "1"}})
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _send(self, message: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        self.next += 1
        self._send({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params})
        assert self.proc.stdout is not None
        while True:
            answer = json.loads(self.proc.stdout.readline())
            if answer.get("id") == self.next:
                return answer

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        _pid, _status, usage = os.wait4(self.proc.pid, 0)
        return usage.ru_maxrss


class Counter:
    """The floor's backlog: a number in a file, taken under flock."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def take(self, total: int) -> int | None:
        with open(self.path, "r+") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            n = int(f.read() or 0)
            if n >= total:
                return None
            f.seek(0)
            f.write(str(n + 1))
            f.truncate()
            return n


def agent(args: argparse.Namespace) -> int:
    """One agent's loop (`fleet.py agent …`): its events go to RESULTS/<actor>.jsonl."""
    env = {**os.environ, "AIDP_DIR": args.place, "AIDP_ACTOR": args.actor,
           "AIDP_SESSION": f"fleet-{args.actor}", "AIDP_LOCK_TIMEOUT": "300"}
    aidp = [sys.executable, "-m", "aidp"]
    out = open(Path(args.results) / f"{args.actor}.jsonl", "a", buffering=1)  # noqa: SIM115 (to the end; a kill -9 must find each line written)
    rng = random.Random(args.actor)
    peak, spent = [0], [0.0]  # the steps' peak memory (KB) and CPU (s) since the last done

    def say(**event: object) -> None:
        out.write(json.dumps(event) + "\n")

    def step(name: str, *argv: str) -> tuple[int, str]:
        command = ([sys.executable, str(FLOOR), f"cmd{len(name) % 10}", "--json"]
                   if args.floor else [*aidp, *argv])
        started = time.perf_counter()
        proc = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdout is not None and proc.stderr is not None
        stdout, stderr = proc.stdout.read(), proc.stderr.read()  # (a few KB at most)
        _pid, status, usage = os.wait4(proc.pid, 0)  # its own peak memory, and its end
        took = time.perf_counter() - started
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        proc.stdout.close()
        proc.stderr.close()
        peak[0] = max(peak[0], usage.ru_maxrss)
        spent[0] += usage.ru_utime + usage.ru_stime
        if name == "claim":
            say(kind="claim", seconds=took, ok=code == 0)
        elif code not in (0, 1) and not args.floor:
            say(kind="error", step=name, code=code, err=stderr.decode()[-300:])
        return code, stdout.decode()

    mcp = Mcp(aidp, env) if args.mcp and not args.floor else None
    counter = Counter(Path(args.results) / "counter") if args.floor else None
    done = 0
    while True:
        if counter is not None:
            step("ready", "tasks", "ready")
            n = counter.take(args.total)
            if n is None:
                break
            tid, follow = f"floor-{n}", n % FOLLOW_EVERY == 0
            step("claim", "tasks", "claim")
        else:
            code, listed = step("ready", "tasks", "ready", "-t", args.tag, "-n", "24", "--json")
            ready = json.loads(listed) if code == 0 and listed.strip() else []
            if not ready:
                code, busy = step("left", "tasks", "list", "in_progress", "-t", args.tag,
                                  "--format", "ids")
                if code == 0 and not busy.strip():
                    break  # nothing ready, nothing in progress: the backlog is done
                time.sleep(0.3)  # a claim in progress, or a stale one about to come back
                continue
            task = rng.choice(ready)
            tid = task["id"]
            code, _ = step("claim", "tasks", "claim", tid, "--lease", args.lease, "--json")
            if code != 0:
                continue  # another agent took it first
            follow = (not task["description"].startswith(FOLLOW)
                      and int(tid[-8:], 16) % FOLLOW_EVERY == 0)
        say(kind="claimed", task=tid)
        step("note", "tasks", "note", tid, f"{args.actor} is on it")
        if args.kill and done == args.kill_after:
            say(kind="killed", task=tid)
            os.kill(os.getpid(), signal.SIGKILL)
        if mcp is not None:
            started = time.perf_counter()
            mcp.request("tools/call", {"name": "todo_write", "arguments": {"items": [
                {"content": f"Work on {tid[-8:]}", "status": "in_progress"},
                {"content": "Check it", "status": "pending"}]}})
            say(kind="mcp", seconds=time.perf_counter() - started)
        elif args.mcp:
            step("todo_write", "todo", "show")
        code, _ = step("renew", "tasks", "claim", tid, "--json")
        if code != 0:
            say(kind="lost", task=tid)  # taken over: it is someone else's now
            continue
        if follow:
            wanted = f"{FOLLOW}{tid[-8:]}"
            code, found = step("check", "tasks", "list", "--all", "--grep", wanted,
                               "--format", "ids")
            if code == 0 and not found.strip():
                step("file", "tasks", "add", wanted, "-t", args.tag, "-q")
                say(kind="filed", text=wanted)
        code, _ = step("done", "tasks", "done", tid)
        if code == 0:
            say(kind="done", task=tid, cpu=spent[0])
            spent[0] = 0.0
            done += 1
    say(kind="peak", aidp_kb=peak[0], mcp_kb=mcp.close() if mcp is not None else 0,
        cpu=spent[0])
    return 0


# --- the fleet ---------------------------------------------------------------------------


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **GIT_ENV}, check=True,
                          capture_output=True, text=True).stdout


def aidp_run(place: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run([sys.executable, "-m", "aidp", *args],
                          env={**os.environ, **GIT_ENV, "AIDP_DIR": str(place),
                               "AIDP_LOCK_TIMEOUT": "300"},
                          cwd=place, capture_output=True, text=True)
    if check and done.returncode != 0:
        raise SystemExit(f"aidp {' '.join(args)} in {place}: {done.stderr}")
    return done.stdout


def setup(base: Path, tasks: int, share2: float) -> tuple[list[Path], Path]:
    """The bare remote, the repository with its four worktrees, the second clone; the
    backlog (tagged c1 or c2 by the share of agents each clone gets) committed in both."""
    shutil.rmtree(base, ignore_errors=True)
    origin, repo, clone = base / "origin.git", base / "repo", base / "clone"
    base.mkdir(parents=True)
    git(base, "init", "-q", "--bare", "-b", "main", str(origin))
    git(base, "clone", "-q", str(origin), str(repo))
    git(repo, "checkout", "-q", "-b", "main")
    aidp_run(repo, "init")
    lines = []
    from aidp.core.model import new_task

    for n in range(tasks):
        tag = "c2" if n < round(tasks * share2) else "c1"
        task = new_task(f"Fleet task {n:04d}", tags=[tag], session="fleet")
        lines.append(json.dumps(task, separators=(",", ":")))
    with open(repo / ".aidp" / "tasklist.jsonl", "a") as f:
        f.write("\n".join(lines) + "\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "backlog")
    git(repo, "push", "-q", "-u", "origin", "main")
    worktrees = [repo]
    for n in range(1, 4):
        git(repo, "worktree", "add", "-q", "-b", f"agent{n}", str(base / f"wt{n}"))
        worktrees.append(base / f"wt{n}")
    git(base, "clone", "-q", str(origin), str(clone))
    aidp_run(clone, "init")  # this clone's diff driver
    return worktrees, clone


def syncer(places: list[Path], stop: threading.Event, errors: list[str]) -> None:
    while not stop.wait(SYNC_EVERY):
        for place in places:
            done = subprocess.run([sys.executable, "-m", "aidp", "sync"],
                                  env={**os.environ, **GIT_ENV, "AIDP_DIR": str(place),
                                       "AIDP_LOCK_TIMEOUT": "300"},
                                  cwd=place, capture_output=True, text=True)
            if done.returncode != 0:
                errors.append(done.stderr.strip()[-300:])


def launch(args: argparse.Namespace, *, floor: bool, n: int, places: list[Path],
           clone: Path, results: Path, total: int) -> dict:
    """Run one fleet to the end; its events, read back."""
    results.mkdir(parents=True)
    (results / "counter").write_text("0")
    kills = set(random.Random(n).sample(range(n), round(n * args.kill_share)))
    in_clone = max(1, round(n * args.clone_share))
    procs: dict[int, tuple[subprocess.Popen, list[str]]] = {}

    def spawn(argv: list[str]) -> None:
        proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "agent",
                                 *argv], stdin=subprocess.DEVNULL)
        procs[proc.pid] = (proc, argv)

    for k in range(n):
        place, tag = (clone, "c2") if k < in_clone else (places[k % len(places)], "c1")
        argv = ["--place", str(place), "--actor", f"agent-{k:02d}", "--tag", tag,
                "--results", str(results), "--lease", args.lease,
                "--total", str(total)]
        if k % 4 == 1:
            argv.append("--mcp")
        if floor:
            argv.append("--floor")
        elif k in kills:
            argv += ["--kill", "--kill-after", str(k % 3)]
        spawn(argv)
    stop, errors = threading.Event(), []
    sync = threading.Thread(target=syncer, args=([places[0], clone], stop, errors))
    if not floor:
        sync.start()
    started, respawned = time.perf_counter(), 0
    while procs:  # (each agent's own pid: the syncer's git and aidp are its own to reap)
        time.sleep(0.05)
        for pid, (proc, argv) in list(procs.items()):
            if proc.poll() is None:
                continue
            del procs[pid]
            if proc.returncode != -signal.SIGKILL:
                continue
            respawned += 1  # a fresh agent in its place, under a new name
            again = [a for a in argv if a != "--kill"]
            at = again.index("--actor") + 1
            again[at] = f"{again[at]}-r{respawned}"
            spawn(again)
    took = time.perf_counter() - started
    stop.set()
    if sync.is_alive():
        sync.join()
    events: list[dict] = []
    for path in results.glob("*.jsonl"):
        for line in path.read_text().splitlines():
            events.append({**json.loads(line), "actor": path.stem})
    return {"events": events, "seconds": took, "respawned": respawned,
            "sync_errors": errors}


def settle(places: list[Path], clone: Path) -> dict:
    """The end of the day: each linked worktree's tasklist committed on its branch and
    merged into main; both clones synced. What every tasklist held must be in main's."""
    held = set()
    for place in [*places, clone]:
        held |= {line for line in (place / ".aidp" / "tasklist.jsonl").read_bytes()
                 .splitlines() if line.strip()}
    repo = places[0]
    aidp_run(repo, "sync")  # committed (a merge needs a clean tasklist), pulled, pushed
    for place in places[1:]:
        aidp_run(place, "sync")  # no upstream: commits the tasklist alone
        git(repo, "merge", "-q", "--no-edit", git(place, "branch", "--show-current").strip())
    for place in (repo, clone, repo):
        aidp_run(place, "sync")
    main = (repo / ".aidp" / "tasklist.jsonl").read_bytes()
    theirs = (clone / ".aidp" / "tasklist.jsonl").read_bytes()
    from aidp.tasklist.fields import fold_bytes

    ours_fold, their_fold = fold_bytes(main), fold_bytes(theirs)
    return {"missing": len(held - set(main.splitlines())),
            "differ": ours_fold.tasks != their_fold.tasks, "fold": ours_fold}


def measure(args: argparse.Namespace, n: int, fleet: dict, settled: dict | None) -> dict:
    events = fleet["events"]
    claims = sorted(e["seconds"] for e in events if e["kind"] == "claim")
    done_by: dict[str, set[str]] = {}
    for e in events:
        if e["kind"] == "done":
            done_by.setdefault(e["task"], set()).add(e["actor"])
    peaks = [e for e in events if e["kind"] == "peak"]
    out = {
        "agents": n, "seconds": fleet["seconds"], "done": len(done_by),
        "per_minute": len(done_by) / fleet["seconds"] * 60,
        "claims": len(claims), "claim_p50": pct(claims, 50), "claim_p99": pct(claims, 99),
        "done_twice": sum(len(by) > 1 for by in done_by.values()),
        # CPU of the steps' processes (user + system) per task done: what a busy machine
        # changes least (the MCP servers' own CPU is not in it)
        "cpu_per_task": sum(e.get("cpu", 0.0) for e in events if e["kind"] in ("done", "peak"))
        / max(1, len(done_by)),
        "killed": sum(e["kind"] == "killed" for e in events),
        "lost_by_lease": sum(e["kind"] == "lost" for e in events),
        "aidp_kb": max((e["aidp_kb"] for e in peaks), default=0),
        "mcp_kb": max((e["mcp_kb"] for e in peaks), default=0),
        "errors": [e for e in events if e["kind"] == "error"][:5],
        "sync_errors": fleet["sync_errors"][:3],
    }
    if settled is not None:
        from aidp.backlog import queue

        fold = settled["fold"]
        qs = queue.state(fold)
        tasks = list(fold.tasks.values())
        dead = {e["actor"] for e in events if e["kind"] == "killed"}
        held = [qs.holder(t) for t in tasks if t.get("status") == "in_progress"]
        follow = [t["description"] for t in tasks if t["description"].startswith(FOLLOW)]
        filed = {e["text"] for e in events if e["kind"] == "filed"}
        out.update({
            "tasks": len(tasks), "lost": sum(t.get("status") != "done" for t in tasks),
            "held_at_end": len(held),
            "held_by_dead": sum(h is not None and h["assignee"] in dead for h in held),
            "records_lost": settled["missing"], "clones_differ": settled["differ"],
            "follow_ups": len(follow),
            "follow_ups_not_once": sum(follow.count(d) != 1 for d in set(follow))
            + len(filed - set(follow)),
        })
    return out


def pct(values: list[float], q: int) -> float:
    if not values:
        return 0.0
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 \
        else values[0]


def aidp_package() -> str:
    import aidp

    return aidp.__file__


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode")
    one = sub.add_parser("agent")
    for name in ("--place", "--actor", "--tag", "--results", "--lease"):
        one.add_argument(name, required=True)
    one.add_argument("--total", type=int, default=0)
    one.add_argument("--kill-after", type=int, default=0)
    for flag in ("--mcp", "--floor", "--kill"):
        one.add_argument(flag, action="store_true")
    parser.add_argument("--agents", type=int, nargs="*", default=[8, 16, 32])
    parser.add_argument("--tasks", type=int, default=160)
    parser.add_argument("--lease", default="6s")
    parser.add_argument("--kill-share", type=float, default=0.25)
    parser.add_argument("--clone-share", type=float, default=0.25)
    args = parser.parse_args()
    if args.mode == "agent":
        sys.exit(agent(args))
    # As users run it: bytecode cached (an environment that forbids writing it makes every
    # process compile what changed since the last cache: +50 ms a step, measured), compiled
    # once before the first fleet so that no agent pays for it.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(aidp_package()).parent)],
                   check=True)
    # A folder of this run's own (two people benchmarking at once never share one),
    # kept for a look afterwards: its path is printed.
    work = Path(tempfile.mkdtemp(prefix="aidp-bench-fleet-"))
    print(f"working in {work}", file=sys.stderr)
    rows = []
    for n in args.agents:
        base = work / str(n)
        before = uptime()
        places, clone = setup(base, args.tasks, round(n * args.clone_share) / n)
        fleet = launch(args, floor=False, n=n, places=places, clone=clone,
                       results=base / "results", total=args.tasks)
        settled = settle(places, clone)
        done = len(settled["fold"].tasks)  # the floor does as many tasks
        floor = launch(args, floor=True, n=n, places=places, clone=clone,
                       results=base / "floor", total=done)
        row = {"aidp": measure(args, n, fleet, settled), "floor": measure(args, n, floor, None),
               "load_before": before, "load_after": uptime()}
        rows.append(row)
        print(json.dumps(row, indent=1), flush=True)
    print(table(rows))


def table(rows: list[dict]) -> str:
    head = ("| agents | tasks (follow-ups) | lost | done twice | held at end (dead) | "
            "records lost | follow-ups not once | killed | tasks/min (floor, ratio) | "
            "claim p50 / p99 s (floor p99, ratio) | CPU s per task (floor, ratio) | "
            "peak aidp / mcp MB |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for row in rows:
        a, f = row["aidp"], row["floor"]
        lines.append(
            f"| {a['agents']} | {a['tasks']} ({a['follow_ups']}) | {a['lost']} | "
            f"{a['done_twice']} | {a['held_at_end']} ({a['held_by_dead']}) | "
            f"{a['records_lost']}{' (clones differ)' if a['clones_differ'] else ''} | "
            f"{a['follow_ups_not_once']} | {a['killed']} | {a['per_minute']:.0f} "
            f"({f['per_minute']:.0f}, {a['per_minute'] / f['per_minute']:.2f}×) | "
            f"{a['claim_p50']:.2f} / {a['claim_p99']:.2f} ({f['claim_p99']:.2f}, "
            f"{a['claim_p99'] / f['claim_p99']:.2f}×) | {a['cpu_per_task']:.2f} "
            f"({f['cpu_per_task']:.2f}, {a['cpu_per_task'] / f['cpu_per_task']:.2f}×) | "
            f"{a['aidp_kb'] / 1024:.0f} / "
            f"{a['mcp_kb'] / 1024:.0f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
