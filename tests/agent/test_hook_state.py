"""aidp.agent.hook.state's session lookup for `aidp mcp` (asked on every tool call):
a state file is read again only when its stat data changed, and a change is never
missed — the same size, even the old mtime put back, a file removed."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aidp.agent.hook import state as hook_state
from aidp.agent.hook.state import process_key, session_of_agent
from aidp.tasklist import files

HOUR_AGO = time.time() - 3600


ME, PARENT, INIT = os.getpid(), os.getppid(), 1  # live processes: their keys are known


def state(folder: Path, name: str, session: str, pid: int) -> Path:
    """A hook state file as `aidp hook` writes it (the agent's exact process key), its
    mtime an hour back."""
    path = folder / name
    path.write_text(json.dumps({"session": session, "agents": [process_key(pid)],
                                "updated": 100}))
    os.utime(path, (HOUR_AGO, HOUR_AGO))
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    hooks = tmp_path / ".aidp" / "hooks"
    hooks.mkdir(parents=True)
    return hooks


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file counts as settled (changed long enough before it was read to be kept),
    not only one whose last change is RACY_NS old."""
    monkeypatch.setattr(hook_state, "RACY_NS", -10**9)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the files the lookup reads."""
    seen: list[str] = []
    read = files.Folder.read

    def counted(self: files.Folder, name: str, limit: int = 1 << 24) -> bytes | None:
        seen.append(name)
        return read(self, name, limit)

    monkeypatch.setattr(files.Folder, "read", counted)
    return seen


def test_unchanged_state_files_are_not_read_again(folder: Path, reads: list[str],
                                                  settled: None) -> None:
    root = folder.parents[1]
    state(folder, "claude-a.json", "a", ME)
    state(folder, "claude-b.json", "b", PARENT)
    (folder / "broken.json").write_text("{not json")
    assert session_of_agent(root, ME) == "a"
    assert sorted(reads) == ["broken.json", "claude-a.json", "claude-b.json"]
    reads.clear()
    # the next ancestor, the next tool call: the same answers, nothing read
    assert session_of_agent(root, PARENT) == "b"
    assert session_of_agent(root, ME) == "a"
    assert session_of_agent(root, INIT) is None
    assert reads == []


def test_a_file_changed_just_now_is_read_again_until_it_settles(
        folder: Path, reads: list[str]) -> None:
    root = folder.parents[1]
    state(folder, "claude-a.json", "a", ME)  # its mtime is old, its ctime is now
    assert session_of_agent(root, ME) == "a"
    assert session_of_agent(root, ME) == "a"
    assert reads == ["claude-a.json", "claude-a.json"]


def test_a_rewritten_file_is_read_again(folder: Path, reads: list[str],
                                        settled: None) -> None:
    root = folder.parents[1]
    path = state(folder, "claude-a.json", "one", ME)
    kept = path.stat()
    assert session_of_agent(root, ME) == "one"
    # The same size, the same inode, the old mtime put back: only the ctime differs
    # (once the coarse clock moved on, as RACY_NS makes sure it has in real use).
    while path.stat().st_ctime_ns == kept.st_ctime_ns:
        state(folder, "claude-a.json", "two", ME)
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (kept.st_size, kept.st_mtime_ns)
    assert session_of_agent(root, ME) == "two"
    path.unlink()
    assert session_of_agent(root, ME) is None
    state(folder, "claude-b.json", "three", ME)
    assert session_of_agent(root, ME) == "three"
    assert reads == ["claude-a.json", "claude-a.json", "claude-b.json"]


def test_two_projects_do_not_share_their_state(tmp_path: Path, settled: None) -> None:
    roots = [tmp_path / "p1", tmp_path / "p2"]
    for n, root in enumerate(roots):
        (root / ".aidp" / "hooks").mkdir(parents=True)
        state(root / ".aidp" / "hooks", "claude-a.json", f"s{n}", ME)
    assert [session_of_agent(root, ME) for root in roots] == ["s0", "s1"]
    assert [session_of_agent(root, ME) for root in roots] == ["s0", "s1"]


# --- the save is atomic (issue 35, item 18) ------------------------------------------------

STOP = json.dumps({"session_id": "s", "hook_event_name": "Stop", "stop_hook_active": True,
                   "last_assistant_message": "Done."})


def _hook_with_file_limit(project: Path, limit: int | None) -> subprocess.CompletedProcess:
    """`aidp hook claude Stop` as its own process; with `limit`, no file it writes may
    grow past that many bytes (RLIMIT_FSIZE: a write past it fails with EFBIG, as a full
    disk fails with ENOSPC; Python ignores SIGXFSZ)."""
    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run([sys.executable, "-m", "aidp", "hook", "claude", "Stop"],
                          input=STOP, capture_output=True, text=True, cwd=project,
                          env={**os.environ, "AIDP_DIR": str(project)}, timeout=120,
                          preexec_fn=limited if limit is not None else None)


def test_a_full_disk_during_the_save_keeps_the_previous_state(project: Path) -> None:
    """The issue's case: the save truncated the file, then failed to write it, and the
    next hook started from nothing (a reminder count back at 0). Now it writes a
    temporary file, syncs it and renames it: a failing write leaves the old state."""
    subprocess.run([sys.executable, "-m", "aidp", "--session", "s", "todo", "add",
                    "Write the parser"], cwd=project, check=True, capture_output=True)
    first = _hook_with_file_limit(project, None)
    assert "reminder 1 of 3" in json.loads(first.stdout)["reason"], first
    path = hook_state.state_path(project, "claude", "s")
    before = path.read_bytes()
    assert json.loads(before)["blocks"] == 1 and len(before) > 200
    full = _hook_with_file_limit(project, 100)  # smaller than the state: the write fails
    assert full.returncode == 0, full  # a hook never breaks the agent
    assert "not saved" in full.stderr and "the previous state is kept" in full.stderr, full
    assert path.read_bytes() == before  # intact, not truncated
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")] == []
    again = _hook_with_file_limit(project, None)  # space is back: the count goes on from
    assert "reminder 2 of 3" in json.loads(again.stdout)["reason"], again  # the kept one


def test_the_state_is_replaced_never_rewritten_in_place(project: Path) -> None:
    """A reader never sees a half-written state: each save is a new file renamed over
    the old one (another inode), and a leftover temporary file is swept."""
    path = hook_state.state_path(project, "claude", "s")
    with hook_state.State(path) as kept:
        kept.data["blocks"] = 1
        kept.save()
    first = path.stat().st_ino
    with hook_state.State(path) as kept:
        assert kept.data["blocks"] == 1
        kept.data["blocks"] = 2
        kept.save()
    assert path.stat().st_ino != first and json.loads(path.read_bytes())["blocks"] == 2
    left = path.parent / f".{path.name}.123.0a0b0c0d.tmp"  # a killed hook's
    left.write_text("{")
    os.utime(left, (HOUR_AGO - 3600, HOUR_AGO - 3600))
    hook_state.sweep(project)
    assert not left.exists() and path.exists() and path.with_name(path.name + ".lock").exists()


def test_a_hook_asks_git_what_it_tracks_once_per_index(tmp_path: Path) -> None:
    # Each hook is a process of its own: git's answer (which state files a clone
    # brought) is kept beside the index, and asked again only once the index changed;
    # a state file committed after that is still never read as aidp's own.
    import shutil

    project = tmp_path / "repo"
    project.mkdir()
    real_git = shutil.which("git")
    assert real_git is not None
    wrapper = tmp_path / "bin"
    wrapper.mkdir()
    log = tmp_path / "git.log"
    (wrapper / "git").write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {real_git} "$@"\n')
    (wrapper / "git").chmod(0o755)
    env = {**os.environ, "PATH": f"{wrapper}{os.pathsep}{os.environ.get('PATH', '')}",
           "AIDP_SESSION": "work", "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": str(tmp_path / "gitconfig")}
    env.pop("AIDP_DIR", None)
    (tmp_path / "gitconfig").write_text("[user]\n\tname = T\n\temail = t@example.invalid\n")
    subprocess.run(["git", "init", "-q", str(project)], check=True, env=env)
    subprocess.run([sys.executable, "-m", "aidp", "init"], cwd=project, env=env, check=True,
                   capture_output=True)
    subprocess.run(["git", "add", "-A"], cwd=project, env=env, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=project, env=env, check=True)
    event = json.dumps({"session_id": "x", "hook_event_name": "Stop",
                        "last_assistant_message": "Done."})

    def hook() -> str:
        log.write_text("")
        ran = subprocess.run([sys.executable, "-m", "aidp", "hook", "claude", "Stop"],
                             cwd=project, env=env, input=event, capture_output=True,
                             text=True, timeout=60)
        assert ran.returncode == 0, ran.stderr
        return ran.stderr

    hook()  # writes the state file: nothing asked yet
    hook()  # the state file exists: git asked
    assert "ls-files" in log.read_text()
    hook()
    assert "ls-files" not in log.read_text()  # the answer kept for this index
    [own] = (project / ".aidp" / "hooks").glob("claude-work-*.json")
    subprocess.run(["git", "add", "-f", str(own)], cwd=project, env=env, check=True)
    subprocess.run(["git", "commit", "-qm", "planted"], cwd=project, env=env, check=True)
    assert "tracked by git" in hook()
    assert "ls-files" in log.read_text()
