"""aidp.agent.hook.state's session lookup for `aidp mcp` (asked on every tool call):
a state file is read again only when its stat data changed, and a change is never
missed — the same size, even the old mtime put back, a file removed."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from aidp.agent.hook import state as hook_state
from aidp.agent.hook.state import session_of_agent
from aidp.tasklist import files

HOUR_AGO = time.time() - 3600


def state(folder: Path, name: str, session: str, pid: int) -> Path:
    """A hook state file as `aidp hook` writes it, its mtime an hour back."""
    path = folder / name
    path.write_text(json.dumps({"session": session, "pids": [pid], "updated": 100}))
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
    state(folder, "claude-a.json", "a", 11)
    state(folder, "claude-b.json", "b", 22)
    (folder / "broken.json").write_text("{not json")
    assert session_of_agent(root, 11) == "a"
    assert sorted(reads) == ["broken.json", "claude-a.json", "claude-b.json"]
    reads.clear()
    # the next ancestor, the next tool call: the same answers, nothing read
    assert session_of_agent(root, 22) == "b"
    assert session_of_agent(root, 11) == "a"
    assert session_of_agent(root, 33) is None
    assert reads == []


def test_a_file_changed_just_now_is_read_again_until_it_settles(
        folder: Path, reads: list[str]) -> None:
    root = folder.parents[1]
    state(folder, "claude-a.json", "a", 11)  # its mtime is old, its ctime is now
    assert session_of_agent(root, 11) == "a"
    assert session_of_agent(root, 11) == "a"
    assert reads == ["claude-a.json", "claude-a.json"]


def test_a_rewritten_file_is_read_again(folder: Path, reads: list[str],
                                        settled: None) -> None:
    root = folder.parents[1]
    path = state(folder, "claude-a.json", "one", 11)
    kept = path.stat()
    assert session_of_agent(root, 11) == "one"
    # The same size, the same inode, the old mtime put back: only the ctime differs
    # (once the coarse clock moved on, as RACY_NS makes sure it has in real use).
    while path.stat().st_ctime_ns == kept.st_ctime_ns:
        state(folder, "claude-a.json", "two", 11)
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (kept.st_size, kept.st_mtime_ns)
    assert session_of_agent(root, 11) == "two"
    path.unlink()
    assert session_of_agent(root, 11) is None
    state(folder, "claude-b.json", "three", 11)
    assert session_of_agent(root, 11) == "three"
    assert reads == ["claude-a.json", "claude-a.json", "claude-b.json"]


def test_two_projects_do_not_share_their_state(tmp_path: Path, settled: None) -> None:
    roots = [tmp_path / "p1", tmp_path / "p2"]
    for n, root in enumerate(roots):
        (root / ".aidp" / "hooks").mkdir(parents=True)
        state(root / ".aidp" / "hooks", "claude-a.json", f"s{n}", 11)
    assert [session_of_agent(root, 11) for root in roots] == ["s0", "s1"]
    assert [session_of_agent(root, 11) for root in roots] == ["s0", "s1"]
