"""`aidp tasks ready|blocked|claim|release|block|unblock|edit|note`, `add --blocked-by
--parent`, `show`, `list --tree` and `history` with the work queue, from the command
line: exit codes and messages together, files unchanged on refusal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_git import git


@pytest.fixture(autouse=True)
def actor(monkeypatch) -> None:
    monkeypatch.setenv("AIDP_ACTOR", "tester")


def add(cli, text: str, *args: str) -> str:
    result = cli("tasks", "add", text, "-q", *args)
    assert result.code == 0, result
    return result.out.strip()


def short(tid: str) -> str:
    return tid.rpartition("_")[2]


def sid(tid: str) -> str:
    """The id human output shows: the shortest unique hex prefix in the project now."""
    from aidp.backlog.tasks import short_ids
    from aidp.tasklist.log import TaskLog

    return short_ids(TaskLog(Path(os.environ["AIDP_DIR"])).read(), [tid])[tid]


def listed(tid: str) -> str:
    """How the human list shows a task's id: "[" + its shortest unique hex prefix (the
    first 4 characters unless another id shares them) + "]"; for `in` and startswith."""
    return "[" + short(tid)[:4]


def tasklist(project: Path) -> bytes:
    path = project / ".aidp" / "tasklist.jsonl"
    return path.read_bytes() if path.exists() else b""


def test_ready_and_blocked_human_and_json(cli) -> None:
    a = add(cli, "Design schema", "-p", "high", "-t", "db")
    b = add(cli, "Write API", "--blocked-by", a)
    c = add(cli, "Write docs", "-p", "low")
    result = cli("tasks", "ready")
    assert result.code == 0 and result.err == ""
    lines = result.out.splitlines()
    assert lines[0] == "READY (2)"
    assert lines[1].startswith(f"  1. ▲ [{sid(a)}] Design schema (today) #db")
    assert lines[2].startswith(f"  2. ▼ [{sid(c)}] Write docs")
    ready = json.loads(cli("tasks", "ready", "--json").out)
    assert [t["id"] for t in ready] == [a, c]
    assert "blocked_by" not in ready[0] and "assignee" not in ready[0]
    assert json.loads(cli("tasks", "ready", "-p", "low", "--json").out)[0]["id"] == c
    assert [t["id"] for t in json.loads(cli("tasks", "ready", "-t", "db", "--json").out)] == [a]
    assert cli("tasks", "ready", "--format", "ids", "--limit", "1").out == a + "\n"

    blocked = cli("tasks", "blocked")
    assert blocked.code == 0
    assert blocked.out.splitlines()[0] == "BLOCKED (1)"
    assert f"waits on: [{sid(a)}] Design schema (pending)" in blocked.out
    [entry] = json.loads(cli("tasks", "blocked", "--json").out)
    assert entry["id"] == b and entry["blocked_by"] == [a] and entry["waiting_on"] == [a]

    assert cli("tasks", "done", a).code == 0
    assert cli("tasks", "blocked").out == "Nothing blocked\n"
    [entry] = [t for t in json.loads(cli("tasks", "ready", "--json").out) if t["id"] == b]
    assert entry["blocked_by"] == [a]  # closed blockers stay listed in the task's keys


def test_nothing_ready_says_why(cli) -> None:
    a = add(cli, "a")
    add(cli, "b", "--blocked-by", a)
    assert cli("tasks", "claim", a).code == 0
    result = cli("tasks", "ready")
    assert (result.code, result.out) == (0, "Nothing ready (1 blocked, 1 in progress)\n")
    assert cli("tasks", "ready", "--json").out == "[]\n"
    claim = cli("tasks", "claim")
    assert claim.code == 1
    assert claim.err == ("Error: Nothing ready to claim (1 blocked, 1 in progress); "
                         "see 'aidp tasks blocked'\n")


def test_claim_release_and_show(cli, project: Path) -> None:
    a = add(cli, "a")
    result = cli("tasks", "claim", "--json")
    assert result.code == 0
    claimed = json.loads(result.out)
    assert (claimed["id"], claimed["status"], claimed["assignee"]) == (a, "in_progress", "tester")
    assert "claimed_at" in claimed
    human = cli("tasks", "claim", short(a), "--as", "bob")
    assert human.code == 1
    assert human.err.startswith(f"Error: Cannot claim task {sid(a)}: it is claimed by tester")
    assert cli("tasks", "claim", short(a)).out.startswith("Already claimed by you, nothing changed")
    show = cli("tasks", "show", short(a))
    assert "Assignee tester (claimed today)" in show.out
    released = cli("tasks", "release", short(a))
    assert released.code == 0 and released.out.startswith(f"✓ Released: [{sid(a)}] a")
    shown = json.loads(cli("tasks", "show", short(a), "--json").out)
    assert shown["status"] == "pending" and "assignee" not in shown
    assert cli("tasks", "release", short(a)).out.startswith("Not claimed, nothing changed")
    me = cli("tasks", "claim", "--as", "bob")
    assert me.code == 0 and me.out == f"✓ Claimed: [{sid(a)}] a (as bob, lease runs 30m more)\n"


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["tasks", "block", "{a}", "--on", "{a}"], 2,
         "Error: Invalid dependency: task {sa} cannot wait on itself; give another task's id\n"),
        (["tasks", "block", "{a}", "--on", "{c}"], 2,
         "Error: Refused: making {sa} wait on {sc} would close a cycle: "
         "{sa} → {sc} → {sb} → {sa}\n"),
        (["tasks", "block", "{a}", "--on", "ffffffff"], 1, "Error: Task not found: ffffffff\n"),
        (["tasks", "block", "{a}"], 2, "Error: Missing --on ID: give the id of a task it waits on "
         "(aidp tasks block ID --on OTHER_ID…)\n"),
        (["tasks", "claim", "{d}"], 1,
         "Error: Cannot claim task {sd}: it is done; reopen it first ('aidp tasks reopen {sd}')\n"),
        (["tasks", "claim", "{b}"], 1,
         "Error: Cannot claim task {sb}: it waits on open task(s) {sa}; see 'aidp tasks blocked'\n"),
        (["tasks", "claim", "zzzz"], 1, "Error: Task not found: zzzz\n"),
        (["tasks", "claim", "--as", " "], 2,
         "Error: Invalid assignee name: it is empty; give 1–200 characters\n"),
        (["tasks", "release", "{a}", "{d}"], 1,
         "Error: Cannot release task {sd}: it is done; use 'aidp tasks reopen {sd}' to put it back\n"),
        # no option: the editor, and without one (no $EDITOR, no terminal) a pointer to --body
        (["tasks", "edit", "{a}"], 2, "Error: No editor to open: $VISUAL and $EDITOR are unset "
         "and there is no terminal; pass the change as options (--body TEXT, --body-file F, "
         "--description, --type, …)\n"),
        (["tasks", "edit", "{a}", "-p", "urgent"], 2,
         "Error: Invalid priority 'urgent': use one of high, medium, low\n"),
        (["tasks", "edit", "{a}", "-d", "x", "--parent", "{a}"], 2,
         "Error: Invalid parent: task {sa} cannot be its own parent; give another task's id\n"),
        (["tasks", "edit", "{a}", "--parent", "{b}", "--no-parent"], 2,
         "Error: Conflicting --parent and --no-parent: give one of them\n"),
        (["tasks", "note", "{a}", " "], 2, "Error: Invalid note: it is empty; give 1–2000 characters\n"),
        (["tasks", "note", "ffffffff", "hi"], 1, "Error: Task not found: ffffffff\n"),
        (["tasks", "add", "x", "--blocked-by", "{a},ffffffff"], 1, "Error: Task not found: ffffffff\n"),
        (["tasks", "add", "x", "--parent", "{a}", "--blocked-by", "{b}"], 2,
         "Error: Refused: a new task under {sa} waiting on {sb} would close a cycle: "),
        (["tasks", "list", "--tree", "--json"], 2,
         "Error: Conflicting --tree and --format json: --tree is a table view\n"),
        (["tasks", "ready", "--limit", "-1"], 2, "Error: Invalid --limit -1: use a whole number ≥ 0\n"),
        (["tasks", "ready", "-p", "urgent"], 2,
         "Error: Invalid priority 'urgent': use one of high, medium, low\n"),
    ],
)
def test_bad_input_is_one_line_and_changes_nothing(cli, project: Path, args, code,
                                                   message) -> None:
    a = add(cli, "a")
    b = add(cli, "b", "--blocked-by", a)
    c = add(cli, "c", "--blocked-by", b)
    d = add(cli, "d")
    assert cli("tasks", "done", d).code == 0
    # s…: the short id, as every view and message names a task
    ids = {"a": a, "b": b, "c": c, "d": d, "sa": sid(a), "sb": sid(b), "sc": sid(c),
           "sd": sid(d)}
    before = tasklist(project)
    result = cli(*[arg.format(**ids) for arg in args])
    assert result.code == code, result
    assert result.out == ""
    assert result.err.startswith(message.format(**ids)), result
    assert result.err.count("\n") == 1
    assert tasklist(project) == before


def test_block_unblock_and_show_links(cli) -> None:
    epic = add(cli, "Epic", "-p", "high")
    a = add(cli, "a", "--parent", epic)
    b = add(cli, "b", "--parent", short(epic))
    result = cli("tasks", "block", short(b), "--on", short(a))
    assert result.code == 0 and result.out == f"✓ Now waits on {sid(a)}: [{sid(b)}] b\n"
    again = cli("tasks", "block", b, "--on", a)
    assert again.out == f"Already waits on {sid(a)}, nothing changed: [{sid(b)}] b\n"
    c = add(cli, "c")
    several = cli("tasks", "block", c, "--on", a, b)
    assert several.code == 0 and f"{sid(a)}, {sid(b)}" in several.out
    shown = json.loads(cli("tasks", "show", a, "--json").out)
    assert shown["parent"] == epic and shown["blocks"] == [b, c]
    epic_shown = json.loads(cli("tasks", "show", epic, "--json").out)
    assert epic_shown["children"] == [a, b] and "parent" not in epic_shown
    human = cli("tasks", "show", b).out
    assert f"Blocked by\n  [{sid(a)}] a (pending)" in human
    assert f"Blocks\n  [{sid(c)}] c (pending)" in human
    assert f"Parent\n  [{sid(epic)}] Epic (pending)" in human
    un = cli("tasks", "unblock", c, "--on", f"{a},{b}")
    assert un.code == 0 and un.out.startswith(f"✓ No longer waits on {sid(a)}, {sid(b)}")
    assert cli("tasks", "unblock", c, "--on", a).out.startswith(f"Did not wait on {sid(a)}")


def test_list_tree_nests_children_under_their_epic(cli) -> None:
    epic = add(cli, "Epic")
    a = add(cli, "Child a", "--parent", epic)
    inner = add(cli, "Child b", "--parent", epic)
    grandchild = add(cli, "Grandchild", "--parent", inner)
    loose = add(cli, "Loose")
    assert cli("tasks", "start", a).code == 0
    out = cli("tasks", "list", "--tree").out.splitlines()
    assert out[0].startswith(f"  ● {listed(loose)}") and "] Loose" in out[0]
    at = out.index(next(line for line in out if listed(epic) in line))
    assert out[at + 1].startswith(f"     └─ ● {listed(inner)}") and "] Child b" in out[at + 1]
    assert out[at + 2].startswith(f"        └─ ● {listed(grandchild)}")
    assert "] Grandchild" in out[at + 2]
    assert out[at + 3].startswith(f"     └─ ● {listed(a)}") and out[at + 3].endswith("in_progress")
    # the epic filtered out: its children stand at the top
    pending = cli("tasks", "list", "pending", "--tree", "--sort", "priority").out
    assert "└─" in pending
    assert cli("tasks", "list", "done", "--tree").out == "No done tasks\n"


def test_edit_and_note_show_up_in_show_and_history(cli) -> None:
    a = add(cli, "Fix parser", "-t", "old")
    result = cli("tasks", "edit", short(a), "-d", "Fix the parser", "-p", "high",
                 "--add-tag", "parser", "--remove-tag", "old")
    assert result.code == 0 and result.out == f"✓ Edited: [{sid(a)}] Fix the parser\n"
    assert cli("tasks", "edit", a, "-p", "high").out == (
        f"Nothing changed: [{sid(a)}] Fix the parser\n")
    note = cli("tasks", "note", a, "Repro", "in", "tests/data", "--as", "alice")
    assert note.code == 0 and note.out == f"✓ Noted on [{sid(a)}]\n"
    assert cli("tasks", "note", a, "second").code == 0
    shown = json.loads(cli("tasks", "show", a, "--json").out)
    assert [(n["text"], n["author"]) for n in shown["notes"]] == [
        ("Repro in tests/data", "alice"), ("second", "tester")]
    assert shown["tags"] == ["parser"] and shown["priority"] == "high"
    human = cli("tasks", "show", a).out
    assert "Notes (2)" in human and "alice: Repro in tests/data" in human
    history = cli("tasks", "history", a).out
    assert "description: Fix parser → Fix the parser" in history
    assert "priority: medium → high" in history and "tags: [old] → [parser]" in history
    assert "note by alice: Repro in tests/data" in history
    records = json.loads(cli("tasks", "history", a, "--json").out)
    assert [r["description"] for r in records] == ["Fix parser", "Fix the parser"]
    # edit --parent/--no-parent
    epic = add(cli, "Epic")
    assert cli("tasks", "edit", a, "--parent", epic).code == 0
    assert json.loads(cli("tasks", "show", a, "--json").out)["parent"] == epic
    other = add(cli, "Other")
    assert cli("tasks", "block", a, "--on", other).code == 0
    history = cli("tasks", "history", a).out  # the queue's lines name tasks by short id
    assert f"parent: {sid(epic)}  (line" in history and f"waits on {sid(other)}  (line" in history
    assert cli("tasks", "edit", a, "--no-parent").code == 0
    assert "parent" not in json.loads(cli("tasks", "show", a, "--json").out)
    assert "parent removed" in cli("tasks", "history", a).out


def test_json_extras_only_when_set(cli) -> None:
    a = add(cli, "a")
    plain = json.loads(cli("tasks", "list", "--json").out)[0]
    assert set(plain) == {"id", "description", "status", "priority", "created_at",
                          "updated_at", "session", "tags"}
    b = json.loads(cli("tasks", "add", "b", "--blocked-by", a, "--json").out)
    assert b["blocked_by"] == [a]
    cli("tasks", "claim", a)
    started = {t["id"]: t for t in json.loads(cli("tasks", "list", "--json").out)}
    assert started[a]["assignee"] == "tester" and "blocked_by" not in started[a]
    done = json.loads(cli("tasks", "done", a, "--json").out)
    assert done["assignee"] == "tester" and done["status"] == "done"
    jsonl = [json.loads(line) for line in cli("tasks", "list", "--all", "-f", "jsonl").out.splitlines()]
    assert {t["id"]: t.get("blocked_by") for t in jsonl}[b["id"]] == [a]


def test_default_actor_comes_from_git_then_the_login(cli, project: Path, monkeypatch) -> None:
    monkeypatch.delenv("AIDP_ACTOR")
    monkeypatch.setenv("LOGNAME", "login-name")
    monkeypatch.setenv("USER", "login-name")
    a = add(cli, "a")
    assert json.loads(cli("tasks", "claim", a, "--json").out)["assignee"] == "login-name"
    git(project, "init", "-q")
    git(project, "config", "user.email", "dev@example.invalid")
    b = add(cli, "b")
    assert json.loads(cli("tasks", "claim", b, "--json").out)["assignee"] == "dev@example.invalid"


# --- concurrency and merges ---------------------------------------------------------------


def test_sixteen_concurrent_claimers_share_ten_tasks(cli, project: Path) -> None:
    ids = [add(cli, f"task {n}") for n in range(10)]
    env = {**os.environ, "AIDP_DIR": str(project)}
    procs = [
        subprocess.Popen([sys.executable, "-m", "aidp", "tasks", "claim", "--as", f"w{n}",
                          "--json"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
        for n in range(16)
    ]
    outcomes = [(p.wait(timeout=120), p.stdout.read(), p.stderr.read()) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    won = [json.loads(out) for code, out, _err in outcomes if code == 0]
    lost = [(code, out, err) for code, out, err in outcomes if code != 0]
    assert len(won) == 10 and len(lost) == 6, outcomes
    assert sorted(t["id"] for t in won) == sorted(ids)  # every task once, none twice
    assert len({t["assignee"] for t in won}) == 10
    for code, out, err in lost:
        assert (code, out) == (1, "")
        assert err == ("Error: Nothing ready to claim (10 in progress); "
                       "see 'aidp tasks blocked'\n")
    listed = json.loads(cli("tasks", "list", "--json").out)
    assert {t["id"]: t["assignee"] for t in listed} == {t["id"]: t["assignee"] for t in won}


def test_claims_from_two_clones_merge_to_one_holder(cli, project: Path, tmp_path: Path,
                                                    monkeypatch) -> None:
    git(project, "init", "-q", "-b", "main")
    assert cli("init").code == 0
    task = add(cli, "Shared work")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "base")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(project), str(clone)], check=True)

    assert cli("tasks", "claim", task, "--as", "alice").code == 0  # first
    git(project, "commit", "-qam", "alice claims")
    monkeypatch.setenv("AIDP_DIR", str(clone))
    assert cli("tasks", "claim", task, "--as", "bob").code == 0  # later, on the clone
    assert cli("tasks", "note", task, "bob was here").code == 0
    git(clone, "commit", "-qam", "bob claims")

    git(clone, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    git(project, "pull", "-q", "--no-rebase", "--no-edit", str(clone), "main")
    seen = []
    for where in (project, clone):
        monkeypatch.setenv("AIDP_DIR", str(where))
        assert "<<<<<<<" not in tasklist(where).decode()
        shown = json.loads(cli("tasks", "show", task, "--json").out)
        seen.append((shown["assignee"], shown["status"], [n["text"] for n in shown["notes"]]))
        human = cli("tasks", "show", task).out
        assert "Assignee alice" in human
        assert "also claimed later by bob (on another clone); the first claim holds it" in human
        refused = cli("tasks", "claim", task, "--as", "bob")
        assert refused.code == 1 and "claimed by alice" in refused.err
    assert seen[0] == seen[1] == ("alice", "in_progress", ["bob was here"])


def test_list_table_shows_who_holds_a_task_and_what_it_waits_on(cli) -> None:
    a = add(cli, "Blocker")
    b = add(cli, "Waiting", "--blocked-by", a)
    plain = cli("tasks", "list").out
    assert cli("tasks", "claim", a).code == 0
    out = cli("tasks", "list").out.splitlines()
    assert next(line for line in out if listed(a) in line).endswith("(today) @tester")
    assert next(line for line in out if listed(b) in line).endswith("(today) waits on 1")
    assert cli("tasks", "done", a).code == 0
    assert cli("tasks", "list").out.splitlines()[1].endswith("(today)")  # nothing open to wait on
    assert "@" not in plain and "waits on" not in cli("tasks", "list", "--json").out


def test_release_stale_claims(cli) -> None:
    from aidp.core.model import format_ts, now_micros, transition
    from aidp.tasklist.log import TaskLog

    old = add(cli, "Claimed long ago")
    fresh = add(cli, "Claimed just now")
    assert cli("tasks", "claim", fresh).code == 0
    log = TaskLog(Path(os.environ["AIDP_DIR"]))
    task = json.loads(cli("tasks", "show", old, "--json").out)
    then = now_micros() - 3 * 3600 * 1_000_000
    stamp = format_ts(then)
    started = transition(task, "in_progress", now=then)
    log.append([started, {"type": "claim", "id": f"claim:{old}:ghost", "task": old,
                          "assignee": "ghost", "claimed_at": stamp, "updated_at": stamp}])
    assert "@ghost" in cli("tasks", "list").out
    result = cli("tasks", "release", "--stale", "2h")
    assert (result.code, result.out) == (0, f"✓ Released: [{sid(old)}] Claimed long ago\n")
    found = {t["id"]: t for t in json.loads(cli("tasks", "list", "--json").out)}
    assert found[old]["status"] == "pending" and "assignee" not in found[old]
    assert found[fresh]["assignee"] == "tester"
    again = cli("tasks", "release", "--stale", "2h", "--json")
    assert (again.code, again.out) == (0, "[]\n")
    assert cli("tasks", "release", "--stale", "2h").out == "No claim older than 2h, nothing changed\n"
    bad = cli("tasks", "release", "--stale", "soon")
    assert bad.code == 2 and bad.err.startswith("Error: Invalid --stale 'soon': use ")
    none = cli("tasks", "release")
    assert none.code == 2 and none.err == ("Error: Missing ID: give the tasks to release, or "
                                           "--stale AGE for every claim older than AGE\n")
