"""Setting a project up for aidp and for git (`aidp init`): the files, then this clone's
git settings. Returns what it did; the CLI (aidp.cli.init) says it."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from aidp import git
from aidp.core.errors import StorageError
from aidp.tasklist import attributes as git_attributes
from aidp.tasklist import files
from aidp.tasklist.git_runner import tracked
from aidp.tasklist.log import LOG_NAME, TaskLog
from aidp.trust.gate import LOCAL_NAME as LOCAL_CONFIG

ATTRIBUTE = ".aidp/tasklist.jsonl merge=union"
# git shows the tasklist as readable task lines (the driver itself: aidp.git.textconv).
DIFF_ATTRIBUTE = git.DIFF_ATTRIBUTE


@dataclass(frozen=True)
class Initialised:
    path: Path  # the tasklist (resolved when reached through a link)
    link: Path | None  # the linked .aidp/ it was reached through, if any
    created: bool = False  # the tasklist did not exist before
    attributes: Path | None = None  # the .gitattributes file
    attributes_added: tuple[str, ...] = ()  # the rules added to it now
    # the line naming git attributes that override aidp's for the tasklist (None: none)
    attributes_note: str | None = None


@dataclass(frozen=True)
class GitSetup:
    repository: bool  # the project is in a git work tree
    diff_driver_set: bool  # this clone's diff.aidp.textconv was missing and is set now
    tasklist_ignored: bool  # git ignores the tasklist, which is meant to be committed


def init(log: TaskLog, root: Path) -> Initialised:
    """Create .aidp/, the tasklist, .aidp/.gitignore and the union-merge and diff rules
    in .gitattributes; on a set-up clone, add what is missing. Never through a link a
    cloned repository may have planted (aidp.tasklist.files), and what can be checked first is
    checked before anything is made: a refusal leaves no half-made .aidp/."""
    if log.dir.is_symlink() and tracked(root, log.dir):
        raise StorageError(
            f"Cannot write in {log.dir}: it is a symbolic link committed to the repository "
            f"(to {os.path.realpath(log.dir)}), and aidp never writes through a link a "
            "repository planted; replace it with a folder; nothing was written")
    # The user asked for it here: a linked .aidp/ they made is theirs.
    log.adopt_linked_dir = True
    attributes = root / ".gitattributes"
    # Checked first: a link, FIFO or folder at either file, or an unreadable
    # .gitattributes, is refused before .aidp/ exists.
    existing = files.read_file(root, ".gitattributes") or b""
    if log.dir.is_dir():
        with files.folder(log.dir) as folder:
            for name in (LOG_NAME, ".gitignore"):
                folder.require_regular(name)
    missing = _missing_rules(existing)
    with log.locked():  # creates .aidp/ and .aidp/.gitignore
        try:
            fd = files.open_file(log.dir, LOG_NAME, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
            os.close(fd)
            created = True
        except FileExistsError:
            created = False
        except OSError as exc:
            raise StorageError(f"Cannot create {log.path}: {exc.strerror}") from exc
    _ignore_local_config(log.dir)
    if missing:
        prefix = b"" if not existing or existing.endswith(b"\n") else b"\n"
        body = prefix + b"".join(f"{rule}\n".encode() for rule in missing)
        try:
            files.write_file(root, ".gitattributes", body, append=True)
        except OSError as exc:
            raise StorageError(f"Cannot update {attributes}: {exc.strerror}") from exc
    linked = log.dir.is_symlink()
    # The effective attributes, asked of git every time here (not only when the cheap
    # scan of reads finds a candidate line): init is where a user looks.
    note = git_attributes.check(root, always=True).note()
    return Initialised(log.path.resolve() if linked else log.path, log.dir if linked else None,
                       created, attributes, tuple(missing), note)


def setup_git(log: TaskLog, root: Path) -> GitSetup:
    """This clone's git settings (never committed): the tasklist's diff driver."""
    driver = git.setup_diff_driver(root)
    if driver is None:
        return GitSetup(False, False, False)
    return GitSetup(True, driver, git.ignores(root, log.path))


def _missing_rules(existing: bytes) -> list[str]:
    """The rules .gitattributes lacks. Read as bytes, like git does: a file in Latin-1
    (or any encoding) is searched, never decoded."""
    lines = [line.split() for line in existing.splitlines()]
    missing = []
    for rule in (ATTRIBUTE, DIFF_ATTRIBUTE):
        pattern, attribute = rule.encode().split()
        if not any(parts[:1] == [pattern] and attribute in parts[1:] for parts in lines):
            missing.append(rule)
    return missing


def _ignore_local_config(data_dir: Path) -> None:
    """A .aidp/.gitignore written before config.local.toml existed gets its line, so the
    user's own config stays out of commits (and needs no 'aidp trust')."""
    try:
        with files.folder(data_dir) as folder:
            existing = folder.read(".gitignore")
            if existing is None:
                return  # removed meanwhile: log.locked() writes a fresh one next time
            if any(line.strip() == LOCAL_CONFIG.encode() for line in existing.splitlines()):
                return
            prefix = b"" if not existing or existing.endswith(b"\n") else b"\n"
            folder.write(".gitignore", prefix + f"{LOCAL_CONFIG}\n".encode(), append=True)
    except OSError as exc:
        raise StorageError(f"Cannot update {data_dir / '.gitignore'}: {exc.strerror or exc}"
                           ) from exc
