"""`aidp run --backlog --parallel N` with scripted agents and real git (docs/guide.md, "Parallel agents"): a
worktree and a branch per task, agents at once, the completion gate, the starting
worktree's tasklist, --merge (a clean merge and a conflicting one), a failing agent,
Ctrl-C to the process group, --json, and bad input refused before anything starts."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

TASKLIST = ".aidp/tasklist.jsonl"

# A scripted agent: records what it was given, then runs BODY. `wait_for(n)` waits (up
# to 60 s) until n agents have started, so a test proves they ran at once.
AGENT = """\
import json, os, subprocess, sys, time
from pathlib import Path
PROMPT = sys.stdin.read()
TASK = os.environ["AIDP_TASK"]
HEX = TASK.rpartition("_")[2]
LOGS = Path({logs!r})
LOGS.mkdir(exist_ok=True)
with open(LOGS / (HEX + ".jsonl"), "a", encoding="utf-8") as f:
    f.write(json.dumps({{"task": TASK, "actor": os.environ.get("AIDP_ACTOR"),
                        "cwd": os.getcwd(), "aidp_dir": os.environ.get("AIDP_DIR"),
                        "pid": os.getpid(), "prompt": PROMPT}}) + "\\n")
CALL = sum(1 for _ in open(LOGS / (HEX + ".jsonl"), encoding="utf-8"))
def aidp(*args):
    return subprocess.run([sys.executable, "-m", "aidp", *args], check=True,
                          capture_output=True, text=True).stdout
def git(*args):
    subprocess.run(["git", *args], check=True, capture_output=True)
def commit(name, text):
    Path(name).write_text(text)
    git("add", name)
    git("commit", "-q", "-m", "work on " + HEX)
def wait_for(n):
    deadline = time.monotonic() + 60
    while len(list(LOGS.glob("*.jsonl"))) < n and time.monotonic() < deadline:
        time.sleep(0.05)
    if len(list(LOGS.glob("*.jsonl"))) < n:
        print("the other agents never started")
        sys.exit(9)
{body}
"""

DILIGENT = """\
commit("file-" + HEX + ".txt", HEX + "\\n")
aidp("todo", "add", "Do " + TASK)
aidp("todo", "tick", "1")
aidp("tasks", "done", TASK)
print("closed " + HEX)
"""


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


class Agent:
    def __init__(self, path: Path, logs: Path) -> None:
        self.path = path
        self.logs = logs

    @property
    def command(self) -> str:
        return f"{shlex.quote(sys.executable)} {shlex.quote(str(self.path))}"

    def calls(self, tid: str | None = None) -> list[dict]:
        found = []
        for log in sorted(self.logs.glob("*.jsonl")):
            found += [json.loads(line) for line in log.read_text().splitlines()]
        return [c for c in found if tid is None or c["task"] == tid]


@pytest.fixture
def agent(tmp_path: Path):
    def make(body: str) -> Agent:
        path = tmp_path / "agent.py"
        logs = tmp_path / "calls"
        path.write_text(AGENT.format(logs=str(logs), body=body), encoding="utf-8")
        return Agent(path, logs)

    return make


@pytest.fixture(autouse=True)
def actor(monkeypatch) -> None:
    monkeypatch.setenv("AIDP_ACTOR", "runner")


@pytest.fixture
def repo(project: Path, cli) -> Path:
    """The project as a git repository on main with aidp's files committed."""
    git(project, "init", "-q", "-b", "main")
    git(project, "config", "commit.gpgsign", "false")
    assert cli("init").code == 0
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "init")
    return project


def add(cli, text: str, *args: str) -> str:
    result = cli("tasks", "add", text, "-q", *args)
    assert result.code == 0, result
    return result.out.strip()


def commit_all(repo: Path) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "backlog")


def state(cli) -> dict[str, dict]:
    return {t["id"]: t for t in json.loads(cli("tasks", "list", "--all", "--json").out)}


def hex_of(tid: str) -> str:
    return tid.rpartition("_")[2]


def run(repo: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "aidp", "run", "--backlog", *args],
                          cwd=repo, env={**os.environ, "AIDP_DIR": str(repo)},
                          capture_output=True, text=True, timeout=timeout)


def own_tasklist(repo: Path) -> dict[str, dict]:
    """The tasks as the starting worktree's own file alone folds them (no worktree)."""
    from aidp.tasklist.fold import Fold

    fold = Fold()
    for raw in (repo / TASKLIST).read_bytes().splitlines():
        fold.add_line(raw)
    return dict(fold.tasks)


def test_agents_work_at_once_each_in_a_worktree_of_its_own(cli, agent, repo: Path) -> None:
    ids = [add(cli, name) for name in ("One", "Two", "Three")]
    commit_all(repo)
    worker = agent("wait_for(2)\n" + DILIGENT)
    result = run(repo, "--parallel", "3", "--agent", worker.command)
    assert result.returncode == 0, result
    found = state(cli)
    assert all(found[t]["status"] == "done" and found[t]["assignee"] == "runner"
               for t in ids)
    for tid in ids:
        (call,) = worker.calls(tid)
        where = repo / ".aidp" / "worktrees" / hex_of(tid)
        assert (call["cwd"], call["aidp_dir"], call["actor"]) == (str(where), str(where),
                                                                  "runner")
        assert f"claimed for you (as runner):\n\n  {tid}" in call["prompt"]
        # The branch keeps the agent's commit; the worktree is gone.
        assert git(repo, "show", f"aidp/{hex_of(tid)}:file-{hex_of(tid)}.txt") == \
            f"{hex_of(tid)}\n"
        assert not where.exists()
        assert f"[{hex_of(tid)}] closed {hex_of(tid)}" in result.stdout
        assert f"[{hex_of(tid)}] ✓ Task done: " in result.stdout
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
    # Claims and final states are in the starting worktree's own file too.
    mine = own_tasklist(repo)
    assert all(mine[t]["status"] == "done" for t in ids)
    assert "📋 Parallel run: 3 claimed, 3 done" in result.stdout
    # Each task's transcript outlives its worktree: it is in the starting project's runs/.
    for tid in ids:
        (transcript,) = (repo / ".aidp" / "runs").glob(f"backlog_{tid}-*.jsonl")
        kinds = [json.loads(line)["kind"] for line in transcript.read_text().splitlines()]
        assert kinds[0] == "prompt" and "exit" in kinds
    # Nothing of the run is in the starting branch's files but its tasklist, committed
    # alone (so each branch merges with a plain `git merge`).
    assert git(repo, "status", "--porcelain", "--untracked-files=all").splitlines() == []
    assert git(repo, "show", "--name-only", "--format=%s", "HEAD").splitlines() == [
        "aidp: 3 done, 3 claims, 3 TODO changes", "", TASKLIST]
    assert "✓ Committed the tasklist on main: aidp: 3 done, 3 claims, 3 TODO changes" in result.stdout


def test_the_next_ready_task_gets_a_free_slot_and_merge_brings_the_work_home(
        cli, agent, repo: Path) -> None:
    first = add(cli, "First", "-p", "high")
    later = add(cli, "Needs first", "--blocked-by", first)
    commit_all(repo)
    worker = agent(
        "if Path('file-' + " + repr(hex_of(first)) + " + '.txt').exists():\n"
        "    print('sees the first task work')\n" + DILIGENT)
    result = run(repo, "--parallel", "2", "--merge", "--agent", worker.command)
    assert result.returncode == 0, result
    assert sorted(c["task"] for c in worker.calls()) == sorted([first, later])
    # Merged as each ended, so the later worktree started from the first one's work.
    assert f"[{hex_of(later)}] sees the first task work" in result.stdout
    for tid in (first, later):
        assert (repo / f"file-{hex_of(tid)}.txt").read_text() == f"{hex_of(tid)}\n"
        assert (f"[{hex_of(tid)}] ✓ Merged aidp/{hex_of(tid)} into main (branch "
                "deleted)") in result.stdout
    assert git(repo, "branch", "--list", "aidp/*") == ""  # merged, so deleted
    assert git(repo, "status", "--porcelain").strip() == ""
    assert all(t["status"] == "done" for t in state(cli).values())
    assert all(t["status"] == "done" for t in own_tasklist(repo).values())
    assert "📋 Parallel run: 2 claimed, 2 done, 2 merged" in result.stdout


def test_a_conflicting_branch_is_left_and_named(cli, agent, repo: Path) -> None:
    a = add(cli, "Write A", "-p", "high")
    b = add(cli, "Write B")
    commit_all(repo)
    # Both write one file differently, at once: the second merge conflicts.
    worker = agent("wait_for(2)\ncommit('shared.txt', HEX + '\\n')\n"
                   "aidp('tasks', 'done', TASK)\n")
    result = run(repo, "--parallel", "2", "--merge", "--json", "--agent", worker.command)
    assert result.returncode == 0, result
    tasks = json.loads(result.stdout)["tasks"]
    assert sorted(t["id"] for t in tasks) == sorted([a, b])
    assert all(set(t) == {"id", "status", "branch", "merged", "exit_code"} for t in tasks)
    merged = [t for t in tasks if t["merged"]]
    left = [t for t in tasks if not t["merged"]]
    assert len(merged) == len(left) == 1
    assert left[0]["status"] == "done" and left[0]["exit_code"] == 0
    assert (repo / "shared.txt").read_text() == f"{hex_of(merged[0]['id'])}\n"
    branch = left[0]["branch"]
    assert branch == f"aidp/{hex_of(left[0]['id'])}"
    assert (f"Not merged: {branch} (conflicts in shared.txt); it is left for you: "
            f"git merge {branch}") in result.stderr
    assert git(repo, "show", f"{branch}:shared.txt") == f"{hex_of(left[0]['id'])}\n"
    assert git(repo, "branch", "--list", "aidp/*").split() == [branch]  # the merged one went
    assert git(repo, "status", "--porcelain").strip() == ""  # the merge was undone
    assert not (repo / ".git" / "MERGE_HEAD").exists()


def test_a_failing_agent_releases_its_task_and_the_others_go_on(cli, agent,
                                                                repo: Path) -> None:
    bad = add(cli, "Breaks", "-p", "high")
    good = add(cli, "Works")
    commit_all(repo)
    worker = agent("wait_for(2)\nif TASK == " + repr(bad) + ":\n"
                   "    time.sleep(0.5)\n    sys.exit(3)\n" + DILIGENT)
    result = run(repo, "--parallel", "2", "--json", "--agent", worker.command)
    assert result.returncode == 3, result
    found = state(cli)
    assert found[bad]["status"] == "pending" and "assignee" not in found[bad]
    assert found[good]["status"] == "done"
    assert own_tasklist(repo)[bad]["status"] == "pending"
    assert f"[{hex_of(bad)}] Warning: The agent exited with code 3" in result.stderr
    by_id = {t["id"]: t for t in json.loads(result.stdout)["tasks"]}
    assert (by_id[bad]["status"], by_id[bad]["exit_code"]) == ("pending", 3)
    assert (by_id[good]["status"], by_id[good]["exit_code"]) == ("done", 0)


def test_the_completion_gate_holds_in_a_worktree(cli, agent, repo: Path) -> None:
    tid = add(cli, "Gated")
    commit_all(repo)
    worker = agent(
        "if CALL == 1:\n"
        "    aidp('todo', 'add', 'Step one')\n"
        "    aidp('todo', 'add', 'Step two')\n"
        "    aidp('tasks', 'done', TASK)\n"
        "else:\n"
        "    aidp('todo', 'tick', '1')\n"
        "    aidp('todo', 'tick', '2')\n"
        "    aidp('tasks', 'done', TASK)\n")
    result = run(repo, "--parallel", "2", "--agent", worker.command)
    assert result.returncode == 0, result
    assert len(worker.calls(tid)) == 2
    assert "still has open items" in worker.calls(tid)[1]["prompt"]
    history = json.loads(cli("tasks", "history", tid, "--json").out)
    assert [h["status"] for h in history] == ["pending", "in_progress", "done",
                                              "in_progress", "done"]


def test_ctrl_c_stops_every_agent_releases_and_keeps_the_worktrees(
        cli, agent, repo: Path, tmp_path: Path) -> None:
    ids = [add(cli, name) for name in ("Slow one", "Slow two")]
    commit_all(repo)
    worker = agent("wait_for(2)\nPath('scratch.txt').write_text('half done')\n"
                   "print('ready', flush=True)\ntime.sleep(120)\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "aidp", "run", "--backlog", "--parallel", "2", "--agent",
         worker.command], cwd=repo, env={**os.environ, "AIDP_DIR": str(repo)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not all(
            (repo / ".aidp" / "worktrees" / hex_of(t) / "scratch.txt").exists() for t in ids):
        time.sleep(0.05)
    assert all(state(cli)[t]["assignee"] == "runner" for t in ids)
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C on a terminal does
    out, err = proc.communicate(timeout=90)
    assert proc.returncode == 130, (out, err)
    found = state(cli)
    for tid in ids:
        assert found[tid]["status"] == "pending" and "assignee" not in found[tid]
        where = repo / ".aidp" / "worktrees" / hex_of(tid)
        assert (where / "scratch.txt").read_text() == "half done"
        assert f"[{hex_of(tid)}] Kept the worktree {where} (interrupted)" in out
    pids = [c["pid"] for c in worker.calls()]
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert "Interrupted: every agent was stopped" in err
    # The kept worktrees are git-ignored in the starting one.
    assert git(repo, "status", "--porcelain", "--untracked-files=all").splitlines() == [
        f" M {TASKLIST}"]
    # A later run takes the kept worktrees up as they are; one left with work the agent
    # did not commit (scratch.txt) is kept again, and named.
    again = agent("if Path('scratch.txt').exists():\n    print('found my scratch')\n"
                  + DILIGENT)
    result = run(repo, "--parallel", "2", "--agent", again.command)
    assert result.returncode == 0, result
    for tid in ids:
        where = repo / ".aidp" / "worktrees" / hex_of(tid)
        assert f"[{hex_of(tid)}] found my scratch" in result.stdout
        assert (f"[{hex_of(tid)}] Kept the worktree {where} (uncommitted changes "
                "(scratch.txt))") in result.stdout
        git(repo, "worktree", "remove", "--force", str(where))
    # Their states are in the starting worktree's file too: removing them reopens nothing.
    assert all(state(cli)[t]["status"] == "done" for t in ids)
    assert all(own_tasklist(repo)[t]["status"] == "done" for t in ids)


@pytest.mark.parametrize(("args", "message"), [
    (["--parallel", "0"], "Error: Invalid --parallel 0: use a whole number from 1 to 16\n"),
    (["--parallel", "17"], "Error: Invalid --parallel 17: use a whole number from 1 to 16\n"),
    (["--merge"], "Error: --merge needs --parallel (and --backlog)\n"),
])
def test_bad_parallel_options(cli, agent, repo: Path, args, message) -> None:
    add(cli, "One")
    before = (repo / TASKLIST).read_bytes()
    worker = agent(DILIGENT)
    result = run(repo, *args, "--agent", worker.command)
    assert (result.returncode, result.stderr) == (2, message)
    assert worker.calls() == []
    assert (repo / TASKLIST).read_bytes() == before


def test_parallel_needs_backlog(cli, agent, repo: Path) -> None:
    result = cli("run", "--parallel", "2", "--agent", agent(DILIGENT).command)
    assert (result.code, result.err) == (
        2, "Error: --parallel needs --backlog: the agents work on the ready tasks\n")


def test_outside_a_git_repository_nothing_starts(cli, agent, project: Path) -> None:
    add(cli, "One")
    before = (project / TASKLIST).read_bytes()
    worker = agent(DILIGENT)
    result = cli("run", "--backlog", "--parallel", "2", "--agent", worker.command)
    assert result.code == 2, result
    assert result.err.startswith(f"Error: Cannot run --parallel: {project} is not inside a "
                                 "git repository")
    assert worker.calls() == []
    assert (project / TASKLIST).read_bytes() == before
    assert not (project / ".aidp" / "worktrees").exists()


def test_merge_refuses_uncommitted_changes(cli, agent, repo: Path) -> None:
    add(cli, "One")
    (repo / "README").write_text("v1\n")
    commit_all(repo)
    (repo / "README").write_text("v2, not committed\n")
    add(cli, "Two")  # an uncommitted tasklist alone would be committed for you
    before = (repo / TASKLIST).read_bytes()
    head = git(repo, "rev-parse", "HEAD")
    worker = agent(DILIGENT)
    result = cli("run", "--backlog", "--parallel", "2", "--merge", "--agent", worker.command)
    assert (result.code, result.err) == (
        2, "Error: Cannot --merge: main has uncommitted changes (README); commit or stash "
           "them first (the tasklist alone is committed for you), or leave out --merge\n")
    assert worker.calls() == []
    assert (repo / TASKLIST).read_bytes() == before
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "branch", "--list", "aidp/*") == ""


@pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal is POSIX")
def test_on_a_terminal_each_running_agent_has_a_live_line(cli, agent, repo: Path) -> None:
    import fcntl
    import pty
    import struct
    import termios

    ids = [add(cli, name) for name in ("Live one", "Live two")]
    commit_all(repo)
    worker = agent("wait_for(2)\nprint('step ' + HEX, flush=True)\n" + DILIGENT)
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "aidp", "run", "--backlog", "--parallel", "2", "--agent",
         worker.command], cwd=repo, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave,
        env={**os.environ, "AIDP_DIR": str(repo), "COLUMNS": "100", "NO_COLOR": "1"})
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the run closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    assert proc.wait(timeout=60) == 0, seen
    shown = seen.decode()
    for tid, name in zip(ids, ("Live one", "Live two"), strict=True):
        assert f"[{hex_of(tid)}] working: {name}" in shown  # its live line
        assert f"[{hex_of(tid)}] step {hex_of(tid)}" in shown  # its events, prefixed
        assert f"[{hex_of(tid)}] ✓ Task done: {name}" in shown
    assert "📋 Parallel run: 2 claimed, 2 done" in shown
    assert "\\u001b" not in shown and "\\u000d" not in shown  # its moves work, not shown
    assert all(t["status"] == "done" for t in state(cli).values())


def test_a_project_in_a_folder_of_the_repository(cli, agent, project: Path,
                                                 tmp_path: Path) -> None:
    top = tmp_path  # the repository; the project is its folder project/
    git(top, "init", "-q", "-b", "main")
    git(top, "config", "commit.gpgsign", "false")
    assert cli("init").code == 0
    tid = add(cli, "In a folder")
    git(top, "add", "project")
    git(top, "commit", "-q", "-m", "init")
    worker = agent(DILIGENT)
    result = run(project, "--parallel", "2", "--merge", "--agent", worker.command)
    assert result.returncode == 0, result
    (call,) = worker.calls(tid)
    assert call["cwd"] == str(project / ".aidp" / "worktrees" / hex_of(tid) / "project")
    assert (project / f"file-{hex_of(tid)}.txt").read_text() == f"{hex_of(tid)}\n"
    assert state(cli)[tid]["status"] == "done"
    assert git(top, "status", "--porcelain", "--", "project").strip() == ""


def test_an_agent_that_pauses_keeps_its_claim_and_its_worktree(cli, agent,
                                                               repo: Path) -> None:
    tid = add(cli, "Needs a decision")
    commit_all(repo)
    worker = agent("print('Todo pause: \"Which database?\"')\n")
    result = run(repo, "--parallel", "2", "--json", "--agent", worker.command)
    assert result.returncode == 0, result
    found = state(cli)[tid]
    assert (found["status"], found["assignee"]) == ("in_progress", "runner")
    where = repo / ".aidp" / "worktrees" / hex_of(tid)
    assert where.is_dir()
    assert (f"[{hex_of(tid)}] Kept the worktree {where} (the agent paused for you; the "
            "task stays claimed)") in result.stderr
    assert json.loads(result.stdout)["tasks"] == [
        {"id": tid, "status": "in_progress", "branch": f"aidp/{hex_of(tid)}",
         "merged": False, "exit_code": 0}]


def test_max_tasks_bounds_the_run(cli, agent, repo: Path) -> None:
    ids = [add(cli, f"Task {n}") for n in range(3)]
    commit_all(repo)
    worker = agent(DILIGENT)
    result = run(repo, "--parallel", "2", "--max-tasks", "1", "--agent", worker.command)
    assert result.returncode == 0, result
    assert len(worker.calls()) == 1
    assert sorted(t["status"] for t in state(cli).values()) == ["done", "pending", "pending"]
    assert len(ids) == 3 and "📋 Parallel run: 1 claimed, 1 done" in result.stdout


def test_an_agent_that_cannot_start_starts_nothing(cli, repo: Path, tmp_path: Path) -> None:
    add(cli, "One")
    before = (repo / TASKLIST).read_bytes()
    missing = tmp_path / "no-such-agent"
    result = run(repo, "--parallel", "2", "--agent", str(missing))
    assert (result.returncode, result.stderr) == (
        2, f"Error: Agent command not found: '{missing}' (from --agent); install it, or "
           "choose another agent with --agent NAME|COMMAND, the AIDP_AGENT variable, or "
           "agent = \"…\" in .aidp/config.toml\n"), result
    assert (repo / TASKLIST).read_bytes() == before
    assert not (repo / ".aidp" / "worktrees").exists()
    assert git(repo, "branch", "--list", "aidp/*") == ""


def test_a_timed_out_agent_releases_its_task_and_the_run_exits_124(cli, agent,
                                                                   repo: Path) -> None:
    tid = add(cli, "Never ends")
    commit_all(repo)
    worker = agent("time.sleep(120)\n")
    result = run(repo, "--parallel", "2", "--timeout", "1", "--json", "--agent",
                 worker.command)
    assert result.returncode == 124, result
    found = state(cli)[tid]
    assert found["status"] == "pending" and "assignee" not in found
    assert json.loads(result.stdout)["tasks"][0]["exit_code"] == 124


def test_ctrl_c_during_a_merge_leaves_no_merge_half_done(cli, repo: Path,
                                                         monkeypatch) -> None:
    """A Ctrl-C that lands while `--merge` runs git merge (a conflicting one here)
    undoes that merge before the interrupt goes on: no MERGE_HEAD, no conflict
    markers left on the starting branch."""
    from aidp.agent.parallel import worktree
    from aidp.agent.parallel.worktree import Checkout
    from aidp.tasklist.log import TaskLog

    tid = "task_1700000000000000_deadbeef"
    git(repo, "checkout", "-q", "-b", "aidp/deadbeef")
    (repo / "shared.txt").write_text("theirs\n")
    commit_all(repo)
    git(repo, "checkout", "-q", "main")
    (repo / "shared.txt").write_text("ours\n")
    commit_all(repo)
    checkout = Checkout(TaskLog(repo), merge=True)
    real = worktree.run

    def interrupted(root: Path, *args: str, **kw):
        done = real(root, *args, **kw)
        if args[:1] == ("merge",) and "--abort" not in args:
            raise KeyboardInterrupt
        return done

    monkeypatch.setattr(worktree, "run", interrupted)
    with pytest.raises(KeyboardInterrupt):
        checkout.merge(tid)
    assert not (repo / ".git" / "MERGE_HEAD").exists()
    assert (repo / "shared.txt").read_text() == "ours\n"
    assert git(repo, "status", "--porcelain").strip() == ""


def hook(repo: Path, name: str, body: str) -> None:
    """A git hook (Python) in the repository, shared by all its worktrees."""
    path = repo / ".git" / "hooks" / name
    path.write_text(f"#!{sys.executable}\nimport os, signal, sys\nfrom pathlib import Path\n"
                    + body, encoding="utf-8")
    path.chmod(0o755)


def ctrl_c_from(marker: Path, how: str = "ctrl-c") -> str:
    """Hook body: once, Ctrl-C to the run's process group (its id in `marker`), as a
    terminal sends it while git is at work for the run; or (`how="sigterm"`) SIGTERM to
    the run's process alone, as `kill PID` sends it."""
    send = ("os.killpg(pid, signal.SIGINT)" if how == "ctrl-c"
            else "os.kill(pid, signal.SIGTERM)")
    return (f"marker = Path({str(marker)!r})\n"
            "if marker.exists():\n"
            "    pid = int(marker.read_text())\n"
            "    marker.rename(str(marker) + '.sent')\n"
            f"    {send}\n")


def start_run(repo: Path, *args: str) -> subprocess.Popen[str]:
    """`aidp run --backlog ARGS` in a process group of its own (the group a terminal's
    Ctrl-C goes to)."""
    return subprocess.Popen(
        [sys.executable, "-m", "aidp", "run", "--backlog", *args], cwd=repo,
        env={**os.environ, "AIDP_DIR": str(repo)}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True)


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
def test_ctrl_c_during_a_real_merge_finishes_it_reports_it_and_stops_the_rest(
        cli, agent, repo: Path, tmp_path: Path, how: str) -> None:
    """Ctrl-C to the run's group (or SIGTERM to the run) while `--merge` runs git merge
    (a pre-merge-commit hook sends it, mid-merge): git does not get it, the merge
    completes, the task's outcome is in --json with its Merged and ended lines, and then
    the other agent is stopped, its task released and its worktree kept."""
    fast = add(cli, "Fast", "-p", "high")
    slow = add(cli, "Slow")
    commit_all(repo)
    marker = tmp_path / "run.pgid"
    hook(repo, "pre-merge-commit", ctrl_c_from(marker, how))
    scratch = repo / ".aidp" / "worktrees" / hex_of(slow) / "scratch.txt"
    worker = agent(
        "wait_for(2)\n"
        "if TASK == " + repr(fast) + ":\n"
        f"    while not Path({str(scratch)!r}).exists():\n        time.sleep(0.05)\n"
        + "".join("    " + line + "\n" for line in DILIGENT.splitlines()) +
        "else:\n"
        "    Path('scratch.txt').write_text('half done')\n"
        "    time.sleep(120)\n")
    proc = start_run(repo, "--parallel", "2", "--merge", "--json", "--agent",
                     worker.command)
    marker.write_text(str(proc.pid))
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, (out, err)
    assert Path(str(marker) + ".sent").exists()  # the Ctrl-C came mid-merge
    by_id = {t["id"]: t for t in json.loads(out)["tasks"]}
    assert by_id[fast] == {"id": fast, "status": "done", "branch": f"aidp/{hex_of(fast)}",
                           "merged": True, "exit_code": 0}
    assert (by_id[slow]["status"], by_id[slow]["exit_code"]) == ("pending", 130)
    # The merge is whole on main: its commit, the file, nothing half done.
    assert not (repo / ".git" / "MERGE_HEAD").exists()
    assert (repo / f"file-{hex_of(fast)}.txt").read_text() == f"{hex_of(fast)}\n"
    assert git(repo, "log", "-1", "--format=%s") == f"Merge branch 'aidp/{hex_of(fast)}'\n"
    assert len(git(repo, "log", "-1", "--format=%P").split()) == 2
    assert git(repo, "status", "--porcelain", "--untracked-files=no").splitlines() in (
        [], [f" M {TASKLIST}"])
    assert f"[{hex_of(fast)}] ✓ Merged aidp/{hex_of(fast)} into main (branch deleted)" in err
    assert f"[{hex_of(fast)}] ■ Fast ended: done, exit code 0" in err
    assert not (repo / ".aidp" / "worktrees" / hex_of(fast)).exists()
    # Then the rest stopped: released, worktree kept and named.
    found = state(cli)
    assert found[fast]["status"] == "done"
    assert found[slow]["status"] == "pending" and "assignee" not in found[slow]
    kept = scratch.parent
    assert scratch.read_text() == "half done"
    assert f"[{hex_of(slow)}] Kept the worktree {kept} (interrupted)" in err


def test_ctrl_c_during_worktree_add_leaves_a_worktree_the_next_run_takes_up(
        cli, agent, repo: Path, tmp_path: Path) -> None:
    """Ctrl-C to the run's group while git makes a task's worktree (its post-checkout
    hook sends it): git finishes the worktree, the run then stops the agent it started
    there and releases the task, and the next run works in that worktree."""
    tid = add(cli, "Interrupted early")
    commit_all(repo)
    marker = tmp_path / "run.pgid"
    hook(repo, "post-checkout", ctrl_c_from(marker))
    waiting = agent("time.sleep(120)\n")
    proc = start_run(repo, "--parallel", "2", "--json", "--agent", waiting.command)
    marker.write_text(str(proc.pid))
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, (out, err)
    assert Path(str(marker) + ".sent").exists()
    where = repo / ".aidp" / "worktrees" / hex_of(tid)
    assert json.loads(out)["tasks"] == [
        {"id": tid, "status": "pending", "branch": f"aidp/{hex_of(tid)}",
         "merged": False, "exit_code": 130}]
    assert f"[{hex_of(tid)}] Kept the worktree {where} (interrupted)" in err
    found = state(cli)[tid]
    assert found["status"] == "pending" and "assignee" not in found
    # A whole worktree on the task's branch, which the next run takes up.
    assert git(where, "rev-parse", "--abbrev-ref", "HEAD").strip() == f"aidp/{hex_of(tid)}"
    assert git(where, "status", "--porcelain").strip() == ""
    diligent = agent(DILIGENT)
    result = run(repo, "--parallel", "2", "--agent", diligent.command)
    assert result.returncode == 0, result
    assert [c["cwd"] for c in diligent.calls(tid)][-1] == str(where)
    assert state(cli)[tid]["status"] == "done"
    assert not where.exists()


def test_after_a_failing_agent_no_task_starts_and_the_run_says_why(
        cli, agent, repo: Path) -> None:
    bad = add(cli, "Breaks", "-p", "high")
    good = add(cli, "Works")
    later = add(cli, "Later", "-p", "low")
    commit_all(repo)
    bad_tree = repo / ".aidp" / "worktrees" / hex_of(bad)
    # The good agent ends only once the run has settled the failed one (its worktree
    # removed), so the free slot comes after the failure.
    worker = agent(
        "wait_for(2)\n"
        "if TASK == " + repr(bad) + ":\n    sys.exit(3)\n"
        f"while Path({str(bad_tree)!r}).exists():\n    time.sleep(0.05)\n" + DILIGENT)
    result = run(repo, "--parallel", "2", "--agent", worker.command)
    assert result.returncode == 3, result
    found = state(cli)
    assert (found[bad]["status"], found[good]["status"], found[later]["status"]) == (
        "pending", "done", "pending")
    assert worker.calls(later) == []
    assert ("📋 An agent failed (exit code 3), so no new task was started after it: the "
            "parallel run stops") in result.stdout
    assert "Nothing ready" not in result.stdout
    assert "📋 Parallel run: 2 claimed, 1 done" in result.stdout


@pytest.mark.parametrize("registered", [True, False])
def test_a_worktree_add_that_never_finished_is_made_again(cli, agent, repo: Path,
                                                          registered: bool) -> None:
    """What a `git worktree add` killed before its checkout leaves (the folder with only
    its .git file, registered and locked while git was at it; or the bare folder) is
    not refused, nor used half made: the run makes the worktree again."""
    tid = add(cli, "After a killed add")
    commit_all(repo)
    where = repo / ".aidp" / "worktrees" / hex_of(tid)
    if registered:
        git(repo, "worktree", "add", "-q", "-b", f"aidp/{hex_of(tid)}", str(where), "HEAD")
        for entry in where.iterdir():
            if entry.name != ".git":
                subprocess.run(["rm", "-rf", str(entry)], check=True)
        admin = Path(git(where, "rev-parse", "--absolute-git-dir").strip())
        (admin / "locked").write_text("initializing\n")
    else:
        where.mkdir(parents=True)
    worker = agent("print('sees ' + str(Path('.aidp/tasklist.jsonl').exists()))\n"
                   + DILIGENT)
    result = run(repo, "--parallel", "2", "--agent", worker.command)
    assert result.returncode == 0, result
    assert f"[{hex_of(tid)}] sees True" in result.stdout  # a whole checkout
    assert state(cli)[tid]["status"] == "done"
    assert not where.exists()  # finished and removed, not kept for missing files
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert git(repo, "show", f"aidp/{hex_of(tid)}:file-{hex_of(tid)}.txt") == \
        f"{hex_of(tid)}\n"


def test_ctrl_c_during_the_last_merge_stops_a_run_with_no_agent_left(
        cli, agent, repo: Path, tmp_path: Path) -> None:
    """Ctrl-C mid-merge when that task's agent was the only one: the merge completes and
    is reported, the task after it is not started, and the run says no agent was left
    to stop."""
    only = add(cli, "Only one", "-p", "high")
    after = add(cli, "Needs it", "--blocked-by", only)
    commit_all(repo)
    marker = tmp_path / "run.pgid"
    hook(repo, "pre-merge-commit", ctrl_c_from(marker))
    worker = agent(f"while not Path({str(marker)!r}).exists():\n    time.sleep(0.05)\n"
                   + DILIGENT)
    proc = start_run(repo, "--parallel", "2", "--merge", "--json", "--agent",
                     worker.command)
    marker.write_text(str(proc.pid))
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, (out, err)
    assert json.loads(out)["tasks"] == [
        {"id": only, "status": "done", "branch": f"aidp/{hex_of(only)}", "merged": True,
         "exit_code": 0}]
    assert (repo / f"file-{hex_of(only)}.txt").read_text() == f"{hex_of(only)}\n"
    assert worker.calls(after) == [] and state(cli)[after]["status"] == "pending"
    assert "Warning: Interrupted: no agent was running; nothing more is started" in err
    assert "every agent was stopped" not in err
