"""Setting a project up for aidp and for git (`aidp init`): the files, then this clone's
git settings. Returns what it did; the CLI (aidp.cli.init) says it."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from aidp import git
from aidp.errors import StorageError
from aidp.log import TaskLog
from aidp.trust import LOCAL_NAME as LOCAL_CONFIG

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


@dataclass(frozen=True)
class GitSetup:
    repository: bool  # the project is in a git work tree
    diff_driver_set: bool  # this clone's diff.aidp.textconv was missing and is set now
    tasklist_ignored: bool  # git ignores the tasklist, which is meant to be committed


def init(log: TaskLog, root: Path) -> Initialised:
    """Create .aidp/, the tasklist, .aidp/.gitignore and the union-merge and diff rules
    in .gitattributes; on a set-up clone, add what is missing. Never through a link a
    cloned repository may have planted."""
    log.adopt_linked_dir = True  # the user asked for it here: a linked .aidp/ is theirs
    attributes = root / ".gitattributes"
    for path in (log.path, attributes):
        if path.is_symlink():
            raise StorageError(f"Cannot write {path}: it is a symbolic link; nothing was changed")
    with log.locked():  # creates .aidp/ and .aidp/.gitignore
        try:
            fd = os.open(log.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
            created = True
        except FileExistsError:
            fd, created = None, False
        except OSError as exc:
            raise StorageError(f"Cannot create {log.path}: {exc.strerror}") from exc
        if fd is not None:
            os.close(fd)
    _ignore_local_config(log.dir / ".gitignore")
    added = _add_attributes(attributes)
    linked = log.dir.is_symlink()
    return Initialised(log.path.resolve() if linked else log.path, log.dir if linked else None,
                       created, attributes, added)


def setup_git(log: TaskLog, root: Path) -> GitSetup:
    """This clone's git settings (never committed): the tasklist's diff driver."""
    driver = git.setup_diff_driver(root)
    if driver is None:
        return GitSetup(False, False, False)
    return GitSetup(True, driver, git.ignores(root, log.path))


def _has_rule(lines: list[str], rule: str) -> bool:
    """Whether a line gives the tasklist's pattern that attribute (among others, maybe)."""
    pattern, attribute = rule.split()
    return any(parts[:1] == [pattern] and attribute in parts[1:]
               for parts in (line.split() for line in lines))


def _add_attributes(attributes: Path) -> tuple[str, ...]:
    """Add the missing rules; the rules added."""
    try:
        existing = attributes.read_text(encoding="utf-8") if attributes.exists() else ""
        lines = existing.splitlines()
        missing = [rule for rule in (ATTRIBUTE, DIFF_ATTRIBUTE) if not _has_rule(lines, rule)]
        if missing:
            prefix = "" if not existing or existing.endswith("\n") else "\n"
            with open(attributes, "a", encoding="utf-8") as handle:
                handle.write(prefix + "".join(f"{rule}\n" for rule in missing))
    except OSError as exc:
        raise StorageError(f"Cannot update {attributes}: {exc.strerror}") from exc
    return tuple(missing)


def _ignore_local_config(ignore: Path) -> None:
    """A .aidp/.gitignore written before config.local.toml existed gets its line, so the
    user's own config stays out of commits (and needs no 'aidp trust')."""
    try:
        if ignore.is_symlink() or not ignore.is_file():
            return  # never written through a link; log.locked() wrote a fresh one
        existing = ignore.read_text(encoding="utf-8")
        if any(line.strip() == LOCAL_CONFIG for line in existing.splitlines()):
            return
        prefix = "" if not existing or existing.endswith("\n") else "\n"
        fd = os.open(ignore, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW)
        with os.fdopen(fd, "a", encoding="utf-8") as handle:
            handle.write(f"{prefix}{LOCAL_CONFIG}\n")
    except (OSError, UnicodeDecodeError) as exc:
        raise StorageError(f"Cannot update {ignore}: {getattr(exc, 'strerror', None) or exc}"
                           ) from exc
