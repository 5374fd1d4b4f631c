"""aidp keeps a working holder's lease (docs/guide.md, "Leases"): `aidp run` while its
agent lives, `aidp mcp` while its client calls, the hooks on the agent's hook events —
each at most once per half lease, so the tasklist gains few lines (counted here) — and
releases at once what the agent `aidp run` started left claimed when it exited. The
holder that lost its task is told by each of them. Real processes: scripted stand-in
agents, a real `aidp mcp` server, `aidp hook` with an agent's hook JSON."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import orjson
import pytest

from aidp.backlog import queue
from aidp.tasklist.log import TaskLog
from tests.cli.test_run_cli import PREAMBLE, Agent
from tests.test_leases import expire
from tests.test_mcp import Client, data, text


def add(cli, text_: str) -> str:
    result = cli("tasks", "add", text_, "-q")
    assert result.code == 0, result
    return result.out.strip()


def claims_of(project: Path, tid: str) -> list[dict]:
    lines = (project / ".aidp" / "tasklist.jsonl").read_bytes().splitlines()
    return [r for r in map(orjson.loads, lines)
            if r.get("type") == "claim" and r.get("task") == tid]


def lease_config(project: Path, value: str) -> None:
    (project / ".aidp").mkdir(exist_ok=True)
    (project / ".aidp" / "config.toml").write_text(f'lease = "{value}"\n')


# --- aidp run -----------------------------------------------------------------------------


@pytest.fixture
def make_agent(tmp_path: Path):
    """A scripted stand-in agent (tests/cli/test_run_cli.py's)."""
    def make(body: str) -> Agent:
        path = tmp_path / "agent.py"
        path.write_text(PREAMBLE + body, encoding="utf-8")
        return Agent(path)

    return make


def test_run_renews_its_agents_lease_while_the_agent_lives(cli, project: Path,
                                                           make_agent) -> None:
    tid = add(cli, "A task that takes longer than its lease")
    lease_config(project, "2s")
    agent = make_agent("""
tid = os.environ["AIDP_TASK"]
start, seen = time.time(), []
while time.time() - start < 4:  # twice its lease
    time.sleep(0.4)
    seen.append(json.loads(aidp("tasks", "show", tid, "--json")).get("stale", False))
HERE.with_name("seen.json").write_text(json.dumps({"seen": seen, "took": time.time() - start}))
aidp("tasks", "done", tid)
""")
    started = time.monotonic()
    result = cli("run", "--backlog", "--agent", agent.command)
    took = time.monotonic() - started
    assert result.code == 0, result
    seen = json.loads(agent.path.with_name("seen.json").read_text())
    assert seen["seen"] and not any(seen["seen"])  # never stale while it worked
    claims = claims_of(project, tid)
    renewals = len(claims) - 1
    # Once per half lease at most: one line per second of the run, not one per tick.
    assert 2 <= renewals <= took / 1.0 + 1, (renewals, took)
    assert len({c["claimed_at"] for c in claims}) == 1  # renewals keep the claim's place
    assert json.loads(cli("tasks", "show", tid, "--json").out)["status"] == "done"


def test_run_releases_what_its_agent_claimed_and_left_at_once(cli, project: Path,
                                                              make_agent) -> None:
    left, closed, theirs = add(cli, "claimed and left"), add(cli, "claimed and done"), add(
        cli, "claimed by a person meanwhile")
    agent = make_agent(f"""
aidp("tasks", "claim", "{left}")
aidp("tasks", "claim", "{closed}")
aidp("tasks", "done", "{closed}")
subprocess.run(["aidp", "tasks", "claim", "{theirs}", "--as", "a-person"], check=True,
               env={{**os.environ, "AIDP_SESSION": ""}})
""")
    result = cli("run", "Work on the backlog", "--agent", agent.command)
    assert result.code == 0, result
    shown = {t["id"]: t for t in json.loads(cli("tasks", "list", "--all", "--json").out)}
    assert shown[left]["status"] == "pending" and "assignee" not in shown[left]
    assert shown[closed]["status"] == "done"
    assert shown[theirs]["status"] == "in_progress"  # not the agent's: left alone
    assert shown[theirs]["assignee"] == "a-person"
    assert "↩ Released task" in result.out and "(claimed and left): the agent claimed it " \
        "and exited without closing it" in result.out
    assert result.out.count("↩ Released task") == 1


# --- aidp mcp ------------------------------------------------------------------------------


def test_mcp_renews_while_its_client_calls_and_tells_the_task_it_lost(
        project: Path, cli) -> None:
    tid = add(cli, "worked on through MCP")
    lease_config(project, "2s")
    env = {**os.environ, "AIDP_DIR": str(project), "AIDP_ACTOR": "mcp-agent"}
    client = Client(project, env)
    try:
        client.start()
        assert data(client.call("tasks_claim", {"id": tid}))["assignee"] == "mcp-agent"
        log = TaskLog(project)
        start = time.monotonic()
        while time.monotonic() - start < 4:  # twice its lease, calling all along
            time.sleep(0.3)
            assert client.call("todo_read")["isError"] is False
            holder = queue.state(log.read(), about=tid).holder(log.read().tasks[tid])
            assert holder is not None and not queue.judge(holder).stale
        took = time.monotonic() - start
        renewals = len(claims_of(project, tid)) - 1
        assert 2 <= renewals <= took / 1.0 + 1, (renewals, took)
        # The client goes quiet; its lease runs out; someone takes the task over.
        expire(project, tid, "mcp-agent", left=-1)
        assert cli("tasks", "claim", tid, "--as", "bob").code == 0
        lost = (f"You no longer hold task {tid.rpartition('_')[2][:4]}: bob took it over when "
                "your lease ran out (bob holds it now)")
        done = client.call("tasks_update", {"id": tid, "status": "done"})
        assert done["isError"] is False
        assert lost in text(done)
        assert json.loads(done["content"][0]["text"])["status"] == "done"  # still closes it
        assert lost not in text(client.call("todo_read"))  # told once
    finally:
        client.close()


# --- the hooks -----------------------------------------------------------------------------


def hook(cli, event: str, payload: dict) -> dict | None:
    result = cli("hook", "claude", event, stdin=json.dumps(payload))
    assert result.code == 0, result
    return json.loads(result.out) if result.out.strip() else None


def test_hooks_renew_at_most_once_per_half_lease_and_tell_a_lost_task_once(
        cli, project: Path, monkeypatch) -> None:
    tid = add(cli, "worked on in a hooked session")
    monkeypatch.setenv("AIDP_ACTOR", "hooked")
    assert cli("tasks", "claim", tid, "--lease", "1h").code == 0
    plan = {"session_id": "s1", "hook_event_name": "PostToolUse", "tool_name": "TodoWrite",
            "tool_input": {"todos": [{"content": "Step", "status": "in_progress",
                                      "activeForm": "Step"}]}, "tool_response": {}}
    hook(cli, "PostToolUse", plan)
    assert len(claims_of(project, tid)) == 1  # early in its lease: nothing written
    expire(project, tid, "hooked", left=25 * 60)  # more than half of it ran
    for _ in range(3):
        hook(cli, "PostToolUse", plan)
    claims = claims_of(project, tid)
    assert len(claims) == 3  # the aged copy and one renewal, not three
    assert queue.judge(claims[-1]).until - queue.judge(claims[-1]).now > 55 * 60 * 1_000_000
    # Taken over after its lease ran out: the next prompt's context says so, once.
    expire(project, tid, "hooked", left=-1)
    monkeypatch.setenv("AIDP_ACTOR", "bob")
    assert cli("tasks", "claim", tid).code == 0
    monkeypatch.setenv("AIDP_ACTOR", "hooked")
    prompt = {"session_id": "s1", "hook_event_name": "UserPromptSubmit", "prompt": "go on"}
    out = hook(cli, "UserPromptSubmit", prompt)
    assert out == {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                          "additionalContext": (
        f"You no longer hold task {tid.rpartition('_')[2][:4]}: bob took it over when your "
        f"lease ran out (bob holds it now); your 'aidp tasks done "
        f"{tid.rpartition('_')[2][:4]}' still closes it")}}
    assert hook(cli, "UserPromptSubmit", prompt) is None  # told once
