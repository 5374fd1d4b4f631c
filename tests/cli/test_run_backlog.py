"""`aidp run --backlog`: stand-in agents drain the ready queue one claimed task at a
time; the completion gate, follow-ups, failures, --max-tasks and Ctrl-C."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

AGENT_PREAMBLE = """\
import json, os, re, subprocess, sys, time
from pathlib import Path
HERE = Path(__file__)
PROMPT = sys.stdin.read()
RECORD = HERE.with_name(HERE.stem + ".calls.jsonl")
with open(RECORD, "a", encoding="utf-8") as f:
    f.write(json.dumps({"prompt": PROMPT, "actor": os.environ.get("AIDP_ACTOR")}) + "\\n")
CALL = sum(1 for _ in open(RECORD, encoding="utf-8"))
TASK = re.search(r"task_\\d+_[0-9a-f]{8}", PROMPT).group(0)
def aidp(*args):
    return subprocess.run([sys.executable, "-m", "aidp", *args], check=True,
                          capture_output=True, text=True).stdout
"""


class Agent:
    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def command(self) -> str:
        return f"{shlex.quote(sys.executable)} {shlex.quote(str(self.path))}"

    def calls(self) -> list[dict]:
        record = self.path.with_name(self.path.stem + ".calls.jsonl")
        if not record.exists():
            return []
        return [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]

    def tasks_prompted(self) -> list[str]:
        return [re.search(r"task_\d+_[0-9a-f]{8}", c["prompt"]).group(0) for c in self.calls()]


@pytest.fixture
def agent(tmp_path: Path):
    def make(body: str) -> Agent:
        path = tmp_path / "agent.py"
        path.write_text(AGENT_PREAMBLE + body, encoding="utf-8")
        return Agent(path)

    return make


@pytest.fixture(autouse=True)
def actor(monkeypatch) -> None:
    monkeypatch.setenv("AIDP_ACTOR", "runner")


def sid(tid: str, project: Path | None = None) -> str:
    """How run's lines name a task: its short id in the project now, as every view."""
    from aidp.backlog.tasks import short_ids
    from aidp.tasklist.log import TaskLog

    root = project or Path(os.environ["AIDP_DIR"])
    return short_ids(TaskLog(root).read(), [tid])[tid]


def add(cli, text: str, *args: str) -> str:
    result = cli("tasks", "add", text, "-q", *args)
    assert result.code == 0, result
    return result.out.strip()


def state(cli) -> dict[str, dict]:
    return {t["id"]: t for t in json.loads(cli("tasks", "list", "--all", "--json").out)}


DILIGENT = (
    "aidp('todo', 'add', 'Do ' + TASK)\n"
    "aidp('todo', 'tick', '1')\n"
    "aidp('tasks', 'done', TASK)\n"
)


def test_the_agent_drains_the_queue_in_order(cli, agent) -> None:
    first = add(cli, "First", "-p", "high")
    later = add(cli, "After first", "-p", "high", "--blocked-by", first)
    low = add(cli, "Low one", "-p", "low")
    worker = agent(DILIGENT)
    result = cli("run", "--backlog", "--agent", worker.command)
    assert result.code == 0, result
    assert worker.tasks_prompted() == [first, later, low]
    assert all(t["status"] == "done" and t["assignee"] == "runner"
               for t in state(cli).values())
    prompt = worker.calls()[0]["prompt"]
    assert prompt.startswith("Work on this backlog task, claimed for you (as runner):\n\n"
                             f"  {first} [high] First")
    assert f"run `aidp tasks done {first}`" in prompt
    assert f"`aidp tasks abandon {first} \"REASON\"`" in prompt
    assert "not done while your TODO list has open items" in prompt
    assert worker.calls()[0]["actor"] == "runner"
    assert f"▶ Task 1: First ({sid(first)}), claimed as runner" in result.out
    assert f"✓ Task done: After first ({sid(later)})" in result.out
    assert "📋 Nothing ready to claim (no open tasks): the backlog run stops" in result.out
    assert "📋 Backlog run: 3 claimed, 3 tasks closed" in result.out


def test_the_task_prompt_carries_the_task_body(cli, agent) -> None:
    tid = add(cli, "With details", "--body", "## Done when\n- the test passes")
    worker = agent(DILIGENT)
    assert cli("run", "--backlog", "--agent", worker.command).code == 0
    prompt = worker.calls()[0]["prompt"]
    assert f"  {tid} [medium] With details\n\nThe task's details (its body):\n\n" \
        "## Done when\n- the test passes\n\nPlan it" in prompt


def test_backlog_json_summary(cli, agent) -> None:
    add(cli, "First", "-p", "high")
    add(cli, "Second")
    result = cli("run", "--backlog", "--agent", agent(DILIGENT).command, "--json")
    assert result.code == 0, result
    summary = json.loads(result.out)
    assert (summary["exit_code"], summary["exit_reason"], summary["invocations"]) == (
        0, "backlog_done", 2)
    assert "📋 Backlog run: 2 claimed, 2 tasks closed" in result.err


def test_the_prompt_carries_the_epic_blockers_notes_and_guidance(cli, agent) -> None:
    epic = add(cli, "The epic")
    blocker = add(cli, "Blocker")
    assert cli("tasks", "done", blocker).code == 0
    task = add(cli, "Child", "--parent", epic, "--blocked-by", blocker)
    assert cli("tasks", "note", task, "see docs/x.md", "--as", "ann").code == 0
    worker = agent(DILIGENT)
    result = cli("run", "Run the tests first.", "--backlog", "--max-tasks", "1",
                 "--agent", worker.command)
    assert result.code == 0, result
    prompt = worker.calls()[0]["prompt"]
    assert f"  part of the epic: {epic} The epic" in prompt
    assert f"  done before it: {blocker} Blocker" in prompt
    assert "  note: ann: see docs/x.md" in prompt
    assert "Run the tests first." in prompt
    assert "📋 --max-tasks 1 reached: the backlog run stops" in result.out
    assert state(cli)[epic]["status"] == "pending"


def test_completion_gate_keeps_a_task_open_while_todos_are(cli, agent) -> None:
    task = add(cli, "Gated")
    worker = agent(
        "if CALL == 1:\n"
        "    aidp('todo', 'add', 'Step one')\n"
        "    aidp('todo', 'add', 'Step two')\n"
        "    aidp('todo', 'tick', '1')\n"
        "    aidp('tasks', 'done', TASK)\n"
        "else:\n"
        "    aidp('todo', 'tick', '2')\n"
        "    aidp('tasks', 'done', TASK)\n"
    )
    result = cli("run", "--backlog", "--agent", worker.command)
    assert result.code == 0, result
    prompts = [c["prompt"] for c in worker.calls()]
    assert len(prompts) == 2
    assert prompts[1].splitlines()[0] == f"You have an active task: Gated ({task})"
    assert "your TODO list still has open items" in prompts[1]
    assert "2. [ ] Step two" in prompts[1] or "Step two" in prompts[1]
    assert (f"Warning: Task {sid(task)} was marked done with TODO items still "
            "open") in result.err
    history = json.loads(cli("tasks", "history", task, "--json").out)
    assert [h["status"] for h in history] == ["pending", "in_progress", "done", "in_progress",
                                              "done"]
    assert "📋 Backlog run: 1 claimed, 1 task closed" in result.out


def test_a_task_left_open_is_released_after_the_follow_ups(cli, agent) -> None:
    a = add(cli, "Hard one", "-p", "high")
    b = add(cli, "Easy one")
    worker = agent(
        "if TASK.endswith(" + repr(a[-8:]) + "):\n"
        "    print('thinking about it')\n"
        "else:\n" + "".join("    " + line + "\n" for line in DILIGENT.splitlines())
    )
    result = cli("run", "--backlog", "--max-continuations", "2", "--agent", worker.command)
    assert result.code == 0, result
    assert worker.tasks_prompted() == [a, a, a, b]  # two follow-ups, then the next task
    found = state(cli)
    assert found[a]["status"] == "pending" and "assignee" not in found[a]
    assert found[b]["status"] == "done"
    assert ("↩ Released task " + sid(a) + " (the agent stopped 3 times without closing it)"
            in result.out)
    assert "↻ Follow-up 1/2: You have an active task: Hard one" in result.out
    assert "1 already tried in this run" in result.out


def test_abandon_and_release_by_the_agent_move_on(cli, agent) -> None:
    a = add(cli, "Drop me", "-p", "high")
    b = add(cli, "Give back")
    worker = agent(
        "if CALL == 1:\n"
        "    aidp('tasks', 'abandon', TASK, 'obsolete')\n"
        "else:\n"
        "    aidp('tasks', 'release', TASK)\n"
    )
    result = cli("run", "--backlog", "--agent", worker.command)
    assert result.code == 0, result
    assert worker.tasks_prompted() == [a, b]
    found = state(cli)
    assert found[a]["status"] == "abandoned" and found[b]["status"] == "pending"
    assert f"✗ Task abandoned: Drop me ({sid(a)})" in result.out
    assert f"↩ Task {sid(b)} was released or taken over; on to the next" in result.out


def test_a_failing_agent_releases_its_task_and_stops_the_run(cli, agent) -> None:
    a = add(cli, "One")
    add(cli, "Two")
    worker = agent("sys.exit(3)\n")
    result = cli("run", "--backlog", "--agent", worker.command)
    assert result.code == 3, result
    assert len(worker.calls()) == 1
    found = state(cli)
    assert all(t["status"] == "pending" and "assignee" not in t for t in found.values())
    assert f"↩ Released task {sid(a)} (the agent failed)" in result.out
    assert "The agent exited with code 3" in result.err


def test_nothing_ready_is_a_clean_exit(cli, agent) -> None:
    a = add(cli, "Blocked")
    b = add(cli, "Blocker")
    assert cli("tasks", "block", a, "--on", b).code == 0
    assert cli("tasks", "claim", b, "--as", "someone").code == 0
    worker = agent(DILIGENT)
    result = cli("run", "--backlog", "--agent", worker.command)
    assert result.code == 0, result
    assert worker.calls() == []
    assert "Nothing ready to claim (1 blocked, 1 in progress): the backlog run stops" in result.out


@pytest.mark.parametrize(("args", "message"), [
    (["--backlog", "--max-tasks", "0"], "Error: Invalid --max-tasks 0: use a whole number ≥ 1\n"),
    (["--max-tasks", "2"], "Error: --max-tasks and --as need --backlog\n"),
    (["--backlog", "-i"], "Error: Conflicting --backlog and --interactive: give one of them\n"),
    (["--backlog", "--as", ""], "Error: Invalid assignee name: it is empty; give 1–200 characters\n"),
])
def test_bad_backlog_options(cli, agent, project: Path, args, message) -> None:
    add(cli, "One")
    before = (project / ".aidp" / "tasklist.jsonl").read_bytes()
    worker = agent(DILIGENT)
    result = cli("run", *args, "--agent", worker.command)
    assert (result.code, result.err) == (2, message)
    assert worker.calls() == []
    assert (project / ".aidp" / "tasklist.jsonl").read_bytes() == before


def test_ctrl_c_releases_the_claim(cli, agent, project: Path, tmp_path: Path) -> None:
    a = add(cli, "Long one")
    started = tmp_path / "started"
    worker = agent(f"Path({str(started)!r}).write_text('x')\ntime.sleep(60)\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "aidp", "run", "--backlog", "--agent", worker.command],
        env={**os.environ, "AIDP_DIR": str(project)}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )
    deadline = time.monotonic() + 60
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists()
    assert state(cli)[a]["assignee"] == "runner"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out, err)
    assert f"↩ Released task {sid(a, project)} (interrupted)" in out
    assert "Interrupted: the agent was stopped" in err
    found = state(cli)[a]
    assert found["status"] == "pending" and "assignee" not in found


def test_run_prompt_shows_ready_tasks_first(cli, agent) -> None:
    blocked = add(cli, "Blocked high", "-p", "high")
    blocker = add(cli, "Blocker low", "-p", "low")
    assert cli("tasks", "block", blocked, "--on", blocker).code == 0
    worker = agent("print('ok')\n")
    assert cli("run", f"look at {blocker}", "--agent", worker.command).code == 0
    prompt = worker.calls()[0]["prompt"]
    ready_at = prompt.index("## Ready to work on (1")
    assert prompt.index(blocker, ready_at) < prompt.index("## Other open tasks (1")
    assert prompt.index("## Other open tasks") < prompt.index(f"- {blocked} [high]")
