"""Files a person names on the command line (`report --html FILE`, `tasks export -o FILE`,
the completion script in their home): a write that fails is one `Error:` line naming
the path and why, exit 1, and the file that was there is left as it was
(docs/reliability.md §8). Real processes: the tracebacks were on a real terminal."""

from __future__ import annotations

import os
import resource
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

WRITERS = {
    "report": ["report", "--html"],
    "export": ["tasks", "export", "-f", "csv", "-o"],
}


def aidp(*args: str, cwd: Path, file_size_limit: int | None = None,
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    def limit() -> None:  # Python ignores SIGXFSZ: a write past it fails with EFBIG
        if file_size_limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

    return subprocess.run([sys.executable, "-m", "aidp", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120, preexec_fn=limit,
                          env={**os.environ, **(env or {})})


def one_error_line(result: subprocess.CompletedProcess[str], starts: str) -> None:
    assert result.returncode == 1, result
    assert result.stderr.startswith(starts), result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert result.stdout == ""


@pytest.fixture
def seeded(project: Path) -> Path:
    for n in range(3):
        subprocess.run([sys.executable, "-m", "aidp", "tasks", "add", f"Task {n}", "-q"],
                       cwd=project, check=True, capture_output=True)
    return project


@pytest.fixture
def read_only_folder(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A folder nothing can be written in: a read-only bind mount when running as root
    (root ignores permission bits), chmod otherwise; with the reason the system gives."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    (folder / "kept.txt").write_text("the user's own\n")
    if os.geteuid() != 0:
        folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
        try:
            yield folder, "Permission denied"
        finally:
            folder.chmod(stat.S_IRWXU)
        return
    if subprocess.run(["mount", "--bind", str(folder), str(folder)],
                      capture_output=True).returncode != 0:
        pytest.skip("root, and no bind mount allowed: permission bits would not bite")
    try:
        if subprocess.run(["mount", "-o", "remount,bind,ro", str(folder)],
                          capture_output=True).returncode != 0:
            pytest.skip("cannot remount read-only")
        yield folder, "Read-only file system"
    finally:
        subprocess.run(["umount", str(folder)], check=False)


@pytest.mark.parametrize("writer", WRITERS)
def test_a_read_only_folder_is_one_line_and_exit_1(seeded: Path, read_only_folder, writer: str
                                                  ) -> None:
    # The case: `report --html` into a read-only folder ended in a 44-line
    # traceback (the failed write's clean-up raised in turn).
    folder, reason = read_only_folder
    for name in ("new.out", "kept.txt"):
        target = folder / name
        result = aidp(*WRITERS[writer], str(target), cwd=seeded)
        one_error_line(result, f"Error: Cannot write {target}: {reason}\n")
    assert sorted(os.listdir(folder)) == ["kept.txt"]
    assert (folder / "kept.txt").read_text() == "the user's own\n"


@pytest.mark.parametrize("writer", WRITERS)
def test_a_write_that_fails_half_way_leaves_the_old_file(seeded: Path, writer: str) -> None:
    # A file size limit stands for a full disk: the new content cannot be written
    # whole. The user's old file stays byte for byte, with nothing left beside it.
    out = seeded / "out" / "backlog.file"
    out.parent.mkdir()
    out.write_bytes(b"old contents\n")
    out.chmod(0o640)
    aidp("tasks", "list", cwd=seeded)  # the read cache is built now, not under the limit
    result = aidp(*WRITERS[writer], str(out), cwd=seeded, file_size_limit=100)
    one_error_line(result, f"Error: Cannot write {out}: File too large\n")
    assert out.read_bytes() == b"old contents\n"
    assert os.listdir(out.parent) == ["backlog.file"]
    # and the write that succeeds replaces it whole, keeping its mode
    done = aidp(*WRITERS[writer], str(out), cwd=seeded)
    assert done.returncode == 0, done
    assert b"Task 2" in out.read_bytes() and stat.S_IMODE(out.stat().st_mode) == 0o640
    assert os.listdir(out.parent) == ["backlog.file"]


@pytest.mark.parametrize("writer", WRITERS)
def test_a_missing_folder_and_a_full_device_are_one_line(seeded: Path, writer: str) -> None:
    missing = seeded / "no-such-folder" / "r.out"
    one_error_line(aidp(*WRITERS[writer], str(missing), cwd=seeded),
                   f"Error: Cannot write {missing}: No such file or directory\n")
    assert not missing.parent.exists()
    if Path("/dev/full").exists():
        one_error_line(aidp(*WRITERS[writer], "/dev/full", cwd=seeded),
                       "Error: Cannot write /dev/full: No space left on device\n")


@pytest.mark.parametrize("writer", WRITERS)
def test_links_and_devices_are_written_through_as_a_shell_would(seeded: Path,
                                                                  writer: str) -> None:
    target = seeded / "elsewhere" / "real.out"
    target.parent.mkdir()
    link = seeded / "link.out"
    link.symlink_to(target)  # dangling: `>` creates the file it names
    assert aidp(*WRITERS[writer], str(link), cwd=seeded).returncode == 0
    assert link.is_symlink() and b"Task 1" in target.read_bytes()
    target.write_bytes(b"old\n")
    assert aidp(*WRITERS[writer], str(link), cwd=seeded).returncode == 0
    assert link.is_symlink() and b"Task 1" in target.read_bytes()
    # /dev/stdout: a pipe here; never replaced by a file of its own
    piped = aidp(*WRITERS[writer], "/dev/stdout", cwd=seeded)
    assert piped.returncode == 0 and "Task 1" in piped.stdout


def test_completion_into_a_read_only_home_is_one_line(project: Path, read_only_folder) -> None:
    home, reason = read_only_folder
    result = aidp("--install-completion", "bash", cwd=project, env={"HOME": str(home)})
    one_error_line(result, "Error: Cannot install the bash completion: cannot write "
                           f"{home}/.bash_completions/aidp.sh: {reason}; ")
    assert sorted(os.listdir(home)) == ["kept.txt"]
