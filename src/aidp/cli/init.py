"""`aidp init`: set a project up for aidp and for git."""

from __future__ import annotations

import os
import subprocess

import typer

from aidp.cli.common import env, info
from aidp.errors import StorageError
from aidp.render import inert
from aidp.trust import LOCAL_NAME as LOCAL_CONFIG

ATTRIBUTE = ".aidp/tasklist.jsonl merge=union"
# git shows the tasklist as readable task lines (the driver itself: aidp.git.textconv).
DIFF_ATTRIBUTE = ".aidp/tasklist.jsonl diff=aidp"


def _has_rule(lines: list[str], rule: str) -> bool:
    """Whether a line gives the tasklist's pattern that attribute (among others, maybe)."""
    pattern, attribute = rule.split()
    return any(parts[:1] == [pattern] and attribute in parts[1:]
               for parts in (line.split() for line in lines))


def init(ctx: typer.Context) -> None:
    """Create .aidp/, the tasklist, .aidp/.gitignore, the union-merge and diff rules in
    .gitattributes and this clone's diff driver; on a set-up clone, add what is missing."""
    e = env(ctx)
    log = e.log
    log.adopt_linked_dir = True  # the user asked for it here: a linked .aidp/ is theirs
    attributes = e.root / ".gitattributes"
    for path in (log.path, attributes):  # a cloned repository may plant links: never follow
        if path.is_symlink():
            raise StorageError(f"Cannot write {path}: it is a symbolic link; nothing was changed")
    with log.locked():  # creates .aidp/ and .aidp/.gitignore
        try:
            os.close(os.open(log.path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o644))
        except OSError as exc:
            raise StorageError(f"Cannot create {log.path}: {exc.strerror}") from exc
    _ignore_local_config(log.dir / ".gitignore")
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
    where = f" (through the link {inert(str(log.dir))})" if log.dir.is_symlink() else ""
    typer.echo(f"Initialised {inert(str(log.path.resolve()) if where else str(log.path))}{where}")
    from aidp.git import setup_diff_driver

    if setup_diff_driver(e.root):
        info("Set this clone's git diff driver for the tasklist (git config diff.aidp.textconv): "
             "git diff and git log -p show task lines")
    if _git_ignored(e.root, log.path):
        info(
            "Warning: .aidp/tasklist.jsonl is ignored by git; it is meant to be committed. "
            "Remove the rule that ignores it (see 'git check-ignore -v .aidp/tasklist.jsonl')."
        )


def _ignore_local_config(ignore) -> None:
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


def _git_ignored(root, path) -> bool:
    try:
        result = subprocess.run(
            ["git", "check-ignore", "-q", str(path)],
            cwd=root,
            capture_output=True,
            check=False,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return False  # no git here: nothing can ignore it
    return result.returncode == 0
