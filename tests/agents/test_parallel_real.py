"""`aidp run --backlog --parallel` with the real agent CLIs against the scripted model
server: two agents of one CLI at once, each in a worktree of its own, their branches
merged with --merge; and claude and codex at once on one repository's queue."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from fakemodel import Conversation, Scenario, shell, text
from harness import AgentWorld, missing_reason


def task_prompt(actor: str, tid: str) -> str:
    return f"claimed for you (as {actor}):\n\n  {tid}"


def git(world: AgentWorld, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=world.project, env=world.env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def hex_of(tid: str) -> str:
    return tid.rpartition("_")[2]


@pytest.mark.parametrize("cli", ["claude", "codex"])
def test_two_agents_at_once_and_their_branches_merged(cli: str, request, fake_model) -> None:
    world: AgentWorld = request.getfixturevalue(cli)
    ids = [world.aidp("tasks", "add", name, "-q").stdout.strip()
           for name in ("First task", "Second task")]
    git(world, "add", "-A")
    git(world, "commit", "-q", "-m", "backlog")
    fake_model.scenario = Scenario(tuple(
        Conversation((shell(f"aidp tasks done {tid}"), text("Closed it.")),
                     when=task_prompt("bot", tid)) for tid in ids))
    result = world.aidp_run(None, "--backlog", "--parallel", "2", "--merge", "--as", "bot",
                            "--json")
    assert result.exit_code == 0, str(result)
    reported = {t["id"]: t for t in json.loads(result.stdout)["tasks"]}
    assert sorted(reported) == sorted(ids), str(result)
    found = {t["id"]: t for t in world.tasks()}
    for tid in ids:
        assert reported[tid] == {"id": tid, "status": "done", "branch": f"aidp/{hex_of(tid)}",
                                 "merged": True, "exit_code": 0}, str(result)
        assert (found[tid]["status"], found[tid]["assignee"]) == ("done", "bot")
        assert f"[{hex_of(tid)}] ✓ Task done: " in result.stderr
        assert not (world.project / ".aidp" / "worktrees" / hex_of(tid)).exists()
    # Each agent ran in its task's worktree: the model saw that folder.
    worktrees = world.project / ".aidp" / "worktrees"
    seen = json.dumps([r.body for r in fake_model.requests], default=str)
    assert all(str(worktrees / hex_of(tid)) in seen for tid in ids)
    # Main holds both branches and a clean work tree: the tasklist was committed first.
    assert git(world, "status", "--porcelain").strip() == ""
    log = git(world, "log", "--format=%s", "main")
    assert all(f"Merge branch 'aidp/{hex_of(tid)}'" in log for tid in ids)
    assert git(world, "branch", "--list", "aidp/*") == ""  # merged, so deleted


def test_claude_and_codex_at_once_on_one_queue(agent_world, fake_model) -> None:
    why = missing_reason("codex")
    if why is not None:
        pytest.skip(why)
    world: AgentWorld = agent_world("claude")
    world._configure_codex()  # the same world runs both CLIs: its env and config for codex too
    ids = [world.aidp("tasks", "add", name, "-q").stdout.strip()
           for name in ("Task one", "Task two")]
    git(world, "add", "-A")
    git(world, "commit", "-q", "-m", "backlog")
    fake_model.scenario = Scenario(tuple(
        Conversation((shell(f"aidp tasks done {tid}"), text("Closed it.")),
                     when=task_prompt(actor, tid))
        for tid in ids for actor in ("claude-bot", "codex-bot")))
    aidp = str(Path(sys.executable).parent / "aidp")
    runs = {cli: subprocess.Popen(
        [aidp, "run", "--backlog", "--parallel", "1", "--max-tasks", "1", "--agent", cli,
         "--as", f"{cli}-bot"], cwd=world.project, env=world.env, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for cli in ("claude", "codex")}
    outputs = {cli: proc.communicate(timeout=600) for cli, proc in runs.items()}
    for cli, proc in runs.items():
        assert proc.returncode == 0, (cli, *outputs[cli])
    found = {t["id"]: t for t in world.tasks()}
    assert all(found[tid]["status"] == "done" for tid in ids), outputs
    # Each run took one task: one closed by claude, one by codex, never one twice.
    assert sorted(found[tid]["assignee"] for tid in ids) == ["claude-bot", "codex-bot"]
    branches = git(world, "branch", "--list", "aidp/*")
    assert all(f"aidp/{hex_of(tid)}" in branches for tid in ids)
    for tid in ids:
        holder = found[tid]["assignee"].removesuffix("-bot")
        assert f"[{hex_of(tid)}] ✓ Task done: " in outputs[holder][0]
