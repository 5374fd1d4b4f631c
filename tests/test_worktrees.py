"""One live queue for every worktree of a repository (docs/guide.md, "Worktrees by hand"), with real git and
real worktrees: what one worktree writes shows at once in the others, claims are
atomic across them, and merged branches fold to what the worktrees showed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from aidp.tasklist import worktrees
from aidp.tasklist.log import TaskLog
from aidp.tasklist.paths import find_root

TASKLIST = ".aidp/tasklist.jsonl"
NAMES = ("w0", "w1", "w2", "w3")


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def aidp(where: Path, *args: str) -> subprocess.Popen[str]:
    """`aidp ARGS` in worktree `where`, as an agent there runs it (started, not waited)."""
    env = {**os.environ, "AIDP_DIR": str(where)}
    return subprocess.Popen([sys.executable, "-m", "aidp", *args], cwd=where, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def run(where: Path, *args: str, code: int = 0) -> str:
    proc = aidp(where, *args)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == code, (out, err)
    return out


def listed(where: Path) -> dict[str, str]:
    """id → status of every task `tasks list --all --json` shows in `where`."""
    tasks = json.loads(run(where, "tasks", "list", "--all", "--json"))
    shown = {t["id"]: t["status"] for t in tasks}
    assert len(shown) == len(tasks), "a task shown twice"
    return shown


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, dict[str, Path]]:
    """A repository with a committed backlog of 10 tasks and four worktrees."""
    main = tmp_path / "repo"
    main.mkdir()
    git(main, "init", "-q", "-b", "main")
    git(main, "config", "commit.gpgsign", "false")
    run(main, "init")
    for n in range(10):
        run(main, "tasks", "add", f"task {n}")
    git(main, "add", "-A")
    git(main, "commit", "-qm", "backlog")
    trees = {}
    for name in NAMES:
        trees[name] = tmp_path / name
        git(main, "worktree", "add", "-q", "-b", name, str(trees[name]))
    return main, trees


def test_claims_from_four_worktrees_at_once_hand_out_each_task_once(repo) -> None:
    _main, trees = repo
    procs = [aidp(tree, "tasks", "claim", "--json") for tree in trees.values() for _ in range(4)]
    results = [(p.communicate(timeout=120), p.returncode) for p in procs]
    claimed = [json.loads(out)["id"] for (out, _err), code in results if code == 0]
    refused = [err for (_out, err), code in results if code == 1]
    assert len(claimed) == 10
    assert sorted(claimed) == sorted(set(claimed))  # each task handed out exactly once
    assert len(refused) == 6 and all("Nothing ready to claim" in e for e in refused)
    for tree in trees.values():  # every worktree shows the same ten claims
        assert listed(tree) == dict.fromkeys(claimed, "in_progress")
    # each claim is in the tasklist of the worktree that made it, and only there
    written = [tree for tree in trees.values()
               for line in (tree / TASKLIST).read_text().splitlines()
               if '"in_progress"' in line and '"task_fields"' not in line]
    assert len(written) == 10


def test_a_task_filed_in_one_worktree_shows_at_once_in_another(repo) -> None:
    main, trees = repo
    added = json.loads(run(trees["w0"], "tasks", "add", "from w0", "-p", "high", "--json"))
    task = added["task"]["id"] if "task" in added else added["id"]
    for tree in (trees["w1"], main):
        assert listed(tree)[task] == "pending"
        assert "from w0" in run(tree, "tasks", "show", task[-8:])
        assert task in run(tree, "tasks", "ready", "--json")
        assert "from w0" in run(tree, "prime")
    page = trees["w1"] / "report.html"
    run(trees["w1"], "report", "--html", str(page))
    assert "from w0" in page.read_text()
    run(trees["w1"], "tasks", "done", task[-8:])  # closed from another worktree
    assert listed(trees["w0"])[task] == "done"
    assert listed(trees["w2"])[task] == "done"
    # written where it was done: the add in w0's file, the close in w1's
    assert "from w0" in (trees["w0"] / TASKLIST).read_text()
    assert "from w0" not in (trees["w2"] / TASKLIST).read_text()
    assert '"done"' in (trees["w1"] / TASKLIST).read_text()
    assert '"done"' not in (trees["w0"] / TASKLIST).read_text()


def test_a_removed_worktree_no_longer_contributes(repo) -> None:
    main, trees = repo
    run(trees["w0"], "tasks", "add", "kept in w0 only")
    run(trees["w3"], "tasks", "add", "kept in w3 only")
    shown = run(trees["w1"], "tasks", "list")
    assert "kept in w0 only" in shown and "kept in w3 only" in shown
    git(main, "worktree", "remove", "--force", str(trees["w0"]))
    shutil.rmtree(trees["w3"])  # a folder deleted without git (not pruned yet)
    shown = run(trees["w1"], "tasks", "list")
    assert "kept in w0 only" not in shown and "kept in w3 only" not in shown
    assert "task 9" in shown


def test_merged_branches_fold_to_what_the_worktrees_showed(repo) -> None:
    main, trees = repo
    for name, tree in trees.items():
        run(tree, "tasks", "add", f"new in {name}")
        run(tree, "tasks", "claim")
    first = json.loads(run(trees["w2"], "tasks", "list", "in_progress", "--json"))[0]["id"]
    run(trees["w2"], "tasks", "done", first[-8:])
    run(trees["w3"], "tasks", "edit", first[-8:], "-d", "renamed in w3")
    seen = listed(main)
    assert all(listed(tree) == seen for tree in trees.values())
    described = {t["id"]: t["description"] for t in json.loads(
        run(main, "tasks", "list", "--all", "--json"))}
    for name, tree in trees.items():
        git(tree, "commit", "-qam", f"work in {name}")
    for name, tree in trees.items():
        git(main, "worktree", "remove", str(tree))
        git(main, "merge", "-q", "--no-edit", name)
        git(main, "branch", "-q", "-d", name)
    assert not (main / ".git" / "worktrees").exists() or not any(
        (main / ".git" / "worktrees").iterdir())
    assert listed(main) == seen  # every task once, in the state the worktrees showed
    after = {t["id"]: t["description"] for t in json.loads(
        run(main, "tasks", "list", "--all", "--json"))}
    assert after == described


def test_separate_clones_stay_separate_queues(repo, tmp_path: Path) -> None:
    main, trees = repo
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(main), str(clone))
    run(clone, "tasks", "add", "only in the clone")
    run(trees["w0"], "tasks", "add", "only in the worktrees")
    assert "only in the clone" not in run(main, "tasks", "list")
    assert "only in the worktrees" not in run(clone, "tasks", "list")
    assert "only in the worktrees" in run(main, "tasks", "list")


def test_ties_between_worktrees_break_the_same_way_everywhere(repo) -> None:
    main, trees = repo
    stamp = "2030-01-01T00:00:00.000000Z"
    for name in ("w2", "w0", "w1"):  # one id, one updated_at, three descriptions
        record = {"id": "task_1_tie", "description": f"from {name}", "status": "pending",
                  "created_at": stamp, "updated_at": stamp}
        with (trees[name] / TASKLIST).open("a") as handle:
            handle.write(json.dumps(record) + "\n")
    shown = {json.loads(run(tree, "tasks", "show", "task_1_tie", "--json"))["description"]
             for tree in (main, *trees.values())}
    assert len(shown) == 1
    histories = {run(tree, "tasks", "history", "task_1_tie", "--json")
                 for tree in (main, *trees.values())}
    assert len(histories) == 1 and json.loads(histories.pop())[-1]["description"] in shown


def test_another_worktrees_damage_is_not_this_ones(repo) -> None:
    _main, trees = repo
    with (trees["w0"] / TASKLIST).open("a") as handle:
        handle.write("not json\n")
    proc = aidp(trees["w1"], "tasks", "list")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "task 0" in out
    assert "damaged" not in err
    assert "damaged" in run(trees["w0"], "tasks", "list") + aidp(
        trees["w0"], "tasks", "list").communicate(timeout=60)[1]


def test_worktrees_are_found_from_gits_files(repo) -> None:
    main, trees = repo
    shared = worktrees.find(trees["w1"])
    assert shared is not None
    assert shared.common == Path(os.path.realpath(main / ".git"))
    expected = sorted([Path(os.path.realpath(p)) for p in (main, *trees.values())], key=str)
    assert [p.parents[1] for p, _own in shared.tasklists()] == expected
    assert [own for p, own in shared.tasklists()] == [
        p == Path(os.path.realpath(trees["w1"])) for p in expected]
    # a write takes the repository's lock: it is in the common directory
    TaskLog(trees["w1"]).append([{"id": "task_2_x", "description": "x", "status": "pending",
                                  "created_at": "2030-01-01T00:00:00Z",
                                  "updated_at": "2030-01-01T00:00:00Z"}])
    assert (main / ".git" / worktrees.LOCK_NAME).is_file()
    assert not (trees["w0"] / ".aidp" / "tasklist.jsonl").read_text().count("task_2_x")


def test_a_folder_reused_by_another_repository_is_not_a_worktree(repo, tmp_path) -> None:
    _main, trees = repo
    shutil.rmtree(trees["w3"])
    other = trees["w3"]  # the same path, now another repository's checkout
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    run(other, "tasks", "add", "in another repository")
    assert "in another repository" not in run(trees["w1"], "tasks", "list")
    assert "task 9" not in run(other, "tasks", "list")


def test_worktrees_of_a_bare_repository_share_one_queue(tmp_path: Path) -> None:
    seed = tmp_path / "seed"
    seed.mkdir()
    git(seed, "init", "-q", "-b", "main")
    run(seed, "init")
    run(seed, "tasks", "add", "committed")
    git(seed, "add", "-A")
    git(seed, "commit", "-qm", "backlog")
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(seed), str(bare))
    a, b = tmp_path / "a", tmp_path / "b"
    git(bare, "worktree", "add", "-q", str(a), "main")
    git(bare, "worktree", "add", "-q", "-b", "b", str(b))
    run(a, "tasks", "add", "filed in a")
    claimed = json.loads(run(b, "tasks", "claim", "--json"))
    assert "filed in a" in run(b, "tasks", "list")
    assert listed(a)[claimed["id"]] == "in_progress"
    assert (bare / worktrees.LOCK_NAME).is_file()


def test_no_write_into_another_worktrees_tasklist_through_a_link(repo) -> None:
    _main, trees = repo
    shutil.rmtree(trees["w1"] / ".aidp")
    os.symlink(trees["w0"] / ".aidp", trees["w1"] / ".aidp")
    before = (trees["w0"] / TASKLIST).read_bytes()
    proc = aidp(trees["w1"], "tasks", "claim")
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert err.count("\n") == 1 and "the .aidp folder of the worktree" in err
    assert str(trees["w0"]) in err
    assert (trees["w0"] / TASKLIST).read_bytes() == before
    assert "task 9" in run(trees["w1"], "tasks", "list")  # reading is fine


def test_a_worktree_nested_in_another_writes_its_own_tasklist(repo, tmp_path) -> None:
    main, _trees = repo
    git(main, "checkout", "-q", "--orphan", "empty")
    git(main, "rm", "-rqf", ".")
    git(main, "commit", "-q", "--allow-empty", "-m", "nothing")
    git(main, "checkout", "-qf", "main")
    nested = main / ".claude" / "worktrees" / "x"
    git(main, "worktree", "add", "-q", str(nested), "empty")  # a branch without .aidp
    before = (main / TASKLIST).read_bytes()
    env = {k: v for k, v in os.environ.items() if k != "AIDP_DIR"}
    done = subprocess.run([sys.executable, "-m", "aidp", "tasks", "add", "in x"], cwd=nested,
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert (main / TASKLIST).read_bytes() == before
    assert "in x" in (nested / TASKLIST).read_text()
    assert "in x" in run(main, "tasks", "list")  # one queue all the same


def test_a_read_with_eight_worktrees_starts_no_git(tmp_path, monkeypatch) -> None:
    main = tmp_path / "repo"
    main.mkdir()
    git(main, "init", "-q", "-b", "main")
    run(main, "init")
    run(main, "tasks", "add", "committed")
    git(main, "add", "-A")
    git(main, "commit", "-qm", "backlog")
    trees = [tmp_path / f"t{n}" for n in range(7)]
    for n, tree in enumerate(trees):
        git(main, "worktree", "add", "-q", "-b", f"t{n}", str(tree))
        TaskLog(tree).append([{"id": f"task_4_{n}", "description": f"in t{n}",
                               "status": "pending", "created_at": "2030-01-01T00:00:00Z",
                               "updated_at": "2030-01-01T00:00:00Z"}])

    def no_process(*args, **kwargs):
        raise AssertionError(f"a read started a process: {args}")

    monkeypatch.setattr(subprocess.Popen, "__init__", no_process)
    fold = TaskLog(trees[3]).read()
    assert sorted(t["description"] for t in fold.tasks.values()) == [
        "committed", *(f"in t{n}" for n in range(7))]


def test_tasks_filed_at_once_in_every_worktree_all_show_everywhere(repo) -> None:
    main, trees = repo
    procs = [aidp(tree, "tasks", "add", f"{name} #{n}", "-q")
             for name, tree in trees.items() for n in range(3)]
    filed = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs) and len(set(filed)) == 12
    for tree in (main, *trees.values()):
        shown = listed(tree)
        assert len(shown) == 22 and set(filed) <= set(shown)


def test_a_stray_git_folder_is_no_repository(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()  # empty: not a repository, for git either
    project = tmp_path / "project"
    assert worktrees.find(project) is None
    TaskLog(project).append([{"id": "task_5_x", "description": "x", "status": "pending",
                              "created_at": "2030-01-01T00:00:00Z",
                              "updated_at": "2030-01-01T00:00:00Z"}])
    assert list((tmp_path / ".git").iterdir()) == []


def test_a_tasklist_above_a_repository_in_no_work_tree_is_shared_by_its_worktrees(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """outer/.aidp in no repository, outer/repo a repository and outer/repo-wt its linked
    worktree: both use outer's tasklist, alike (repo-wt used to start one of its own)."""
    monkeypatch.delenv("AIDP_DIR")
    outer = tmp_path / "outer"
    (outer / ".aidp").mkdir(parents=True)
    main = outer / "repo"
    main.mkdir()
    git(main, "init", "-q", "-b", "main")
    git(main, "commit", "-q", "--allow-empty", "-m", "start")
    git(main, "worktree", "add", "-q", "-b", "wt", str(outer / "repo-wt"))
    for where in (main, outer / "repo-wt", outer / "repo-wt" / "sub"):
        assert find_root(cwd=where) == outer


def test_a_repository_inside_another_work_tree_never_takes_its_tasklist(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A repository cloned inside a project that has .aidp/ (a vendored checkout) is a
    project of its own: its top is the root, the outer tasklist is never written."""
    outer = tmp_path / "outer"
    outer.mkdir()
    git(outer, "init", "-q", "-b", "main")
    run(outer, "tasks", "add", "outer's")
    inner = outer / "vendor" / "lib"
    inner.mkdir(parents=True)
    git(inner, "init", "-q", "-b", "main")
    (inner / "src").mkdir()
    monkeypatch.delenv("AIDP_DIR")
    assert find_root(cwd=inner / "src") == inner
    assert find_root(cwd=outer / "vendor") == outer  # outside the inner repository
    before = (outer / TASKLIST).read_bytes()
    env = {k: v for k, v in os.environ.items() if k != "AIDP_DIR"}
    done = subprocess.run([sys.executable, "-m", "aidp", "tasks", "add", "inner's"],
                          cwd=inner / "src", env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert (outer / TASKLIST).read_bytes() == before
    assert "inner's" in (inner / TASKLIST).read_text()


def test_history_and_undo_see_every_worktrees_records(repo) -> None:
    _main, trees = repo
    task = run(trees["w0"], "tasks", "add", "filed in w0", "-q").strip()
    short = task[-8:]
    run(trees["w1"], "tasks", "edit", short, "-d", "edited in w1")
    run(trees["w2"], "tasks", "note", short, "noted in w2")
    run(trees["w2"], "tasks", "claim", short, "--as", "agent-2")
    states = json.loads(run(trees["w3"], "tasks", "history", short, "--json"))
    assert [s["description"] for s in states] == ["filed in w0", "edited in w1", "edited in w1"]
    assert [s["status"] for s in states] == ["pending", "pending", "in_progress"]
    text = run(trees["w3"], "tasks", "history", short)
    assert "filed in w0" in text and "edited in w1" in text
    assert "noted in w2" in text and "claimed by agent-2" in text
    for name in ("w0", "w2"):  # where each record is
        assert os.path.realpath(trees[name] / TASKLIST) in text
    for tree in trees.values():  # the same history in every worktree
        assert json.loads(run(tree, "tasks", "history", short, "--json")) == states
    before = {name: (tree / TASKLIST).read_bytes() for name, tree in trees.items()}
    undone = json.loads(run(trees["w3"], "tasks", "undo", short, "--json"))
    assert (undone["description"], undone["status"]) == ("edited in w1", "pending")
    for tree in trees.values():  # undone in w3, seen everywhere
        shown = json.loads(run(tree, "tasks", "show", short, "--json"))
        assert (shown["status"], shown.get("assignee")) == ("pending", None)
    written = [name for name, tree in trees.items()
               if (tree / TASKLIST).read_bytes() != before[name]]
    assert written == ["w3"]  # the undo is in the tasklist of the worktree that made it


def test_earlier_todo_lists_of_every_worktree_are_listed_and_loadable(repo) -> None:
    _main, trees = repo
    run(trees["w0"], "todo", "add", "step one", "--session", "s0")
    run(trees["w0"], "todo", "add", "step two", "--session", "s0")
    run(trees["w0"], "todo", "clear", "--session", "s0")
    run(trees["w0"], "todo", "add", "next plan", "--session", "s0")
    for tree in trees.values():  # s0's earlier list, from w0's file, in every worktree
        lists = json.loads(run(tree, "todo", "list", "--all", "--json"))
        assert sorted(entry["items"] for entry in lists if entry["session"] == "s0") == [1, 2]
    earlier = [entry for entry in json.loads(run(trees["w2"], "todo", "list", "--all",
                                                 "--json"))
               if entry["session"] == "s0" and entry["items"] == 2]
    assert earlier and earlier[0].get("list")
    loaded = json.loads(run(trees["w2"], "todo", "load", earlier[0]["list"],
                            "--session", "s2", "--json"))
    assert [item["content"] for item in loaded["items"]] == ["step one", "step two"]
    assert "step one" in run(trees["w3"], "todo", "show", "--session", "s2")


def test_one_task_claimed_from_four_worktrees_at_once_goes_to_one_holder(repo) -> None:
    """4 worktrees × 4 processes claim the same task: one gets it, the 15 others exit 1
    naming the holder, and every worktree shows that holder."""
    main, trees = repo
    task = next(t["id"] for t in json.loads(run(main, "tasks", "list", "--json"))
                if t["description"] == "task 3")
    procs = {f"agent-{name}-{n}": aidp(tree, "tasks", "claim", task[-8:], "--as",
                                       f"agent-{name}-{n}", "--json")
             for name, tree in trees.items() for n in range(4)}
    results = {who: (*p.communicate(timeout=120), p.returncode) for who, p in procs.items()}
    winners = [who for who, (_out, _err, code) in results.items() if code == 0]
    assert len(winners) == 1
    holder = winners[0]
    assert json.loads(results[holder][0])["assignee"] == holder
    for who, (_out, err, code) in results.items():
        if who != holder:
            assert code == 1 and err.count("\n") == 1, err
            assert f"claimed by {holder}" in err
    for tree in (main, *trees.values()):
        shown = json.loads(run(tree, "tasks", "show", task[-8:], "--json"))
        assert (shown["status"], shown["assignee"]) == ("in_progress", holder)


def test_claim_release_block_edit_and_close_show_at_once_in_every_worktree(repo) -> None:
    main, trees = repo
    ids = {t["description"]: t["id"] for t in json.loads(run(main, "tasks", "list", "--json"))}
    first, second = ids["task 0"][-8:], ids["task 1"][-8:]

    def ready(tree: Path) -> list[str]:
        return [t["id"][-8:] for t in json.loads(run(tree, "tasks", "ready", "--json",
                                                     "-n", "50"))]

    def blocked(tree: Path) -> list[str]:
        return [t["id"][-8:] for t in json.loads(run(tree, "tasks", "blocked", "--json"))]

    run(trees["w0"], "tasks", "block", second, "--on", first)  # task 1 waits on task 0
    assert second in blocked(trees["w1"]) and second not in ready(trees["w2"])
    assert first[:4] in run(trees["w3"], "tasks", "show", second)  # names what it waits on
    run(trees["w1"], "tasks", "claim", first, "--as", "agent-1")
    shown = json.loads(run(trees["w2"], "tasks", "show", first, "--json"))
    assert (shown["status"], shown["assignee"]) == ("in_progress", "agent-1")
    assert first not in ready(trees["w3"])
    assert "task 0 (claimed by agent-1)" in run(trees["w0"], "prime")
    run(trees["w2"], "tasks", "release", first)
    shown = json.loads(run(trees["w3"], "tasks", "show", first, "--json"))
    assert (shown["status"], shown.get("assignee")) == ("pending", None)
    assert first in ready(trees["w0"])
    primed = run(trees["w1"], "prime")
    assert "[medium] task 0\n" in primed and "agent-1" not in primed
    run(trees["w3"], "tasks", "edit", first, "-d", "task 0 renamed in w3", "-p", "high")
    assert "task 0 renamed in w3" in run(trees["w0"], "tasks", "list")
    assert "[high] task 0 renamed in w3" in run(trees["w1"], "prime")
    page = trees["w2"] / "report.html"
    run(trees["w2"], "report", "--html", str(page))
    assert "task 0 renamed in w3" in page.read_text()
    run(trees["w0"], "tasks", "done", first)
    assert second not in blocked(main) and second in ready(trees["w1"])
    for tree in (main, *trees.values()):
        assert listed(tree)[ids["task 0"]] == "done"


def test_a_branch_deleted_unmerged_takes_its_records_with_it(repo) -> None:
    main, trees = repo
    run(trees["w0"], "tasks", "add", "on a branch thrown away")
    run(trees["w1"], "tasks", "add", "on a branch merged")
    refused = subprocess.run(["git", "-C", str(main), "worktree", "remove", str(trees["w0"])],
                             capture_output=True, text=True)
    assert refused.returncode != 0  # uncommitted records: git keeps the worktree
    assert "on a branch thrown away" in run(trees["w2"], "tasks", "list")
    for name in ("w0", "w1"):
        git(trees[name], "commit", "-qam", f"work in {name}")
        git(main, "worktree", "remove", str(trees[name]))
    git(main, "branch", "-q", "-D", "w0")  # never merged
    git(main, "merge", "-q", "--no-edit", "w1")
    for tree in (main, trees["w2"], trees["w3"]):
        shown = run(tree, "tasks", "list")
        assert "on a branch merged" in shown and "on a branch thrown away" not in shown


def test_mcp_tools_in_a_worktree_see_and_take_the_one_queue(repo) -> None:
    """`aidp mcp` servers in two worktrees (long-lived, as an agent keeps them): what
    one worktree files or claims shows in the other's tools at once."""
    from tests.test_mcp import Client, data

    main, trees = repo
    env = {k: v for k, v in os.environ.items() if k != "AIDP_DIR"}
    servers = {name: Client(trees[name], {**env, "AIDP_ACTOR": f"agent-{name}",
                                          "AIDP_SESSION": f"s-{name}"})
               for name in ("w1", "w2")}
    try:
        for server in servers.values():
            server.start()
        one, two = servers["w1"], servers["w2"]
        filed = json.loads(run(trees["w0"], "tasks", "add", "from w0", "-p", "high",
                               "--json"))
        task = filed["task"]["id"] if "task" in filed else filed["id"]
        assert task in [t["id"] for t in data(one.call("tasks_list"))]
        assert data(two.call("tasks_ready", {"limit": 1}))[0]["id"] == task
        taken = data(one.call("tasks_claim"))
        assert (taken["id"], taken["assignee"]) == (task, "agent-w1")
        refused = two.call("tasks_claim", {"id": task[-8:]})
        assert refused["isError"] is True
        assert "claimed by agent-w1" in refused["content"][0]["text"]
        assert task not in [t["id"] for t in data(two.call("tasks_ready", {"limit": 50}))]
        assert listed(trees["w3"])[task] == "in_progress"
        data(two.call("tasks_update", {"id": task[-8:], "status": "done"}))
        assert listed(main)[task] == "done"
        assert task not in [t["id"] for t in data(one.call("tasks_list"))]  # open ones
        data(one.call("tasks_file", {"description": "filed over mcp in w1"}))
        assert "filed over mcp in w1" in run(trees["w3"], "tasks", "list")
        assert "filed over mcp in w1" in (trees["w1"] / TASKLIST).read_text()
        assert "filed over mcp in w1" not in (trees["w2"] / TASKLIST).read_text()
        for server in servers.values():
            assert server.close() == 0
    finally:
        for server in servers.values():
            if server.proc.poll() is None:
                server.proc.kill()
                server.proc.wait()


# --- the store answers for several worktrees (backlog 8064) ------------------------------

def _tasklists(tmp_path: Path, datas: list[bytes], own_at: int
               ) -> tuple[TaskLog, list[tuple[Path, bool]]]:
    """Each data a worktree's tasklist (w0, w1, … : the fold's order); the own one's log."""
    lists = []
    for n, data in enumerate(datas):
        path = tmp_path / f"w{n}" / TASKLIST
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_bytes() != data:
            path.write_bytes(data)
        lists.append((path, n == own_at))
    return TaskLog(tmp_path / f"w{own_at}"), lists


def _store_answer(log: TaskLog, lists: list[tuple[Path, bool]], *, whole_lines: bool = False):
    """(the store's fold for every worktree or None, the plain fold), checked equal."""
    from aidp.store.overlay import load_shared
    from tests.test_index import assert_same

    full = worktrees.fold(lists, log.path.read_bytes(), whole_lines=whole_lines)
    got = load_shared(log, lists, whole_lines=whole_lines)
    if got is not None:
        assert_same(log, got, full)
    return got, full


@pytest.fixture
def any_size_store(monkeypatch: pytest.MonkeyPatch) -> None:
    from aidp.store import loader
    from aidp.tasklist import line

    monkeypatch.setattr(loader, "MIN_BYTES", 0)
    monkeypatch.setattr(loader, "STRICT", True)
    monkeypatch.setattr(line, "CHUNK", 64)


def _line(tid: str, stamp: int, **more: object) -> bytes:
    from aidp.core.model import format_ts

    return json.dumps({"id": tid, "description": tid, "status": "pending",
                       "priority": "medium", "created_at": format_ts(0),
                       "updated_at": format_ts(stamp), **more}).encode()


def test_the_store_answers_for_worktrees_sorted_before_and_after_this_one(
        tmp_path: Path, any_size_store: None) -> None:
    from aidp.store import StoreFold

    common = b"".join(_line(f"task_1_c{n}", n) + b"\n" for n in range(40))
    mine = _line("task_2_mine", 100) + b"\n" + _line("task_1_c3", 101, status="done") + b"\n"
    datas = [common + _line("task_3_early", 90) + b"\n"  # w0: sorted first, fed first
             + _line("task_1_c5", 95, status="in_progress") + b"\n",
             common + mine + b"garbage\n",  # w1: this worktree (its damage counts)
             common + _line("task_4_late", 80) + b"\n" + _line("task_1_c5", 96) + b"\n"]
    log, lists = _tasklists(tmp_path, datas, 1)
    for step in range(3):
        got, _full = _store_answer(log, lists)
        assert isinstance(got, StoreFold)  # the store answered, with the others on top
        # the fold's order: the shared lines, w0's, this one's, w2's
        assert list(got.tasks)[40:] == [
            "task_3_early", *[f"task_5_more{n}" for n in range(step)], "task_2_mine",
            *[f"task_6_here{n}" for n in range(step)], "task_4_late"]
        assert got.tasks["task_1_c5"]["status"] == "pending"  # w2's later record
        assert (got.damaged, got.lines) == (1, 40 + 2 + 3 + 2 + 2 * step)
        del got  # a store's fold for every worktree holds the store until dropped
        with open(lists[0][0], "ab") as handle:  # another worktree appends: read again
            handle.write(_line(f"task_5_more{step}", 200 + step) + b"\n")
        with open(log.path, "ab") as handle:
            handle.write(_line(f"task_6_here{step}", 300 + step) + b"\n")
    from aidp.store.overlay import MEMO_NAME

    memo = log.dir / "cache" / MEMO_NAME
    assert sorted(json.loads(memo.read_bytes())) == sorted(str(p) for p, own in lists if not own)


def test_a_task_changed_here_and_in_a_worktree_fed_before(
        tmp_path: Path, any_size_store: None) -> None:
    from aidp.store import StoreFold

    common = b"".join(_line(f"task_1_c{n}", n) + b"\n" for n in range(10))
    datas = [common + _line("task_1_c2", 50, status="done") + b"\n",
             common + _line("task_1_c2", 50, status="in_progress") + b"\n"]  # a tie
    log, lists = _tasklists(tmp_path, datas, 1)
    got, full = _store_answer(log, lists)  # a task of the shared lines: its place holds
    assert isinstance(got, StoreFold)  # (backlog 9b23: it folded plainly)
    assert got.tasks["task_1_c2"]["status"] == "in_progress"  # the tie: the later file
    del got
    new = _line("task_2_new", 60) + b"\n"  # a task new in both: its place is w0's
    log, lists = _tasklists(tmp_path, [datas[0] + new, datas[1] + new], 1)
    got, full = _store_answer(log, lists)
    assert got is None and list(full.tasks)[10:] == ["task_2_new"]
    del got
    log, lists = _tasklists(tmp_path, datas, 0)  # from w0: the same answer, by the store
    got, full = _store_answer(log, lists)
    assert got is not None and got.tasks["task_1_c2"]["status"] == "in_progress"


def test_a_merged_branch_a_removed_worktree_and_one_line_in_two_files(
        tmp_path: Path, any_size_store: None) -> None:
    common = b"".join(_line(f"task_1_c{n}", n) + b"\n" for n in range(10))
    theirs = _line("task_7_theirs", 60) + b"\n"
    same = _line("task_8_same", 61) + b"\n"  # the very line in two worktrees' files
    datas = [common + same + _line("task_9_mine", 62) + b"\n" + theirs,  # merged theirs
             common + theirs + same, common + b"{\"id\": \n"]
    log, lists = _tasklists(tmp_path, datas, 0)
    got, full = _store_answer(log, lists)
    assert got is not None and list(full.tasks)[10:] == [
        "task_8_same", "task_9_mine", "task_7_theirs"]
    del got
    got, full = _store_answer(log, lists[:2])  # w2 removed: no longer counted
    assert got is not None and full.lines == 13
    del got
    log, lists = _tasklists(tmp_path, datas, 1)  # from w1: w0 holds its lines already
    got, full = _store_answer(log, lists)
    assert got is None and list(full.tasks)[10:] == [
        "task_8_same", "task_9_mine", "task_7_theirs"]


def test_a_worktree_made_from_a_later_commit_reads_through_the_store(
        tmp_path: Path, any_size_store: None) -> None:
    from aidp.store import StoreFold

    common = b"".join(_line(f"task_1_c{n}", n) + b"\n" for n in range(10))
    later = _line("task_2_committed", 40) + b"\n" + _line("task_1_c1", 41) + b"\n"
    datas = [common + later + _line("task_3_main", 50) + b"\n",  # w0: main, sorted first
             common + later + _line("task_4_mine", 51) + b"\n",  # w1: made from `later`
             common + _line("task_5_old", 52) + b"\n"]  # w2: made before it
    log, lists = _tasklists(tmp_path, datas, 1)
    got, full = _store_answer(log, lists)
    assert isinstance(got, StoreFold)
    assert list(got.tasks)[10:] == ["task_2_committed", "task_3_main", "task_4_mine",
                                     "task_5_old"]
    del got
    datas[1] = common + later + _line("task_3_main", 50) + b"\n"  # the same line again
    log, lists = _tasklists(tmp_path, datas, 1)
    got, full = _store_answer(log, lists)
    assert isinstance(got, StoreFold) and full.lines == 14


@pytest.mark.parametrize("old", [True, False], ids=["settled", "just-written"])
@pytest.mark.parametrize("rewritten", ["theirs", "mine"])
def test_a_tasklist_rewritten_in_place_is_compared_again(
        tmp_path: Path, any_size_store: None, rewritten: str, old: bool) -> None:
    """A copy onto a tasklist (same inode, same size, a line far before the end of the
    lines it shares with this one changed) is not taken for an append (backlog a81f)."""
    from aidp.store import StoreFold
    from aidp.store.overlay import MEMO_NAME

    common = b"".join(_line(f"task_1_c{n}", n) + b"\n" for n in range(100))  # ~19 KB
    datas = [common + _line("task_3_mine", 201) + b"\n",  # w0: this worktree's
             common + _line("task_2_theirs", 200) + b"\n"]
    log, lists = _tasklists(tmp_path, datas, 0)
    if old:  # stat data the memo keeps whole: the rewrite must change it
        for path, _own in lists:
            os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns - 10**10))
    for _read in range(2):  # the first makes the store's cache folder, the second the memo
        got, full = _store_answer(log, lists)
        assert isinstance(got, StoreFold) and got.tasks["task_1_c0"]["status"] == "pending"
        del got
    assert (log.dir / "cache" / MEMO_NAME).is_file()
    path = lists[1 if rewritten == "theirs" else 0][0]
    size = path.stat().st_size
    with open(path, "r+b") as handle:  # in place, as `cp` onto it: the same inode
        handle.write(_line("task_1_c0", 1, status="blocked"))  # as long as the line was
    assert path.stat().st_size == size
    got, full = _store_answer(log, lists)  # (equal to the plain fold: checked there)
    assert full.tasks["task_1_c0"]["status"] == "blocked"
    assert got is None or got.tasks["task_1_c0"]["status"] == "blocked"
    del got
    got, full = _store_answer(log, lists)  # the memo is mended: the store answers again
    assert isinstance(got, StoreFold) and got.tasks["task_1_c0"]["status"] == "blocked"


def test_a_worktree_without_a_tasklist_brings_no_line(tmp_path: Path,
                                                      any_size_store: None) -> None:
    from aidp.store import StoreFold

    common = b"".join(_line(f"task_1_c{n}", n) + b"\n" for n in range(10))
    datas = [b"", common + _line("task_2_mine", 50) + b"\n",  # w0: none on its branch
             common + _line("task_3_theirs", 51) + b"\n", b"{\"id\": "]  # w3: no whole line
    log, lists = _tasklists(tmp_path, datas, 1)
    lists[0][0].unlink()
    got, full = _store_answer(log, lists)
    assert isinstance(got, StoreFold) and full.lines == 12  # the shared lines once
    assert list(got.tasks)[10:] == ["task_2_mine", "task_3_theirs"]


def _random_worktrees(steps: object, **more: object):
    """The examples of the random-worktrees tests: lines every tasklist shares, each
    tasklist's cut of them and own lines after, which is this worktree's, and `steps`
    (and `more` strategies), as `check(shared, extras, own_at, steps, …)` takes them."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from tests.test_index import lines

    return lambda check: settings(
        max_examples=int(os.environ.get("AIDP_INDEX_EXAMPLES", "60")), deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture])(given(
            shared=st.lists(lines, max_size=10),
            extras=st.lists(st.tuples(st.integers(0, 10), st.lists(lines, max_size=3)),
                            min_size=2, max_size=4),
            own_at=st.integers(0, 3), steps=steps, **more)(check))


def test_the_store_answers_after_anything_as_the_plain_fold(tmp_path: Path,
                                                            any_size_store: None) -> None:
    from hypothesis import strategies as st

    from tests.test_index import lines

    counter, answered = [0], [0]

    @_random_worktrees(st.lists(st.tuples(st.integers(0, 4), st.lists(lines, max_size=3)),
                                max_size=3), whole=st.booleans())
    def check(shared: list[bytes], extras: list[tuple[int, list[bytes]]], own_at: int,
              steps: list[tuple[int, list[bytes]]], whole: bool) -> None:
        counter[0] += 1
        where = tmp_path / str(counter[0])
        datas = [b"".join(p + b"\n" for p in shared[:cut] + more) for cut, more in extras]
        own_at %= len(datas)
        log, lists = _tasklists(where, datas, own_at)
        answered[0] += _store_answer(log, lists, whole_lines=whole)[0] is not None
        for which, more in steps:
            added = b"".join(p + b"\n" for p in more)
            if which == len(datas):  # a union merge: another's lines appended here
                added += datas[(own_at + 1) % len(datas)][len(b"".join(
                    p + b"\n" for p in shared)):]
            datas[own_at if which == len(datas) else which % len(datas)] += added
            log, lists = _tasklists(where, datas, own_at)
            _store_answer(log, lists, whole_lines=whole)
        _store_answer(log, [e for n, e in enumerate(lists)  # one worktree removed
                            if n in (own_at, (own_at + 1) % len(lists))])

    check()
    assert answered[0] > counter[0] // 4, (answered, counter)  # the store, not a fallback


STORE_TASKS = 3000  # ~0.6 MB a worktree: above project.SHARED_MIN_BYTES with two


def _repo_above_the_stores_minimum_with_a_worktree(tmp_path: Path) -> tuple[Path, Path]:
    """A repository whose committed tasklist (STORE_TASKS tasks) is read through the
    store, and a linked worktree `w0` of it: (the main worktree, the linked one)."""
    from aidp.app.project import SHARED_MIN_BYTES

    main = tmp_path / "repo"
    main.mkdir()
    git(main, "init", "-q", "-b", "main")
    git(main, "config", "commit.gpgsign", "false")
    run(main, "init")
    with open(main / TASKLIST, "ab") as handle:  # above the store's minimums
        handle.write(b"".join(_line(f"task_1_c{n}", n) + b"\n" for n in range(STORE_TASKS)))
    assert 2 * (main / TASKLIST).stat().st_size > SHARED_MIN_BYTES
    git(main, "add", "-A")
    git(main, "commit", "-qm", "backlog")
    other = tmp_path / "w0"
    git(main, "worktree", "add", "-q", "-b", "w0", str(other))
    return main, other


def test_reads_through_the_worktrees_overlay_leave_the_store_as_they_found_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The overlay folds the other worktrees' lines in a write transaction it never
    commits; a command ends with it rolled back, even when the fold lives to the end (a
    one-shot command freezes it: TaskLog.freeze). Left open at exit, its hot journal
    would be rolled back into the database by the next reader, changing the file's stat
    data: the store taken for changed by another program and rebuilt by every read."""
    main, other = _repo_above_the_stores_minimum_with_a_worktree(tmp_path)
    run(other, "tasks", "add", "filed in the other worktree")
    builds = tmp_path / "builds"
    monkeypatch.setenv("AIDP_STORE_BUILDS", str(builds))
    journal = main / ".aidp" / "cache" / "store.db-journal"
    for _read in range(3):
        shown = json.loads(run(main, "tasks", "list", "--json"))
        assert "filed in the other worktree" in [t["description"] for t in shown]
        assert not journal.exists()
    assert [line.split()[1] for line in builds.read_text().splitlines()] == ["missing"]


def test_a_write_while_its_command_keeps_an_earlier_read_goes_through_the_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A command reads, keeps that fold (its short ids, lost claims) and writes: the
    read under the lock must not wait for the earlier fold's write transaction on the
    store (the overlay's) and then fold every worktree's file plainly, under the
    repository's lock — what made a fleet's writes hold it ~0.2-0.4 s each once any
    worktree wrote between a command's two reads. The earlier fold still answers as it
    was; the store is left as it was found (no journal, no rebuild)."""
    from aidp.app import changing
    from aidp.app.project import Project, StoreReader
    from aidp.store import StoreFold, loader

    monkeypatch.setattr(loader, "STRICT", True)
    main, other = _repo_above_the_stores_minimum_with_a_worktree(tmp_path)
    run(other, "tasks", "add", "filed there first")
    builds = tmp_path / "builds"
    monkeypatch.setenv("AIDP_STORE_BUILDS", str(builds))
    plain = []
    fold_plainly = worktrees.fold
    monkeypatch.setattr(worktrees, "fold", lambda *a, **k: plain.append(1) or fold_plainly(
        *a, **k))

    seen: list[object] = []

    def change(fold: object) -> list[dict[str, object]]:
        seen.append(fold)  # the fold the write reads under the lock
        return []

    project = Project(main, reader=StoreReader(background=False), freeze=True)
    for step in range(3):
        before = project.read()
        assert isinstance(before, StoreFold)  # the store, the other worktree's on top
        count = len(before.tasks)
        run(other, "tasks", "add", f"filed there meanwhile {step}")  # between the reads
        project.log.update(change)  # type: ignore[arg-type]
        now = seen.pop()
        assert isinstance(now, StoreFold), type(now)  # the store answered under the lock
        described = [t["description"] for t in now.tasks.values()]
        assert f"filed there meanwhile {step}" in described
        assert len(before.tasks) == count  # the earlier read still answers as it was
        assert f"filed there meanwhile {step}" not in [
            t["description"] for t in before.tasks.values()]
        noted = changing.note_task(project, "task_1_c7", f"note {step}")  # the real use
        assert noted.note["task"] == "task_1_c7"  # case: read, keep it, write
        del before, now
    assert plain == []  # never a plain fold of every worktree's file
    assert not (main / ".aidp" / "cache" / "store.db-journal").exists()
    assert [line.split()[1] for line in builds.read_text().splitlines()] == ["missing"]


# --- a read carried on from the last one (tasklist.carry) --------------------------------

def _later_line(tid: str, status: str, stamp: int) -> bytes:
    """A task line stamped after every line tests.test_index writes (its stamps are 0-4)."""
    from tests.test_index import task_line

    return task_line(tid, status, 5 + stamp, "x")


def _assert_folds_alike(got, full) -> None:
    """What a fold answers with: the winners, their stamps (not their line numbers: see
    carry.extend), the merge bookkeeping, the damage and the lines folded."""
    assert got.tasks == full.tasks
    assert got.typed == full.typed
    assert {k: v[0] for k, v in got.task_keys.items()} == {
        k: v[0] for k, v in full.task_keys.items()}
    assert {k: v[0] for k, v in got.typed_keys.items()} == {
        k: v[0] for k, v in full.typed_keys.items()}
    assert (got.damaged, got.lines, got.ends_with_newline, got.fielded, got.partial,
            got.conflicted, got.pending) == (
        full.damaged, full.lines, full.ends_with_newline, full.fielded, full.partial,
        full.conflicted, full.pending)


def test_a_read_carried_on_from_the_last_one_folds_as_the_rule(tmp_path: Path) -> None:
    """A command that read every worktree's tasklist and reads again (its write, under the
    lock) adds only the lines the files grew by — when the answer is the rule's; else it
    folds them all again. Random tasklists and appends (damage, merges field by field,
    repeated lines, equal stamps, files rewritten or removed): every carried-on fold
    answers as the plain one; a case that must be carried on is."""
    from hypothesis import strategies as st

    from aidp.tasklist import carry
    from tests.test_index import IDS, fielded_line, lines

    counter, carried = [0], [0]
    later = st.builds(_later_line, st.sampled_from(IDS),
                      st.sampled_from(["pending", "in_progress", "done"]), st.integers(0, 1000))
    later = st.one_of(later, st.builds(  # with a task_fields record, as aidp writes them
        fielded_line, later, st.lists(st.sampled_from(["description", "status", "tags"]),
                                      max_size=2, unique=True),
        st.lists(st.sampled_from(["a", "x"]), max_size=1), st.just([]),
        st.sampled_from(["pending", "in_progress"]), st.integers(0, 1 << 20)))

    def case(shared: list[bytes], extras: list[tuple[int, list[bytes]]], own_at: int,
             steps: list[tuple[int, list[bytes]]]) -> None:
        counter[0] += 1
        where = tmp_path / str(counter[0])
        datas = [b"".join(p + b"\n" for p in shared[:cut] + more) for cut, more in extras]
        own_at %= len(datas)
        _log, lists = _tasklists(where, datas, own_at)
        paths = [path for path, _own in lists]
        was = worktrees.stat_keys(paths)
        fold = worktrees.fold(lists, datas[own_at], whole_lines=False)
        for which, more in steps:
            target = which % len(datas)
            added = b"".join(p + b"\n" for p in more)
            if which == 4:  # rewritten: a checkout, a compaction (another file)
                paths[target].unlink()
                paths[target].write_bytes(datas[target] + added)
            elif which == 5:  # rewritten in place, its last line changed
                with open(paths[target], "r+b") as handle:
                    handle.seek(max(0, len(datas[target]) - 2))
                    handle.write(b"X\n" + added)
            else:
                with open(paths[target], "ab") as handle:
                    handle.write(added)
            datas = [path.read_bytes() for path in paths]
            now = worktrees.stat_keys(paths)
            full = worktrees.fold(lists, datas[own_at], whole_lines=False)
            got = carry.extend(fold, lists, was, now)
            if got is not None:
                _assert_folds_alike(got, full)
                carried[0] += got is not fold
            fold, was = (got if got is not None else full), now

    # Two worktrees' own lines, then a task filed in the second: carried on.
    case([], [(0, [_later_line(IDS[0], "pending", 1)]), (0, [_later_line(IDS[1], "done", 2)])],
         0, [(1, [_later_line(IDS[2], "in_progress", 3)])])
    assert carried == [1]
    _random_worktrees(st.lists(st.tuples(st.integers(0, 5), st.lists(st.one_of(later, lines),
                                                                     max_size=3)),
                               min_size=1, max_size=5))(case)()


def test_a_write_after_another_worktrees_reads_only_the_lines_it_added(
        repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """A command reads every worktree's tasklist, another worktree writes, then this one
    writes: its read under the repository's lock adds the other's new lines to the fold
    it has instead of folding every file again (which made each write of a fleet hold the
    lock for a fold of every file: ~5 ms of CPU per thousand lines, then a wait for a core
    behind every other agent's process) — and sees what the other wrote."""
    from aidp.app import changing
    from aidp.app.project import Project

    main, others = repo
    ids = [run(main, "tasks", "add", f"task {n}", "-q").strip() for n in range(3)]
    plain = []
    fold_plainly = worktrees.fold
    monkeypatch.setattr(worktrees, "fold", lambda *a, **k: plain.append(1) or fold_plainly(
        *a, **k))
    seen: list[object] = []
    project = Project(main, freeze=True)
    for step in range(3):
        before = project.read()
        run(others["w1"], "tasks", "claim", ids[step])  # between the reads
        project.log.update(lambda fold: seen.append(fold) or [])  # type: ignore[arg-type,func-returns-value]
        now = seen.pop()
        assert now.tasks[ids[step]]["status"] == "in_progress"  # the other's claim
        assert before.tasks[ids[step]]["status"] == "pending"  # the earlier read, as it was
        noted = changing.note_task(project, ids[step], f"note {step}")  # the real use case
        assert noted.note["task"] == ids[step]
    assert len(plain) == 1  # the first read only
    shown = json.loads(run(others["w2"], "tasks", "show", ids[2], "--json"))
    assert shown["status"] == "in_progress" and shown["notes"][-1]["text"] == "note 2"


CURSOR_LEFT_OPEN = """
import gc, json, os, subprocess, sys
from pathlib import Path
from aidp.app import changing
from aidp.app.project import Project, StoreReader
from aidp.store import StoreFold

main, other, aidp = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:]
project = Project(main, reader=StoreReader(background=False), freeze=True)
before = project.read()
assert isinstance(before, StoreFold), type(before)
walk = iter(before.tasks)  # a loop over the tasks left early: its cursor stays open
first = next(walk)
subprocess.run([*aidp, "tasks", "add", "filed meanwhile"], cwd=other, check=True,
               capture_output=True, env={**os.environ, "AIDP_DIR": str(other)})
noted = changing.note_task(project, first, "noted")  # reads again: the store, in memory
assert noted.note["task"] == first
print(json.dumps({"lost": changing.lost_claims(project, before, [first]),
                  "count": len(before.tasks)}))
try:
    next(walk)
except Exception as exc:  # closed with the file's connection: fails, never crashes
    print(type(exc).__name__)
del walk
gc.collect()
"""


def test_an_earlier_read_with_a_cursor_left_open_survives_a_second_read(
        tmp_path: Path) -> None:
    """A command reads through the store, keeps that fold (a loop over its tasks left
    early), and reads again after another worktree wrote (a note: read, then write):
    the second read moves the first one's store into memory. Deserializing the very
    connection the open cursor belonged to crashed the process (SIGSEGV: a fleet's
    `note` and `done` died ~1 in 12 once their reads were apart); the earlier fold
    answers from a copy instead, and the old cursor only fails."""
    main, other = _repo_above_the_stores_minimum_with_a_worktree(tmp_path)
    run(other, "tasks", "add", "filed there first")
    done = subprocess.run([sys.executable, "-c", CURSOR_LEFT_OPEN, str(main), str(other),
                           sys.executable, "-m", "aidp"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    answer = json.loads(done.stdout.splitlines()[0])
    assert answer == {"lost": [], "count": STORE_TASKS + 1}  # and the one filed before
