"""aidp.tasklist.files: a missing folder is an answer (present_folder, read_file), never an error
to sniff; a file made once (Folder.create) leaves whatever holds its name alone."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from aidp.core.errors import StorageError
from aidp.tasklist import files


def test_create_writes_a_new_file_once(tmp_path: Path) -> None:
    with files.folder(tmp_path) as folder:
        assert folder.create(".gitignore", b"*\n") is True
        assert folder.create(".gitignore", b"other\n") is False
    assert (tmp_path / ".gitignore").read_bytes() == b"*\n"


@pytest.mark.parametrize("planted", ["dangling link", "link to a file", "fifo", "folder"])
def test_create_leaves_what_holds_the_name_alone(tmp_path: Path, planted: str) -> None:
    outside = tmp_path / "outside"
    project = tmp_path / "planted-here"
    project.mkdir()
    target = project / ".gitignore"
    if planted == "dangling link":
        target.symlink_to(outside)
    elif planted == "link to a file":
        outside.write_bytes(b"theirs\n")
        target.symlink_to(outside)
    elif planted == "fifo":
        os.mkfifo(target)
    else:
        target.mkdir()
    with files.folder(project) as folder:
        assert folder.create(".gitignore", b"*\n") is False  # and no hang on the fifo
    assert not outside.exists() or outside.read_bytes() == b"theirs\n"
    assert target.is_symlink() == planted.endswith(("link", "file"))


def test_present_folder_is_none_only_when_something_is_missing(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    assert files.present_folder(tmp_path, "a/missing/deeper") is None
    assert files.present_folder(tmp_path / "gone", "a") is None
    found = files.present_folder(tmp_path, "a/b")
    assert found is not None
    with found:
        assert found.path == tmp_path / "a" / "b"
    (tmp_path / "linked").symlink_to(tmp_path / "a")
    with pytest.raises(StorageError, match="symbolic link"):
        files.present_folder(tmp_path, "linked/b")
    (tmp_path / "file").write_text("x")
    with pytest.raises(StorageError, match="not a folder"):
        files.present_folder(tmp_path, "file/b")


def test_read_file_through_a_missing_folder_is_none_through_a_link_refused(
        tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "settings.json").write_text("{}")
    assert files.read_file(tmp_path, "real/settings.json") == b"{}"
    assert files.read_file(tmp_path, "real/none.json") is None
    assert files.read_file(tmp_path, "missing/settings.json") is None
    (tmp_path / "planted").symlink_to(tmp_path / "real")
    with pytest.raises(StorageError, match="symbolic link"):
        files.read_file(tmp_path, "planted/settings.json")
