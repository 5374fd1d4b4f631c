"""Where the project root is: aidp.tasklist.paths.find_root."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from aidp.tasklist.paths import find_root


def test_a_stray_git_folder_above_is_no_repository(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty `.git` folder in a parent (say /tmp/.git) is not a repository to git,
    so it is none to aidp: `aidp init` below it must not make the parent the project."""
    monkeypatch.delenv("AIDP_DIR", raising=False)
    (tmp_path / ".git").mkdir()
    here = tmp_path / "work"
    here.mkdir()
    assert subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=here,
                          capture_output=True, check=False,
                          env={"GIT_CEILING_DIRECTORIES": str(tmp_path.parent),
                               "PATH": "/usr/bin:/bin"}).returncode != 0
    assert find_root(cwd=here) == here
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True,
                   env={"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
                        "PATH": "/usr/bin:/bin"})
    assert find_root(cwd=here) == tmp_path  # a real repository above: its top


def test_a_git_file_that_is_not_utf8_names_no_branch(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A `.git` file whose bytes are not UTF-8 (damaged, or planted by an archive) is read
    like any other that names no repository: the session is the default one, where
    `aidp todo show` used to end in a UnicodeDecodeError traceback."""
    from aidp.tasklist.paths import git_branch, locate_git
    from aidp.todos import resolve_session

    monkeypatch.delenv("AIDP_DIR", raising=False)
    monkeypatch.delenv("AIDP_SESSION", raising=False)
    (tmp_path / ".git").write_bytes(b"gitdir: \xff\xfe/nowhere\n")
    assert find_root(cwd=tmp_path) == tmp_path
    assert locate_git(tmp_path) == (tmp_path, tmp_path / "\ufffd\ufffd" / "nowhere")
    assert git_branch(tmp_path) is None
    assert resolve_session(None, tmp_path, read=None) == "default"
