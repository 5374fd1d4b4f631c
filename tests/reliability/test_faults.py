"""The environment fails: read-only or missing folders, a full disk, odd file types.

Every failure is a one-line `Error: …` naming the path and the reason, exit 1 (a
domain failure: the command was fine, the storage was not), no traceback, and the
tasklist left byte for byte as it was.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from reliability_support import child_env

from aidp.tasklist import maintenance
from aidp.tasklist.log import LOG_NAME

WRITES = [
    ["tasks", "add", "one more"],
    ["tasks", "done", "FIRST"],
    ["tasks", "abandon", "FIRST", "no longer needed"],
    ["tasks", "repair"],
    ["tasks", "compact"],
    ["todo", "add", "--session", "s", "a todo item"],
    ["todo", "tick", "--session", "s", "1"],
]
READS = [["tasks", "list"], ["tasks", "list", "--all", "--json"], ["tasks", "stats"],
         ["tasks", "show", "FIRST"], ["todo", "show", "--session", "s"]]


def seeded(cli, project: Path) -> tuple[str, bytes]:
    """A tasklist with history, a todo list and one damaged line (so that repair and
    compact have work to do); (id of the first task, the file's bytes)."""
    first = cli("tasks", "add", "-q", "first").out.strip()
    cli("tasks", "start", first)
    cli("tasks", "add", "second")
    assert cli("todo", "add", "--session", "s", "the first item").code == 0
    with open(project / ".aidp" / LOG_NAME, "ab") as handle:
        handle.write(b"{torn\n")
    return first, (project / ".aidp" / LOG_NAME).read_bytes()


def resolve(args: list[str], first: str) -> list[str]:
    return [first if a == "FIRST" else a for a in args]


def assert_storage_error(result, *words: str) -> None:
    assert result.code == 1, result
    lines = result.err.splitlines()
    errors = [line for line in lines if line.startswith("Error: ")]
    assert len(errors) == 1 and "Traceback" not in result.err, result
    assert all(w.lower() in errors[0].lower() for w in words), result
    assert len(lines) <= 2  # at most the damage warning besides the error


# --- a full disk -------------------------------------------------------------------------


def inject_full_disk(monkeypatch: pytest.MonkeyPatch, *, partial: bool) -> None:
    """os.write fails with ENOSPC on the tasklist (optionally after a partial write),
    as it does when the disk fills up between the check and the write."""
    real_write = os.write

    def write(fd: int, data) -> int:
        if os.readlink(f"/proc/self/fd/{fd}").endswith(LOG_NAME):
            if partial and len(data) > 1:
                real_write(fd, bytes(data)[: len(data) // 2])
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", write)


@pytest.mark.parametrize("partial", [False, True], ids=["nothing written", "half written"])
@pytest.mark.parametrize("args", [w for w in WRITES if w[1] not in ("repair", "compact")],
                         ids=" ".join)
def test_full_disk_fails_cleanly_and_changes_nothing(cli, project: Path, monkeypatch,
                                                     partial: bool, args: list[str]) -> None:
    first, before = seeded(cli, project)
    with monkeypatch.context() as patch:
        inject_full_disk(patch, partial=partial)
        result = cli(*resolve(args, first))
    assert_storage_error(result, "no space left on device", str(project / ".aidp" / LOG_NAME),
                         "not changed")
    assert (project / ".aidp" / LOG_NAME).read_bytes() == before
    assert cli("tasks", "add", "disk freed again").code == 0  # and the next write works


@pytest.mark.parametrize("command", ["repair", "compact"])
@pytest.mark.parametrize("failing", ["fsync", "replace", "backup"])
def test_full_disk_during_maintenance_keeps_the_old_file(
    cli, project: Path, monkeypatch: pytest.MonkeyPatch, command: str, failing: str
) -> None:
    _first, before = seeded(cli, project)
    enospc = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def fail(*_args, **_kwargs):
        raise enospc

    with monkeypatch.context() as patch:
        if failing == "backup":  # the backup is streamed: maintenance.copy_file writes it
            patch.setattr(maintenance, "copy_file", fail)
        else:
            patch.setattr(os, failing, fail)
        result = cli("tasks", command)
    assert_storage_error(result, "no space left on device")
    aidp_dir = project / ".aidp"
    assert (aidp_dir / LOG_NAME).read_bytes() == before
    assert not [p for p in aidp_dir.iterdir() if p.suffix == ".tmp"], "temp file left behind"
    assert cli("tasks", command).code == 0


@pytest.mark.slow
def test_a_real_full_tmpfs(cli, tmp_path: Path) -> None:
    """Opt-in (AIDP_SLOW=1, root, mount allowed): a 64 KiB tmpfs filled to the brim."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
                          capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.decode().strip()}")
    try:
        run = lambda *a: cli("--dir", str(mount), *a)  # noqa: E731
        first = run("tasks", "add", "-q", "first").out.strip()
        filler = mount / "filler"
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
        try:  # fill the disk to the last byte
            for size in (65536, 4096, 512, 64, 8, 1):
                try:
                    while os.write(fd, b"\0" * size) == size:
                        pass
                except OSError:
                    pass
        finally:
            os.close(fd)
        log = mount / ".aidp" / LOG_NAME
        before = log.read_bytes()
        codes = []
        for n in range(40):  # until the block the log lives in is full too
            result = run("tasks", "add", f"filling the disk {n} " + "x" * 150)
            codes.append(result.code)
            if result.code:
                assert_storage_error(result, "no space left on device")
                assert log.read_bytes() == before
                break
            before = log.read_bytes()
        assert 1 in codes, "the disk never filled up"
        for args in (["tasks", "done", first], ["tasks", "compact"], ["tasks", "repair"]):
            result = run(*args)
            assert result.code in (0, 1) and "Traceback" not in result.err
            assert log.read_bytes() == before or result.code == 0
        filler.unlink()
        assert run("tasks", "add", "room again").code == 0
        assert run("tasks", "list", "--all", "--format", "ids").out.count("\n") >= 2
    finally:
        subprocess.run(["umount", str(mount)], check=False)


# --- read-only and missing folders -------------------------------------------------------


@pytest.fixture
def read_only(project: Path) -> Iterator[str]:
    """Make the project read-only: a read-only bind mount when running as root (root
    ignores permission bits), chmod otherwise."""
    if os.geteuid() == 0:
        bound = subprocess.run(["mount", "--bind", str(project), str(project)],
                               capture_output=True)
        if bound.returncode != 0:
            pytest.skip("root, and no bind mount allowed: permission bits would not bite")
        ro = subprocess.run(["mount", "-o", "remount,bind,ro", str(project)], capture_output=True)
        try:
            if ro.returncode != 0:
                pytest.skip("cannot remount read-only")
            yield "read-only file system"
        finally:
            subprocess.run(["umount", str(project)], check=False)
        return
    modes = {}
    for path in [project / ".aidp", *(project / ".aidp").iterdir()]:
        modes[path] = path.stat().st_mode
        path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        yield "permission denied"
    finally:
        for path, mode in modes.items():
            path.chmod(mode)


@pytest.mark.parametrize("args", WRITES, ids=" ".join)
def test_read_only_project_refuses_writes_and_serves_reads(cli, project: Path, request,
                                                            args: list[str]) -> None:
    first, before = seeded(cli, project)
    reason = request.getfixturevalue("read_only")
    result = cli(*resolve(args, first))
    assert_storage_error(result, reason, str(project / ".aidp"))
    assert (project / ".aidp" / LOG_NAME).read_bytes() == before
    for read in READS:
        shown = cli(*resolve(read, first))
        assert shown.code == 0 and "Traceback" not in shown.err, shown


def assert_bad_dir(result, *words: str) -> None:
    assert result.code == 2, result
    assert result.err.count("\n") == 1 and result.err.startswith("Error: Invalid "), result
    assert all(w.lower() in result.err.lower() for w in words), result
    assert result.out == "", result


def test_missing_project_folder_is_a_usage_error_for_reads_and_writes(cli, tmp_path: Path,
                                                                      monkeypatch) -> None:
    """A mistyped --dir must not read as an empty backlog ("No open tasks")."""
    missing = tmp_path / "no" / "such" / "project"
    for command in (["tasks", "list"], ["tasks", "stats", "--json"], ["todo", "show"],
                    ["tasks", "add", "x"], ["todo", "add", "x"], ["tasks", "repair"], ["init"]):
        assert_bad_dir(cli("--dir", str(missing), *command), "--dir", str(missing),
                       "does not exist")
    monkeypatch.setenv("AIDP_DIR", str(missing))
    assert_bad_dir(cli("tasks", "list"), "AIDP_DIR", "does not exist")
    assert not (tmp_path / "no").exists()  # a mistyped --dir grows no folders


def test_project_that_is_a_file(cli, tmp_path: Path) -> None:
    plain = tmp_path / "plain-file"
    plain.write_text("not a folder\n")
    assert_bad_dir(cli("--dir", str(plain), "tasks", "add", "x"), "not a folder")
    assert_bad_dir(cli("--dir", str(plain), "tasks", "list"), str(plain), "not a folder")
    assert plain.read_text() == "not a folder\n"


@pytest.mark.parametrize("oddity", ["directory", "fifo", "dangling symlink"])
def test_tasklist_that_is_not_a_file(cli, project: Path, oddity: str) -> None:
    aidp_dir = project / ".aidp"
    aidp_dir.mkdir()
    log = aidp_dir / LOG_NAME
    if oddity == "directory":
        log.mkdir()
    elif oddity == "fifo":
        os.mkfifo(log)
    else:
        log.symlink_to(project / "gone" / "elsewhere.jsonl")
    if oddity == "fifo":
        # Opening a fifo to read waits for a writer for ever, and a write into it is
        # gone: aidp refuses it. In child processes, so that a hang fails the test.
        for args in (["tasks", "list"], ["tasks", "add", "x"], ["tasks", "repair"],
                     ["todo", "show"], ["todo", "add", "x"]):
            proc = subprocess.run([sys.executable, "-m", "aidp", *args], env=child_env(project),
                                  capture_output=True, text=True, timeout=60)
            assert proc.returncode == 1, proc
            assert proc.stderr.startswith(f"Error: Cannot use {log}: it is not a regular file")
            assert proc.stderr.count("\n") == 1, proc
        return
    for args in (["tasks", "list"], ["tasks", "add", "x"], ["tasks", "repair"]):
        result = cli(*args)
        assert "Traceback" not in result.err
        if result.code:
            assert_storage_error(result, str(log))
    if oddity == "directory":
        assert log.is_dir() and not any(log.iterdir())


def test_unreadable_tasklist(cli, project: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads every file")
    cli("tasks", "add", "x")
    log = project / ".aidp" / LOG_NAME
    log.chmod(0)
    try:
        assert_storage_error(cli("tasks", "list"), "permission denied", str(log))
    finally:
        log.chmod(0o644)


def test_aidp_dir_is_never_created_by_a_read(cli, project: Path) -> None:
    shutil.rmtree(project / ".aidp", ignore_errors=True)
    for read in READS:
        cli(*resolve(read, "abcd"))
    assert not (project / ".aidp").exists()


@pytest.mark.parametrize("command", ["repair", "compact"])
def test_a_failing_folder_sync_after_the_rename_is_no_crash(
    cli, project: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    """The rename has replaced the file; syncing the folder is the last, best-effort
    step. Its failure (EIO on a flaky disk) must not end in a traceback."""
    _first, _before = seeded(cli, project)
    expected = cli("tasks", "list", "--all", "--json").out
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        if os.path.isdir(os.readlink(f"/proc/self/fd/{fd}")):
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real_fsync(fd)

    with monkeypatch.context() as patch:
        patch.setattr(os, "fsync", fsync)
        result = cli("tasks", command)
    assert result.code == 0 and "Traceback" not in result.err, result
    assert cli("tasks", "list", "--all", "--json").out == expected
    assert cli("tasks", "repair", "--dry-run").out.startswith("Nothing to repair")


def test_a_failed_backup_leaves_no_partial_backup(cli, project: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    _first, before = seeded(cli, project)

    def half(source, target) -> None:
        data = source.read()
        target.write(data[: len(data) // 2])
        target.flush()
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with monkeypatch.context() as patch:
        patch.setattr(maintenance, "copy_file", half)
        result = cli("tasks", "repair")
    assert_storage_error(result, "no space left on device", "backup")
    assert (project / ".aidp" / LOG_NAME).read_bytes() == before
    backups = project / ".aidp" / "backups"
    assert not backups.exists() or not any(backups.iterdir()), "a partial backup was left"
