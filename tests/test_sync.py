"""`aidp sync`, `aidp tasks changes` and the diff driver, with real git: a local bare
remote and two clones."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

TASKLIST = ".aidp/tasklist.jsonl"


def git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if check:
        assert done.returncode == 0, done.stderr
    return done


@pytest.fixture
def team(tmp_path: Path, cli, monkeypatch):
    """origin (bare) and two clones, alice and bob, set up with `aidp init`."""
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    clones = {}
    for who in ("alice", "bob"):
        clone = tmp_path / who
        git(tmp_path, "clone", "-q", str(origin), str(clone))
        git(clone, "config", "user.email", f"{who}@example.invalid")
        git(clone, "config", "user.name", who)
        git(clone, "config", "commit.gpgsign", "false")
        git(clone, "checkout", "-q", "-b", "main")
        clones[who] = clone
    monkeypatch.delenv("GIT_AUTHOR_EMAIL")

    def aidp(who: str, *args: str):
        monkeypatch.setenv("AIDP_DIR", str(clones[who]))
        monkeypatch.chdir(clones[who])
        return cli(*args)

    assert aidp("alice", "init").code == 0
    (clones["alice"] / "README").write_text("hello\n")
    git(clones["alice"], "add", "-A")
    git(clones["alice"], "commit", "-qm", "init")
    git(clones["alice"], "push", "-q", "-u", "origin", "main")
    git(clones["bob"], "pull", "-q", "origin", "main")
    git(clones["bob"], "branch", "-q", "--set-upstream-to=origin/main")
    assert aidp("bob", "init").code == 0  # bob's clone gets its own diff driver
    return clones, aidp


def ok(result) -> str:
    assert result.code == 0, result
    return result.out


def log_messages(repo: Path) -> list[str]:
    return git(repo, "log", "--format=%s").stdout.splitlines()


def task_ids(aidp, who: str) -> set[str]:
    return {t["id"] for t in json.loads(ok(aidp(who, "tasks", "list", "--all", "--json")))}


def test_sync_commits_the_tasklist_alone_and_both_clones_meet(team) -> None:
    clones, aidp = team
    alice, bob = clones["alice"], clones["bob"]
    first = ok(aidp("alice", "tasks", "add", "Alice's task", "-q")).strip()
    ok(aidp("alice", "tasks", "add", "Another", "-q"))
    ok(aidp("alice", "tasks", "done", first))
    # Other work in progress: staged and unstaged changes, an untracked file.
    (alice / "README").write_text("hello\nunstaged\n")
    (alice / "staged.txt").write_text("staged\n")
    git(alice, "add", "staged.txt")
    (alice / "untracked.txt").write_text("mine\n")
    status_before = git(alice, "status", "--porcelain").stdout
    out = ok(aidp("alice", "sync"))
    assert out.splitlines() == [
        "✓ Committed the tasklist: aidp: 2 filed, 1 done",
        "✓ Pulled origin/main",
        "✓ Pushed to origin/main",
    ]
    assert log_messages(alice)[0] == "aidp: 2 filed, 1 done"
    assert git(alice, "show", "--name-only", "--format=", "HEAD").stdout.split() == [TASKLIST]
    after = git(alice, "status", "--porcelain").stdout
    assert after == status_before.replace(f" M {TASKLIST}\n", "")
    assert (alice / "README").read_text() == "hello\nunstaged\n"

    bobs = ok(aidp("bob", "tasks", "add", "Bob's task", "-q")).strip()
    (bob / "README").write_text("bob was here\n")  # uncommitted work of his own
    out = ok(aidp("bob", "sync"))
    assert "Committed the tasklist: aidp: 1 filed" in out and "Pushed" in out
    assert (bob / "README").read_text() == "bob was here\n"
    assert ok(aidp("alice", "sync")).splitlines()[0] == (
        "Nothing to commit: the tasklist is as HEAD has it")
    assert task_ids(aidp, "alice") == task_ids(aidp, "bob")
    assert bobs in task_ids(aidp, "alice") and len(task_ids(aidp, "alice")) == 3


def test_sync_with_concurrent_todo_edits_and_a_rebasing_pull(team) -> None:
    clones, aidp = team
    for who in ("alice", "bob"):
        git(clones[who], "config", "pull.rebase", "true")
    monkey_session = ("--session", "shared")
    for step in ("one", "two", "three"):
        ok(aidp("alice", *monkey_session, "todo", "add", step))
    ok(aidp("alice", "sync"))
    ok(aidp("bob", "sync"))
    ok(aidp("alice", *monkey_session, "todo", "tick", "1"))
    ok(aidp("bob", *monkey_session, "todo", "start", "3"))
    ok(aidp("alice", "sync"))
    ok(aidp("bob", "sync", "--message", "bob's plan"))
    assert log_messages(clones["bob"])[0] == "bob's plan"
    ok(aidp("alice", "sync"))
    for who in ("alice", "bob"):
        shown = json.loads(ok(aidp(who, *monkey_session, "todo", "show", "--json")))
        assert [(i["content"], i["status"]) for i in shown["items"]] == [
            ("one", "completed"), ("two", "pending"), ("three", "in_progress")]
    # rebased, not merged: a straight line
    assert git(clones["alice"], "rev-list", "--merges", "HEAD").stdout == ""


def test_no_push_and_no_upstream(team, tmp_path: Path) -> None:
    clones, aidp = team
    ok(aidp("alice", "tasks", "add", "x"))
    out = ok(aidp("alice", "sync", "--no-push"))
    assert out.splitlines()[-1] == "Not pushed (--no-push)"
    assert git(clones["alice"], "status", "-sb").stdout.startswith("## main...origin/main [ahead 1]")
    git(clones["alice"], "checkout", "-q", "-b", "local-only")
    ok(aidp("alice", "tasks", "add", "y"))
    out = ok(aidp("alice", "sync"))
    assert out.splitlines() == [
        "✓ Committed the tasklist: aidp: 1 filed",
        "Branch local-only has no upstream: nothing pulled or pushed "
        "(set one with 'git push -u REMOTE BRANCH')",
    ]


def test_sync_refuses_detached_head_merges_rebases_and_conflicts(team) -> None:
    clones, aidp = team
    alice = clones["alice"]
    ok(aidp("alice", "tasks", "add", "pending work"))
    data = (alice / TASKLIST).read_bytes()
    head = git(alice, "rev-parse", "HEAD").stdout

    def refused(message: str) -> None:
        result = aidp("alice", "sync")
        assert result.code == 1 and result.out == "", result
        assert result.err.startswith(f"Error: {message}") and "nothing was changed" in result.err
        assert (alice / TASKLIST).read_bytes() == data
        assert git(alice, "rev-parse", "HEAD").stdout == head

    git(alice, "checkout", "-q", "--detach")
    refused("HEAD is detached (not on a branch)")
    git(alice, "checkout", "-q", "main")
    (alice / ".git" / "MERGE_HEAD").write_text(head)
    refused("A merge is in progress")
    (alice / ".git" / "MERGE_HEAD").unlink()
    (alice / ".git" / "rebase-merge").mkdir()
    refused("A rebase is in progress")
    (alice / ".git" / "rebase-merge").rmdir()
    # the tasklist itself in conflict (as git leaves it without the union rule)
    blob = git(alice, "hash-object", "-w", TASKLIST).stdout.strip()
    index = "".join(f"100644 {blob} {stage}\t{TASKLIST}\n" for stage in (1, 2, 3))
    subprocess.run(["git", "-C", str(alice), "update-index", "--index-info"], input=index,
                   text=True, check=True)
    refused(f"{TASKLIST} is in conflict")


def test_sync_outside_git_and_a_failing_pull(team, cli, project: Path) -> None:
    result = cli("--dir", str(project), "sync")
    assert result.code == 1 and result.err.startswith("Error: Not in a git repository"), result
    clones, aidp = team
    # bob changes the README on the remote; alice changed it too, without committing
    (clones["bob"] / "README").write_text("bob's version\n")
    git(clones["bob"], "commit", "-qam", "bob's readme")
    git(clones["bob"], "push", "-q")
    (clones["alice"] / "README").write_text("alice's version\n")
    git(clones["alice"], "commit", "-qam", "alice's readme")
    ok(aidp("alice", "tasks", "add", "kept whatever happens", "-q"))
    result = aidp("alice", "sync")
    assert result.code == 1 and "git pull stopped" in result.err, result
    assert "your tasklist commit is made" in result.err
    assert log_messages(clones["alice"])[0] == "aidp: 1 filed"  # the merge stopped after it
    assert (clones["alice"] / ".git" / "MERGE_HEAD").exists()
    again = aidp("alice", "sync")  # and sync will not act in the middle of it
    assert again.code == 1 and again.err.startswith("Error: A merge is in progress"), again
    # nothing lost: the task is in the tasklist, whatever state the merge is in
    shown = subprocess.run(["git", "-C", str(clones["alice"]), "show", f"main:{TASKLIST}"],
                           capture_output=True, text=True).stdout
    assert "kept whatever happens" in shown


def test_tasks_changes_between_revisions(team) -> None:
    clones, aidp = team
    alice = clones["alice"]
    a = ok(aidp("alice", "tasks", "add", "Write the parser", "-p", "low", "-q")).strip()
    b = ok(aidp("alice", "tasks", "add", "Drop the old CLI", "-q")).strip()
    ok(aidp("alice", "sync", "--no-push"))
    first = git(alice, "rev-parse", "HEAD").stdout.strip()
    ok(aidp("alice", "tasks", "start", a))
    ok(aidp("alice", "tasks", "abandon", b, "not needed"))
    ok(aidp("alice", "tasks", "add", "Third", "-q"))
    text = ok(aidp("alice", "tasks", "changes"))
    lines = text.splitlines()
    assert lines[0] == "Changes since HEAD (not committed yet): 1 filed, 1 started, 1 abandoned"
    # Tasks are named by their short ids, as `tasks list` shows them.
    short = {t: re.search(rf"\[([0-9a-f]+)\] {d}", ok(aidp("alice", "tasks", "list", "--all")))[1]
             for t, d in ((a, "Write the parser"), (b, "Drop the old CLI"))}
    assert all(4 <= len(s) < 8 and t.endswith(t[-8:]) and t[-8:].startswith(s)
               for t, s in short.items())
    assert f"~ started   {short[a]}  Write the parser (pending → in_progress)" in lines
    assert any(line.startswith(f"~ abandoned {short[b]}  Drop the old CLI") for line in lines)
    data = json.loads(ok(aidp("alice", "tasks", "changes", "--json")))
    assert (data["from"], data["to"]) == ("HEAD", None)
    assert [t["description"] for t in data["filed"]] == ["Third"]
    assert {(c["id"], c["from"], c["to"]) for c in data["status"]} == {
        (a, "pending", "in_progress"), (b, "pending", "abandoned")}
    ok(aidp("alice", "sync", "--no-push"))
    between = json.loads(ok(aidp("alice", "tasks", "changes", f"{first}..", "--json")))
    assert between["summary"] == "1 filed, 1 started, 1 abandoned"
    assert json.loads(ok(aidp("alice", "tasks", "changes", "--json")))["summary"] == ""
    assert ok(aidp("alice", "tasks", "changes")) == (
        "No changes to tasks or TODO lists since HEAD (not committed yet)\n")
    # from the start of history: everything filed
    since_root = json.loads(ok(aidp("alice", "tasks", "changes", "HEAD~2..HEAD", "--json")))
    assert len(since_root["filed"]) == 3
    bad = aidp("alice", "tasks", "changes", "nosuchrev")
    assert bad.code == 2 and bad.err == (
        "Error: Unknown revision 'nosuchrev': give a commit, branch or tag (REV or REV..REV)\n")


def test_an_edit_and_a_reset_show_in_changes(team) -> None:
    clones, aidp = team
    alice = clones["alice"]
    tid = ok(aidp("alice", "tasks", "add", "Rename me", "-q")).strip()
    ok(aidp("alice", "sync", "--no-push"))
    # A task's description changed by a hand edit (any writer): an edit, not a status change.
    data = (alice / TASKLIST).read_bytes()
    line = [x for x in data.splitlines() if tid.encode() in x][-1]
    edited = json.loads(line)
    edited.update(description="Renamed", priority="high",
                  updated_at="2999-01-01T00:00:00.000000Z")
    with open(alice / TASKLIST, "ab") as handle:
        handle.write(json.dumps(edited).encode() + b"\n")
    result = json.loads(ok(aidp("alice", "tasks", "changes", "--json")))
    assert result["edited"] == [{"id": tid, "description": "Renamed", "fields": {
        "description": {"from": "Rename me", "to": "Renamed"},
        "priority": {"from": "medium", "to": "high"}}}]
    assert result["summary"] == "1 edited"
    # git reset --hard throws uncommitted task changes away: changes shows it first
    git(alice, "reset", "-q", "--hard")
    assert ok(aidp("alice", "tasks", "changes")).startswith("No changes")


def test_the_diff_driver_shows_task_lines(team) -> None:
    clones, aidp = team
    alice = clones["alice"]
    tid = ok(aidp("alice", "tasks", "add", "Readable in git", "-p", "high", "-t", "docs",
                  "-q")).strip()
    ok(aidp("alice", "tasks", "done", tid))
    ok(aidp("alice", "todo", "add", "A step"))
    diff = git(alice, "diff").stdout
    added = [line[1:] for line in diff.splitlines() if line.startswith("+") and
             not line.startswith("+++")]
    # each line: the summary, then every other field as JSON (docs/file-format.md)
    assert [line.partition("  {")[0] for line in added] == [
        f"task {tid[-8:]} [pending] (high) Readable in git #docs",
        f"task {tid[-8:]} sets status",  # its task_fields record (field-level merge)
        f"task {tid[-8:]} [done] (high) Readable in git #docs",
        "todo main@alice@example.invalid: list active",
        "todo main@alice@example.invalid: [pending] A step",
    ]
    assert json.loads("{" + added[1].partition("  {")[2])["from"] == "pending"
    fields = json.loads("{" + added[2].partition("  {")[2])
    assert fields["id"] == tid and {"created_at", "updated_at", "session"} <= fields.keys()
    ok(aidp("alice", "sync", "--no-push"))
    shown = git(alice, "log", "-p", "-1").stdout
    assert f"+task {tid[-8:]} [done] (high) Readable in git #docs  {{" in shown
    assert '"description"' not in shown


def test_init_on_an_existing_clone_adds_only_what_is_missing(team) -> None:
    clones, aidp = team
    bob = clones["bob"]
    git(bob, "config", "--unset", "diff.aidp.textconv")
    attributes = (bob / ".gitattributes").read_text()
    result = aidp("bob", "init")
    assert result.code == 0 and "diff.aidp.textconv" in result.err
    assert (bob / ".gitattributes").read_text() == attributes
    assert "tasks textconv" in git(bob, "config", "--get", "diff.aidp.textconv").stdout
    again = aidp("bob", "init")
    assert again.code == 0 and again.err == ""
    # A clone set up before the diff rule existed gets just that line.
    (bob / ".gitattributes").write_text("*.png binary\n.aidp/tasklist.jsonl merge=union\n")
    assert aidp("bob", "init").code == 0
    assert (bob / ".gitattributes").read_text() == (
        "*.png binary\n.aidp/tasklist.jsonl merge=union\n.aidp/tasklist.jsonl diff=aidp\n")


def test_textconv_reads_damage_and_unknown_records(tmp_path: Path, cli) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"id":"task_1_abcdef12","description":"x","status":"pending"}\n'
                     b"<<<<<<< HEAD\n"
                     b'{"type":"dependency","id":"dep:1","blocked_by":["a"]}\n')
    result = cli("tasks", "textconv", str(path))
    assert result.code == 0
    assert result.out.splitlines() == [
        'task abcdef12 [pending] (no priority) x  {"id":"task_1_abcdef12"}',
        "damaged line: <<<<<<< HEAD",
        'dependency dep:1  {"blocked_by":["a"]}',
    ]
    missing = cli("tasks", "textconv", str(tmp_path / "nope"))
    assert missing.code == 1 and missing.err.startswith("Error: Cannot read")


def test_a_missing_aidp_never_breaks_git_diff(team) -> None:
    from aidp.git import textconv_command

    clones, aidp = team
    alice = clones["alice"]
    git(alice, "config", "diff.aidp.textconv", textconv_command(["/nonexistent/aidp"]))
    ok(aidp("alice", "tasks", "add", "Still visible"))
    diff = git(alice, "diff").stdout
    assert '"description":"Still visible"' in diff  # the raw line, not a failed diff


def test_bad_input_changes_nothing(team) -> None:
    clones, aidp = team
    alice = clones["alice"]
    ok(aidp("alice", "tasks", "add", "x"))
    head = git(alice, "rev-parse", "HEAD").stdout
    empty = aidp("alice", "sync", "--message", "  ")
    assert (empty.code, empty.err) == (
        2, "Error: Invalid --message: it is empty; give the commit message\n")
    unknown = aidp("alice", "sync", "--force")
    assert unknown.code == 2 and "No such option: --force" in unknown.err
    (alice / TASKLIST).unlink()
    git(alice, "checkout", "--", TASKLIST)
    assert git(alice, "rev-parse", "HEAD").stdout == head


# --- field-level merge through real clones (issue 28) ------------------------------------


def shared_task(team) -> str:
    """A task both clones have, through origin."""
    _clones, aidp = team
    tid = ok(aidp("alice", "tasks", "add", "Auth endpoints", "-q")).strip()
    ok(aidp("alice", "sync"))
    ok(aidp("bob", "sync"))
    return tid


def test_priority_in_one_clone_and_description_in_the_other_both_survive(team) -> None:
    _clones, aidp = team
    tid = shared_task(team)
    ok(aidp("alice", "tasks", "edit", tid, "-p", "high"))
    ok(aidp("bob", "tasks", "edit", tid, "-d", "Rate limiting for auth endpoints"))
    ok(aidp("alice", "sync"))
    out = ok(aidp("bob", "sync"))
    assert "replaced" not in out  # different fields: nothing was overwritten
    ok(aidp("alice", "sync"))
    for who in ("alice", "bob"):
        task = json.loads(ok(aidp(who, "tasks", "show", tid, "--json")))
        assert (task["priority"], task["description"]) == (
            "high", "Rate limiting for auth endpoints"), who
        history = ok(aidp(who, "tasks", "history", tid))
        assert "high → medium" not in history


def test_the_same_field_in_both_clones_sync_names_what_was_replaced(team) -> None:
    _clones, aidp = team
    tid = shared_task(team)
    ok(aidp("bob", "tasks", "edit", tid, "-p", "high"))
    ok(aidp("alice", "tasks", "edit", tid, "-p", "low"))  # later: it wins
    ok(aidp("alice", "sync"))
    out = ok(aidp("bob", "sync"))
    # (the tests' git author name is fixed: conftest sets GIT_AUTHOR_NAME)
    assert f"! {tid[-8:][:4]} Auth endpoints: priority high (yours) replaced by low (from " \
        "aidp tests <alice@example.invalid>)" in out.splitlines(), out
    task = json.loads(ok(aidp("bob", "tasks", "show", tid, "--json")))
    assert task["priority"] == "low"
    # and `tasks changes` over the merge names it too, with both people
    changes = json.loads(ok(aidp("bob", "tasks", "changes", "HEAD~3..HEAD", "--json")))
    (entry,) = changes["overwritten"]
    assert (entry["field"], entry["lost"], entry["kept"]) == ("priority", "high", "low")
    assert (entry["lost_by"], entry["kept_by"]) == (
        "aidp tests <bob@example.invalid>", "aidp tests <alice@example.invalid>")
    text = ok(aidp("bob", "tasks", "changes", "HEAD~3..HEAD"))
    assert ("priority high (from aidp tests <bob@example.invalid>) replaced by low "
            "(from aidp tests <alice@example.invalid>)") in text


def test_a_claim_that_had_not_seen_the_done_is_told_and_the_task_stays_done(team) -> None:
    _clones, aidp = team
    tid = shared_task(team)
    ok(aidp("alice", "tasks", "done", tid))
    ok(aidp("alice", "sync"))
    ok(aidp("bob", "tasks", "claim", tid, "--as", "bob"))  # later, not having pulled
    out = ok(aidp("bob", "sync"))
    assert "your change to in_progress did not apply: it was done (from aidp tests " \
        "<alice@example.invalid>) before you saw it; it stays done" in out, out
    for who in ("bob", "alice"):
        ok(aidp(who, "sync"))
        task = json.loads(ok(aidp(who, "tasks", "show", tid, "--json")))
        assert task["status"] == "done", who


def test_tags_added_in_both_clones_are_all_kept(team) -> None:
    _clones, aidp = team
    tid = shared_task(team)
    ok(aidp("alice", "tasks", "edit", tid, "--add-tag", "api"))
    ok(aidp("bob", "tasks", "edit", tid, "--add-tag", "security"))
    ok(aidp("bob", "tasks", "note", tid, "needs a design"))
    ok(aidp("alice", "sync"))
    ok(aidp("bob", "sync"))
    ok(aidp("alice", "sync"))
    for who in ("alice", "bob"):
        task = json.loads(ok(aidp(who, "tasks", "show", tid, "--json")))
        assert sorted(task["tags"]) == ["api", "security"], who
        assert [n["text"] for n in task["notes"]] == ["needs a design"]


PROBE = """#!/bin/sh
# The remote's upload-pack, as sync's fetch runs it: first, whether a write of aidp
# could take the tasklist's lock right now.
"{python}" -c '
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
try:
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    print("free")
except BlockingIOError:
    print("held")
' "{lock}" >> "{record}"
exec git-upload-pack "$@"
"""


def test_sync_fetches_with_the_lock_free_and_merges_under_it(team, tmp_path: Path) -> None:
    """Every agent's write waits while sync holds the tasklist's lock, so sync fetches
    (the network, most of git's processes) before taking it, and holds it only to commit
    and merge what the fetch brought — the merge `git pull` makes. A repository whose
    config names how to pull (pull.rebase, pull.ff, branch.<name>.rebase) is pulled as
    it says, under the lock."""
    import sys

    clones, aidp = team
    bob = clones["bob"]
    ok(aidp("alice", "tasks", "add", "From Alice", "-q"))
    ok(aidp("alice", "sync"))
    record = tmp_path / "probe.log"
    probe = tmp_path / "upload-pack"
    probe.write_text(PROBE.format(python=sys.executable, record=record,
                                  lock=bob / ".git" / "aidp-tasklist.lock"))
    probe.chmod(0o755)
    git(bob, "config", "remote.origin.uploadpack", str(probe))
    ok(aidp("bob", "tasks", "add", "From Bob", "-q"))
    ok(aidp("bob", "sync"))
    assert record.read_text().split() == ["free"]  # fetched before the lock
    assert {"From Alice", "From Bob"} <= {t["description"] for t in json.loads(
        ok(aidp("bob", "tasks", "list", "--json")))}
    merge = log_messages(bob)[0]
    assert merge.startswith("Merge branch 'main' of "), merge  # as `git pull` names it
    git(bob, "config", "pull.rebase", "false")  # the repository says how: `git pull`
    ok(aidp("alice", "tasks", "add", "Again from Alice", "-q"))
    ok(aidp("alice", "sync"))
    ok(aidp("bob", "tasks", "add", "Again from Bob", "-q"))
    ok(aidp("bob", "sync"))
    assert record.read_text().split() == ["free", "held"]
    assert "Again from Alice" in ok(aidp("bob", "tasks", "list"))
