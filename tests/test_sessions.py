"""Per-person sessions: the default TODO list is `<branch>@<git identity>`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from aidp import git as aidp_git
from aidp import todos
from aidp.tasklist import person
from aidp.tasklist.log import TaskLog


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def anonymous(monkeypatch: pytest.MonkeyPatch) -> None:
    """No identity from the environment: only what git's config files say."""
    for name in ("GIT_AUTHOR_EMAIL", "GIT_AUTHOR_NAME", "EMAIL"):
        monkeypatch.delenv(name, raising=False)
    person._IDENTITY_CACHE.clear()
    yield
    person._IDENTITY_CACHE.clear()


def session_of(cli, *args: str) -> str:
    result = cli(*args, "todo", "show", "--json")
    assert result.code == 0, result
    return json.loads(result.out)["session"]


def test_the_default_session_is_the_branch_and_the_person(cli, project: Path, monkeypatch) -> None:
    git(project, "init", "-q", "-b", "main")
    assert session_of(cli) == "main@tests@example.invalid"
    monkeypatch.setenv("AIDP_SESSION", "shared")  # still wins
    assert session_of(cli) == "shared"
    assert session_of(cli, "--session", "mine") == "mine"


def test_the_identity_comes_from_the_repository_config(cli, project: Path, anonymous) -> None:
    git(project, "init", "-q", "-b", "main")
    assert session_of(cli) == "main"  # git knows nobody: the bare branch, as before
    git(project, "config", "user.name", "Alice")
    person._IDENTITY_CACHE.clear()
    assert session_of(cli) == "main@Alice"
    git(project, "config", "user.email", "alice@example.invalid")
    person._IDENTITY_CACHE.clear()
    assert session_of(cli) == "main@alice@example.invalid"
    assert aidp_git.identity(project) == git(project, "config", "user.email").strip()


def test_an_include_is_asked_of_git(project: Path, tmp_path: Path, anonymous) -> None:
    git(project, "init", "-q", "-b", "main")
    extra = tmp_path / "work.gitconfig"
    extra.write_text('[user]\n\temail = "bob@example.invalid" ; a comment\n')
    git(project, "config", "include.path", str(extra))
    assert aidp_git.identity(project) == "bob@example.invalid"


def test_config_values_are_read_like_git_reads_them(project: Path, anonymous) -> None:
    git(project, "init", "-q", "-b", "main")
    config = project / ".git" / "config"
    config.write_text(config.read_text() + '[user "x"]\n\temail = wrong\n[User]\n'
                      '  EMAIL = "carol@example.invalid"  # mine\n')
    assert aidp_git.identity(project) == "carol@example.invalid"


def test_a_list_under_the_bare_branch_keeps_working_for_its_owner(cli, project: Path,
                                                                   monkeypatch) -> None:
    git(project, "init", "-q", "-b", "main")
    log = TaskLog(project)
    old = todos.add(todos.TodoList("main"), "last", "my current plan")[0]
    log.append([todos.to_record(old, "2026-01-01T00:00:00.000000Z")])  # as an old aidp wrote it
    assert session_of(cli) == "main"
    assert cli("todo", "tick", "1").code == 0  # the list now records its owner
    listed = json.loads(cli("todo", "list", "--json").out)
    assert [(s["session"], s["owner"], s["current"]) for s in listed] == [
        ("main", "tests@example.invalid", True)]
    # Someone else on the same branch gets a list of their own.
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "bob@example.invalid")
    assert session_of(cli) == "main@bob@example.invalid"
    assert cli("todo", "add", "bob's step").code == 0
    text = cli("todo", "list").out
    assert text.startswith("1. main@bob@example.invalid [CURRENT SESSION] — active")
    assert "2. main — active" in text and "   Owner: tests@example.invalid" in text


def test_two_people_on_one_branch_keep_separate_lists_after_merging(cli, tmp_path: Path,
                                                                    monkeypatch) -> None:
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    clones = {}
    for who in ("alice", "bob"):
        clone = tmp_path / who
        git(tmp_path, "clone", "-q", str(origin), str(clone))
        git(clone, "config", "user.email", f"{who}@example.invalid")
        git(clone, "config", "user.name", who)
        git(clone, "checkout", "-q", "-b", "main")
        clones[who] = clone
    monkeypatch.delenv("GIT_AUTHOR_EMAIL")
    monkeypatch.delenv("GIT_COMMITTER_EMAIL")
    person._IDENTITY_CACHE.clear()

    def as_(who: str, *args: str):
        monkeypatch.setenv("AIDP_DIR", str(clones[who]))
        result = cli(*args)
        assert result.code == 0, result
        return result

    as_("alice", "init")
    git(clones["alice"], "add", "-A")
    git(clones["alice"], "commit", "-qm", "init")
    git(clones["alice"], "push", "-q", "-u", "origin", "main")
    git(clones["bob"], "pull", "-q", "origin", "main")
    for step in ("design", "build"):
        as_("alice", "todo", "add", f"alice: {step}")
    as_("bob", "todo", "add", "bob: review")
    as_("alice", "todo", "tick", "1")
    for who in ("alice", "bob"):
        git(clones[who], "commit", "-qam", f"{who}'s plan")
    git(clones["alice"], "push", "-q")
    git(clones["bob"], "pull", "-q", "--no-rebase", "origin", "main")
    git(clones["bob"], "push", "-q", "origin", "main")
    git(clones["alice"], "pull", "-q", "--no-rebase", "origin", "main")
    for who in ("alice", "bob"):
        shown = json.loads(as_(who, "todo", "show", "--json").out)
        assert shown["session"] == f"main@{who}@example.invalid"
        mine = [i["content"] for i in shown["items"]]
        assert mine == (["alice: design", "alice: build"] if who == "alice" else ["bob: review"])
        listed = json.loads(as_(who, "todo", "list", "--json").out)
        assert sorted((s["session"], s["owner"]) for s in listed) == [
            ("main@alice@example.invalid", "alice@example.invalid"),
            ("main@bob@example.invalid", "bob@example.invalid")]
