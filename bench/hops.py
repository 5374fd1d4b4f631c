#!/usr/bin/env python3
"""How far a command walks through aidp's source: files entered and hops between them.

    .venv/bin/python bench/hops.py [--src PATH] [--tasks 400]

Each command runs in a fresh process under `sys.setprofile` (every thread's calls:
`threading.setprofile` too), in a scratch git repository with an identity (local
`user.name`/`user.email`, HOME a scratch folder) whose tasklist holds `--tasks` tasks,
a few claims and a TODO list, its store built and up to date before anything is
counted. For every Python call into a file under `src/aidp/` it finds the nearest aidp
frame above it: a different file is a **hop**; no aidp frame at all starts an entry
from outside (the command itself, a tool call). Module bodies run by an import count as
calls (a command that imports a module enters its file). Reported per command:

    files   distinct aidp files entered
    hops    calls from one aidp file into another
    loads   calls of aidp.store.loader.load (a read of the store)

twice: the calls the command runs (nothing under a module body an import runs), and
with the imports (module bodies, and what they call, counted too). `--files` lists the
files of the first.

The commands: `tasks add` (the console script's run, from `aidp.cli` imported on), `tasks
list --status pending --json` (the same), and one MCP `todo_write` call: `aidp mcp` fed
initialize, a first `todo_write` (which loads what a server loads once) and a second
one, counted alone (the entry into aidp from the SDK's worker thread). `--src` runs
another source tree (PYTHONPATH), e.g. a `git worktree` of an older commit, so two trees
are compared on the same scratch data. Nothing is timed: the counts are exact, and the
same on any machine for the same source and data.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_SRC = HERE.parent / "src"

SETUP = r"""
import os, sys
from pathlib import Path
from aidp.core.model import new_task
from aidp.tasklist.log import TaskLog
root, count = Path(sys.argv[1]), int(sys.argv[2])
log = TaskLog(root)
words = "handle the empty config file and report what went wrong to the user".split()
log.append([new_task(" ".join(words[n % 7:]) + f" #{n}", priority=("high", "medium", "low")[n % 3],
                     tags=[f"t{n % 5}"], session="bench") for n in range(count)])
"""

# Run in the child: profile from here on, then the command.
CHILD = r"""
import json, os, sys, threading
src = os.path.realpath(sys.argv[1]) + os.sep + "aidp" + os.sep
mode, out = sys.argv[2], sys.argv[3]
args = sys.argv[4:]
entries = []  # one dict per entry into aidp from outside: files, hops, loads
current = {}  # thread id -> the entry it is in

def aidp_file(code):
    name = code.co_filename
    return name[len(src):] if name.startswith(src) else None

def profile(frame, event, arg):
    if event != "call":
        return
    here = aidp_file(frame.f_code)
    if here is None:
        return
    above = frame.f_back
    while above is not None and aidp_file(above.f_code) is None:
        above = above.f_back
    tid = threading.get_ident()
    if above is None:  # an entry into aidp from outside it
        entry = {"thread": tid, "files": {here}, "hops": 0, "loads": 0,
                 "run_files": set(), "run_hops": 0}
        entries.append(entry)
        current[tid] = entry
    else:
        entry = current.get(tid)
        if entry is None:
            return
        entry["files"].add(here)
        hop = aidp_file(above.f_code) != here
        entry["hops"] += hop
        importing = frame.f_code.co_name == "<module>"
        outer = above
        while not importing and outer is not None:
            importing = outer.f_code.co_name == "<module>" and aidp_file(outer.f_code) is not None
            outer = outer.f_back
        if not importing:  # run, not imported: the calls the command makes
            entry["run_files"].add(here)
            entry["run_hops"] += hop
    if here == "store/loader.py" and frame.f_code.co_name == "load":
        entry["loads"] += 1

threading.setprofile(profile)
sys.setprofile(profile)
if mode == "cli":
    import aidp.cli
    code = aidp.cli.run(args)
else:
    import aidp.cli
    code = aidp.cli.run(["mcp"])
sys.setprofile(None)
threading.setprofile(None)
main = threading.main_thread().ident
if mode == "cli":  # the command: everything the main thread did in aidp
    mains = [e for e in entries if e["thread"] == main]
    files = set().union(*(e["files"] for e in mains))
    run_files = set().union(*(e["run_files"] for e in mains))
    report = {"files": len(files), "hops": sum(e["hops"] for e in mains),
              "run_files": len(run_files), "run_hops": sum(e["run_hops"] for e in mains),
              "loads": sum(e["loads"] for e in mains), "code": code, "list": sorted(run_files)}
else:  # tool calls: the entries of the worker threads, the last one counted
    calls = [e for e in entries if e["thread"] != main]
    last = calls[-1]
    report = {"files": len(last["files"]), "hops": last["hops"], "loads": last["loads"],
              "run_files": len(last["run_files"]), "run_hops": last["run_hops"],
              "code": code, "calls": len(calls), "list": sorted(last["run_files"])}
with open(out, "w") as handle:
    json.dump(report, handle)
"""


def _rpc(number: int, method: str, params: dict[str, object]) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": number, "method": method, "params": params})


def todo_write_session() -> str:
    """initialize, then two todo_write calls (the second is the one counted)."""
    plan = [{"content": "Read the failing test", "status": "completed"},
            {"content": "Fix the parser", "status": "in_progress"},
            {"content": "Run the suite", "status": "pending"}]
    lines = [
        _rpc(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                               "clientInfo": {"name": "hops", "version": "1"}}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        _rpc(2, "tools/call", {"name": "todo_write", "arguments": {"items": plan[:2]}}),
        _rpc(3, "tools/call", {"name": "todo_write", "arguments": {"items": plan}}),
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", default=str(DEFAULT_SRC), help="the source tree (src/)")
    parser.add_argument("--tasks", type=int, default=400)
    parser.add_argument("--files", action="store_true", help="list the files entered")
    args = parser.parse_args()
    src = str(Path(args.src).resolve())
    scratch = Path(tempfile.mkdtemp(prefix="aidp-hops-"))
    try:
        home, repo = scratch / "home", scratch / "repo"
        home.mkdir()
        repo.mkdir()
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("AIDP_", "GIT_", "PYTHON"))}
        env.update({"HOME": str(home), "PYTHONPATH": src, "NO_COLOR": "1", "LC_ALL": "C.UTF-8",
                    "XDG_CONFIG_HOME": str(home / ".config"), "AIDP_PAGER": ""})
        git = ["git", "-C", str(repo)]
        subprocess.run([*git, "init", "-q", "-b", "main"], check=True, env=env)
        subprocess.run([*git, "config", "user.name", "Hops Bench"], check=True, env=env)
        subprocess.run([*git, "config", "user.email", "hops@example.com"], check=True, env=env)
        python = [sys.executable, "-c"]
        subprocess.run([*python, SETUP, str(repo), str(args.tasks)], check=True, env=env,
                       cwd=repo)

        def aidp(*words: str, stdin: str = "") -> None:
            subprocess.run([sys.executable, "-m", "aidp", *words], check=True, env=env,
                           cwd=repo, input=stdin, capture_output=True, text=True)

        aidp("todo", "add", "A step of the plan")
        aidp("tasks", "list", "--json")  # builds the store
        aidp("tasks", "list", "--json")  # and reads it as every later command will

        def measure(mode: str, words: list[str], stdin: str = "") -> dict[str, object]:
            out = scratch / "report.json"
            subprocess.run([*python, CHILD, src, mode, str(out), *words], check=True,
                           env=env, cwd=repo, input=stdin, capture_output=True, text=True)
            report: dict[str, object] = json.loads(out.read_text())
            return report

        rows = [
            ("tasks add", measure("cli", ["tasks", "add", "Write the hops benchmark", "-q"])),
            ("tasks list --status pending --json",
             measure("cli", ["tasks", "list", "--status", "pending", "--json"])),
            ("mcp todo_write (2nd call)", measure("mcp", [], todo_write_session())),
        ]
        print(f"{'':<38} {'calls run':>11} {'with imports':>13}")
        print(f"{'command':<38} {'files':>5} {'hops':>5} {'files':>6} {'hops':>6} {'loads':>6}")
        for name, r in rows:
            print(f"{name:<38} {r['run_files']:>5} {r['run_hops']:>5} {r['files']:>6} "
                  f"{r['hops']:>6} {r['loads']:>6}")
            if args.files:
                print("    " + " ".join(map(str, r["list"])))  # type: ignore[call-overload]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
