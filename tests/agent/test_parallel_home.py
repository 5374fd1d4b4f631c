"""`aidp run --backlog --parallel N` without `--merge` does no work twice (docs/guide.md,
"aidp run --backlog --parallel N"): what an agent files or changes reaches the starting
worktree's tasklist, so the next agents see it once its worktree is gone and nothing is
filed twice in one run; afterwards each `aidp/<hex>` branch merges with a plain `git
merge` and the fold shows each task once. Real git, scripted agents."""

from __future__ import annotations

import json
from pathlib import Path

from tests.agent.test_parallel import (  # noqa: F401 (fixtures: agent, actor, repo)
    DILIGENT,
    TASKLIST,
    actor,
    add,
    agent,
    commit_all,
    git,
    hex_of,
    own_tasklist,
    repo,
    run,
    state,
)

REFACTOR = "Refactor the auth module"
# Every agent does its own task, then files the same follow-up (the one working on the
# follow-up itself too: after its task is done, so only the run's memory stops it).
FILER = DILIGENT + f"print('File task: \"{REFACTOR}\" priority: low', flush=True)\n"


def test_what_agents_file_is_filed_once_and_every_branch_merges_plainly(
        cli, agent, repo: Path) -> None:  # noqa: F811 (fixtures)
    ids = [add(cli, name) for name in ("Login page", "Logout", "Session expiry",
                                        "Password reset")]
    commit_all(repo)
    worker = agent(FILER)
    result = run(repo, "--parallel", "2", "--json", "--agent", worker.command)
    assert result.returncode == 0, result
    ended = json.loads(result.stdout)["tasks"]
    found = state(cli)
    filed = [t for t in found.values() if t["description"] == REFACTOR]
    assert len(filed) == 1, result.stderr  # filed once in the run, whoever found it
    refactor = filed[0]["id"]
    assert sorted(t["id"] for t in ended) == sorted([*ids, refactor])  # and worked on
    assert all(t["status"] == "done" for t in found.values())
    assert "Not filed again" in result.stderr
    # The starting worktree's own file has every task, the filed one's creation too.
    home = own_tasklist(repo)
    assert sorted(home) == sorted([*ids, refactor])
    assert all(t["status"] == "done" for t in home.values())
    # The run committed its tasklist alone: the tree is clean, each branch merges.
    assert git(repo, "status", "--porcelain").strip() == ""
    branches = git(repo, "branch", "--list", "aidp/*", "--format=%(refname:short)").split()
    assert sorted(branches) == sorted(f"aidp/{hex_of(t)}" for t in [*ids, refactor])
    for branch in branches:
        git(repo, "merge", "--no-edit", "-q", branch)  # a plain git merge, no conflict
    assert git(repo, "status", "--porcelain").strip() == ""
    for tid in [*ids, refactor]:
        assert (repo / f"file-{hex_of(tid)}.txt").read_text() == f"{hex_of(tid)}\n"
    # The fold of the merged file alone: each task once, as the run left it.
    merged = own_tasklist(repo)
    assert sorted(merged) == sorted([*ids, refactor])
    assert all(t["status"] == "done" for t in merged.values())
    listed = json.loads(cli("tasks", "list", "--all", "--json").out)
    assert len(listed) == len({t["id"] for t in listed}) == 5
    # No branch holds a second task of that description either.
    for branch in branches:
        lines = git(repo, "show", f"{branch}:{TASKLIST}").splitlines()
        named = {json.loads(line)["id"] for line in lines
                 if '"type"' not in line and REFACTOR in line}
        assert named <= {refactor}
