"""Start-up is the product: the hot commands must not import what they do not use.

Each check runs a real `python -m aidp …` process with `-X importtime` and reads the
modules it imported; no timings are asserted (bench/run.py measures those).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

# Heavy or unrelated to reading and writing tasks: rich (Typer's pretty help and
# errors), pydantic (typer ≥0.29), dateutil (only --since), the agent loop, and the
# groups the command line did not name, shell completion (only when the shell asks).
FORBIDDEN = ("rich", "pydantic", "dateutil", "aidp.agent", "aidp.agent.signals", "aidp.cli.completion",
             "mcp", "mcp_types", "aidp.toolserver.serve", "starlette", "uvicorn", "aidp.board")
OTHER_GROUPS = {"tasks": "aidp.cli.tasks", "todo": "aidp.cli.todo", "run": "aidp.cli.runner",
                "init": "aidp.cli.init", "mcp": "aidp.cli.mcp"}


def imported(*args: str) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "aidp", *args],
        capture_output=True, text=True, timeout=60, env={**os.environ, "NO_COLOR": "1"},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    names = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    assert "aidp.cli" in names  # the report was read
    return names


def offenders(names: set[str], group: str) -> list[str]:
    bad = [n for n in names if n.split(".")[0] in FORBIDDEN or n.startswith(FORBIDDEN)]
    bad += [module for name, module in OTHER_GROUPS.items() if name != group and module in names]
    return sorted(bad)


@pytest.mark.parametrize(
    "args",
    [
        ("tasks", "list", "--json"),
        ("tasks", "list", "--status", "pending", "--json"),
        ("tasks", "stats", "--json"),
        ("tasks", "add", "Write the start-up test", "-q"),
    ],
)
def test_hot_task_commands_import_only_what_they_use(args: tuple[str, ...]) -> None:
    assert offenders(imported(*args), "tasks") == []


@pytest.mark.parametrize("args", [("tasks", "list", "--json"), ("tasks", "stats", "--json"),
                                  ("tasks", "add", "x", "-q")])
def test_the_backlog_commands_do_not_load_the_queue_cli(args: tuple[str, ...]) -> None:
    # cli/queue.py (ready, block, …) loads only when one of its commands (or every
    # command: help, an unknown name) is asked for.
    assert "aidp.cli.queue" not in imported(*args)


def test_a_tasks_command_loads_only_its_own_module() -> None:
    # aidp.cli.startup imports the module of the command the line names, and no other.
    kept_apart = {"aidp.cli.tasks", "aidp.cli.tasks_list", "aidp.cli.tasks_show",
                  "aidp.cli.queue", "aidp.cli.claims", "aidp.cli.gitcmds", "aidp.cli.history",
                  "aidp.cli.exchange"}
    assert imported("tasks", "list", "--json") & kept_apart == {"aidp.cli.tasks_list"}
    assert imported("tasks", "stats", "--json") & kept_apart == {"aidp.cli.tasks"}
    assert imported("tasks", "export", "-f", "jsonl") & kept_apart == {"aidp.cli.exchange"}


def test_the_table_says_where_every_command_lives() -> None:
    # aidp.cli.startup.COMMANDS, the one table: each (group, command) once, in a module
    # of aidp.cli that holds its function; `aidp tasks --help` starts with add, list, show.
    import importlib

    from aidp.cli import startup

    rows = startup.COMMANDS
    assert len({(c.group, c.name) for c in rows}) == len(rows)
    for row in rows:
        assert callable(getattr(importlib.import_module(f"aidp.cli.{row.module}"), row.function))
    assert [c.name for c in rows if c.group == "tasks"][:3] == ["add", "list", "show"]
    built = startup.command()
    assert list(built.commands["tasks"].commands) == [c.name for c in rows if c.group == "tasks"]


@pytest.mark.parametrize(("args", "names"), [
    (("tasks", "list", "--json"), ["list"]),  # the one named
    (("tasks", "--status", "x", "list"), None),  # an option before the command word: all
    (("tasks", "lisst"), None),  # not a command of the group: all, for its error
    (("--dir", ".", "todo", "load", "x"), ["load"]),
])
def test_a_command_line_builds_only_what_it_can_run(args, names) -> None:
    from aidp.cli import startup

    group = startup.command(args).commands[args[-3] if args[0] == "--dir" else args[0]]
    every = [c.name for c in startup.COMMANDS if c.group == group.name]
    assert list(group.commands) == (names or every)


def test_a_read_of_an_up_to_date_store_loads_no_writing_or_folding_code(log) -> None:
    # Filling the store (aidp.store.fill), other worktrees' lines (aidp.store.overlay), folding
    # bytes or writing (aidp.tasklist.fields) and ages (aidp.core.when): none of them for a plain read.
    from aidp.core.model import new_task
    from aidp.store import loader

    task = new_task("Something to do, described at some length " * 4, tags=["x"])
    log.append([{**task, "id": f"{task['id'][:-8]}{n:08x}"} for n in range(300)])
    assert log.path.stat().st_size > loader.MIN_BYTES  # read through the store
    imported("tasks", "stats", "--json")  # builds the store
    # A store is vouched for once the file's stat data is older than the racy window
    # (until then each read checks the bytes it covers): wait that long, read once more.
    changed = max(log.path.stat().st_mtime_ns, log.path.stat().st_ctime_ns)
    time.sleep(max(0.0, (changed + loader.RACY_NS - time.time_ns()) / 1e9 + 0.1))
    imported("tasks", "stats", "--json")
    for args in (("tasks", "list", "--json"), ("tasks", "list", "--status", "pending", "--json")):
        names = imported(*args)
        assert "aidp.store" in names, args  # read through the store
        found = names & {"aidp.store.fill", "aidp.store.overlay", "aidp.tasklist.fields", "aidp.core.when"}
        assert found == set(), args


def test_tasks_add_reads_nothing_in_a_git_repository_with_an_identity(project, log) -> None:
    # The session a task records is `<branch>@<identity>` here: named without reading the
    # tasklist (no fold, no store, no sqlite3), though the tasklist is big enough to be
    # read through the store were it read.
    import json

    from aidp.core.model import new_task
    from aidp.store import loader

    subprocess.run(["git", "init", "-q", "-b", "main", str(project)], check=True,
                   capture_output=True)
    task = new_task("Something to do, described at some length " * 4, tags=["x"])
    log.append([{**task, "id": f"{task['id'][:-8]}{n:08x}"} for n in range(300)])
    assert log.path.stat().st_size > loader.MIN_BYTES
    names = imported("tasks", "add", "Filed without a read", "-q")
    assert names & {"sqlite3", "aidp.store", "aidp.tasklist.fields", "aidp.backlog.queue",
                     "aidp.todos"} == set()  # nor the TODO lists, to name the session
    proc = subprocess.run([sys.executable, "-m", "aidp", "tasks", "add", "Another", "--json"],
                          capture_output=True, text=True, timeout=60)
    assert json.loads(proc.stdout)["session"] == "main@tests@example.invalid"


def test_show_and_done_stay_light_too(cli) -> None:
    tid = cli("tasks", "add", "Something", "-q").out.strip()
    assert offenders(imported("tasks", "show", tid, "--json"), "tasks") == []
    assert offenders(imported("tasks", "done", tid), "tasks") == []


def test_the_work_queue_commands_stay_light(cli, monkeypatch) -> None:
    monkeypatch.setenv("AIDP_ACTOR", "someone")
    cli("tasks", "add", "Something", "-q")
    for args in (("tasks", "ready", "--json"), ("tasks", "ready"), ("tasks", "blocked"),
                 ("tasks", "claim", "--json")):
        assert offenders(imported(*args), "tasks") == [], args


def test_todo_show_does_not_load_the_backlog_cli_or_the_agent() -> None:
    assert offenders(imported("todo", "show"), "todo") == []


def test_the_todo_commands_read_the_identity_without_the_rest_of_git(cli) -> None:
    # The session's default names the person (aidp.tasklist.person); git's changes, diff and
    # sync (the aidp.git package) are for sync and `tasks changes`, not for a TODO list.
    for args in (("todo", "show"), ("todo", "add", "Plan it")):
        names = imported(*args)
        assert "aidp.tasklist.person" in names, args
        assert not [n for n in names if n == "aidp.git" or n.startswith("aidp.git.")], args


def test_completion_mode_loads_every_group(cli, monkeypatch) -> None:
    # The shell's request names no command: everything is registered to answer it.
    monkeypatch.setenv("_AIDP_COMPLETE", "complete_bash")
    monkeypatch.setenv("COMP_WORDS", "aidp ")
    monkeypatch.setenv("COMP_CWORD", "1")
    names = set(cli().out.split())
    assert {"tasks", "todo", "init", "run", "sync", "report", "setup", "hook"} <= names


def test_help_still_lists_every_group_and_command() -> None:
    from aidp.cli import startup

    names = sorted(startup.command().commands)
    assert {"tasks", "todo", "init", "run"} <= set(names)
    proc = subprocess.run([sys.executable, "-m", "aidp", "--help"], capture_output=True,
                          text=True, timeout=60, env={**os.environ, "NO_COLOR": "1"})
    assert proc.returncode == 0
    listed = {line.split()[1] for line in proc.stdout.splitlines()
              if line.startswith("│ ") and len(line.split()) > 1}
    assert set(names) <= listed, proc.stdout


def test_an_unknown_command_is_reported_with_every_command_loaded(cli) -> None:
    result = cli("bogus")
    assert result.code == 2 and "No such command 'bogus'" in result.err
    assert cli("--dir", ".", "tasks", "list", "--json").code == 0


@pytest.mark.parametrize("args", [("run", "--help"), ("setup", "--help"), ("hook", "--help"),
                                  ("agents", "--json"), ("prime",)])
def test_only_aidp_mcp_loads_the_mcp_sdk(args: tuple[str, ...]) -> None:
    names = imported(*args)
    assert not [n for n in names if n.split(".")[0] in ("mcp", "mcp_types")
                or n.startswith("aidp.toolserver.serve")], args


def test_aidp_mcp_does_load_it() -> None:
    # The check above can fail: `aidp mcp` (its stdin at its end at once) imports it.
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "aidp", "mcp"],
                          input="", capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    names = {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines()
             if line.startswith("import time:") and "|" in line}
    assert {"mcp.server.stdio", "aidp.toolserver.serve"} <= names


SERVER_STACK = ("starlette", "uvicorn", "h11", "aidp.board.server", "aidp.board.serve")


@pytest.mark.parametrize("args", [("tasks", "list", "--json"), ("prime",), ("run", "--help"),
                                  ("board", "--help"), ("agents", "--json"),
                                  ("report", "--html", "r.html")])
def test_only_aidp_board_loads_the_web_server(args: tuple[str, ...]) -> None:
    names = imported(*args)
    assert not [n for n in names if n.split(".")[0] in SERVER_STACK
                or n.startswith(SERVER_STACK)], args


def test_aidp_board_does_load_it(project) -> None:
    # The check above can fail: `aidp board` (stopped by SIGTERM once it listens) imports it.
    import signal

    (project / ".aidp").mkdir()
    proc = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "aidp", "board",
                             "--no-open", "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().startswith("http://127.0.0.1:")
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-2000:]
    names = {line.rsplit("|", 1)[1].strip() for line in err.splitlines()
             if line.startswith("import time:") and "|" in line}
    assert {"starlette.applications", "uvicorn", "aidp.board.server"} <= names


def test_a_one_shot_command_hands_the_freeze_to_its_log() -> None:
    # aidp.cli.main runs one command and exits: its reads may freeze what they fold
    # (TaskLog.freeze); `mcp`, `run` and `board` read many times and never do.
    from aidp.cli import startup
    from aidp.cli.common import Env

    assert startup.one_shot(["tasks", "list"]) and startup.one_shot(["--dir", "x", "todo"])
    assert not startup.one_shot(["mcp"]) and not startup.one_shot(["--session", "s", "run"])
    assert not startup.one_shot(["board", "--port", "0"])
    assert Env(directory=".", one_shot=True).log.freeze is True
    assert Env(directory=".").log.freeze is False


# What `aidp hook AGENT EVENT` loads (issue 40's agent tax, bench/hooks.py): the named
# agent's adapter and no other (the registry loads an adapter when asked for it), not
# the work queue while nothing is claimed, not what another event needs (a session
# start's prime text, a plan's writer), and no dataclass (each is ~3 M instructions of
# generated code at every start-up; aidp.core.plain). importtime does not list a module
# loaded by importlib.import_module, so the hook's process reports sys.modules itself.
_HOOK_PROBE = """
import dataclasses, io, json, sys
payload, out = sys.argv[1].encode(), sys.argv[2]
sys.argv = ["aidp", "hook", *sys.argv[3:]]
sys.stdin = io.TextIOWrapper(io.BytesIO(payload))
from aidp.cli import main
try:
    main()
except SystemExit as exc:
    code = exc.code
made = sorted(f"{name}.{value.__name__}" for name, module in list(sys.modules.items())
              if name.startswith("aidp") for value in vars(module).values()
              if isinstance(value, type) and value.__module__ == name
              and dataclasses.is_dataclass(value))
with open(out, "w") as handle:
    json.dump({"code": code, "modules": sorted(sys.modules), "dataclasses": made}, handle)
"""
_ADAPTERS = {f"aidp.agent.agents.{name}" for name in
             ("claude", "codex", "gemini", "aider", "cursor", "copilot", "opencode")}


def hook_loads(tmp_path, agent: str, event: str, payload: dict) -> tuple[set[str], list[str]]:
    import json

    out = tmp_path / "loaded.json"
    proc = subprocess.run([sys.executable, "-c", _HOOK_PROBE, json.dumps(payload), str(out),
                           agent, event], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    found = json.loads(out.read_text())
    assert found["code"] == 0 and "aidp.agent.hook.handler" in found["modules"], proc.stderr
    return set(found["modules"]), found["dataclasses"]


@pytest.mark.parametrize(("agent", "event", "reply"), [("claude", "Stop", "last_assistant_message"),
                                                       ("gemini", "AfterAgent", "prompt_response")])
def test_a_stop_hook_loads_its_own_adapter_and_no_dataclass(cli, tmp_path, agent: str,
                                                           event: str, reply: str) -> None:
    assert cli("tasks", "add", "A task nobody claimed").code == 0
    names, made = hook_loads(tmp_path, agent, event, {
        "session_id": "s1", "hook_event_name": event, "stop_hook_active": False, reply: "Done."})
    assert names & _ADAPTERS == {f"aidp.agent.agents.{agent}"}
    assert not names & {"aidp.backlog.queue", "aidp.app.prime", "aidp.app.plans",
                        "aidp.agent.continuation", "aidp.agent.signals"}
    assert made == []


def test_a_session_start_hook_loads_its_own_adapter_and_no_dataclass(cli, tmp_path) -> None:
    assert cli("tasks", "add", "A task to show").code == 0
    names, made = hook_loads(tmp_path, "codex", "SessionStart", {
        "session_id": "s1", "hook_event_name": "SessionStart", "source": "startup"})
    assert names & _ADAPTERS == {"aidp.agent.agents.codex"}
    assert "aidp.app.prime" in names and "aidp.app.plans" not in names
    assert made == []
